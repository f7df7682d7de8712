//! The runner's program and the contained interpreter it runs in, shared by an episode's own
//! runner ([`super::sandbox`]) and the fork server ([`super::forkserver`]).

use std::process::Command;

use crate::sandbox::{Lifeline, ResourceLimits, SandboxSpec};

/// The Python side of the runner (and, with `--zygote`, of the fork server).
pub const DRIVER: &str = include_str!("driver.py");

/// Kernel limits of the runner: generous for an episode of API calls, tight for anything else.
fn runner_limits() -> ResourceLimits {
    ResourceLimits { cpu_seconds: 300, address_space: 2 << 30, file_size: 16 << 20, open_files: 256, processes: 32 }
}

/// The command that starts a contained Python running `args` (`-c <code>`, ...): in the sandbox
/// where bubblewrap works (the system's /usr, the interpreter and a private 64 MiB /tmp: no host
/// files, no network, no other process), else with process-level limits only.
/// The [`Lifeline`] (in a sandbox) must be kept while the runner may run.
pub fn contained_python(python: &str, args: &[&str]) -> Result<(Command, Option<Lifeline>), String> {
    contained(python, args, false)
}

/// [`contained_python`] for the fork server: in the sandbox only, and allowed to give each
/// runner it forks a private `/tmp`, `/dev/shm` and IPC namespace
/// ([`SandboxSpec::private_mounts`]).
pub fn contained_fork_server(python: &str, args: &[&str]) -> Result<(Command, Lifeline), String> {
    match contained(python, args, true)? {
        (cmd, Some(lifeline)) => Ok((cmd, lifeline)),
        (_, None) => Err("the fork server needs the sandbox".into()),
    }
}

fn contained(python: &str, args: &[&str], private_mounts: bool) -> Result<(Command, Option<Lifeline>), String> {
    if crate::sandbox::availability().usable() {
        let interp = crate::sandbox::interpreter(Some(python)).map_err(|e| e.to_string())?;
        let mut spec = SandboxSpec::new("/tmp").interpreter(&interp);
        spec.limits = runner_limits();
        spec.private_mounts = private_mounts;
        let mut argv = vec![interp.program.as_str()];
        argv.extend_from_slice(args);
        let (cmd, lifeline) = spec.command(&argv).map_err(|e| e.to_string())?;
        Ok((cmd, Some(lifeline)))
    } else {
        // no bubblewrap: the built-in policy's code keeps process-level limits; a model's code
        // was refused before the run started unless the user allowed this
        let mut c = Command::new(python);
        c.args(args).current_dir(std::env::temp_dir()).env_clear();
        crate::sandbox::contain(&mut c, Some(runner_limits()), None);
        Ok((c, None))
    }
}
