//! The runner's program and the contained interpreter it runs in, shared by an episode's own
//! runner ([`super::sandbox`]) and the fork server ([`super::forkserver`]).

use std::process::Command;

use crate::sandbox::{Lifeline, ResourceLimits, SandboxSpec};

/// The Python side of the runner (and, with `--zygote`, of the fork server).
pub const DRIVER: &str = include_str!("driver.py");

/// The code runner (or its fork server) could not start or be reached: the machine's fault, not
/// the agent's. A runner that started and then ended is the agent's code's doing and comes back
/// as a failed cell.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunnerError {
    /// The contained interpreter could not be set up.
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    /// A fork server runs only in the sandbox (its sweep needs a PID namespace of its own).
    #[error("the fork server needs the sandbox")]
    ForkServerNeedsSandbox,
    /// An operating-system call failed: what it was for, and the system's error.
    #[error("{what}: {error}")]
    Os { what: String, error: String },
    /// The fork server did not start, or answered outside its protocol.
    #[error("the fork server {0}")]
    ForkServer(String),
}

impl RunnerError {
    /// An [`RunnerError::Os`] for `what`, to be given the system's error.
    pub(super) fn os(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunnerError {
        let what = what.into();
        move |e| RunnerError::Os { what, error: e.to_string() }
    }
}

/// Kernel limits of the runner: generous for an episode of API calls, tight for anything else.
fn runner_limits() -> ResourceLimits {
    ResourceLimits { cpu_seconds: 300, address_space: 2 << 30, file_size: 16 << 20, open_files: 256, processes: 32 }
}

/// The command that starts a contained Python running `args` (`-c <code>`, ...): in the sandbox
/// where bubblewrap works (the system's /usr, the interpreter and a private 64 MiB /tmp: no host
/// files, no network, no other process), else with process-level limits only.
/// The [`Lifeline`] (in a sandbox) must be kept while the runner may run.
pub fn contained_python(python: &str, args: &[&str]) -> Result<(Command, Option<Lifeline>), RunnerError> {
    contained(python, args, false)
}

/// [`contained_python`] for the fork server: in the sandbox only, and allowed to give each
/// runner it forks a private `/tmp`, `/dev/shm` and IPC namespace
/// ([`SandboxSpec::private_mounts`]).
pub fn contained_fork_server(python: &str, args: &[&str]) -> Result<(Command, Lifeline), RunnerError> {
    match contained(python, args, true)? {
        (cmd, Some(lifeline)) => Ok((cmd, lifeline)),
        (_, None) => Err(RunnerError::ForkServerNeedsSandbox),
    }
}

fn contained(python: &str, args: &[&str], private_mounts: bool) -> Result<(Command, Option<Lifeline>), RunnerError> {
    if crate::sandbox::availability().usable() {
        let interp = crate::sandbox::interpreter(Some(python))?;
        let mut spec = SandboxSpec::new("/tmp").interpreter(&interp);
        spec.limits = runner_limits();
        spec.private_mounts = private_mounts;
        let mut argv = vec![interp.program.as_str()];
        argv.extend_from_slice(args);
        let (cmd, lifeline) = spec.command(&argv)?;
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
