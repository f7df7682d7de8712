//! Scratch directories: every temporary folder the workbench makes lives under one per-process
//! root, `<tmp>/harness-s-<pid>-<nanos>/`, which holds a `.lock` file the process keeps locked
//! (`flock`) for as long as it lives.
//!
//! - On a normal exit, Ctrl-C or SIGTERM the root is removed ([`remove_root`]).
//! - After a crash or SIGKILL the kernel drops the lock; the next workbench process that starts
//!   ([`sweep_stale`]) finds roots whose lock it can take and removes them. A root whose owner is
//!   alive stays locked, so two workbenches never remove each other's work.
//!
//! The lock's descriptor is close-on-exec: a child cannot keep a dead workbench's root alive.

use std::fs::File;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Prefix of every scratch root in the system's temporary folder.
pub const ROOT_PREFIX: &str = "harness-s-";
const LOCK_FILE: &str = ".lock";

struct Root {
    path: PathBuf,
    /// Held for the life of the process: the lock is the proof that the root is in use.
    _lock: File,
}

fn root_cell() -> &'static Mutex<Option<Root>> {
    static ROOT: OnceLock<Mutex<Option<Root>>> = OnceLock::new();
    ROOT.get_or_init(|| Mutex::new(None))
}

fn lock_exclusive(file: &File, wait: bool) -> bool {
    let op = if wait { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
    // SAFETY: flock(2) on a descriptor this function borrows; no memory is touched.
    unsafe { libc::flock(file.as_raw_fd(), op) == 0 }
}

/// This process's scratch root, made (and locked) on first use.
pub fn root() -> io::Result<PathBuf> {
    let mut cell = root_cell().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(r) = cell.as_ref() {
        if r.path.is_dir() {
            return Ok(r.path.clone());
        }
    }
    sweep_except(None);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let path = std::env::temp_dir().join(format!("{ROOT_PREFIX}{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&path)?;
    // others may pass through (a sandbox running as another user reaches its own folder below)
    // but not list what is here
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o711))?;
    // std opens files close-on-exec, so no child inherits the lock
    let lock = File::create(path.join(LOCK_FILE))?;
    if !lock_exclusive(&lock, true) {
        return Err(io::Error::other(format!("cannot lock {}", path.join(LOCK_FILE).display())));
    }
    *cell = Some(Root { path: path.clone(), _lock: lock });
    Ok(path)
}

/// Remove this process's scratch root and everything in it (exit paths call this; safe to call
/// more than once).
pub fn remove_root() {
    let taken = root_cell().lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(r) = taken {
        let _ = std::fs::remove_dir_all(&r.path);
    }
}

/// Remove the scratch roots of workbench processes that are gone (their lock is free), and the
/// per-episode folders older releases left directly in the temporary folder. Returns how many
/// folders were removed.
pub fn sweep_stale() -> usize {
    let own = root_cell().lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|r| r.path.clone());
    sweep_except(own.as_deref())
}

fn sweep_except(own: Option<&Path>) -> usize {
    let Ok(rd) = std::fs::read_dir(std::env::temp_dir()) else { return 0 };
    let mut removed = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(ROOT_PREFIX) else { continue };
        let path = e.path();
        if Some(path.as_path()) == own || !e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        let stale = match File::open(path.join(LOCK_FILE)) {
            Ok(f) => lock_exclusive(&f, false),
            // older releases: `harness-s-swe-<pid>-...`, stale once its process is gone
            Err(_) => legacy_owner(rest).is_some_and(|pid| !process_alive(pid)),
        };
        if stale && std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn legacy_owner(rest: &str) -> Option<i32> {
    rest.strip_prefix("swe-")?.split('-').next()?.parse().ok()
}

fn process_alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    alive || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A folder under the scratch root, removed (with everything in it) when dropped.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// A fresh folder named `<label>-<n>` under this process's scratch root, readable by this
    /// user only.
    pub fn new(label: &str) -> io::Result<ScratchDir> {
        let root = root()?;
        let path = root.join(format!("{label}-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
        Ok(ScratchDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
