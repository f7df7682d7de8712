//! Containment for code a model wrote: the one sandbox both SWE-Gym's local runtime and the
//! bundled AppWorld world's Python runner use.
//!
//! A sandboxed command runs under bubblewrap (`bwrap`) with:
//! - a read-only view of the system's `/usr` (and `/lib`, `/bin` ... as links into it), the
//!   interpreter's own prefix where it lives outside `/usr`, and `/etc/alternatives`; nothing
//!   else of the host: no home, no project checkout, no datasets, no run store;
//! - the episode's folders bound where the agent expects them (`/testbed`, `/tmp`), or a private
//!   size-capped tmpfs;
//! - new user, PID, network, IPC, UTS and cgroup namespaces (no network at all, and `/proc`
//!   shows only the sandbox's own processes, so the workbench's environment and command line are
//!   out of reach), `--new-session`, `--die-with-parent`, a cleared environment;
//! - kernel resource limits ([`ResourceLimits`]), with the process count set inside the sandbox
//!   (the shell's `ulimit`), where it counts the sandbox's processes only;
//! - when the workbench runs as root, an unprivileged user ([`sandbox_user`]): root ignores
//!   RLIMIT_NPROC, and a sandbox escape should not land as root.
//!
//! Ending a sandbox reaches every process in it, detached or not, and is kernel-driven so that it
//! also happens when the workbench is killed: the workbench's child is a small supervisor whose
//! parent-death signal makes it kill its process group (bwrap, and a sandbox still being set up);
//! inside, a watchdog holds the read end of a *lifeline* pipe whose only writer is the
//! workbench, and kills everything in the sandbox when it closes — at the end of the command or
//! episode ([`Lifeline`] dropped) or when the workbench dies (the kernel closes it). Killing
//! bwrap's PID 1 then tears the PID namespace down.
//!
//! Where bubblewrap is missing or does not work ([`availability`]), callers fall back to the
//! isolation they had before (a process group, a network namespace where allowed, the same
//! resource limits) — acceptable for the built-in policy, whose code is the workbench's own; for
//! a model's code the workbench refuses unless the user allows it ([`require_for_model_code`]).

pub mod child;
pub mod scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

pub use child::{contain, end, kill_group, spawn_long_lived, ResourceLimits, SwitchUser};
pub use scratch::ScratchDir;

/// The bubblewrap program (default `bwrap` on `PATH`).
pub const ENV_BWRAP: &str = "HARNESS_S_BWRAP";

/// The user a sandbox runs as when the workbench is root: `nobody`.
pub const NOBODY: SwitchUser = SwitchUser { uid: 65534, gid: 65534 };

/// Why a sandbox could not be used.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum SandboxError {
    #[error(
        "model-written code must run in a sandbox, and bubblewrap is not usable here: {0}. Install it (Debian/Ubuntu: \
         apt-get install bubblewrap), or pass --unsafe-no-sandbox to run the model's code with only process-level limits"
    )]
    Unavailable(String),
    #[error("preparing the sandbox: {0}")]
    Setup(String),
}

/// Whether bubblewrap works on this machine, probed once per process.
#[derive(Clone, Debug, PartialEq)]
pub enum Availability {
    Bubblewrap(Bubblewrap),
    /// Why not (not installed, user namespaces disabled, ...).
    Missing(String),
}

/// A working bubblewrap and the options this version knows.
#[derive(Clone, Debug, PartialEq)]
pub struct Bubblewrap {
    pub program: PathBuf,
    /// `--disable-userns` (0.8): no nested user namespaces inside.
    pub disable_userns: bool,
    /// `--size` for a tmpfs (0.8).
    pub tmpfs_size: bool,
}

impl Availability {
    pub fn usable(&self) -> bool {
        matches!(self, Availability::Bubblewrap(_))
    }
}

/// The user sandboxes run as: `nobody` when the workbench is root, else the workbench's own
/// user (unprivileged already).
pub fn sandbox_user() -> Option<SwitchUser> {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    (unsafe { libc::geteuid() } == 0).then_some(NOBODY)
}

/// Probe bubblewrap once: run a minimal sandbox, as the sandbox's user, that must come up.
pub fn availability() -> &'static Availability {
    static PROBED: OnceLock<Availability> = OnceLock::new();
    PROBED.get_or_init(|| {
        let program = std::env::var(ENV_BWRAP).ok().filter(|p| !p.trim().is_empty()).unwrap_or_else(|| "bwrap".into());
        let help = match Command::new(&program).arg("--help").stdin(Stdio::null()).output() {
            Ok(out) => String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Availability::Missing(format!("`{program}` is not installed")),
            Err(e) => return Availability::Missing(format!("`{program}` could not start: {e}")),
        };
        let bw =
            Bubblewrap { program: PathBuf::from(&program), disable_userns: help.contains("--disable-userns"), tmpfs_size: help.contains("--size") };
        let (mut cmd, _lifeline) = match SandboxSpec::new("/").sandboxed(&bw, &["/usr/bin/true"]) {
            Ok(c) => c,
            Err(e) => return Availability::Missing(format!("a pipe for the sandbox: {e}")),
        };
        cmd.stdout(Stdio::null()).stderr(Stdio::piped()).stdin(Stdio::null());
        match cmd.output() {
            Ok(out) if out.status.success() => Availability::Bubblewrap(bw),
            Ok(out) => Availability::Missing(format!("`{program}` cannot make a sandbox here: {}", String::from_utf8_lossy(&out.stderr).trim())),
            Err(e) => Availability::Missing(format!("`{program}` could not start: {e}")),
        }
    })
}

static ALLOW_UNSANDBOXED: AtomicBool = AtomicBool::new(false);

/// The user passed `--unsafe-no-sandbox`: model-written code may run without bubblewrap.
pub fn allow_unsandboxed(allow: bool) {
    ALLOW_UNSANDBOXED.store(allow, Ordering::SeqCst);
}

pub fn unsandboxed_allowed() -> bool {
    ALLOW_UNSANDBOXED.load(Ordering::SeqCst)
}

/// Before running a model's code: Ok when bubblewrap works or the user allowed running without
/// it; otherwise the error says what to install and which flag overrides.
pub fn require_for_model_code() -> Result<(), SandboxError> {
    match availability() {
        Availability::Bubblewrap(_) => Ok(()),
        Availability::Missing(why) if !unsandboxed_allowed() => Err(SandboxError::Unavailable(why.clone())),
        Availability::Missing(why) => {
            static WARNED: OnceLock<()> = OnceLock::new();
            WARNED.get_or_init(|| tracing::warn!("running model-written code without a sandbox (--unsafe-no-sandbox): {why}"));
            Ok(())
        }
    }
}

/// A Python interpreter as a sandbox sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Interpreter {
    /// The program inside the sandbox.
    pub program: String,
    /// Its installation prefix, bound read-only, when it lives outside `/usr`.
    pub prefix: Option<PathBuf>,
}

impl Interpreter {
    /// The folder of the program, to put first on `PATH`.
    pub fn bin_dir(&self) -> String {
        Path::new(&self.program).parent().map(|p| p.display().to_string()).unwrap_or_else(|| "/usr/bin".into())
    }
}

/// The Python a sandbox runs: `python` if given (a path or a name on `PATH`), else the system's
/// `/usr/bin/python3` when present, else the first `python3` on `PATH`.
pub fn interpreter(python: Option<&str>) -> Result<Interpreter, SandboxError> {
    let wanted = python.map(str::trim).filter(|p| !p.is_empty() && *p != "python3");
    if wanted.is_none() && Path::new("/usr/bin/python3").exists() {
        return Ok(Interpreter { program: "/usr/bin/python3".into(), prefix: None });
    }
    let name = wanted.unwrap_or("python3");
    let out = Command::new(name)
        .args(["-I", "-c", "import os, sys; print(os.path.realpath(sys.executable)); print(os.path.realpath(sys.prefix))"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| SandboxError::Setup(format!("cannot start `{name}`: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let (Some(exe), Some(prefix)) = (lines.next(), lines.next()) else {
        return Err(SandboxError::Setup(format!("`{name}` did not say where it is installed")));
    };
    let prefix = PathBuf::from(prefix);
    let inside_usr = prefix.starts_with("/usr");
    Ok(Interpreter { program: exe.to_string(), prefix: (!inside_usr).then_some(prefix) })
}

/// A host folder shown inside the sandbox.
#[derive(Clone, Debug, PartialEq)]
pub struct Mount {
    pub host: PathBuf,
    pub inside: String,
    pub writable: bool,
}

/// What one sandboxed command sees and may use.
#[derive(Clone, Debug, PartialEq)]
pub struct SandboxSpec {
    pub mounts: Vec<Mount>,
    /// `/tmp`: a host folder, or (None) a private tmpfs of `tmp_size` bytes.
    pub tmp: Option<PathBuf>,
    pub tmp_size: u64,
    /// The working directory inside.
    pub cwd: String,
    /// The whole environment (nothing of the workbench's own is passed).
    pub env: Vec<(String, String)>,
    pub limits: ResourceLimits,
    /// Let the command make mount and IPC namespaces of its own inside the sandbox
    /// (`CAP_SYS_ADMIN` in the sandbox's user namespace, nowhere else): for the AppWorld fork
    /// server, which gives each episode's runner a private `/tmp`, `/dev/shm` and IPC namespace
    /// and drops every capability before the runner reads a cell. Nothing else asks for it.
    pub private_mounts: bool,
}

impl SandboxSpec {
    /// Nothing bound but the system, a private 64 MiB `/tmp`, `cwd` as the working directory,
    /// `PATH=/usr/bin:/bin`, command limits of 60 s.
    pub fn new(cwd: &str) -> SandboxSpec {
        SandboxSpec {
            mounts: Vec::new(),
            tmp: None,
            tmp_size: 64 << 20,
            cwd: cwd.to_string(),
            env: vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()), ("LANG".into(), "C.UTF-8".into())],
            limits: ResourceLimits::command(60),
            private_mounts: false,
        }
    }

    pub fn mount(mut self, host: impl Into<PathBuf>, inside: &str, writable: bool) -> Self {
        self.mounts.push(Mount { host: host.into(), inside: inside.to_string(), writable });
        self
    }

    /// Show `interp`'s prefix (read-only) and put its folder first on `PATH`.
    pub fn interpreter(mut self, interp: &Interpreter) -> Self {
        if let Some(p) = &interp.prefix {
            self.mounts.push(Mount { host: p.clone(), inside: p.display().to_string(), writable: false });
        }
        let bin = interp.bin_dir();
        self.set_env("PATH", &format!("{bin}:/usr/local/bin:/usr/bin:/bin"));
        self
    }

    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.to_string()));
    }

    /// The bubblewrap command line for `argv`, with the limits and (as root) the unprivileged
    /// user set in the child, wrapped in the supervisor and the in-sandbox watchdog.
    fn sandboxed(&self, bw: &Bubblewrap, argv: &[&str]) -> std::io::Result<(Command, Lifeline)> {
        let lifeline = Lifeline::new()?;
        let fd = LIFELINE_FD.to_string();
        let mut c = Command::new("/bin/sh");
        c.args(["-c", SUPERVISOR, "sh", SUPERVISOR_SPARE_FD]).arg(&bw.program);
        // bwrap's own processes (the sandbox's PID 1 among them, whose /proc/1/environ the
        // sandbox can read) get no environment: the workbench's API keys stay outside
        c.env_clear();
        c.args(["--ro-bind", "/usr", "/usr"]);
        for (link, target) in [("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/bin", "usr/bin"), ("/sbin", "usr/sbin")] {
            if Path::new(link).exists() {
                c.args(["--symlink", target, link]);
            }
        }
        c.args(["--ro-bind-try", "/etc/alternatives", "/etc/alternatives"]);
        // /dev is a tmpfs bwrap makes writable and unbounded: shared memory gets a tmpfs of its
        // own with the size of /tmp, and the rest of /dev is read-only (no file planted there)
        c.args(["--proc", "/proc", "--dev", "/dev"]);
        if bw.tmpfs_size {
            c.args(["--size", &self.tmp_size.to_string()]);
        }
        c.args(["--tmpfs", "/dev/shm", "--remount-ro", "/dev"]);
        match &self.tmp {
            Some(host) => {
                c.arg("--bind").arg(host).arg("/tmp");
            }
            None => {
                if bw.tmpfs_size {
                    c.args(["--size", &self.tmp_size.to_string()]);
                }
                c.args(["--tmpfs", "/tmp"]);
            }
        }
        for m in &self.mounts {
            c.arg(if m.writable { "--bind" } else { "--ro-bind" }).arg(&m.host).arg(&m.inside);
        }
        c.args(["--chdir", &self.cwd]);
        c.args(["--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]);
        if bw.disable_userns {
            c.arg("--disable-userns");
        }
        if self.private_mounts {
            c.args(["--cap-add", "CAP_SYS_ADMIN"]);
        }
        for (k, v) in &self.env {
            c.args(["--setenv", k, v]);
        }
        // the process limit is set inside, where it counts this sandbox's processes only
        c.args(["--", "/bin/sh", "-c", WATCHDOG, "sh", &fd, &self.limits.processes.to_string()]);
        c.args(argv);
        child::contain_with(&mut c, Some(self.limits), sandbox_user(), libc::SIGTERM, Some((lifeline.read_fd(), LIFELINE_FD)));
        Ok((c, lifeline))
    }

    /// `argv` in a sandbox, and its [`Lifeline`]: keep it while the command runs, drop it to end
    /// the sandbox. Errors when bubblewrap is not usable; the caller decides the fallback.
    pub fn command(&self, argv: &[&str]) -> Result<(Command, Lifeline), SandboxError> {
        match availability() {
            Availability::Bubblewrap(bw) => self.sandboxed(bw, argv).map_err(|e| SandboxError::Setup(format!("a pipe for the sandbox: {e}"))),
            Availability::Missing(why) => Err(SandboxError::Unavailable(why.clone())),
        }
    }
}

/// The lifeline's descriptor in the sandbox's shells: one digit, since a shell redirection
/// cannot name more (the workbench's own descriptors run past 9 once it has a store and threads).
const LIFELINE_FD: libc::c_int = 6;
/// Where the supervisor keeps the real standard input meanwhile.
const SUPERVISOR_SPARE_FD: &str = "9";

/// The workbench's direct child: it starts bubblewrap and, when the workbench dies (its
/// parent-death signal is SIGTERM), kills its whole process group — bubblewrap and a sandbox
/// still being set up, which bubblewrap's own `--die-with-parent` does not yet cover.
///
/// A background command's standard input is /dev/null in a non-interactive shell, so the real
/// one is first kept on a spare descriptor (`$1`).
const SUPERVISOR: &str =
    r#"trap 'kill -KILL 0' HUP INT TERM; s=$1; shift; eval "exec $s<&0"; eval "\"\$@\" <&$s $s<&- &"; eval "exec $s<&-"; wait $!"#;

/// The sandbox's first process: it sets the process limit (`$2`; the shell's own `ulimit`, so no
/// program is started for it: `-u` in bash, `-p` in dash; a shell with neither stops here), starts
/// a watchdog on the lifeline (`$1`, a pipe whose only writer is the workbench) and becomes the
/// command. When the lifeline closes — the command's time is up, its episode ended, or the
/// workbench died — the watchdog kills every process in the sandbox. It holds none of the
/// command's output streams, so their end is the command's end.
const WATCHDOG: &str = r#"fd=$1; n=$2; shift 2; { ulimit -u "$n" || ulimit -p "$n"; } 2>/dev/null || { echo "sandbox: the shell cannot set a process limit" >&2; exit 126; }; { cat <&"$fd"; kill -KILL -1; } </dev/null >/dev/null 2>&1 & exec "$@""#;

/// The workbench's end of a sandbox's lifeline pipe: while it is open the sandbox may run; when
/// it closes (dropped, or the workbench gone) everything in the sandbox is killed.
#[derive(Debug)]
pub struct Lifeline {
    read: std::os::fd::OwnedFd,
    _write: std::os::fd::OwnedFd,
}

impl Lifeline {
    fn new() -> std::io::Result<Lifeline> {
        use std::os::fd::FromRawFd;
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2(2) fills two descriptors this function then owns.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned by nothing else.
        Ok(unsafe { Lifeline { read: std::os::fd::OwnedFd::from_raw_fd(fds[0]), _write: std::os::fd::OwnedFd::from_raw_fd(fds[1]) } })
    }

    fn read_fd(&self) -> libc::c_int {
        use std::os::fd::AsRawFd;
        self.read.as_raw_fd()
    }
}

/// Give a folder (recursively, links not followed) to the sandbox's user, so a sandbox running
/// as `nobody` can write its own work folder. Nothing to do when the workbench is not root.
pub fn hand_over(path: &Path) -> std::io::Result<()> {
    let Some(user) = sandbox_user() else { return Ok(()) };
    chown_tree(path, user.uid, user.gid)
}

/// Take a folder back from the sandbox's user (the reverse of [`hand_over`]) and close its top
/// to everyone else.
pub fn take_back(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if sandbox_user().is_some() {
        // SAFETY: geteuid/getegid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        chown_tree(path, uid, gid)?;
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

fn chown_tree(path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_dir() {
        for e in std::fs::read_dir(path)? {
            chown_tree(&e?.path(), uid, gid)?;
        }
    }
    Ok(())
}
