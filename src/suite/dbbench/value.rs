//! What running SQL gives back, whichever executor runs it: values, row sets, MySQL-shaped errors,
//! and an executor's options. Plain data below the executors, the renderer and the GROUP BY
//! checker, so none of them imports another for it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One value of a result row, as mysql-connector would hand it to Python.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SqlValue {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Bytes(Vec<u8>),
    /// A MySQL DECIMAL (only the MySQL executor produces these), rendered `Decimal('1.50')`.
    Decimal(String),
}

impl SqlValue {
    /// Bytes the value holds (8 for a number or NULL), for the result-size cap.
    pub fn size(&self) -> usize {
        match self {
            SqlValue::Text(s) | SqlValue::Decimal(s) => s.len(),
            SqlValue::Bytes(b) => b.len(),
            SqlValue::Null | SqlValue::Int(_) | SqlValue::Float(_) => 8,
        }
    }
}

/// MySQL's ER_NET_PACKET_TOO_LARGE, worded for a statement's result past `max_bytes`.
pub fn result_too_large(max_bytes: usize) -> SqlError {
    SqlError::new(
        1153,
        "08S01",
        format!("Got a result bigger than the {} MB this executor returns; select fewer rows or shorter values", max_bytes >> 20),
    )
}

/// The rows a statement returned. `columns` is empty for statements without a result set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RowSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<SqlValue>>,
    /// Rows beyond the executor's row cap were not fetched.
    pub truncated: bool,
    /// Rows changed by an INSERT/UPDATE/DELETE.
    pub affected: u64,
    /// The statement produced a result set (a SELECT, SHOW, ...), even if it has no rows.
    pub result_set: bool,
}

impl RowSet {
    /// A result set with these columns and rows.
    pub fn with_rows(columns: Vec<String>, rows: Vec<Vec<SqlValue>>) -> RowSet {
        RowSet { columns, rows, result_set: true, ..RowSet::default() }
    }
}

/// Error classes the environment reports as `Signals::error_kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    UnknownColumn,
    UnknownTable,
    Syntax,
    Timeout,
    Refused,
    Other,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnknownColumn => "unknown_column",
            ErrorKind::UnknownTable => "unknown_table",
            ErrorKind::Syntax => "syntax",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Refused => "refused",
            ErrorKind::Other => "other",
        }
    }

    /// The class of a MySQL error number.
    pub fn of_errno(errno: u32) -> ErrorKind {
        match errno {
            1054 => ErrorKind::UnknownColumn,
            1146 | 1051 | 1109 => ErrorKind::UnknownTable,
            1064 | 1149 => ErrorKind::Syntax,
            3024 | 1317 => ErrorKind::Timeout,
            1142 | 1227 | 1044 | 1045 | 1370 => ErrorKind::Refused,
            _ => ErrorKind::Other,
        }
    }
}

/// A statement error in MySQL form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{errno} ({sqlstate}): {message}")]
pub struct SqlError {
    pub errno: u32,
    pub sqlstate: String,
    pub message: String,
    pub kind: ErrorKind,
}

impl SqlError {
    pub fn new(errno: u32, sqlstate: &str, message: impl Into<String>) -> SqlError {
        SqlError { errno, sqlstate: sqlstate.into(), message: message.into(), kind: ErrorKind::of_errno(errno) }
    }
    pub(super) fn with_kind(mut self, kind: ErrorKind) -> SqlError {
        self.kind = kind;
        self
    }
    /// MySQL's parse error for the text `src` at byte `offset`.
    pub fn syntax(src: &str, offset: usize) -> SqlError {
        let (near, line) = near_text(src, offset);
        SqlError::new(
            1064,
            "42000",
            format!(
                "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line {line}"
            ),
        )
    }
    pub fn timeout() -> SqlError {
        SqlError::new(3024, "HY000", "Query execution was interrupted, maximum statement execution time exceeded")
    }
}

/// The outcome of one statement.
pub type ExecResult = Result<RowSet, SqlError>;

/// Limits for one executor.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecOptions {
    /// Per-statement time limit.
    pub time_limit: Duration,
    /// Rows fetched per statement (the observation shows at most 800 characters anyway).
    pub max_rows: usize,
    /// Memory a statement may allocate before it is interrupted (embedded executor).
    pub memory_limit: u64,
    /// Bytes of values a statement's result may hold when fetched: past it the statement fails
    /// with an error of its own before the workbench holds more (each value is itself at most
    /// SQLite's length limit, 16 MB).
    pub max_result_bytes: usize,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions { time_limit: Duration::from_secs(5), max_rows: 10_000, memory_limit: 256 << 20, max_result_bytes: 32 << 20 }
    }
}

/// MySQL's `near '...' at line N` for a syntax error at source byte `offset`: the rest of the
/// text from there (at most 80 characters) and the 1-based line number.
pub fn near_text(src: &str, offset: usize) -> (String, usize) {
    let offset = offset.min(src.len());
    let offset = (0..=offset).rev().find(|&o| src.is_char_boundary(o)).unwrap_or(0);
    let near: String = src[offset..].chars().take(80).collect();
    let line = src[..offset].matches('\n').count() + 1;
    (near, line)
}
