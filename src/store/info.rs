//! How big a store is and where its bytes go (`harness-s store info`), and merging an SQLite
//! store's write-ahead log back into its main file when the workbench exits.
//!
//! Sizes of an SQLite store are read from disk *before* it is opened (opening creates the `-wal`
//! and `-shm` files), so `wal_bytes` says what the last writer left behind.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use super::location::{display_location, Location};
use super::{Backend, Store, StoreError};

/// One file of an SQLite store on disk.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoreFile {
    pub path: String,
    pub bytes: u64,
}

/// Bytes of one table or index (SQLite: the pages it holds; Postgres: its relation size).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StorePart {
    pub name: String,
    pub bytes: u64,
}

/// `harness-s store info --json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoreInfo {
    /// The location as given (any password masked).
    pub location: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    pub runs: u64,
    pub episodes: u64,
    /// Every file of the database on disk (main file, `-wal`, `-shm`); for Postgres the total
    /// size of the store's tables with their indexes and TOAST data.
    pub bytes: u64,
    /// `bytes / episodes`; null for a store without episodes.
    pub bytes_per_episode: Option<f64>,
    /// The write-ahead log as found (0 when it was merged on the last exit, or for Postgres).
    pub wal_bytes: u64,
    /// Episodes whose trajectory is still the JSON text a v1 store wrote (read in place;
    /// `harness-s store compact` converts them).
    pub v1_episodes: u64,
    pub files: Vec<StoreFile>,
    /// Tables and indexes, largest first.
    pub parts: Vec<StorePart>,
}

/// The files an SQLite database at `path` consists of, with their sizes (missing ones left out).
fn sqlite_files(path: &Path) -> Vec<StoreFile> {
    let mut out = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let p = PathBuf::from(p);
        if let Ok(m) = std::fs::metadata(&p) {
            out.push(StoreFile { path: p.display().to_string(), bytes: m.len() });
        }
    }
    out
}

impl StoreInfo {
    /// Measure the store at `location`, which must exist (an SQLite file is not created).
    pub async fn of(location: &str) -> Result<StoreInfo, StoreError> {
        let shown = display_location(location);
        let files = match Location::parse(location)? {
            Location::SqliteFile { path, .. } => {
                if !path.exists() {
                    return Err(StoreError::NotFound { location: shown, op: "store info".into(), what: "no store file there".into() });
                }
                sqlite_files(&path)
            }
            _ => Vec::new(),
        };
        let store = Store::open(location).await?;
        let info = store.measure(files).await;
        store.close().await;
        info
    }
}

impl Store {
    async fn measure(&self, files: Vec<StoreFile>) -> Result<StoreInfo, StoreError> {
        let (runs,): (i64,) = self.fetch_one("counting runs", "SELECT COUNT(*) FROM runs", Vec::new()).await?;
        let episodes = self.count_episodes(&super::EpisodeFilter::default()).await?;
        let v1_episodes = self.json_episodes().await?;
        let (backend, sql) = match &self.inner.backend {
            // dbstat counts the pages of each table and index (the main file only)
            Backend::Sqlite(_) => ("sqlite", "SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC, name"),
            Backend::Postgres(_) => (
                "postgres",
                "SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relkind = 'r' AND n.nspname = current_schema() ORDER BY bytes DESC, name",
            ),
        };
        let rows: Vec<(String, i64)> = self.fetch_all("reading table sizes", sql, Vec::new()).await?;
        let parts: Vec<StorePart> = rows.into_iter().map(|(name, bytes)| StorePart { name, bytes: bytes.max(0) as u64 }).collect();
        let (bytes, wal_bytes) = match &self.inner.backend {
            Backend::Sqlite(_) => {
                (files.iter().map(|f| f.bytes).sum(), files.iter().find(|f| f.path.ends_with("-wal")).map(|f| f.bytes).unwrap_or(0))
            }
            Backend::Postgres(_) => (parts.iter().map(|p| p.bytes).sum(), 0),
        };
        Ok(StoreInfo {
            location: self.inner.location.clone(),
            backend,
            runs: runs.max(0) as u64,
            episodes,
            bytes,
            bytes_per_episode: (episodes > 0).then(|| bytes as f64 / episodes as f64),
            wal_bytes,
            v1_episodes,
            files,
            parts,
        })
    }
}

/// SQLite files opened by this process, for [`merge_wal_on_exit`].
fn open_files() -> &'static Mutex<Vec<String>> {
    static FILES: Mutex<Vec<String>> = Mutex::new(Vec::new());
    &FILES
}

pub(super) fn remember_file(location: &str) {
    let mut files = open_files().lock().unwrap_or_else(|p| p.into_inner());
    if !files.iter().any(|f| f == location) {
        files.push(location.to_string());
    }
}

/// Merge the write-ahead log of every SQLite store this process opened into its main file and
/// truncate it to zero bytes: for exits that do not close their stores (a second Ctrl-C, a
/// signal to a server). Blocks; call it from a plain thread (a signal handler's), never from
/// inside an async context.
pub fn merge_wal_on_exit() {
    let files = open_files().lock().unwrap_or_else(|p| p.into_inner()).clone();
    if files.is_empty() {
        return;
    }
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    for location in files {
        let Ok(Location::SqliteFile { path, .. }) = Location::parse(&location) else { continue };
        rt.block_on(async {
            // a short wait: whoever asked to quit is waiting, and a writer mid-transaction keeps
            // its log for the next opening to merge
            let wait = std::time::Duration::from_secs(2);
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).busy_timeout(wait);
            let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).acquire_timeout(wait).connect_with(options).await;
            if let Ok(pool) = pool {
                let _ = sqlx::query(super::CHECKPOINT_TRUNCATE).execute(&pool).await;
                pool.close().await;
            }
        });
    }
}
