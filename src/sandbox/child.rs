//! Every child the workbench starts dies with it and carries kernel-enforced limits.
//!
//! [`contain`] arranges, in the forked child just before `exec`:
//! - `PR_SET_PDEATHSIG = SIGKILL`: the kernel kills the child when the thread that started it
//!   ends, which includes the workbench being killed with SIGKILL. (The signal follows the
//!   starting *thread*: a child that must outlive the thread that asks for it — an episode's
//!   runner, asked for by a pool thread that ends when idle — is started by
//!   [`spawn_long_lived`], from a thread that lives as long as the process.)
//! - its own process group, so a kill reaches everything it started that stayed in the group;
//! - resource limits ([`ResourceLimits`]): CPU seconds, address space, file size, open files and
//!   no core dumps, enforced by the kernel whether or not the workbench is still watching;
//! - optionally, a switch to an unprivileged user (see [`super::sandbox_user`]).

use std::process::{Child, Command};
use std::sync::mpsc;
use std::sync::OnceLock;

/// Kernel resource limits of a child and everything it starts (each process has its own
/// counters; `processes` counts the processes of the sandbox's user).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceLimits {
    /// RLIMIT_CPU: CPU seconds per process (SIGKILL past the hard limit).
    pub cpu_seconds: u64,
    /// RLIMIT_AS: bytes of address space per process.
    pub address_space: u64,
    /// RLIMIT_FSIZE: bytes of the largest file a process may write.
    pub file_size: u64,
    /// RLIMIT_NOFILE: open descriptors per process.
    pub open_files: u64,
    /// RLIMIT_NPROC inside a sandbox: processes of the sandbox's user (fork bombs stop here).
    pub processes: u64,
}

impl ResourceLimits {
    /// Limits for a command an agent runs in a repository (tests included).
    pub fn command(timeout_secs: u64) -> ResourceLimits {
        ResourceLimits { cpu_seconds: timeout_secs + 5, address_space: 4 << 30, file_size: 512 << 20, open_files: 1024, processes: 256 }
    }
}

/// A user and group to switch to before `exec` (only root can).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchUser {
    pub uid: u32,
    pub gid: u32,
}

/// Make `cmd`'s child die with the workbench, lead its own process group, and run under
/// `limits` (the process limit is left to the sandbox, which counts per sandbox) as `user`.
pub fn contain(cmd: &mut Command, limits: Option<ResourceLimits>, user: Option<SwitchUser>) {
    contain_with(cmd, limits, user, libc::SIGKILL, None)
}

/// Start a [`contain`]ed `cmd` from a thread that lives as long as the workbench, so that its
/// parent-death signal fires when the workbench dies and not before. A child started from a
/// thread pool's thread would be killed when that thread ends: tokio's blocking threads end
/// after 10 s without work, which is how a model that thought for more than 10 s between two
/// cells once lost its runner.
pub fn spawn_long_lived(cmd: Command) -> std::io::Result<Child> {
    type Request = (Command, mpsc::Sender<std::io::Result<Child>>);
    static SPAWNER: OnceLock<Option<mpsc::Sender<Request>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("harness-s-spawner".into())
            .spawn(move || {
                // the senders live in a static: this loop, and the thread, last as long as the process
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .ok()
            .map(|_| tx)
    });
    let Some(spawner) = spawner else { return Err(std::io::Error::other("the workbench could not start its spawner thread")) };
    let (reply, answer) = mpsc::channel();
    spawner.send((cmd, reply)).map_err(|_| std::io::Error::other("the spawner thread stopped"))?;
    answer.recv().map_err(|_| std::io::Error::other("the spawner thread stopped"))?
}

/// Kill the process group a [`contain`]ed child leads (`leader` is its pid): the child and
/// whatever it started in its group.
pub fn kill_group(leader: u32) {
    if let Ok(pgid) = i32::try_from(leader) {
        if pgid > 0 {
            // SAFETY: kill(2) with a negative pid signals the process group; no memory is touched.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

/// End a [`contain`]ed child: kill its process group, then reap it.
pub fn end(child: &mut std::process::Child) {
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

/// [`contain`] with the signal the child gets when the workbench dies (a supervisor that must
/// act on it takes SIGTERM) and a descriptor to hand to the child open, `(fd, as_fd)`: the
/// workbench's `fd` (the sandbox's lifeline) becomes the child's `as_fd`, a one-digit number —
/// the only ones a POSIX shell's redirections can name (dash stops at `Bad fd number` on
/// `<&16`, and a workbench with a store open and threads running hands out numbers past 9).
pub(crate) fn contain_with(
    cmd: &mut Command,
    limits: Option<ResourceLimits>,
    user: Option<SwitchUser>,
    death_signal: libc::c_int,
    keep_fd: Option<(libc::c_int, libc::c_int)>,
) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe
    // functions (setgroups, setgid, setuid, prctl, getppid, fcntl, setrlimit); it allocates
    // nothing.
    unsafe {
        cmd.pre_exec(move || {
            // the user first: a change of user clears the parent-death signal
            if let Some(u) = user {
                if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(u.gid) != 0 || libc::setuid(u.uid) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, death_signal as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // the parent may have died between fork and prctl: then nobody would kill us
            if libc::getppid() != parent {
                return Err(std::io::Error::other("the workbench ended before the child started"));
            }
            if let Some((fd, as_fd)) = keep_fd {
                // dup2's copy stays open across exec; one already in place is opened instead
                let kept = if fd == as_fd { libc::fcntl(fd, libc::F_SETFD, 0) } else { libc::dup2(fd, as_fd) };
                if kept < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(l) = limits {
                let set = |resource: libc::__rlimit_resource_t, v: u64| {
                    let r = libc::rlimit { rlim_cur: v as libc::rlim_t, rlim_max: v as libc::rlim_t };
                    if libc::setrlimit(resource, &r) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                };
                // the hard CPU limit a few seconds past the soft one: SIGXCPU first, then SIGKILL
                let cpu = libc::rlimit { rlim_cur: l.cpu_seconds as libc::rlim_t, rlim_max: (l.cpu_seconds + 2) as libc::rlim_t };
                if libc::setrlimit(libc::RLIMIT_CPU, &cpu) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                set(libc::RLIMIT_AS, l.address_space)?;
                set(libc::RLIMIT_FSIZE, l.file_size)?;
                set(libc::RLIMIT_NOFILE, l.open_files)?;
                set(libc::RLIMIT_CORE, 0)?;
            }
            Ok(())
        });
    }
}
