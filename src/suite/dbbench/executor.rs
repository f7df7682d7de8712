//! SQL executors: one database per episode, MySQL-shaped results and errors.
//!
//! [`SqliteExecutor`] is the default: an in-memory SQLite database whose tables have every column
//! declared `TEXT COLLATE mysql_ci`, rows inserted as bound parameters, and MySQL behaviour layered
//! on through the [`translate`](super::translate) pass and the [`functions`](super::functions)
//! registry. [`MySqlExecutor`](super::mysql::MySqlExecutor) runs the same interface against a
//! real MySQL/MariaDB server.
//!
//! MySQL 8 defaults the embedded executor reproduces beyond the SQL dialect: table names are
//! case-sensitive (as on Linux), and `ONLY_FULL_GROUP_BY` rejects bare columns next to aggregates
//! (see [`groupby`](super::groupby)).
//!
//! Known differences from MySQL 8 (embedded executor):
//! - there is no DECIMAL type: decimal literals, `CAST(x AS DECIMAL)`, `SUM` of integers and `/`
//!   give floats or integers, so an observation shows `1.5` or `5` where mysql-connector would
//!   show `Decimal('1.5')` or `Decimal('5')` (the scorer treats both the same);
//! - there are no DATE/TIME types; of the date functions only `YEAR`, `MONTH`, `DAY` (and the
//!   clock functions) exist, others are MySQL's 1305 "FUNCTION ... does not exist";
//! - `mysql_ci` orders by folded code points, not UCA weights (letters and digits agree);
//! - the position in a 1064 "near '...'" message comes from SQLite's parser and can differ from
//!   MySQL's when the two parsers stop at different tokens;
//! - `information_schema` has `TABLES` and `COLUMNS` only; `EXPLAIN` shows SQLite's plan;
//! - tables whose names start with `sqlite_` cannot be created.
//!
//! Safety of the embedded executor: `ATTACH`/`DETACH`/`PRAGMA`/`VACUUM` are refused by the
//! translation and by an authorizer (which also refuses `load_extension`, virtual tables and
//! writes to `information_schema`); extension loading stays disabled; temporary storage is in
//! memory; only one statement runs per call; each statement has a time limit (a progress handler
//! interrupts it, reported as MySQL's `3024` error) and a memory budget.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rusqlite::config::DbConfig;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{ffi, Connection};

use super::functions::{self, mysql_like};
use super::groupby;
use super::record::TableSpec;
use super::render;
use super::sqltext::{self, backquote, dquote, TokKind};
use super::translate::{self, PrepError, Prepared, StmtKind, Translation, TxOp};
// (the values executors return live in `value`; re-exported here for the executor's users)
pub use super::value::{ErrorKind, ExecOptions, ExecResult, RowSet, SqlError, SqlValue};
use crate::suite::EnvError;

/// The statement AgentBench runs to hash one table.
pub fn table_hash_sql(table: &TableSpec) -> String {
    let cols: Vec<String> = table.columns.iter().map(|c| backquote(&c.name)).collect();
    format!(
        "select md5(group_concat(rowhash order by rowhash)) as hash from( SELECT substring(MD5(CONCAT_WS(',', {})), 1, 5) AS rowhash FROM {}) as sub;",
        cols.join(","),
        backquote(&table.name)
    )
}

/// AgentBench's extraction of a hash from the rendered result of the hash query:
/// `str.strip("[]()")`, first comma-separated part, stripped of spaces and quotes. An empty table
/// gives `None`; an error gives (a piece of) the error text, exactly as AgentBench would.
pub fn hash_from_observation(obs: &str) -> String {
    let cleaned = obs.trim_matches(|c| matches!(c, '[' | ']' | '(' | ')'));
    let first = cleaned.split(',').next().unwrap_or("");
    first.trim().trim_matches('\'').to_string()
}

/// A database an episode talks to.
pub trait SqlExecutor: Send {
    /// Run one `execute_sql` call (exactly one statement).
    fn execute(&mut self, sql: &str) -> ExecResult;

    /// The hash of one table by AgentBench's formula (`None` for an empty table).
    fn table_hash(&mut self, table: &TableSpec) -> Result<String, SqlError> {
        let rs = self.execute(&table_hash_sql(table))?;
        Ok(match rs.rows.first().and_then(|r| r.first()) {
            Some(SqlValue::Text(s)) => s.clone(),
            Some(SqlValue::Null) | None => "None".into(),
            Some(other) => hash_from_observation(&render::value_repr(other)),
        })
    }

    /// AgentBench's combined hash of a record's tables: each table's hash extracted from the
    /// rendered query result, sorted, joined with `_`. Never fails: an error becomes part of the
    /// hash text, as it would in AgentBench.
    fn tables_hash(&mut self, tables: &[TableSpec]) -> String {
        let mut hashes: Vec<String> = tables.iter().map(|t| hash_from_observation(&render::observation(&self.execute(&table_hash_sql(t))))).collect();
        hashes.sort();
        hashes.join("_")
    }
}

/// The longest text or blob a statement may make (`SQLITE_LIMIT_LENGTH`).
pub const MAX_VALUE_BYTES: i32 = 1_000_000;

/// Shared state between the executor and its SQLite callbacks.
struct Guard {
    base: Instant,
    /// Nanoseconds after `base` when the running statement must stop (0: none).
    deadline: AtomicU64,
    timed_out: AtomicBool,
    mem_base: AtomicI64,
    mem_limit: AtomicI64,
    mem_exceeded: AtomicBool,
    /// The running statement's result grew past [`ExecOptions::max_result_bytes`].
    result_too_large: AtomicBool,
    /// The executor itself is running SQL: the authorizer allows everything.
    internal: AtomicBool,
}

/// A column as SQLite reports it: name, declared type, NOT NULL, primary key.
type ColumnInfo = (String, String, bool, bool);
/// A table and its columns.
type TableInfo = (String, Vec<ColumnInfo>);

/// The embedded MySQL-flavoured SQLite executor.
pub struct SqliteExecutor {
    conn: Connection,
    guard: Arc<Guard>,
    opts: ExecOptions,
}

fn memory_used() -> i64 {
    // SAFETY: a plain read of SQLite's global allocation counter.
    unsafe { ffi::sqlite3_memory_used() }
}

fn env_err(what: &str, e: impl std::fmt::Display) -> EnvError {
    EnvError::Infra(format!("{what}: {e}"))
}

/// A DECIMAL value as MySQL writes it: exactly `scale` decimals, no negative zero.
fn decimal_text(v: f64, scale: Option<u32>) -> String {
    let d = scale.unwrap_or(0) as usize;
    let text = format!("{v:.d$}");
    if text.starts_with('-') && text[1..].bytes().all(|b| b == b'0' || b == b'.') {
        text[1..].to_string()
    } else {
        text
    }
}

impl SqliteExecutor {
    /// Create the episode database with `tables`, default limits.
    pub fn new(tables: &[TableSpec]) -> Result<Self, EnvError> {
        Self::with_options(tables, ExecOptions::default())
    }

    pub fn with_options(tables: &[TableSpec], opts: ExecOptions) -> Result<Self, EnvError> {
        let mut conn = Connection::open_in_memory().map_err(|e| env_err("cannot open SQLite", e))?;
        let cfg = |c: DbConfig, v: bool| conn.set_db_config(c, v).map_err(|e| env_err("cannot configure SQLite", e));
        // Double-quoted strings are not identifiers' fallback here: an unknown "x" is an error.
        cfg(DbConfig::SQLITE_DBCONFIG_DQS_DML, false)?;
        cfg(DbConfig::SQLITE_DBCONFIG_DQS_DDL, false)?;
        cfg(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        cfg(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
        conn.execute_batch("PRAGMA temp_store = MEMORY; ATTACH DATABASE ':memory:' AS information_schema;")
            .map_err(|e| env_err("cannot prepare SQLite", e))?;
        cfg(DbConfig::SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE, false)?;
        conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 1).map_err(|e| env_err("cannot limit SQLite", e))?;
        // Memory one statement can take between two checks of its limit (every 1,000 steps of
        // SQLite's machine) is bounded by what one step can make (a value of at most
        // LIMIT_LENGTH) and by how wide one row is (LIMIT_COLUMN): a 1 MB value (MySQL's own
        // `group_concat` stops at 1 KB by default) and 200 columns keep a row under 200 MB.
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES).map_err(|e| env_err("cannot limit SQLite", e))?;
        conn.set_limit(Limit::SQLITE_LIMIT_COLUMN, 200).map_err(|e| env_err("cannot limit SQLite", e))?;
        conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, 1_000_000).map_err(|e| env_err("cannot limit SQLite", e))?;
        conn.set_limit(Limit::SQLITE_LIMIT_TRIGGER_DEPTH, 16).map_err(|e| env_err("cannot limit SQLite", e))?;
        functions::register(&conn).map_err(|e| env_err("cannot register MySQL functions", e))?;
        // The same tables are loaded for every episode of a task (and every path of a grammar
        // search): the first load is kept as a copy of its pages, and later ones start from it.
        let snapshot = snapshots::find(tables);
        match &snapshot {
            Some(s) => {
                let load = |conn: &mut Connection, schema: &str, pages: &[u8]| {
                    conn.deserialize_read_exact(schema, pages, pages.len(), false).map_err(|e| env_err("cannot load the tables", e))
                };
                load(&mut conn, "main", &s.main)?;
                load(&mut conn, "information_schema", &s.information_schema)?;
            }
            None => load_tables(&conn, tables)?,
        }

        let guard = Arc::new(Guard {
            base: Instant::now(),
            deadline: AtomicU64::new(0),
            timed_out: AtomicBool::new(false),
            mem_base: AtomicI64::new(0),
            mem_limit: AtomicI64::new(opts.memory_limit.min(i64::MAX as u64) as i64),
            mem_exceeded: AtomicBool::new(false),
            result_too_large: AtomicBool::new(false),
            internal: AtomicBool::new(false),
        });
        let g = guard.clone();
        conn.progress_handler(
            1000,
            Some(move || {
                let d = g.deadline.load(Ordering::Relaxed);
                if d == 0 {
                    return false;
                }
                if g.base.elapsed().as_nanos() as u64 > d {
                    g.timed_out.store(true, Ordering::Relaxed);
                    return true;
                }
                if memory_used() - g.mem_base.load(Ordering::Relaxed) > g.mem_limit.load(Ordering::Relaxed) {
                    g.mem_exceeded.store(true, Ordering::Relaxed);
                    return true;
                }
                false
            }),
        )
        .map_err(|e| env_err("cannot install the time limit", e))?;
        let g = guard.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| authorize(&g, ctx))).map_err(|e| env_err("cannot install the authorizer", e))?;
        let mut ex = SqliteExecutor { conn, guard, opts };
        if snapshot.is_none() {
            ex.refresh_information_schema();
            let pages = ex.internal(|c| Ok::<_, rusqlite::Error>((c.serialize("main")?.to_vec(), c.serialize("information_schema")?.to_vec())));
            // without a copy every episode loads its tables itself, as it did before
            if let Ok((main, information_schema)) = pages {
                snapshots::keep(tables, snapshots::Snapshot { main, information_schema });
            }
        }
        Ok(ex)
    }

    /// The connection, for tests and for callers that need raw access.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    fn internal<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        let was = self.guard.internal.swap(true, Ordering::SeqCst);
        let out = f(&self.conn);
        self.guard.internal.store(was, Ordering::SeqCst);
        out
    }

    /// User tables in the main database: (name, [(column, declared type, notnull, pk)]).
    fn schema(&self) -> Vec<TableInfo> {
        self.internal(|c| {
            let mut out = Vec::new();
            let names: Vec<String> = c
                .prepare("SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view') AND substr(name, 1, 7) <> 'sqlite_' ORDER BY name")
                .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(0))?.collect())
                .unwrap_or_default();
            for n in names {
                let cols: Vec<ColumnInfo> = c
                    .prepare("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1, 'main')")
                    .and_then(|mut s| {
                        s.query_map([&n], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? != 0, r.get::<_, i64>(3)? != 0)))?.collect()
                    })
                    .unwrap_or_default();
                out.push((n, cols));
            }
            out
        })
    }

    fn refresh_information_schema(&mut self) {
        let schema = self.schema();
        self.internal(|c| {
            let _ = c.execute_batch("DELETE FROM information_schema.tables; DELETE FROM information_schema.columns;");
            for (t, cols) in &schema {
                let rows: i64 = c.query_row(&format!("SELECT count(*) FROM main.{}", dquote(t)), [], |r| r.get(0)).unwrap_or(0);
                let _ = c.execute(
                    "INSERT INTO information_schema.tables VALUES ('def', 'dbbench', ?1, 'BASE TABLE', 'InnoDB', ?2, 'utf8mb4_0900_ai_ci')",
                    rusqlite::params![t, rows],
                );
                for (i, (name, ty, notnull, pk)) in cols.iter().enumerate() {
                    let ty = if ty.is_empty() { "text".to_string() } else { ty.to_lowercase() };
                    let is_text = ty.contains("text") || ty.contains("char");
                    let _ = c.execute(
                        "INSERT INTO information_schema.columns VALUES ('def', 'dbbench', ?1, ?2, ?3, NULL, ?4, ?5, ?6, ?5, ?7, '', ?8, ?9)",
                        rusqlite::params![
                            t,
                            name,
                            i as i64 + 1,
                            if *notnull { "NO" } else { "YES" },
                            ty,
                            if is_text { Some(65535i64) } else { None },
                            if *pk { "PRI" } else { "" },
                            if is_text { Some("utf8mb4") } else { None },
                            if is_text { Some("utf8mb4_0900_ai_ci") } else { None },
                        ],
                    );
                }
            }
        });
    }

    /// Table names are case-sensitive, as in MySQL on Linux.
    fn find_table(&self, name: &str) -> Option<TableInfo> {
        self.schema().into_iter().find(|(n, _)| n == name)
    }

    fn table_names(&self) -> Vec<String> {
        self.internal(|c| {
            c.prepare("SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view')")
                .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(0))?.collect())
                .unwrap_or_default()
        })
    }

    /// MySQL on Linux (the DBBench server) keeps table names case-sensitive while SQLite does
    /// not: a reference that matches a table only up to case is MySQL's 1146.
    fn table_case_error(&self, src: &str) -> Option<SqlError> {
        let toks = sqltext::lex(src).ok()?;
        let names = self.table_names();
        // CTE names: `WITH [RECURSIVE] name [(cols)] AS (` and `, name AS (`.
        let mut ctes = std::collections::HashSet::new();
        for (i, t) in toks.iter().enumerate() {
            if !t.is_ident() {
                continue;
            }
            let mut j = i + 1;
            if toks.get(j).is_some_and(|x| x.kind == TokKind::LParen) {
                j = sqltext::matching_paren(&toks, j).map_or(j, |c| c + 1);
            }
            if toks.get(j).is_some_and(|x| x.is_kw("AS")) && toks.get(j + 1).is_some_and(|x| x.kind == TokKind::LParen) {
                ctes.insert(t.value.to_lowercase());
            }
        }
        for (i, t) in toks.iter().enumerate() {
            if !t.is_ident() || i == 0 || toks.get(i + 1).is_some_and(|n| n.kind == TokKind::Dot) {
                continue;
            }
            let prev = &toks[i - 1];
            let is_ref = if prev.kind == TokKind::Dot {
                i >= 2 && toks[i - 2].is_ident() && toks[i - 2].value == "dbbench"
            } else if prev.kind == TokKind::Comma {
                in_from_list(&toks, i - 1)
            } else {
                ["FROM", "JOIN", "INTO", "UPDATE", "TABLE"].iter().any(|k| prev.is_kw(k))
            };
            if !is_ref || names.iter().any(|n| n == &t.value) || ctes.contains(&t.value.to_lowercase()) {
                continue;
            }
            if names.iter().any(|n| n.to_lowercase() == t.value.to_lowercase()) {
                return Some(SqlError::new(1146, "42S02", format!("Table 'dbbench.{}' doesn't exist", t.value)));
            }
        }
        None
    }

    fn arm(&self) {
        let g = &self.guard;
        g.timed_out.store(false, Ordering::Relaxed);
        g.mem_exceeded.store(false, Ordering::Relaxed);
        g.mem_base.store(memory_used(), Ordering::Relaxed);
        let d = g.base.elapsed() + self.opts.time_limit;
        g.deadline.store((d.as_nanos() as u64).max(1), Ordering::Relaxed);
    }

    fn disarm(&self) {
        self.guard.deadline.store(0, Ordering::Relaxed);
    }

    fn run(&mut self, src: &str, t: &Translation) -> ExecResult {
        self.arm();
        let res = self.run_inner(t);
        let timed_out = self.guard.timed_out.load(Ordering::Relaxed);
        let mem = self.guard.mem_exceeded.load(Ordering::Relaxed);
        let too_large = self.guard.result_too_large.swap(false, Ordering::Relaxed);
        self.disarm();
        let out = res.map_err(|e| {
            if timed_out {
                SqlError::timeout()
            } else if too_large {
                super::value::result_too_large(self.opts.max_result_bytes)
            } else if mem {
                SqlError::new(1105, "HY000", "Query execution was interrupted: the statement used more memory than this executor allows")
            } else {
                map_error(src, t, &e)
            }
        });
        if out.is_ok() && t.kind == StmtKind::Ddl {
            self.refresh_information_schema();
        }
        out
    }

    fn run_inner(&mut self, t: &Translation) -> rusqlite::Result<RowSet> {
        let mut stmt = self.conn.prepare(&t.sql)?;
        let ncols = stmt.column_count();
        if ncols == 0 {
            let affected = stmt.raw_execute()? as u64;
            return Ok(RowSet { affected, ..RowSet::default() });
        }
        let columns: Vec<String> = stmt.column_names().into_iter().map(|s| s.to_string()).collect();
        let decimal_scales = if t.kind == StmtKind::Select { translate::decimal_result_scales(&t.sql) } else { Vec::new() };
        let decimal_scale = |i: usize| if decimal_scales.len() == ncols { decimal_scales[i] } else { None };
        let mut rows = Vec::new();
        let mut truncated = false;
        let mut bytes = 0usize;
        let mut q = stmt.raw_query();
        while let Some(row) = q.next()? {
            if rows.len() >= self.opts.max_rows {
                truncated = true;
                break;
            }
            let mut vals = Vec::with_capacity(ncols);
            for i in 0..ncols {
                let v = row.get_ref(i)?;
                bytes += match v {
                    ValueRef::Text(b) | ValueRef::Blob(b) => b.len(),
                    _ => 8,
                };
                if bytes > self.opts.max_result_bytes {
                    self.guard.result_too_large.store(true, Ordering::Relaxed);
                    return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), None));
                }
                vals.push(match v {
                    ValueRef::Null => SqlValue::Null,
                    ValueRef::Integer(v) if decimal_scale(i).is_some() => SqlValue::Decimal(decimal_text(v as f64, decimal_scale(i))),
                    ValueRef::Real(v) if decimal_scale(i).is_some() => SqlValue::Decimal(decimal_text(v, decimal_scale(i))),
                    ValueRef::Integer(v) => SqlValue::Int(v),
                    ValueRef::Real(v) => SqlValue::Float(v),
                    ValueRef::Text(b) => SqlValue::Text(String::from_utf8_lossy(b).into_owned()),
                    ValueRef::Blob(b) => SqlValue::Bytes(b.to_vec()),
                });
            }
            rows.push(vals);
        }
        Ok(RowSet { columns, rows, truncated, affected: 0, result_set: true })
    }

    fn show_columns(&self, table: &str, full: bool, like: Option<&str>) -> ExecResult {
        let Some((_, cols)) = self.find_table(table) else {
            return Err(SqlError::new(1146, "42S02", format!("Table 'dbbench.{table}' doesn't exist")));
        };
        let mut columns: Vec<String> = ["Field", "Type"].map(String::from).to_vec();
        if full {
            columns.push("Collation".into());
        }
        columns.extend(["Null", "Key", "Default", "Extra"].map(String::from));
        if full {
            columns.extend(["Privileges", "Comment"].map(String::from));
        }
        let mut rows = Vec::new();
        for (name, ty, notnull, pk) in cols {
            if let Some(p) = like {
                if !mysql_like(p, &name, Some('\\')).unwrap_or(false) {
                    continue;
                }
            }
            let ty = if ty.is_empty() { "text".to_string() } else { ty.to_lowercase() };
            let is_text = ty.contains("text") || ty.contains("char");
            let mut row = vec![SqlValue::Text(name), SqlValue::Text(ty)];
            if full {
                row.push(if is_text { SqlValue::Text("utf8mb4_0900_ai_ci".into()) } else { SqlValue::Null });
            }
            row.push(SqlValue::Text(if notnull { "NO" } else { "YES" }.into()));
            row.push(SqlValue::Text(if pk { "PRI" } else { "" }.into()));
            row.push(SqlValue::Null);
            row.push(SqlValue::Text(String::new()));
            if full {
                row.push(SqlValue::Text("select,insert,update,references".into()));
                row.push(SqlValue::Text(String::new()));
            }
            rows.push(row);
        }
        Ok(RowSet::with_rows(columns, rows))
    }

    fn transaction(&mut self, op: TxOp) -> ExecResult {
        let auto = self.conn.is_autocommit();
        let sql = match (op, auto) {
            (TxOp::Begin, true) => "BEGIN",
            // MySQL commits the open transaction when a new one starts.
            (TxOp::Begin, false) => "COMMIT; BEGIN",
            (TxOp::Commit, false) => "COMMIT",
            (TxOp::Rollback, false) => "ROLLBACK",
            (_, true) => return Ok(RowSet::default()),
        };
        self.internal(|c| c.execute_batch(sql)).map(|_| RowSet::default()).map_err(|e| SqlError::new(1105, "HY000", e.to_string()))
    }
}

/// Create `information_schema`'s tables and the task's tables with their rows.
fn load_tables(conn: &Connection, tables: &[TableSpec]) -> Result<(), EnvError> {
    conn.execute_batch(
        "CREATE TABLE information_schema.tables (TABLE_CATALOG TEXT COLLATE mysql_ci, TABLE_SCHEMA TEXT COLLATE mysql_ci, \
         TABLE_NAME TEXT COLLATE mysql_ci, TABLE_TYPE TEXT COLLATE mysql_ci, ENGINE TEXT COLLATE mysql_ci, TABLE_ROWS INTEGER, \
         TABLE_COLLATION TEXT COLLATE mysql_ci);
         CREATE TABLE information_schema.columns (TABLE_CATALOG TEXT COLLATE mysql_ci, TABLE_SCHEMA TEXT COLLATE mysql_ci, \
         TABLE_NAME TEXT COLLATE mysql_ci, COLUMN_NAME TEXT COLLATE mysql_ci, ORDINAL_POSITION INTEGER, COLUMN_DEFAULT TEXT, \
         IS_NULLABLE TEXT COLLATE mysql_ci, DATA_TYPE TEXT COLLATE mysql_ci, CHARACTER_MAXIMUM_LENGTH INTEGER, \
         COLUMN_TYPE TEXT COLLATE mysql_ci, COLUMN_KEY TEXT COLLATE mysql_ci, EXTRA TEXT COLLATE mysql_ci, \
         CHARACTER_SET_NAME TEXT COLLATE mysql_ci, COLLATION_NAME TEXT COLLATE mysql_ci);",
    )
    .map_err(|e| env_err("cannot create information_schema", e))?;

    for t in tables {
        let cols: Vec<String> = t.columns.iter().map(|c| format!("{} TEXT COLLATE mysql_ci", dquote(&c.name))).collect();
        let create = format!("CREATE TABLE IF NOT EXISTS main.{} ({})", dquote(&t.name), cols.join(", "));
        conn.execute_batch(&create).map_err(|e| env_err(&format!("cannot create table `{}`", t.name), e))?;
        let names: Vec<String> = t.columns.iter().map(|c| dquote(&c.name)).collect();
        let marks = vec!["?"; t.columns.len()].join(", ");
        let insert = format!("INSERT INTO main.{} ({}) VALUES ({marks})", dquote(&t.name), names.join(", "));
        let tx = conn.unchecked_transaction().map_err(|e| env_err("cannot load rows", e))?;
        {
            let mut stmt = tx.prepare(&insert).map_err(|e| env_err(&format!("cannot load table `{}`", t.name), e))?;
            for (r, row) in t.rows.iter().enumerate() {
                stmt.execute(rusqlite::params_from_iter(row.iter()))
                    .map_err(|e| env_err(&format!("cannot insert row {} of `{}`", r + 1, t.name), e))?;
            }
        }
        tx.commit().map_err(|e| env_err("cannot load rows", e))?;
    }
    Ok(())
}

/// Loaded tables kept as database pages, by their content.
mod snapshots {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use super::TableSpec;

    /// The pages of `main` and of `information_schema` right after a task's tables were loaded.
    pub(super) struct Snapshot {
        pub main: Vec<u8>,
        pub information_schema: Vec<u8>,
    }

    /// Sets of tables kept before the cache is emptied (a bundled task's pages are about 20 KB).
    const ENTRIES: usize = 2_048;

    type Cache = HashMap<u64, Vec<(Vec<TableSpec>, Arc<Snapshot>)>>;

    fn cache() -> &'static Mutex<Cache> {
        static CACHE: std::sync::OnceLock<Mutex<Cache>> = std::sync::OnceLock::new();
        CACHE.get_or_init(Default::default)
    }

    fn key(tables: &[TableSpec]) -> u64 {
        let mut h = crate::seed::FNV_OFFSET;
        for t in tables {
            h = crate::seed::fnv1a_update(h, t.name.bytes().chain([0]));
            for c in &t.columns {
                h = crate::seed::fnv1a_update(h, c.name.bytes().chain([1]));
            }
            for row in &t.rows {
                for v in row {
                    h = crate::seed::fnv1a_update(h, v.bytes().chain([2]));
                }
            }
        }
        h
    }

    /// The snapshot of exactly these tables, if one was kept.
    pub(super) fn find(tables: &[TableSpec]) -> Option<Arc<Snapshot>> {
        let cache = cache().lock().unwrap_or_else(|e| e.into_inner());
        cache.get(&key(tables))?.iter().find(|(t, _)| t.as_slice() == tables).map(|(_, s)| s.clone())
    }

    pub(super) fn keep(tables: &[TableSpec], snapshot: Snapshot) {
        let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
        if cache.values().map(Vec::len).sum::<usize>() >= ENTRIES {
            cache.clear();
        }
        let entry = cache.entry(key(tables)).or_default();
        if !entry.iter().any(|(t, _)| t.as_slice() == tables) {
            entry.push((tables.to_vec(), Arc::new(snapshot)));
        }
    }
}

fn authorize(g: &Guard, ctx: AuthContext<'_>) -> Authorization {
    if g.internal.load(Ordering::SeqCst) {
        return Authorization::Allow;
    }
    let info_schema = ctx.database_name.is_some_and(|d| d.eq_ignore_ascii_case("information_schema"));
    match ctx.action {
        AuthAction::Attach { .. }
        | AuthAction::Detach { .. }
        | AuthAction::Pragma { .. }
        | AuthAction::CreateVtable { .. }
        | AuthAction::DropVtable { .. }
        | AuthAction::Unknown { .. } => Authorization::Deny,
        AuthAction::Function { function_name } => {
            let f = function_name.to_ascii_lowercase();
            if f == "load_extension" || f.starts_with("sqlite_") || f == "fts3_tokenizer" || f == "readfile" || f == "writefile" {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        AuthAction::Insert { .. }
        | AuthAction::Update { .. }
        | AuthAction::Delete { .. }
        | AuthAction::CreateTable { .. }
        | AuthAction::DropTable { .. }
        | AuthAction::CreateIndex { .. }
        | AuthAction::DropIndex { .. }
        | AuthAction::CreateView { .. }
        | AuthAction::DropView { .. }
        | AuthAction::CreateTrigger { .. }
        | AuthAction::DropTrigger { .. }
        | AuthAction::AlterTable { .. }
            if info_schema =>
        {
            Authorization::Deny
        }
        _ => Authorization::Allow,
    }
}

/// Is the comma at `i` inside a FROM list (the nearest clause keyword before it, at its nesting
/// level, is FROM)?
fn in_from_list(toks: &[sqltext::Token], i: usize) -> bool {
    let mut depth = 0i32;
    let mut j = i;
    while j > 0 {
        j -= 1;
        match toks[j].kind {
            TokKind::RParen => depth += 1,
            TokKind::LParen => {
                if depth == 0 {
                    return false;
                }
                depth -= 1;
            }
            TokKind::Word if depth == 0 => {
                let up = toks[j].value.to_ascii_uppercase();
                match up.as_str() {
                    "FROM" => return true,
                    "SELECT" | "WHERE" | "ON" | "USING" | "BY" | "HAVING" | "SET" | "VALUES" | "LIMIT" | "INTO" | "JOIN" => return false,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    false
}

/// The clause MySQL names in `Unknown column 'x' in '<clause>'`: the nearest clause keyword
/// before the first mention of the column, at the same or an outer nesting level.
fn column_clause(src: &str, column: &str) -> &'static str {
    let Ok(toks) = sqltext::lex(src) else { return "field list" };
    let last = column.rsplit('.').next().unwrap_or(column);
    let Some(pos) = toks.iter().position(|t| t.is_ident() && t.value.eq_ignore_ascii_case(last)) else {
        return "field list";
    };
    let mut depth = 0i32;
    let mut j = pos;
    while j > 0 {
        j -= 1;
        let t = &toks[j];
        match t.kind {
            TokKind::RParen => depth += 1,
            TokKind::LParen => depth = (depth - 1).max(0),
            TokKind::Word if depth == 0 => {
                let up = t.value.to_ascii_uppercase();
                let next_by = toks.get(j + 1).is_some_and(|n| n.is_kw("BY"));
                match up.as_str() {
                    "WHERE" => return "where clause",
                    "HAVING" => return "having clause",
                    "ON" => return "on clause",
                    "ORDER" if next_by => return "order clause",
                    "GROUP" if next_by => return "group statement",
                    "SELECT" | "SET" | "VALUES" | "INTO" | "UPDATE" => return "field list",
                    "USING" => return "from clause",
                    _ => {}
                }
            }
            _ => {}
        }
    }
    "field list"
}

fn after<'a>(msg: &'a str, prefix: &str) -> Option<&'a str> {
    msg.strip_prefix(prefix).map(str::trim)
}

/// Map an SQLite error to the MySQL error mysql-connector would report.
fn map_error(src: &str, t: &Translation, e: &rusqlite::Error) -> SqlError {
    let (msg, offset) = match e {
        rusqlite::Error::SqlInputError { msg, offset, .. } => (msg.clone(), Some(*offset)),
        rusqlite::Error::SqliteFailure(err, m) => {
            if err.code == rusqlite::ErrorCode::OperationInterrupted {
                return SqlError::timeout();
            }
            if err.code == rusqlite::ErrorCode::AuthorizationForStatementDenied {
                return refused_error();
            }
            (m.clone().unwrap_or_else(|| err.to_string()), None)
        }
        other => (other.to_string(), None),
    };
    let src_offset = |o: Option<i32>| o.map(|o| t.source_offset(o.max(0) as usize));
    if msg.starts_with("not authorized") || msg.starts_with("too many attached databases") {
        return refused_error();
    }
    if msg == "interrupted" || msg.ends_with("maximum statement execution time exceeded") {
        return SqlError::timeout();
    }
    if let Some(col) = after(&msg, "no such column:") {
        let col = col.split(" - should this be").next().unwrap_or(col).trim().trim_matches('"');
        return SqlError::new(1054, "42S22", format!("Unknown column '{col}' in '{}'", column_clause(src, col)));
    }
    if let Some(tab) = after(&msg, "no such table:") {
        let tab = tab.strip_prefix("main.").unwrap_or(tab);
        let is_drop = src.trim_start().get(..4).is_some_and(|w| w.eq_ignore_ascii_case("DROP"));
        return if is_drop {
            SqlError::new(1051, "42S02", format!("Unknown table 'dbbench.{tab}'"))
        } else {
            SqlError::new(1146, "42S02", format!("Table 'dbbench.{tab}' doesn't exist"))
        };
    }
    if let Some(db) = after(&msg, "unknown database") {
        return SqlError::new(1049, "42000", format!("Unknown database '{}'", db.trim_matches('"')));
    }
    if msg.contains("syntax error") || msg == "incomplete input" || msg.starts_with("unrecognized token") {
        let off = match src_offset(offset) {
            Some(o) if msg != "incomplete input" => o,
            _ => src.trim_end().trim_end_matches(';').trim_end().len(),
        };
        return SqlError::syntax(src, off);
    }
    if let Some(p) = msg.find(functions::TRUNCATED) {
        return SqlError::new(1292, "22007", msg[p..].to_string());
    }
    if let Some(f) = after(&msg, "no such function:") {
        return SqlError::new(1305, "42000", format!("FUNCTION dbbench.{f} does not exist"));
    }
    if let Some(rest) = after(&msg, "wrong number of arguments to function") {
        let f = rest.trim_end_matches("()");
        let f = f.strip_prefix("mysql_").unwrap_or(f);
        return SqlError::new(1582, "42000", format!("Incorrect parameter count in the call to native function '{f}'"));
    }
    if let Some(p) = msg.find("Incorrect parameter count") {
        return SqlError::new(1582, "42000", msg[p..].to_string());
    }
    if msg.starts_with("misuse of aggregate") || msg.starts_with("misuse of window function") {
        return SqlError::new(1111, "HY000", "Invalid use of group function");
    }
    if let Some(c) = after(&msg, "ambiguous column name:") {
        return SqlError::new(1052, "23000", format!("Column '{c}' in field list is ambiguous"));
    }
    if msg.starts_with("table ") && msg.ends_with(" already exists") && msg.len() > "table  already exists".len() {
        let name = msg["table ".len()..msg.len() - " already exists".len()].trim_matches('"');
        return SqlError::new(1050, "42S01", format!("Table '{name}' already exists"));
    }
    if (msg.starts_with("table ") && msg.contains("columns but") && msg.contains("values were supplied"))
        || msg.contains(" values for ") && msg.contains(" columns")
    {
        return SqlError::new(1136, "21S01", "Column count doesn't match value count at row 1");
    }
    if let Some(c) = after(&msg, "duplicate column name:") {
        return SqlError::new(1060, "42S21", format!("Duplicate column name '{c}'"));
    }
    if msg.starts_with("sub-select returns") || msg == "row value misused" {
        return SqlError::new(1241, "21000", "Operand should contain 1 column(s)");
    }
    if let Some(c) = after(&msg, "no such collation sequence:") {
        return SqlError::new(1273, "HY000", format!("Unknown collation: '{c}'"));
    }
    if let Some(c) = after(&msg, "NOT NULL constraint failed:") {
        let col = c.rsplit('.').next().unwrap_or(c);
        return SqlError::new(1048, "23000", format!("Column '{col}' cannot be null"));
    }
    if let Some(c) = after(&msg, "UNIQUE constraint failed:") {
        return SqlError::new(1062, "23000", format!("Duplicate entry for key '{c}'"));
    }
    if msg.contains("Timeout exceeded in regular expression match") {
        return SqlError::new(3699, "HY000", "Timeout exceeded in regular expression match.").with_kind(ErrorKind::Timeout);
    }
    if msg.contains("Illegal argument to a regular expression") {
        return SqlError::new(3685, "HY000", "Illegal argument to a regular expression.");
    }
    if msg == "no tables specified" {
        return SqlError::new(1096, "HY000", "No tables used");
    }
    SqlError::new(1105, "HY000", msg)
}

fn refused_error() -> SqlError {
    SqlError::new(1227, "42000", "Access denied; you need (at least one of) the SUPER privilege(s) for this operation").with_kind(ErrorKind::Refused)
}

/// Turn a translation failure into the MySQL error.
pub fn prep_error(src: &str, e: PrepError) -> SqlError {
    match e {
        PrepError::Syntax { offset } => SqlError::syntax(src, offset),
        PrepError::Refused { offset, what } => {
            if what == "LOAD DATA" || what == "OUTFILE" || what == "DUMPFILE" {
                SqlError::new(1227, "42000", "Access denied; you need (at least one of) the FILE privilege(s) for this operation")
                    .with_kind(ErrorKind::Refused)
            } else {
                SqlError::syntax(src, offset).with_kind(ErrorKind::Refused)
            }
        }
        PrepError::UnknownTable { name } => SqlError::new(1146, "42S02", format!("Table 'dbbench.{name}' doesn't exist")),
        PrepError::Empty => SqlError::new(1065, "42000", "Query was empty"),
        PrepError::TargetInSubquery { name } => {
            SqlError::new(1093, "HY000", format!("You can't specify target table '{name}' for update in FROM clause"))
        }
        PrepError::Unsupported { what } => SqlError::new(1235, "42000", format!("This version of MySQL doesn't yet support '{what}'")),
    }
}

fn text_rows(column: &str, values: impl IntoIterator<Item = String>) -> RowSet {
    RowSet::with_rows(vec![column.to_string()], values.into_iter().map(|v| vec![SqlValue::Text(v)]).collect())
}

impl SqlExecutor for SqliteExecutor {
    fn execute(&mut self, sql: &str) -> ExecResult {
        let prepared = translate::prepare(sql).map_err(|e| prep_error(sql, e))?;
        match prepared {
            Prepared::Sql(t) => {
                if let Some(e) = self.table_case_error(sql) {
                    return Err(e);
                }
                if sql.to_ascii_lowercase().contains("select") {
                    let schema: Vec<(String, Vec<String>)> =
                        self.schema().into_iter().map(|(t, cols)| (t, cols.into_iter().map(|c| c.0).collect())).collect();
                    if let Some(e) = groupby::only_full_group_by_error(sql, &schema) {
                        return Err(e);
                    }
                }
                self.run(sql, &t)
            }
            Prepared::ShowTables { full, like } => {
                let names: Vec<String> = self
                    .schema()
                    .into_iter()
                    .map(|(n, _)| n)
                    .filter(|n| like.as_deref().is_none_or(|p| mysql_like(p, n, Some('\\')).unwrap_or(false)))
                    .collect();
                let mut rs = text_rows("Tables_in_dbbench", names);
                if full {
                    rs.columns.push("Table_type".into());
                    for r in rs.rows.iter_mut() {
                        r.push(SqlValue::Text("BASE TABLE".into()));
                    }
                }
                Ok(rs)
            }
            Prepared::ShowColumns { table, full, like } => self.show_columns(&table, full, like.as_deref()),
            Prepared::ShowCreateTable { table } => {
                let Some((name, cols)) = self.find_table(&table) else {
                    return Err(SqlError::new(1146, "42S02", format!("Table 'dbbench.{table}' doesn't exist")));
                };
                let defs: Vec<String> = cols
                    .iter()
                    .map(|(c, ty, notnull, _)| {
                        let ty = if ty.is_empty() { "text".to_string() } else { ty.to_lowercase() };
                        format!("  {} {ty}{}", backquote(c), if *notnull { " NOT NULL" } else { "" })
                    })
                    .collect();
                let ddl = format!(
                    "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci",
                    backquote(&name),
                    defs.join(",\n")
                );
                Ok(RowSet::with_rows(vec!["Table".into(), "Create Table".into()], vec![vec![SqlValue::Text(name), SqlValue::Text(ddl)]]))
            }
            Prepared::ShowIndex { table } => {
                if self.find_table(&table).is_none() {
                    return Err(SqlError::new(1146, "42S02", format!("Table 'dbbench.{table}' doesn't exist")));
                }
                let columns =
                    ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation", "Cardinality"].map(String::from).to_vec();
                Ok(RowSet::with_rows(columns, Vec::new()))
            }
            Prepared::ShowDatabases => Ok(text_rows("Database", ["dbbench".to_string(), "information_schema".to_string()])),
            Prepared::Use { database } => match database.as_str() {
                "dbbench" => Ok(RowSet::default()),
                "information_schema" => Err(SqlError::new(1235, "42000", "This version of MySQL doesn't yet support 'USE information_schema'")),
                other => Err(SqlError::new(1049, "42000", format!("Unknown database '{other}'"))),
            },
            Prepared::Transaction(op) => self.transaction(op),
            Prepared::Noop => Ok(RowSet::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_extraction() {
        assert_eq!(hash_from_observation("[('abc123',)]"), "abc123");
        assert_eq!(hash_from_observation("[(None,)]"), "None");
        assert_eq!(hash_from_observation("1146 (42S02): Table 'dbbench.x' doesn't exist"), "1146 (42S02): Table 'dbbench.x' doesn't exist");
    }

    #[test]
    fn clauses() {
        assert_eq!(column_clause("SELECT a FROM t WHERE b = 1", "b"), "where clause");
        assert_eq!(column_clause("SELECT a FROM t WHERE b = 1", "a"), "field list");
        assert_eq!(column_clause("SELECT a FROM t ORDER BY zz", "zz"), "order clause");
        assert_eq!(column_clause("SELECT a FROM t WHERE x IN (SELECT q FROM u)", "q"), "field list");
    }
}
