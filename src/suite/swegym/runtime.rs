//! Where an instance's repository lives while an agent works on it, behind one [`Runtime`] trait.
//!
//! - [`LocalRuntime`]: a temporary copy of a repository on this machine. Every command runs in
//!   its own process group with a time limit and an output cap, is killed (with everything it
//!   started) on timeout, runs in a new network namespace where the OS allows it (`unshare -rn`,
//!   else `unshare -n`, else no isolation — [`Isolation`] says which), and gets `HOME` and
//!   `TMPDIR` inside the episode's temporary folder, which is removed when the runtime is dropped.
//! - [`ContainerRuntime`]: a docker or podman container (local or remote engine) of the
//!   instance's SWE-bench image, [`image_name`], with the repository at `/testbed`.
//!
//! Both present the repository at [`REPO_ROOT`] (`/testbed`): the local runtime maps that prefix
//! onto its copy in commands and maps the copy's real path back in output, so what the agent sees
//! does not depend on where the copy happens to be.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::tree;
use crate::sandbox::scratch::Medium;
use crate::sandbox::{kill_group, ResourceLimits, ScratchDir};
use crate::suite::EnvError;

/// Where the repository appears to the agent, in every runtime.
pub const REPO_ROOT: &str = "/testbed";

/// Limits of one command.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub timeout: Duration,
    /// Bytes of output kept; the rest is read and dropped.
    pub max_output: usize,
}

impl Limits {
    /// The kernel's limits on every process of a command run under these limits.
    fn kernel(&self) -> ResourceLimits {
        ResourceLimits::command(self.timeout.as_secs().max(1))
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits { timeout: Duration::from_secs(60), max_output: 256 * 1024 }
    }
}

/// What a command printed (stdout and stderr interleaved) and how it ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExecOutput {
    pub output: String,
    /// `None` when killed by a signal (e.g. on timeout).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The output was longer than the cap.
    pub truncated: bool,
}

impl ExecOutput {
    pub fn ok(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// A place where an instance's repository can be worked on and tested.
pub trait Runtime: Send {
    /// Run a shell (bash) command with the repository root as working directory.
    fn exec(&mut self, command: &str, stdin: Option<&[u8]>, limits: &Limits) -> Result<ExecOutput, EnvError>;
    /// A short description for logs and score details (`local, network isolated`, `docker ...`).
    fn describe(&self) -> String;
    /// Why the workspace is past its quota (of bytes or of entries), where the runtime keeps
    /// one; checked after every command. `None` when within it.
    fn over_quota(&self) -> Option<String> {
        None
    }
    /// A digest of what a command in this workspace can read of it, where the runtime can tell
    /// cheaply (see [`LocalRuntime::content_key`]).
    fn content_key(&self) -> Option<String> {
        None
    }
    /// Run a command whose output depends only on the workspace's content (a file read, a diff
    /// against a named commit, hermetic tests). A runtime that can digest its content answers
    /// from an earlier run of the same command in a workspace with the same content; side
    /// effects outside the digest (the git index) are then not repeated.
    fn exec_pure(&mut self, command: &str, limits: &Limits) -> Result<ExecOutput, EnvError> {
        let Some(key) = self.content_key() else { return self.exec(command, None, limits) };
        let key = (key, command.to_string());
        if let Some(out) = pure_results().lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(out.clone());
        }
        let out = self.exec(command, None, limits)?;
        let mut cache = pure_results().lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= PURE_RESULTS_LIMIT {
            cache.clear();
        }
        cache.insert(key, out.clone());
        Ok(out)
    }
    /// Replace the content of the file at `path` (a path under [`REPO_ROOT`]) with `content`,
    /// creating it and its folders if missing, as the agent's own user would. By default a shell
    /// command in the workspace; a runtime that holds the workspace on this machine may write an
    /// existing file in place.
    fn write_file(&mut self, path: &str, content: &[u8], limits: &Limits) -> Result<ExecOutput, EnvError> {
        write_by_shell(self, path, content, limits)
    }
}

/// [`Runtime::write_file`] as a command in the workspace (`mkdir -p` and `cat >`).
fn write_by_shell<R: Runtime + ?Sized>(rt: &mut R, path: &str, content: &[u8], limits: &Limits) -> Result<ExecOutput, EnvError> {
    let q = shell_quote(path);
    rt.exec(&format!("mkdir -p \"$(dirname {q})\" && cat > {q}"), Some(content), limits)
}

/// Results of pure commands by (workspace content, command), for every workspace of the
/// process; see [`Runtime::exec_pure`].
fn pure_results() -> &'static Mutex<std::collections::HashMap<(String, String), ExecOutput>> {
    static CACHE: OnceLock<Mutex<std::collections::HashMap<(String, String), ExecOutput>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The most pure-command results kept (a test log or a file is a few kilobytes); past it the
/// cache starts over.
const PURE_RESULTS_LIMIT: usize = 20_000;

/// Single-quote `s` for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

// ------------------------------------------------------------------------------------------------
// Process runner shared by both runtimes.
// ------------------------------------------------------------------------------------------------

/// Run `cmd` (already [`contain`](crate::sandbox::contain)ed: its own process group, dying with
/// the workbench), feeding `stdin`, collecting stdout+stderr up to the cap, killing the whole
/// group on timeout and after the command ends (so nothing it left running in the background
/// survives it; a sandbox's processes die with its `bwrap`).
pub fn run_process(mut cmd: Command, stdin: Option<&[u8]>, limits: &Limits) -> Result<ExecOutput, EnvError> {
    let (mut reader, writer) = std::io::pipe().map_err(|e| EnvError::Infra(format!("pipe: {e}")))?;
    let writer2 = writer.try_clone().map_err(|e| EnvError::Infra(format!("pipe: {e}")))?;
    cmd.stdout(writer).stderr(writer2).stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().map_err(|e| spawn_error(&cmd, e))?;
    // the parent's copies of the write end must go, or the reader never sees end of file
    drop(cmd);
    let pgid = child.id();
    if let (Some(data), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&data);
        });
    }
    let buf = Arc::new(Mutex::new((Vec::<u8>::new(), false)));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    {
        let buf = buf.clone();
        let cap = limits.max_output;
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match reader.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut b = buf.lock().unwrap_or_else(|p| p.into_inner());
                        let room = cap.saturating_sub(b.0.len());
                        if n > room {
                            b.1 = true;
                        }
                        let keep = n.min(room);
                        b.0.extend_from_slice(&chunk[..keep]);
                    }
                }
            }
            let _ = done_tx.send(());
        });
    }
    let started = Instant::now();
    let mut timed_out = false;
    let exited = ExitWatch::new(pgid);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(e) => return Err(EnvError::Infra(format!("waiting for a command: {e}"))),
        }
        let left = limits.timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            timed_out = true;
            kill_group(pgid);
            break child.wait().ok();
        }
        exited.wait(left);
    };
    kill_group(pgid);
    // a process that left the group may still hold the pipe: do not wait for it forever
    let _ = done_rx.recv_timeout(Duration::from_millis(500));
    let (bytes, truncated) = {
        let b = buf.lock().unwrap_or_else(|p| p.into_inner());
        (b.0.clone(), b.1)
    };
    use std::os::unix::process::ExitStatusExt;
    let exit_code = if timed_out { None } else { status.and_then(|s| s.code().or_else(|| s.signal().map(|sig| 128 + sig))) };
    Ok(ExecOutput { output: String::from_utf8_lossy(&bytes).into_owned(), exit_code, timed_out, truncated })
}

/// Why a command could not start. Bytes no command line can carry (a NUL) and a command line
/// past the kernel's limit for one argument (128 KiB) come from the command's text, so from the
/// agent's action ([`EnvError::Action`]); anything else is the machine's ([`EnvError::Infra`]).
fn spawn_error(cmd: &Command, e: std::io::Error) -> EnvError {
    let program = cmd.get_program().to_string_lossy().into_owned();
    if e.kind() == std::io::ErrorKind::InvalidInput && e.to_string().contains("nul byte") {
        EnvError::Action("the command contains a NUL byte, which no command line can carry".into())
    } else if e.raw_os_error() == Some(libc::E2BIG) {
        EnvError::Action(format!(
            "the command is too long to run: one command line may hold at most {} bytes (write long content to a file with the editor instead)",
            MAX_ARG_BYTES
        ))
    } else {
        EnvError::Infra(format!("could not start `{program}`: {e}"))
    }
}

/// The kernel's limit on one argument of a command line (`MAX_ARG_STRLEN`, 32 pages).
pub const MAX_ARG_BYTES: usize = 128 * 1024;

/// Waits for a child's exit without polling where the kernel offers a process descriptor
/// (Linux 5.3+): the command's end is seen at once instead of at the next poll, which on short
/// commands (a file read, a diff) is a measurable share of their time.
struct ExitWatch(Option<std::os::fd::OwnedFd>);

impl ExitWatch {
    fn new(pid: u32) -> ExitWatch {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open(2) takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        // SAFETY: a non-negative result is a descriptor this process now owns.
        ExitWatch((fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as libc::c_int) }))
    }

    /// Return when the child has exited, or after `at_most` (a short sleep without a descriptor).
    fn wait(&self, at_most: Duration) {
        use std::os::fd::AsRawFd;
        match &self.0 {
            Some(fd) => {
                let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                let ms = at_most.as_millis().clamp(1, 1000) as libc::c_int;
                // SAFETY: one valid pollfd for the duration of the call.
                unsafe { libc::poll(&mut p, 1, ms) };
            }
            None => std::thread::sleep(at_most.min(Duration::from_millis(2))),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Local runtime.
// ------------------------------------------------------------------------------------------------

/// How the local runtime contains the commands it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// A bubblewrap sandbox ([`crate::sandbox`]): only `/usr`, the repository at `/testbed` and
    /// the episode's own `/tmp` and home are visible; no network; own PID namespace.
    Sandbox,
    /// No bubblewrap: a new user and network namespace (`unshare -rn`), unprivileged.
    UserAndNetwork,
    /// No bubblewrap: a new network namespace (`unshare -n`), for a privileged user.
    Network,
    /// The OS allows none of these; commands can reach the network.
    None,
}

impl Isolation {
    /// The best isolation this machine allows, probed once.
    pub fn probe() -> Isolation {
        static PROBED: OnceLock<Isolation> = OnceLock::new();
        *PROBED.get_or_init(|| {
            if crate::sandbox::availability().usable() {
                return Isolation::Sandbox;
            }
            let works = |args: &[&str]| {
                Command::new("unshare")
                    .args(args)
                    .arg("true")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .map(|s| s.success())
                    .unwrap_or(false)
            };
            if works(&["-rn"]) {
                Isolation::UserAndNetwork
            } else if works(&["-n"]) {
                Isolation::Network
            } else {
                Isolation::None
            }
        })
    }

    fn prefix(self) -> &'static [&'static str] {
        match self {
            Isolation::UserAndNetwork => &["unshare", "-rn"],
            Isolation::Network => &["unshare", "-n"],
            Isolation::Sandbox | Isolation::None => &[],
        }
    }
}

/// The directory of the real `python3` (not a version-manager shim, which costs a start-up per
/// call), put first on the runtime's `PATH` when commands run outside a sandbox.
fn python_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import os, sys; print(os.path.dirname(os.path.realpath(sys.executable)))"])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (!s.is_empty() && out.status.success()).then(|| PathBuf::from(s))
    })
    .clone()
}

/// The Python a sandbox runs (the system's, else the one on `PATH` with its prefix bound).
fn sandbox_python() -> Option<crate::sandbox::Interpreter> {
    static PY: OnceLock<Option<crate::sandbox::Interpreter>> = OnceLock::new();
    PY.get_or_init(|| crate::sandbox::interpreter(None).ok()).clone()
}

/// Disk a workspace may use (the repository, its home and temporary folder together, in
/// allocated blocks); past it the episode ends. A single file is capped lower by the kernel
/// (RLIMIT_FSIZE).
pub const DISK_QUOTA: u64 = 2 << 30;
/// The quota of a workspace held in memory ([`Medium::Memory`](crate::sandbox::scratch::Medium)):
/// a bundled repository is a few hundred kilobytes, and a workspace that fills memory hurts the
/// whole machine sooner than one that fills a disk.
pub const MEMORY_QUOTA: u64 = 256 << 20;
/// Entries (files, folders, links) a workspace on disk may hold: an empty file costs its medium
/// an inode (about a kilobyte of kernel memory on a tmpfs) though it holds no block. A large
/// official repository checked out with its history holds a few tens of thousands.
pub const DISK_INODE_QUOTA: u64 = 400_000;
/// Entries a workspace in memory may hold (a bundled repository holds under a hundred).
pub const MEMORY_INODE_QUOTA: u64 = 50_000;

/// A temporary copy of a repository: `testbed/`, `home/` and `tmp/` in a folder under the
/// workbench's scratch root. Everything is removed on drop.
pub struct LocalRuntime {
    dir: ScratchDir,
    repo: PathBuf,
    isolation: Isolation,
}

impl LocalRuntime {
    /// Copy `source` (skipping `.git` and Python caches) into a fresh temporary folder.
    pub fn from_dir(source: &Path) -> Result<LocalRuntime, EnvError> {
        Self::filled(|repo| {
            copy_tree(source, repo, false).map_err(|e| EnvError::Infra(format!("copying {} into the runtime: {e}", source.display())))
        })
    }

    /// A fresh copy of another runtime's repository, its git history included.
    pub fn copy_of(other: &LocalRuntime) -> Result<LocalRuntime, EnvError> {
        Self::filled(|repo| {
            copy_tree(&other.repo, repo, true).map_err(|e| EnvError::Infra(format!("copying {} into the runtime: {e}", other.repo.display())))
        })
    }

    /// An empty repository folder.
    pub fn empty() -> Result<LocalRuntime, EnvError> {
        Self::filled(|_| Ok(()))
    }

    fn filled(fill: impl FnOnce(&Path) -> Result<(), EnvError>) -> Result<LocalRuntime, EnvError> {
        // local workspaces are copies of bundled repositories: small, made and removed by the
        // thousand, so kept in memory where the machine has room for it
        let dir = ScratchDir::on(Medium::Memory, "swe").map_err(|e| EnvError::Infra(format!("creating a scratch folder: {e}")))?;
        let repo = dir.path().join("testbed");
        for d in [&repo, &dir.path().join("home"), &dir.path().join("tmp")] {
            std::fs::create_dir_all(d).map_err(|e| EnvError::Infra(format!("creating {}: {e}", d.display())))?;
        }
        fill(&repo)?;
        let isolation = Isolation::probe();
        if isolation == Isolation::Sandbox {
            crate::sandbox::hand_over(dir.path())
                .map_err(|e| EnvError::Infra(format!("giving {} to the sandbox user: {e}", dir.path().display())))?;
        }
        Ok(LocalRuntime { dir, repo, isolation })
    }

    /// Take the folder back from the sandbox's user and close it to everyone else: after this
    /// no sandbox can write it, even outside its namespace (a pristine template).
    pub fn seal(&self) -> Result<(), EnvError> {
        crate::sandbox::take_back(self.dir.path()).map_err(|e| EnvError::Infra(format!("sealing {}: {e}", self.dir.path().display())))
    }

    /// The temporary folder holding the copy (for tests and cleanup checks).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn repo(&self) -> &Path {
        &self.repo
    }

    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// The real path of `shown` (a path under [`REPO_ROOT`]) when the workbench may write it in
    /// place for the agent: a regular file of the copy with one link, writable by its owner,
    /// reached through folders that are not links. Called between commands, when nothing of
    /// the sandbox runs, so what is checked here is what gets written.
    fn file_in_place(&self, shown: &str) -> Option<PathBuf> {
        use std::os::unix::fs::MetadataExt;
        let rel = shown.strip_prefix(REPO_ROOT)?.strip_prefix('/')?;
        let parts: Vec<&str> = rel.split('/').collect();
        if parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
            return None;
        }
        let mut real = self.repo.clone();
        for (i, part) in parts.iter().enumerate() {
            real.push(part);
            let meta = std::fs::symlink_metadata(&real).ok()?;
            let last = i + 1 == parts.len();
            let fits = if last { meta.file_type().is_file() && meta.nlink() == 1 && meta.mode() & 0o200 != 0 } else { meta.file_type().is_dir() };
            if !fits {
                return None;
            }
        }
        Some(real)
    }

    /// Blocks and entries the workspace holds, every level deep, links not followed.
    pub fn usage(&self) -> Result<tree::Usage, tree::WalkError> {
        tree::usage(self.dir.path())
    }

    /// The workspace's quotas: (bytes, entries).
    pub fn quotas(&self) -> (u64, u64) {
        match self.dir.medium() {
            Medium::Memory => (MEMORY_QUOTA, MEMORY_INODE_QUOTA),
            Medium::Disk => (DISK_QUOTA, DISK_INODE_QUOTA),
        }
    }

    /// A digest of everything of the workspace a command can read: the repository with its
    /// `.git` and any Python caches (an interpreter reads both), the home and the temporary
    /// folder; every entry's path, mode and bytes, links by their target's text (never
    /// followed), however deep. Two workspaces with the same key look alike to a command that
    /// reads only its workspace. Left out: `.git/index`, whose stat data differs between any
    /// two copies and which no pure command reads ([`workspace_diff`](super::workspace_diff)
    /// uses an index of its own). `None` (no caching) when some entry cannot be read or the tree
    /// is too deep to walk. Read between commands, when nothing of the sandbox runs.
    pub fn content_key(&self) -> Option<String> {
        tree::digest(self.dir.path(), &|p| p == b"testbed/.git/index")
    }

    fn to_real(&self, command: &str) -> String {
        command.replace(REPO_ROOT, &self.repo.display().to_string())
    }

    fn to_shown(&self, output: &str) -> String {
        output.replace(&self.repo.display().to_string(), REPO_ROOT).replace(&self.dir.path().display().to_string(), "")
    }

    fn sandboxed(&self, command: &str, limits: &Limits) -> Result<(Command, crate::sandbox::Lifeline), EnvError> {
        let mut spec =
            crate::sandbox::SandboxSpec::new(REPO_ROOT).mount(&self.repo, REPO_ROOT, true).mount(self.dir.path().join("home"), "/home/agent", true);
        spec.tmp = Some(self.dir.path().join("tmp"));
        if let Some(py) = sandbox_python() {
            spec = spec.interpreter(&py);
        }
        for (k, v) in [("HOME", "/home/agent"), ("TMPDIR", "/tmp"), ("USER", "agent")] {
            spec.set_env(k, v);
        }
        for (k, v) in COMMON_ENV {
            spec.set_env(k, v);
        }
        spec.limits = limits.kernel();
        spec.command(&["bash", "-c", command]).map_err(|e| EnvError::Infra(e.to_string()))
    }

    fn unsandboxed(&self, command: &str, limits: &Limits) -> Command {
        let prefix = self.isolation.prefix();
        let mut cmd = match prefix.split_first() {
            Some((p, rest)) => {
                let mut c = Command::new(p);
                c.args(rest).arg("bash");
                c
            }
            None => Command::new("bash"),
        };
        cmd.arg("-c").arg(self.to_real(command)).current_dir(&self.repo).env_clear();
        let mut path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        if let Some(py) = python_dir() {
            path = format!("{}:{path}", py.display());
        }
        cmd.env("PATH", path).env("HOME", self.dir.path().join("home")).env("TMPDIR", self.dir.path().join("tmp"));
        for (k, v) in COMMON_ENV {
            cmd.env(k, v);
        }
        crate::sandbox::contain(&mut cmd, Some(limits.kernel()), None);
        cmd
    }
}

/// The environment every command gets besides `PATH`, `HOME` and `TMPDIR`.
const COMMON_ENV: &[(&str, &str)] = &[
    ("LANG", "C.UTF-8"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("PYTHONHASHSEED", "0"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("TERM", "dumb"),
];

fn copy_tree(from: &Path, to: &Path, with_git: bool) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if (n == ".git" && !with_git) || n == "__pycache__" || n.ends_with(".pyc") {
            continue;
        }
        // links are not followed (nor copied): a link the agent planted never reads the host
        let ty = e.file_type()?;
        let target = to.join(&name);
        if ty.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_tree(&e.path(), &target, with_git)?;
        } else if ty.is_file() {
            // contents only: the copy's modes come from the umask, never from the source
            std::fs::write(&target, std::fs::read(e.path())?)?;
        }
    }
    Ok(())
}

impl Runtime for LocalRuntime {
    fn exec(&mut self, command: &str, stdin: Option<&[u8]>, limits: &Limits) -> Result<ExecOutput, EnvError> {
        if self.isolation == Isolation::Sandbox {
            let (cmd, lifeline) = self.sandboxed(command, limits)?;
            let out = run_process(cmd, stdin, limits);
            // whatever the command left behind in its sandbox dies now
            drop(lifeline);
            return out;
        }
        let cmd = self.unsandboxed(command, limits);
        let mut out = run_process(cmd, stdin, limits)?;
        out.output = self.to_shown(&out.output);
        Ok(out)
    }

    fn describe(&self) -> String {
        match self.isolation {
            Isolation::Sandbox => "local (bubblewrap sandbox)".into(),
            Isolation::None => "local (no network isolation available)".into(),
            _ => "local (network isolated, no sandbox)".into(),
        }
    }

    fn over_quota(&self) -> Option<String> {
        let (bytes, inodes) = self.quotas();
        match self.usage() {
            Ok(u) if u.bytes > bytes => Some(format!("the workspace holds {} bytes, past its disk quota of {bytes} bytes", u.bytes)),
            Ok(u) if u.inodes > inodes => {
                Some(format!("the workspace holds {} files and folders, past its disk quota of {inodes} entries", u.inodes))
            }
            Ok(_) => None,
            Err(e @ tree::WalkError::TooDeep) => Some(format!("{e}, past its disk quota")),
            // the workbench walks as the owner (or root): an entry it cannot read is one the
            // agent closed, and a workspace nobody can measure is not within its quota
            Err(e) => Some(format!("the workspace cannot be measured against its disk quota ({e})")),
        }
    }

    fn content_key(&self) -> Option<String> {
        LocalRuntime::content_key(self)
    }

    /// An existing file the agent's user may write is written in place (no sandbox and shell
    /// for what is most of an editing agent's commands); anything else — a new file, a link on
    /// the way, a read-only or hard-linked file, content past the kernel's file-size limit —
    /// goes through a command in the sandbox, so the outcome is the agent's user's either way.
    fn write_file(&mut self, path: &str, content: &[u8], limits: &Limits) -> Result<ExecOutput, EnvError> {
        match self.file_in_place(path).filter(|_| content.len() as u64 <= limits.kernel().file_size) {
            Some(real) => {
                use std::os::unix::fs::OpenOptionsExt;
                let written = std::fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&real)
                    .and_then(|mut f| f.write_all(content));
                match written {
                    Ok(()) => Ok(ExecOutput { exit_code: Some(0), ..ExecOutput::default() }),
                    Err(e) => Ok(ExecOutput { output: format!("cat: {path}: {e}"), exit_code: Some(1), ..ExecOutput::default() }),
                }
            }
            None => write_by_shell(self, path, content, limits),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Container runtime.
// ------------------------------------------------------------------------------------------------

/// The SWE-bench evaluation image of an instance:
/// `xingyaoww/sweb.eval.x86_64.<instance_id with __ replaced by _s_, lower-cased>`.
pub fn image_name(instance_id: &str) -> String {
    format!("xingyaoww/sweb.eval.x86_64.{}", instance_id.replace("__", "_s_").to_lowercase())
}

/// How containers are started and reached: the engine program, an optional remote host, and the
/// setup every command runs first (the images' conda environment).
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerConfig {
    /// `docker` or `podman` (or a path to either).
    pub engine: String,
    /// A remote engine: `docker -H <host>` / `podman --remote --url <host>`.
    pub host: Option<String>,
    pub setup: String,
}

impl Default for ContainerConfig {
    fn default() -> Self {
        ContainerConfig { engine: "docker".into(), host: None, setup: "source /opt/miniconda3/bin/activate && conda activate testbed".into() }
    }
}

impl ContainerConfig {
    fn is_podman(&self) -> bool {
        Path::new(&self.engine).file_name().map(|n| n.to_string_lossy().starts_with("podman")).unwrap_or(false)
    }

    /// The engine and its host options.
    pub fn engine_argv(&self) -> Vec<String> {
        let mut v = vec![self.engine.clone()];
        if let Some(h) = &self.host {
            if self.is_podman() {
                v.extend(["--remote".into(), "--url".into(), h.clone()]);
            } else {
                v.extend(["-H".into(), h.clone()]);
            }
        }
        v
    }

    /// Start a detached container of `image` named `name`, without network, idling so commands
    /// can be executed in it, carrying `labels` (who started it: see [`owner_label`]).
    pub fn run_argv(&self, name: &str, image: &str, labels: &[(&str, String)]) -> Vec<String> {
        let mut v = self.engine_argv();
        v.extend(["run", "-d", "--rm", "--name", name].iter().map(|s| s.to_string()));
        for (k, val) in labels {
            v.extend(["--label".to_string(), format!("{k}={val}")]);
        }
        v.extend(["--network", "none", "-w", REPO_ROOT, image, "sleep", "infinity"].iter().map(|s| s.to_string()));
        v
    }

    /// Print the image's id if the engine holds it locally (exit status 0), else fail; never
    /// pulls.
    pub fn image_inspect_argv(&self, image: &str) -> Vec<String> {
        let mut v = self.engine_argv();
        v.extend(["image", "inspect", "--format", "{{.Id}}", image].iter().map(|s| s.to_string()));
        v
    }

    /// The ids of every container, running or not, that carries the owner label.
    pub fn labelled_argv(&self) -> Vec<String> {
        let mut v = self.engine_argv();
        v.extend(["ps", "-a", "-q", "--no-trunc", "--filter", &format!("label={LABEL_OWNER}")].iter().map(|s| s.to_string()));
        v
    }

    /// Each container's id and owner label, one per line (`docker` and `podman` alike).
    pub fn owners_argv(&self, ids: &[String]) -> Vec<String> {
        let mut v = self.engine_argv();
        v.extend(["inspect".to_string(), "--format".into(), format!("{{{{.Id}}}} {{{{index .Config.Labels \"{LABEL_OWNER}\"}}}}")]);
        v.extend(ids.iter().cloned());
        v
    }

    /// Does the engine hold `image` locally? An engine that cannot be run is an error.
    pub fn image_present(&self, image: &str) -> Result<bool, EnvError> {
        let argv = self.image_inspect_argv(image);
        let out = run_process(command_of(&argv), None, &Limits { timeout: Duration::from_secs(60), max_output: 64 * 1024 })?;
        Ok(out.ok())
    }

    /// Execute `command` in the container under the setup, killed inside the container after
    /// `timeout` as well as from outside.
    pub fn exec_argv(&self, name: &str, command: &str, timeout: Duration, stdin: bool) -> Vec<String> {
        let mut v = self.engine_argv();
        v.push("exec".into());
        if stdin {
            v.push("-i".into());
        }
        let script = if self.setup.is_empty() { command.to_string() } else { format!("{}\ncd {REPO_ROOT}\n{command}", self.setup) };
        v.extend([
            "-w".to_string(),
            REPO_ROOT.into(),
            name.into(),
            "timeout".into(),
            "-s".into(),
            "KILL".into(),
            format!("{}", timeout.as_secs().max(1)),
        ]);
        v.extend(["/bin/bash".to_string(), "-c".into(), script]);
        v
    }

    /// Remove the container.
    pub fn rm_argv(&self, name: &str) -> Vec<String> {
        let mut v = self.engine_argv();
        v.extend(["rm", "-f", name].iter().map(|s| s.to_string()));
        v
    }
}

fn command_of(argv: &[String]) -> Command {
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..]);
    crate::sandbox::contain(&mut c, None, None);
    c
}

static NEXT_DIR: AtomicU64 = AtomicU64::new(0);

/// The label naming the process that started a container: `<host>/<pid>/<start time>` (the
/// start time in clock ticks since boot, so a reused pid is not mistaken for the owner).
pub const LABEL_OWNER: &str = "harness-s.owner";
/// The label naming the experiment run a container serves (`-` outside a run).
pub const LABEL_RUN: &str = "harness-s.run";

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "localhost".into())
}

/// A process's start time in clock ticks since boot (`/proc/<pid>/stat`, field 22), or `None`
/// when there is no such process.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name (field 2) is in parentheses and may hold spaces: count after its end
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// This process as the owner label gives it.
pub fn owner_label() -> String {
    let pid = std::process::id();
    format!("{}/{pid}/{}", host_name(), start_ticks(pid).unwrap_or(0))
}

/// Is the process an owner label names gone (on this machine)? Labels of other machines, and
/// labels this version cannot read, are never taken for gone.
fn owner_gone(label: &str) -> bool {
    let mut parts = label.rsplitn(3, '/');
    let (Some(ticks), Some(pid), Some(host)) = (parts.next(), parts.next(), parts.next()) else { return false };
    let (Ok(ticks), Ok(pid)) = (ticks.parse::<u64>(), pid.parse::<u32>()) else { return false };
    host == host_name() && start_ticks(pid) != Some(ticks)
}

static RUN_LABEL: Mutex<String> = Mutex::new(String::new());

/// Name the experiment run this process's containers serve from now on.
pub fn label_run(run_id: i64) {
    *RUN_LABEL.lock().unwrap_or_else(|p| p.into_inner()) = run_id.to_string();
}

fn run_label() -> String {
    let r = RUN_LABEL.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if r.is_empty() {
        "-".into()
    } else {
        r
    }
}

/// Remove the containers that a workbench process on this machine started and could not remove
/// because it ended first (killed, or the machine lost power): their owner label names a process
/// that is gone. Done once per engine and host by each process, before its first container.
/// Returns how many were removed.
pub fn sweep_abandoned(config: &ContainerConfig) -> Result<usize, EnvError> {
    let limits = Limits { timeout: Duration::from_secs(120), max_output: 1024 * 1024 };
    let listed = run_process(command_of(&config.labelled_argv()), None, &limits)?;
    if !listed.ok() {
        return Err(EnvError::Infra(format!("`{}` failed: {}", config.labelled_argv().join(" "), listed.output.trim())));
    }
    let ids: Vec<String> = listed.output.split_whitespace().map(str::to_string).collect();
    if ids.is_empty() {
        return Ok(0);
    }
    let owners = run_process(command_of(&config.owners_argv(&ids)), None, &limits)?;
    let mut removed = 0;
    for line in owners.output.lines() {
        let Some((id, owner)) = line.trim().split_once(' ') else { continue };
        if owner_gone(owner.trim()) {
            let out = run_process(command_of(&config.rm_argv(id)), None, &limits)?;
            if out.ok() {
                removed += 1;
                tracing::info!("removed container {id} left by an ended workbench process ({owner})");
            }
        }
    }
    Ok(removed)
}

/// Sweep each engine (and host) once per process.
fn sweep_once(config: &ContainerConfig) {
    static SWEPT: OnceLock<Mutex<std::collections::HashSet<Vec<String>>>> = OnceLock::new();
    let mut swept = SWEPT.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if swept.insert(config.engine_argv()) {
        if let Err(e) = sweep_abandoned(config) {
            tracing::warn!("could not sweep containers left by ended workbench processes: {e}");
        }
    }
}

/// A running container of an instance's image.
pub struct ContainerRuntime {
    config: ContainerConfig,
    name: String,
    image: String,
}

impl ContainerRuntime {
    /// Start a container for `instance_id`.
    pub fn start(config: ContainerConfig, instance_id: &str) -> Result<ContainerRuntime, EnvError> {
        let image = image_name(instance_id);
        let name = format!(
            "harness-s-{}-{}-{}",
            instance_id.replace("__", "_s_").to_lowercase(),
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        );
        sweep_once(&config);
        let argv = config.run_argv(&name, &image, &[(LABEL_OWNER, owner_label()), (LABEL_RUN, run_label())]);
        let out = run_process(command_of(&argv), None, &Limits { timeout: Duration::from_secs(600), max_output: 64 * 1024 })?;
        if !out.ok() {
            return Err(EnvError::Infra(format!("`{}` failed: {}", argv.join(" "), out.output.trim())));
        }
        Ok(ContainerRuntime { config, name, image })
    }
}

impl Drop for ContainerRuntime {
    fn drop(&mut self) {
        let argv = self.config.rm_argv(&self.name);
        let _ = run_process(command_of(&argv), None, &Limits { timeout: Duration::from_secs(60), max_output: 4096 });
    }
}

impl Runtime for ContainerRuntime {
    fn exec(&mut self, command: &str, stdin: Option<&[u8]>, limits: &Limits) -> Result<ExecOutput, EnvError> {
        let argv = self.config.exec_argv(&self.name, command, limits.timeout, stdin.is_some());
        // the engine's own start-up gets a little time on top of the command's limit
        let outer = Limits { timeout: limits.timeout + Duration::from_secs(10), max_output: limits.max_output };
        let mut out = run_process(command_of(&argv), stdin, &outer)?;
        if out.exit_code == Some(137) && !out.timed_out {
            out.timed_out = true;
            out.exit_code = None;
        }
        Ok(out)
    }

    fn describe(&self) -> String {
        format!("{} container {} of {}", self.config.engine, self.name, self.image)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_follow_swe_gym() {
        assert_eq!(image_name("django__django-16255"), "xingyaoww/sweb.eval.x86_64.django_s_django-16255");
        assert_eq!(image_name("Pydantic__Pydantic-5021"), "xingyaoww/sweb.eval.x86_64.pydantic_s_pydantic-5021");
    }

    #[test]
    fn container_commands() {
        let c = ContainerConfig::default();
        assert_eq!(
            c.run_argv("n1", "img:latest", &[(LABEL_OWNER, "h/1/2".into())]).join(" "),
            "docker run -d --rm --name n1 --label harness-s.owner=h/1/2 --network none -w /testbed img:latest sleep infinity"
        );
        assert_eq!(c.image_inspect_argv("img").join(" "), "docker image inspect --format {{.Id}} img");
        assert_eq!(c.labelled_argv().join(" "), "docker ps -a -q --no-trunc --filter label=harness-s.owner");
        assert_eq!(c.owners_argv(&["a".into()]).join(" "), "docker inspect --format {{.Id}} {{index .Config.Labels \"harness-s.owner\"}} a");
        let e = c.exec_argv("n1", "ls -la", Duration::from_secs(30), false);
        assert_eq!(e[..11].join(" "), "docker exec -w /testbed n1 timeout -s KILL 30 /bin/bash -c");
        assert_eq!(e[11], "source /opt/miniconda3/bin/activate && conda activate testbed\ncd /testbed\nls -la");
        assert_eq!(c.rm_argv("n1").join(" "), "docker rm -f n1");
        let remote = ContainerConfig { engine: "podman".into(), host: Some("ssh://u@h/run/podman.sock".into()), setup: String::new() };
        assert_eq!(
            remote.exec_argv("n", "x", Duration::from_millis(10), true).join(" "),
            "podman --remote --url ssh://u@h/run/podman.sock exec -i -w /testbed n timeout -s KILL 1 /bin/bash -c x"
        );
        let d = ContainerConfig { host: Some("tcp://10.0.0.2:2375".into()), ..Default::default() };
        assert_eq!(d.rm_argv("n").join(" "), "docker -H tcp://10.0.0.2:2375 rm -f n");
    }

    #[test]
    fn owner_labels_name_a_live_process_until_it_ends() {
        let me = owner_label();
        assert!(!owner_gone(&me), "{me}");
        let (rest, _) = me.rsplit_once('/').unwrap();
        assert!(owner_gone(&format!("{rest}/1")), "another start time is another process");
        assert!(!owner_gone("another-machine/1/1"), "another machine's containers are left alone");
        assert!(!owner_gone("garbage"));
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        let ticks = start_ticks(pid);
        child.wait().unwrap();
        assert!(owner_gone(&format!("{}/{pid}/{}", host_name(), ticks.unwrap_or(0))));
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("a'b"), "'a'\\''b'");
    }
}
