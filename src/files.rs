//! The workbench's own file access, in one place:
//! - reading the files a user points it at (datasets, experiment files, harness specs) with a
//!   bound on what a read may cost: only regular files, and none larger than the limit its
//!   caller states, so a path to `/dev/zero`, a named pipe or a file of many gigabytes gets a
//!   clear error instead of filling the workbench's memory;
//! - writing its outputs (saved experiment files, reports, exports, trainer batches) without
//!   ever writing through a link: a symbolic link in the way is refused (`O_NOFOLLOW`), and so
//!   is a file with more than one hard link, whose other name could be anywhere on the disk.

use std::io::Read;
use std::path::Path;

/// The largest dataset file read: official releases are tens of megabytes.
pub const MAX_DATASET_BYTES: u64 = 1 << 30;
/// The largest experiment file or harness spec read (they are a few kilobytes).
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a regular file ({0}): give the path of a file")]
    NotAFile(&'static str),
    #[error("the file is {size} bytes, more than the {limit} bytes this reader takes")]
    TooLarge { size: u64, limit: u64 },
}

/// The bytes of the regular file at `path`, at most `limit` of them.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    // without blocking: opening a named pipe would otherwise wait for a writer
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let meta = file.metadata()?;
    let ty = meta.file_type();
    if !ty.is_file() {
        let what = if ty.is_dir() {
            "a folder"
        } else if ty.is_char_device() || ty.is_block_device() {
            "a device"
        } else if ty.is_fifo() {
            "a named pipe"
        } else if ty.is_socket() {
            "a socket"
        } else {
            "a special file"
        };
        return Err(ReadError::NotAFile(what));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge { size: meta.len(), limit });
    }
    // a file that grows while it is read (or a /proc file whose size says 0) stops at the limit
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { size: bytes.len() as u64, limit });
    }
    Ok(bytes)
}

/// [`read_limited`] as UTF-8 text.
pub fn read_text_limited(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_limited(path, limit)?;
    String::from_utf8(bytes).map_err(|e| ReadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text: {e}"))))
}

/// Open `path` for writing from its start, creating it; an existing file is replaced only when
/// `overwrite` (otherwise `AlreadyExists`). Refused: a symbolic link at `path` (never followed,
/// dangling or not), something other than a regular file, and a file with more than one hard
/// link — checked on the opened file before anything is truncated or written.
pub fn create(path: &Path, overwrite: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut o = std::fs::OpenOptions::new();
    o.write(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    if overwrite {
        o.create(true);
    } else {
        o.create_new(true);
    }
    let file = o.open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{} is a symbolic link; it is not written through", path.display()))
        } else {
            e
        }
    })?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display())));
    }
    if meta.nlink() > 1 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} has {} hard links; it is not written through (remove it first)", path.display(), meta.nlink()),
        ));
    }
    file.set_len(0)?;
    Ok(file)
}

/// Write `bytes` to `path` through [`create`] (replacing an existing file).
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    use std::io::Write;
    create(path, true)?.write_all(bytes.as_ref())
}

/// Make the folder `dir` (and its parents) for outputs; refused when it, or a folder on the way
/// below the first that already existed before, is a symbolic link planted inside an output
/// folder (`dir` itself, as given by the user, may be reached through links above it).
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is a symbolic link; outputs are not written through it", dir.display()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_pipes_and_folders_are_refused_and_large_files_too() {
        assert!(matches!(read_limited(Path::new("/dev/zero"), 1 << 20), Err(ReadError::NotAFile("a device"))));
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(read_limited(dir.path(), 1 << 20), Err(ReadError::NotAFile("a folder"))));
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(read_limited(&fifo, 1 << 20), Err(ReadError::NotAFile("a named pipe"))));
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        assert!(matches!(read_limited(&big, 1024), Err(ReadError::TooLarge { size: 2048, limit: 1024 })));
        assert_eq!(read_limited(&big, 4096).unwrap().len(), 2048);
    }

    #[test]
    fn writes_never_go_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        let soft = dir.path().join("soft");
        std::os::unix::fs::symlink(&outside, &soft).unwrap();
        assert!(write(&soft, "x").unwrap_err().to_string().contains("symbolic link"));
        let hard = dir.path().join("hard");
        std::fs::hard_link(&outside, &hard).unwrap();
        assert!(write(&hard, "x").unwrap_err().to_string().contains("hard links"));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        let plain = dir.path().join("plain");
        write(&plain, "one").unwrap();
        write(&plain, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "two");
        assert_eq!(create(&plain, false).unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
        let linked_dir = dir.path().join("charts");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &linked_dir).unwrap();
        std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
        assert!(create_dir(&linked_dir).is_err());
    }
}
