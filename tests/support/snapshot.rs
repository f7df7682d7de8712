//! Snapshot files: what a test produced, compared with the copy kept under `tests/snapshots/`.
//! A difference fails the test and writes the new text beside the old one (`<name>.new`) for
//! review; `UPDATE_SNAPSHOTS=1` accepts new text instead. A missing snapshot fails too (under
//! CI nothing is written silently).

use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// Compare `actual` with the snapshot `name` (a path under `tests/snapshots/`).
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = dir().join(name);
    let new = path.with_file_name(format!("{}.new", path.file_name().unwrap().to_string_lossy()));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        let _ = std::fs::remove_file(&new);
        return;
    }
    let Ok(expected) = std::fs::read_to_string(&path) else {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&new, actual).unwrap();
        panic!("no snapshot {}: the output is in {}; run with UPDATE_SNAPSHOTS=1 to accept it", path.display(), new.display());
    };
    if expected == actual {
        let _ = std::fs::remove_file(&new);
        return;
    }
    std::fs::write(&new, actual).unwrap();
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let at = e.iter().zip(&a).position(|(x, y)| x != y).unwrap_or(e.len().min(a.len()));
    panic!(
        "{} differs from its snapshot at line {} ({} lines were, {} are):\n  was: {}\n  now: {}\nthe new text is in {}; \
         if the change is intended, run with UPDATE_SNAPSHOTS=1",
        name,
        at + 1,
        e.len(),
        a.len(),
        e.get(at).unwrap_or(&"(end)"),
        a.get(at).unwrap_or(&"(end)"),
        new.display()
    );
}
