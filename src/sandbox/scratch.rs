//! Scratch directories: every temporary folder the workbench makes lives under a per-process
//! root, `<base>/harness-s-<pid>-<nanos>/`, which holds a `.lock` file the process keeps locked
//! (`flock`) for as long as it lives.
//!
//! There are two bases ([`Medium`]): the system's temporary folder, and a memory-backed one for
//! small, short-lived workspaces (a bundled repository copied for every episode): creating and
//! deleting thousands of small files a minute costs the kernel far less on a tmpfs than on a
//! disk file system. The memory base is `$HARNESS_S_MEMORY_SCRATCH` when set (`off` turns it
//! off), else `/dev/shm` when it is a tmpfs with at least [`MEMORY_MIN_FREE`] free; otherwise
//! memory folders fall back to the temporary folder.
//!
//! - On a normal exit, Ctrl-C or SIGTERM the roots are removed ([`remove_root`]).
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

/// Where the memory-backed scratch base is (a folder), or `off`.
pub const ENV_MEMORY_SCRATCH: &str = "HARNESS_S_MEMORY_SCRATCH";
/// `/dev/shm` is used for memory folders only with at least this much free.
pub const MEMORY_MIN_FREE: u64 = 1 << 30;

/// Which base a scratch folder lives under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Medium {
    /// The system's temporary folder (`$TMPDIR`, else `/tmp`).
    Disk,
    /// A memory-backed base where there is one (see the module's documentation), else `Disk`.
    Memory,
}

impl Medium {
    /// The medium a folder asked for on `self` really gets: `Memory` only where there is a
    /// memory base.
    fn effective(self) -> Medium {
        if self == Medium::Memory && memory_base().is_none() {
            Medium::Disk
        } else {
            self
        }
    }
}

struct Root {
    path: PathBuf,
    /// Held for the life of the process: the lock is the proof that the root is in use.
    _lock: File,
}

fn root_cell(medium: Medium) -> &'static Mutex<Option<Root>> {
    static DISK: Mutex<Option<Root>> = Mutex::new(None);
    static MEMORY: Mutex<Option<Root>> = Mutex::new(None);
    match medium {
        Medium::Disk => &DISK,
        Medium::Memory => &MEMORY,
    }
}

/// The memory-backed base, decided once per process (`None`: memory folders are on disk).
pub fn memory_base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| match std::env::var_os(ENV_MEMORY_SCRATCH) {
        Some(v) if v == "off" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => {
            let shm = Path::new("/dev/shm");
            is_roomy_tmpfs(shm).then(|| shm.to_path_buf())
        }
    })
    .as_deref()
}

fn is_roomy_tmpfs(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: statfs(2) fills the zeroed struct it is given; the path is a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    // SAFETY: access(2) only reads the path.
    let writable = unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    let free = (st.f_bavail as u64).saturating_mul(st.f_bsize as u64);
    // f_type's and TMPFS_MAGIC's types differ between targets
    #[allow(clippy::unnecessary_cast)]
    let tmpfs = st.f_type as i64 == libc::TMPFS_MAGIC as i64;
    tmpfs && writable && free >= MEMORY_MIN_FREE
}

/// The base folder of `medium` (where the process's root for it is made).
fn base(medium: Medium) -> PathBuf {
    match medium {
        Medium::Memory => memory_base().map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir),
        Medium::Disk => std::env::temp_dir(),
    }
}

/// Both bases, without repeats.
fn bases() -> Vec<PathBuf> {
    let mut v = vec![std::env::temp_dir()];
    if let Some(m) = memory_base().filter(|m| !v.iter().any(|d| d == m)) {
        v.push(m.to_path_buf());
    }
    v
}

fn lock_exclusive(file: &File, wait: bool) -> bool {
    let op = if wait { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
    // SAFETY: flock(2) on a descriptor this function borrows; no memory is touched.
    unsafe { libc::flock(file.as_raw_fd(), op) == 0 }
}

/// This process's scratch root on disk, made (and locked) on first use.
pub fn root() -> io::Result<PathBuf> {
    root_on(Medium::Disk)
}

/// This process's scratch root for `medium`, made (and locked) on first use. Where there is no
/// memory base, `Memory` is the disk root.
pub fn root_on(medium: Medium) -> io::Result<PathBuf> {
    let medium = medium.effective();
    let mut cell = root_cell(medium).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(r) = cell.as_ref() {
        if r.path.is_dir() {
            return Ok(r.path.clone());
        }
    }
    let base = base(medium);
    sweep_in(&base, None);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let path = base.join(format!("{ROOT_PREFIX}{}-{nanos}", std::process::id()));
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

/// The roots this process has made so far.
pub fn roots() -> Vec<PathBuf> {
    [Medium::Disk, Medium::Memory]
        .iter()
        .filter_map(|m| root_cell(*m).lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|r| r.path.clone()))
        .collect()
}

/// Remove this process's scratch roots and everything in them (exit paths call this; safe to
/// call more than once).
pub fn remove_root() {
    for medium in [Medium::Disk, Medium::Memory] {
        let taken = root_cell(medium).lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(r) = taken {
            let _ = std::fs::remove_dir_all(&r.path);
        }
    }
}

/// Remove the scratch roots of workbench processes that are gone (their lock is free), and the
/// per-episode folders older releases left directly in the temporary folder. Returns how many
/// folders were removed.
pub fn sweep_stale() -> usize {
    let own = roots();
    bases().iter().map(|b| sweep_in(b, Some(&own))).sum()
}

/// Remove the stale roots in `base`, never one of `own`.
fn sweep_in(base: &Path, own: Option<&[PathBuf]>) -> usize {
    let Ok(rd) = std::fs::read_dir(base) else { return 0 };
    let mut removed = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(ROOT_PREFIX) else { continue };
        let path = e.path();
        if own.is_some_and(|o| o.contains(&path)) || !e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
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
    medium: Medium,
}

impl ScratchDir {
    /// A fresh folder named `<label>-<n>` under this process's scratch root on disk, readable
    /// by this user only.
    pub fn new(label: &str) -> io::Result<ScratchDir> {
        Self::on(Medium::Disk, label)
    }

    /// A fresh folder as [`new`](Self::new) makes, under the root for `medium`.
    pub fn on(medium: Medium, label: &str) -> io::Result<ScratchDir> {
        let medium = medium.effective();
        let root = root_on(medium)?;
        let path = root.join(format!("{label}-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
        Ok(ScratchDir { path, medium })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the folder really is (`Memory` only where there is a memory base).
    pub fn medium(&self) -> Medium {
        self.medium
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
