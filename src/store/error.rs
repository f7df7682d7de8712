//! Errors of the run store. Every message names the store location (passwords masked) and the
//! operation that failed.

use std::path::PathBuf;

/// A run store failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The location string names no store this build supports (`mysql://...`, `http://...`, "").
    #[error("unsupported store location `{location}`: {reason}")]
    UnsupportedLocation { location: String, reason: String },
    /// The parent directory of an SQLite file could not be created.
    #[error("store {location}: cannot create directory {}: {source}", dir.display())]
    CreateDir { location: String, dir: PathBuf, source: std::io::Error },
    /// The database could not be opened or reached.
    #[error("store {location}: cannot open: {source}")]
    Connect { location: String, source: sqlx::Error },
    /// The schema migrations failed (or the database holds a newer, unknown schema).
    #[error("store {location}: migrating the schema failed: {source}")]
    Migrate { location: String, source: sqlx::migrate::MigrateError },
    /// A statement failed.
    #[error("store {location}: {op}: {source}")]
    Query { location: String, op: String, source: sqlx::Error },
    /// A value could not be turned into JSON, or a stored JSON text could not be read back.
    #[error("store {location}: {op}: JSON: {source}")]
    Json { location: String, op: String, source: serde_json::Error },
    /// A trajectory could not be compressed or decompressed.
    #[error("store {location}: {op}: compression: {source}")]
    Codec { location: String, op: String, source: std::io::Error },
    /// The row an update refers to does not exist.
    #[error("store {location}: {op}: {what} not found")]
    NotFound { location: String, op: String, what: String },
    /// The run is marked `running`: an experiment may still be writing to it, so it is not
    /// deleted (a run killed before finishing stays `running`; deleting it needs `force`).
    #[error("store {location}: {op}: run {id} is running; cancel it first (a run killed before finishing stays `running`: delete it with force)")]
    RunRunning { location: String, op: String, id: i64 },
    /// The operation needs a Postgres store (the episode queue of a distributed experiment:
    /// workers on other machines claim jobs from it).
    #[error("store {location}: {op}: needs a Postgres store (--db postgres://…): workers on other machines claim episodes from it")]
    NeedsPostgres { location: String, op: String },
    /// A stored row holds a value this build cannot read (unknown status, out-of-range number).
    #[error("store {location}: {op}: unreadable row: {detail}")]
    Corrupt { location: String, op: String, detail: String },
    /// A fenced write ([`Store::fenced`](super::Store::fenced)) found that its coordinator no
    /// longer holds the run's lease: another process took the run over. Nothing was written.
    #[error("store {location}: {op}: this process no longer holds run {run_id} (its lease lapsed and {holder} took it over); nothing was written")]
    LeaseLost { location: String, op: String, run_id: i64, holder: String },
    /// The blocking facade could not start its runtime.
    #[error("store {location}: cannot start the blocking runtime: {source}")]
    Runtime { location: String, source: std::io::Error },
}

impl StoreError {
    /// Whether trying the same call again may succeed: the server could not be reached or was
    /// busy (a pool that waited too long for a connection, a dropped connection, too many
    /// clients, a server starting or shutting down), or the statement lost a deadlock or a
    /// serialization conflict. Not for errors in the statement or the data.
    pub fn is_transient(&self) -> bool {
        let source = match self {
            StoreError::Query { source, .. } | StoreError::Connect { source, .. } => source,
            _ => return false,
        };
        match source {
            sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) => true,
            sqlx::Error::Database(db) => db.code().is_some_and(|c| {
                // 08: connection exception; 40001 serialization failure; 40P01 deadlock;
                // 53300 too many connections; 57P01-57P03 the server shutting down or starting
                c.starts_with("08") || matches!(c.as_ref(), "40001" | "40P01" | "53300" | "57P01" | "57P02" | "57P03")
            }),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_errors_are_those_a_retry_can_mend() {
        let q = |source| StoreError::Query { location: "pg".into(), op: "claim".into(), source };
        assert!(q(sqlx::Error::PoolTimedOut).is_transient());
        assert!(q(sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset))).is_transient());
        assert!(!q(sqlx::Error::RowNotFound).is_transient());
        assert!(!q(sqlx::Error::ColumnNotFound("x".into())).is_transient());
        let nf = StoreError::NotFound { location: "pg".into(), op: "x".into(), what: "run 3".into() };
        assert!(!nf.is_transient());
    }
}
