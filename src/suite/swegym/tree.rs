//! A walk over a workspace folder that reaches every entry, however deep, without following a
//! link: each folder is opened relative to its parent's descriptor (`openat` with `O_NOFOLLOW`),
//! so a path longer than the kernel's `PATH_MAX` (4,096 bytes) is walked like any other and a
//! link planted by an agent never leads outside the workspace.
//!
//! Both what a workspace costs ([`usage`]: blocks and inodes, for its quota) and what it holds
//! ([`digest`]: the key of the pure-command cache) come from this one walk, so neither can be
//! fooled where the other is not. The walk runs between commands, when nothing of the sandbox
//! runs, so the tree does not change under it.

use std::ffi::{CStr, CString};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Folders nested deeper than this are not walked: a workspace that deep is over its quota and
/// never cached. Real repositories nest a dozen levels or so.
pub const MAX_DEPTH: usize = 128;

/// Why a walk stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WalkError {
    #[error("the workspace nests folders more than {MAX_DEPTH} levels deep")]
    TooDeep,
    #[error("{path}: {message}")]
    Unreadable { path: String, message: String },
}

/// One entry as the walk sees it.
pub struct Entry<'a> {
    /// Its path relative to the root, `/`-separated bytes.
    pub path: &'a [u8],
    pub stat: &'a libc::stat,
    /// The folder holding it, and its name there (to open or read it without a path).
    parent: &'a OwnedFd,
    name: &'a CStr,
}

impl Entry<'_> {
    pub fn is_dir(&self) -> bool {
        self.stat.st_mode & libc::S_IFMT == libc::S_IFDIR
    }
    pub fn is_file(&self) -> bool {
        self.stat.st_mode & libc::S_IFMT == libc::S_IFREG
    }
    pub fn is_link(&self) -> bool {
        self.stat.st_mode & libc::S_IFMT == libc::S_IFLNK
    }

    /// A regular file's bytes, read without following a link.
    pub fn read(&self) -> std::io::Result<Vec<u8>> {
        let fd = open_at(self.parent, self.name, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK)?;
        let mut f = std::fs::File::from(fd);
        let mut buf = Vec::with_capacity(self.stat.st_size.max(0) as usize);
        f.read_to_end(&mut buf)?;
        Ok(buf)
    }

    /// A link's target text.
    pub fn link_target(&self) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0u8; 4096];
        // SAFETY: readlinkat(2) writes at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::readlinkat(self.parent.as_raw_fd(), self.name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        buf.truncate(n as usize);
        Ok(buf)
    }
}

fn open_at(dir: &OwnedFd, name: &CStr, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    // SAFETY: openat(2) with a valid descriptor and a NUL-terminated name; the result is a new
    // descriptor this function then owns.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a non-negative result is a descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn stat_at(dir: &OwnedFd, name: &CStr) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid buffer for fstatat(2) to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, a NUL-terminated name and a buffer that lives for the call.
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// The names in a folder (not `.` and `..`), sorted bytewise.
fn names(dir: &OwnedFd) -> std::io::Result<Vec<CString>> {
    // fdopendir takes the descriptor over: give it a copy
    // SAFETY: dup(2) of a valid descriptor.
    let copy = unsafe { libc::dup(dir.as_raw_fd()) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `copy` is a descriptor of a folder this function owns; the stream is closed below.
    let stream = unsafe { libc::fdopendir(copy) };
    if stream.is_null() {
        let e = std::io::Error::last_os_error();
        // SAFETY: the copy was not taken over.
        unsafe { libc::close(copy) };
        return Err(e);
    }
    // SAFETY: rewinding a valid stream; the copy shares its offset with `dir`.
    unsafe { libc::rewinddir(stream) };
    let mut out = Vec::new();
    loop {
        // SAFETY: readdir(3) on a valid stream; the entry is read before the next call.
        let ent = unsafe { libc::readdir(stream) };
        if ent.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated within the entry.
        let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) };
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            out.push(name.to_owned());
        }
    }
    // SAFETY: closes the stream and the copy it owns.
    unsafe { libc::closedir(stream) };
    out.sort();
    Ok(out)
}

/// Visit every entry under `root` (not `root` itself), folders before their content, in
/// bytewise order of names, without following links. `descend(path)` says whether to enter a
/// folder.
pub fn walk(root: &Path, descend: &dyn Fn(&[u8]) -> bool, visit: &mut dyn FnMut(&Entry<'_>) -> Result<(), WalkError>) -> Result<(), WalkError> {
    let unreadable =
        |path: &[u8], e: std::io::Error| WalkError::Unreadable { path: String::from_utf8_lossy(path).into_owned(), message: e.to_string() };
    let c_root = CString::new(root.as_os_str().as_bytes()).map_err(|e| unreadable(root.as_os_str().as_bytes(), std::io::Error::other(e)))?;
    // SAFETY: open(2) of a NUL-terminated path; the result is owned below.
    let fd = unsafe { libc::open(c_root.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(unreadable(root.as_os_str().as_bytes(), std::io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor nothing else owns.
    let dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut path = Vec::new();
    walk_in(&dir, &mut path, 0, descend, visit, &unreadable)
}

fn walk_in(
    dir: &OwnedFd,
    path: &mut Vec<u8>,
    depth: usize,
    descend: &dyn Fn(&[u8]) -> bool,
    visit: &mut dyn FnMut(&Entry<'_>) -> Result<(), WalkError>,
    unreadable: &dyn Fn(&[u8], std::io::Error) -> WalkError,
) -> Result<(), WalkError> {
    if depth >= MAX_DEPTH {
        return Err(WalkError::TooDeep);
    }
    let names = names(dir).map_err(|e| unreadable(path, e))?;
    for name in names {
        let len = path.len();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(name.to_bytes());
        let stat = stat_at(dir, &name).map_err(|e| unreadable(path, e))?;
        let entry = Entry { path, stat: &stat, parent: dir, name: &name };
        visit(&entry)?;
        if entry.is_dir() && descend(path) {
            let child = open_at(dir, &name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW).map_err(|e| unreadable(path, e))?;
            walk_in(&child, path, depth + 1, descend, visit, unreadable)?;
        }
        path.truncate(len);
    }
    Ok(())
}

/// What a workspace holds on its medium.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes of allocated blocks (`st_blocks × 512`, what the medium really spends; a sparse
    /// file counts what it holds, an empty file nothing).
    pub bytes: u64,
    /// Entries: files, folders, links and anything else, each an inode of the medium.
    pub inodes: u64,
}

/// Blocks and inodes under `root`, every level deep.
pub fn usage(root: &Path) -> Result<Usage, WalkError> {
    let mut u = Usage::default();
    walk(root, &|_| true, &mut |e| {
        u.bytes += (e.stat.st_blocks.max(0) as u64) * 512;
        u.inodes += 1;
        Ok(())
    })?;
    Ok(u)
}

/// A digest of everything under `root` a command can read: every entry's path, type and mode,
/// a file's bytes, a link's target text, except the paths `skip` names (and what is under
/// them). `None` when some entry cannot be read or the tree is too deep: what the digest does
/// not see, it cannot vouch for.
pub fn digest(root: &Path, skip: &dyn Fn(&[u8]) -> bool) -> Option<String> {
    use md5::{Digest, Md5};
    let mut h = Md5::new();
    let result = walk(root, &|p| !skip(p), &mut |e| {
        if skip(e.path) {
            return Ok(());
        }
        h.update(e.path);
        h.update((e.stat.st_mode & 0o7777).to_le_bytes());
        let fail = |err: std::io::Error| WalkError::Unreadable { path: String::from_utf8_lossy(e.path).into_owned(), message: err.to_string() };
        if e.is_dir() {
            h.update(b"\0d\0");
        } else if e.is_link() {
            h.update(b"\0l\0");
            h.update(e.link_target().map_err(fail)?);
        } else if e.is_file() {
            let bytes = e.read().map_err(fail)?;
            h.update(b"\0f\0");
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        } else {
            // a fifo, socket or device node: what reading it gives is not content
            return Err(WalkError::Unreadable { path: String::from_utf8_lossy(e.path).into_owned(), message: "not a file, folder or link".into() });
        }
        Ok(())
    });
    result.ok().map(|()| format!("{:x}", h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Make `depth` nested folders named `name` under `dir`, relative to each last one (the
    /// kernel refuses paths past 4,096 bytes); the deepest folder's descriptor.
    fn nest(dir: &Path, name: &str, depth: usize) -> OwnedFd {
        let mut cur = OwnedFd::from(std::fs::File::open(dir).unwrap());
        let c = CString::new(name).unwrap();
        for _ in 0..depth {
            // SAFETY: mkdirat with a valid descriptor and name.
            assert_eq!(unsafe { libc::mkdirat(cur.as_raw_fd(), c.as_ptr(), 0o755) }, 0);
            cur = open_at(&cur, &c, libc::O_RDONLY | libc::O_DIRECTORY).unwrap();
        }
        cur
    }

    #[test]
    fn walks_past_path_max_and_counts_empty_files() {
        let dir = tempfile::tempdir().unwrap();
        // 40 folders of 200 bytes: a path of over 8,000 bytes
        let deepest = nest(dir.path(), &"d".repeat(200), 40);
        let big = CString::new("big").unwrap();
        // SAFETY: openat with a valid descriptor and name.
        let f = unsafe { libc::openat(deepest.as_raw_fd(), big.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC, 0o644) };
        assert!(f >= 0);
        // SAFETY: a new descriptor owned here.
        let mut f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(f) });
        std::io::Write::write_all(&mut f, &vec![7u8; 1 << 20]).unwrap();
        drop(f);
        for i in 0..100 {
            std::fs::write(dir.path().join(format!("empty{i}")), b"").unwrap();
        }
        let u = usage(dir.path()).unwrap();
        assert!(u.bytes >= 1 << 20, "{u:?}");
        assert_eq!(u.inodes, 100 + 40 + 1, "{u:?}");
        // the digest sees the deep file too: changing it changes the key
        let before = digest(dir.path(), &|_| false).unwrap();
        let mut f = std::fs::File::from(open_at(&deepest, &big, libc::O_WRONLY).unwrap());
        std::io::Write::write_all(&mut f, b"changed").unwrap();
        drop(f);
        assert_ne!(before, digest(dir.path(), &|_| false).unwrap());
    }

    #[test]
    fn a_tree_too_deep_is_an_error_and_has_no_digest() {
        let dir = tempfile::tempdir().unwrap();
        nest(dir.path(), "a", MAX_DEPTH + 2);
        assert_eq!(usage(dir.path()), Err(WalkError::TooDeep));
        assert_eq!(digest(dir.path(), &|_| false), None);
    }

    #[test]
    fn links_are_read_as_text_and_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), vec![1u8; 1 << 20]).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let u = usage(dir.path()).unwrap();
        assert!(u.bytes < 1 << 20 && u.inodes == 1, "{u:?}");
        let a = digest(dir.path(), &|_| false).unwrap();
        std::fs::write(outside.path().join("secret"), b"other").unwrap();
        assert_eq!(a, digest(dir.path(), &|_| false).unwrap());
    }
}
