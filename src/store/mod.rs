//! The run store: runs, episodes and their trajectories, in SQLite (default) or Postgres.
//!
//! A run may be killed at any moment, so the store is built around small, early writes: each
//! finished episode is written at once in its own short transaction, progress checkpoints go to
//! [`Store::set_state`], and nothing already written depends on the run finishing. On SQLite the
//! file runs in WAL mode with `synchronous=NORMAL`: a committed episode survives the process
//! being killed (an operating-system crash or power loss may lose the last few commits, never
//! corrupt the file).
//!
//! ```no_run
//! # async fn demo() -> Result<(), harness_s::store::StoreError> {
//! use harness_s::store::{NewRun, RunStatus, Store};
//! let store = Store::open("runs/harness-s.db").await?;
//! let run = store.create_run(&NewRun::new("eval", "dbbench baseline")).await?;
//! // ... store.insert_episode(run, &episode, &EpisodeContext::default()) as episodes finish ...
//! store.finish_run(run, RunStatus::Finished, &serde_json::json!({"success_rate": 0.5})).await?;
//! # Ok(()) }
//! ```
//!
//! The tables and columns are a public contract, documented in [`schema`]. Async callers use
//! [`Store`]; plain worker threads use [`BlockingStore`].

mod blocking;
mod codec;
mod episodes;
mod error;
mod info;
mod lease;
mod location;
mod queue;
mod records;
mod redact;
mod resolve;
mod runs;
pub mod schema;
pub(crate) mod sql;
mod state;
mod trajectories;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow, SqliteSynchronous};
use sqlx::{FromRow, SqlSafeStr};

pub use blocking::BlockingStore;
pub use episodes::{EpisodeContext, EpisodeFilter, EpisodeRow};
pub use error::StoreError;
pub use info::{merge_wal_on_exit, StoreFile, StoreInfo, StorePart};
pub use lease::{new_holder, LeaseHolder, LEASE_HEARTBEAT_MS, LEASE_TTL_MS};
pub use queue::{ClaimedJob, FinishedJob, JobFailure, QueueCounts, WorkerRow};
pub use redact::{is_secret_key, redact_secrets, REDACTED};
pub use runs::{DeletedRun, NewRun, RunRow, RunStatus, KIND_EVAL, KIND_EXPERIMENT};

use location::{display_location, Location};
use sql::{arguments, Arg};

/// How long an SQLite statement waits for another writer before failing with "database is
/// locked".
pub const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Merge an SQLite store's write-ahead log into its main file and truncate the log to zero bytes
/// (on close, and on exits that do not close: [`merge_wal_on_exit`]).
const CHECKPOINT_TRUNCATE: &str = "PRAGMA wal_checkpoint(TRUNCATE)";

/// Connections kept per SQLite file. WAL lets readers run beside the one writer; writers queue
/// on the busy timeout.
const SQLITE_MAX_CONNECTIONS: u32 = 4;
pub(crate) const POSTGRES_MAX_CONNECTIONS: u32 = 8;

/// A handle to the run store. Cloning is cheap (one shared connection pool); clones may be used
/// from many tasks at once.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
    /// Set on a coordinator's handle ([`Store::fenced`]): its writes for that run commit only
    /// while it holds the run's lease.
    fence: Option<Arc<lease::Fence>>,
}

struct Inner {
    backend: Backend,
    /// The location as given, with any password masked: used in every error message.
    location: String,
    /// Interned strings and compression dictionaries known to this handle.
    codec: codec::CodecCache,
}

enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Which database a [`Store`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Sqlite,
    Postgres,
}

/// Run `$body` with `$pool` bound to the back-end's pool and `$db` naming its sqlx database type.
macro_rules! on_backend {
    ($store:expr, |$pool:ident, $db:ident| $body:expr) => {
        match &$store.inner.backend {
            Backend::Sqlite($pool) => {
                #[allow(dead_code)]
                type $db = sqlx::Sqlite;
                $body
            }
            Backend::Postgres($pool) => {
                #[allow(dead_code)]
                type $db = sqlx::Postgres;
                $body
            }
        }
    };
}
pub(crate) use on_backend;

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("location", &self.inner.location).field("backend", &self.backend()).finish()
    }
}

/// An exclusive advisory lock (`flock`) on the file at `path`, held until the file is dropped;
/// `None` where the file cannot be opened (the migrations then run unlocked, as before). It is
/// not the lock SQLite uses (`fcntl` ranges), so SQLite's own locking is unaffected.
fn lock_exclusively(path: &std::path::Path) -> Option<std::fs::File> {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new().read(true).open(path).ok()?;
    // SAFETY: flock(2) on a descriptor this function owns; no memory is touched.
    (unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0).then_some(file)
}

impl Store {
    /// Open (creating if needed) the store at `location` and bring its schema up to date.
    ///
    /// - a plain path (`runs/harness-s.db`) or `sqlite://path` (`sqlite:///abs/path.db`,
    ///   `sqlite://rel/path.db`): an SQLite file; the file and its parent directory are created
    ///   if missing. Query parameters of the `sqlite:` URL (e.g. `?mode=ro`) are honoured.
    /// - `sqlite::memory:`: a private in-memory database, gone when the last clone is dropped
    ///   (for tests).
    /// - `postgres://...` or `postgresql://...`: a Postgres database (which must exist).
    ///
    /// Anything else (`mysql://...`, an empty string) is [`StoreError::UnsupportedLocation`].
    pub async fn open(location: &str) -> Result<Store, StoreError> {
        Store::open_with_connections(location, POSTGRES_MAX_CONNECTIONS).await
    }

    /// [`Store::open`] with at most `postgres_connections` connections to a Postgres server
    /// (an SQLite store ignores it). A `harness-s worker` needs one per slot and one for its
    /// heartbeat: a pool of the default size lets each worker process open up to 8, and a
    /// server's `max_connections` (100 by default) runs out at a dozen workers.
    pub async fn open_with_connections(location: &str, postgres_connections: u32) -> Result<Store, StoreError> {
        let shown = display_location(location);
        let connect_err = |source| StoreError::Connect { location: shown.clone(), source };
        // Two processes opening one new SQLite file at once would both apply its migrations
        // (sqlx takes no lock on SQLite): they take turns on an advisory lock of the file.
        let mut migration_lock: Option<std::fs::File> = None;
        let backend = match Location::parse(location)? {
            Location::SqliteFile { path, url } => {
                let mut options = match &url {
                    Some(url) => SqliteConnectOptions::from_str(url).map_err(connect_err)?,
                    None => SqliteConnectOptions::new().filename(&path),
                };
                // A `mode=` parameter says whether to create; otherwise create the file.
                if !url.as_deref().is_some_and(|u| u.contains("mode=")) {
                    options = options.create_if_missing(true);
                    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                            location: shown.clone(),
                            dir: dir.to_path_buf(),
                            source,
                        })?;
                    }
                }
                let options = options
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(SQLITE_BUSY_TIMEOUT)
                    .foreign_keys(true);
                let pool = SqlitePoolOptions::new()
                    .max_connections(SQLITE_MAX_CONNECTIONS)
                    .acquire_timeout(SQLITE_BUSY_TIMEOUT)
                    .connect_with(options)
                    .await
                    .map_err(connect_err)?;
                info::remember_file(location);
                migration_lock = lock_exclusively(&path);
                Backend::Sqlite(pool)
            }
            Location::SqliteMemory { url } => {
                let options = SqliteConnectOptions::from_str(&url).map_err(connect_err)?.busy_timeout(SQLITE_BUSY_TIMEOUT).foreign_keys(true);
                // One connection that never closes: the database lives exactly as long as it.
                let pool = SqlitePoolOptions::new()
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect_with(options)
                    .await
                    .map_err(connect_err)?;
                Backend::Sqlite(pool)
            }
            Location::Postgres { url } => {
                let options = PgConnectOptions::from_str(&url).map_err(connect_err)?;
                let pool = PgPoolOptions::new().max_connections(postgres_connections.max(1)).connect_with(options).await.map_err(connect_err)?;
                Backend::Postgres(pool)
            }
        };
        let migrated = match &backend {
            Backend::Sqlite(pool) => schema::SQLITE_MIGRATIONS.run(pool).await,
            Backend::Postgres(pool) => schema::POSTGRES_MIGRATIONS.run(pool).await,
        };
        drop(migration_lock);
        migrated.map_err(|source| StoreError::Migrate { location: shown.clone(), source })?;
        Ok(Store { inner: Arc::new(Inner { backend, location: shown, codec: codec::CodecCache::default() }), fence: None })
    }

    /// The location this store was opened at (any password masked).
    pub fn location(&self) -> &str {
        &self.inner.location
    }

    pub fn backend(&self) -> BackendKind {
        match self.inner.backend {
            Backend::Sqlite(_) => BackendKind::Sqlite,
            Backend::Postgres(_) => BackendKind::Postgres,
        }
    }

    /// Close the connections (waiting for statements in flight). Not needed for durability —
    /// every write is committed when its method returns — but on SQLite it merges the
    /// write-ahead log into the main file and truncates it to zero bytes, so that a store left
    /// behind is one file of its true size. Further calls on any clone fail.
    pub async fn close(&self) {
        match &self.inner.backend {
            Backend::Sqlite(pool) => {
                if !pool.is_closed() {
                    // another process may still be reading; then the log stays for it to merge
                    let _ = sqlx::query(CHECKPOINT_TRUNCATE).execute(pool).await;
                }
                pool.close().await
            }
            Backend::Postgres(pool) => pool.close().await,
        }
    }

    pub(crate) fn query_error(&self, op: &str, source: sqlx::Error) -> StoreError {
        StoreError::Query { location: self.inner.location.clone(), op: op.to_string(), source }
    }

    pub(crate) fn json_error(&self, op: &str, source: serde_json::Error) -> StoreError {
        StoreError::Json { location: self.inner.location.clone(), op: op.to_string(), source }
    }

    pub(crate) fn corrupt(&self, op: &str, detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt { location: self.inner.location.clone(), op: op.to_string(), detail: detail.into() }
    }

    pub(crate) fn codec_error(&self, op: &str, source: std::io::Error) -> StoreError {
        StoreError::Codec { location: self.inner.location.clone(), op: op.to_string(), source }
    }

    pub(crate) fn not_found(&self, op: &str, what: impl Into<String>) -> StoreError {
        StoreError::NotFound { location: self.inner.location.clone(), op: op.to_string(), what: what.into() }
    }

    /// Run a statement returning rows, decoded as `T`.
    pub(crate) async fn fetch_all<T>(&self, op: &str, sql: impl SqlSafeStr, args: Vec<Arg>) -> Result<Vec<T>, StoreError>
    where
        T: Send + Unpin + for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow>,
    {
        let result = on_backend!(self, |pool, DB| match arguments::<DB>(args) {
            Ok(a) => sqlx::query_as_with::<DB, T, _>(sql, a).fetch_all(pool).await,
            Err(e) => Err(e),
        });
        result.map_err(|e| self.query_error(op, e))
    }

    /// Run a statement returning at most one row.
    pub(crate) async fn fetch_optional<T>(&self, op: &str, sql: impl SqlSafeStr, args: Vec<Arg>) -> Result<Option<T>, StoreError>
    where
        T: Send + Unpin + for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow>,
    {
        let result = on_backend!(self, |pool, DB| match arguments::<DB>(args) {
            Ok(a) => sqlx::query_as_with::<DB, T, _>(sql, a).fetch_optional(pool).await,
            Err(e) => Err(e),
        });
        result.map_err(|e| self.query_error(op, e))
    }

    /// Run a statement returning exactly one row.
    pub(crate) async fn fetch_one<T>(&self, op: &str, sql: impl SqlSafeStr, args: Vec<Arg>) -> Result<T, StoreError>
    where
        T: Send + Unpin + for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow>,
    {
        let result = on_backend!(self, |pool, DB| match arguments::<DB>(args) {
            Ok(a) => sqlx::query_as_with::<DB, T, _>(sql, a).fetch_one(pool).await,
            Err(e) => Err(e),
        });
        result.map_err(|e| self.query_error(op, e))
    }

    /// Run a statement; the number of rows it changed.
    pub(crate) async fn execute(&self, op: &str, sql: impl SqlSafeStr, args: Vec<Arg>) -> Result<u64, StoreError> {
        let result = on_backend!(self, |pool, DB| match arguments::<DB>(args) {
            Ok(a) => sqlx::query_with::<DB, _>(sql, a).execute(pool).await.map(|r| r.rows_affected()),
            Err(e) => Err(e),
        });
        result.map_err(|e| self.query_error(op, e))
    }
}
