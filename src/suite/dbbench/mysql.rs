//! The optional MySQL/MariaDB executor: the same [`SqlExecutor`] interface against a real server,
//! as AgentBench itself runs DBBench.
//!
//! Each executor creates a fresh database `dbbench_<random>`, creates the record's tables with
//! every column `TEXT`, inserts the rows as bound parameters, and drops the database when it is
//! dropped. Statements go over the text protocol (like mysql-connector's `cursor.execute`); a
//! second statement in one call is refused with MySQL's own 1064 error; `max_execution_time`
//! (MySQL) or `max_statement_time` (MariaDB) limits SELECTs and a client-side timeout limits
//! everything else.
//!
//! On MariaDB the executor chooses the settings closest to MySQL 8's defaults, which AgentBench
//! runs: the database, the tables and the connection use `utf8mb4_uca1400_nopad_ai_ci` where the
//! server has it (like MySQL 8's `utf8mb4_0900_ai_ci`: UCA, accent- and case-insensitive, trailing
//! spaces significant; MariaDB's own default, `utf8mb4_general_ci`, pads and folds differently),
//! and the session's `sql_mode` is MySQL 8's default ([`MYSQL8_SQL_MODE`]).
//!
//! sqlx is async; the executor owns a worker thread with its own single-threaded runtime, so it
//! can be used from synchronous code and from inside other runtimes alike.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use sqlx::mysql::{MySqlConnection, MySqlDatabaseError, MySqlRow};
use sqlx::{AssertSqlSafe, Column, Connection, Row, TypeInfo, ValueRef};

use super::executor::SqlExecutor;
use super::record::TableSpec;
use super::sqltext::{self, backquote, TokKind};
use super::value::{ExecOptions, ExecResult, RowSet, SqlError, SqlValue};
use crate::suite::EnvError;

enum Req {
    Exec(String, mpsc::Sender<ExecResult>),
}

/// A DBBench episode database on a MySQL or MariaDB server.
pub struct MySqlExecutor {
    tx: Option<mpsc::Sender<Req>>,
    worker: Option<thread::JoinHandle<()>>,
    database: String,
}

impl MySqlExecutor {
    /// Connect to `url` (`mysql://user:pass@host:3306/`), create the episode database and load
    /// `tables`.
    pub fn connect(url: &str, tables: &[TableSpec], opts: ExecOptions) -> Result<Self, EnvError> {
        let (tx, rx) = mpsc::channel::<Req>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<String, EnvError>>();
        let url = url.to_string();
        let tables = tables.to_vec();
        let worker = thread::Builder::new()
            .name("dbbench-mysql".into())
            .spawn(move || worker_main(url, tables, opts, rx, ready_tx))
            .map_err(|e| EnvError::Infra(format!("cannot start the MySQL worker: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(database)) => Ok(MySqlExecutor { tx: Some(tx), worker: Some(worker), database }),
            Ok(Err(e)) => {
                let _ = worker.join();
                Err(e)
            }
            Err(_) => {
                let _ = worker.join();
                Err(EnvError::Infra("the MySQL worker stopped during setup".into()))
            }
        }
    }

    /// The name of the episode database.
    pub fn database(&self) -> &str {
        &self.database
    }
}

impl Drop for MySqlExecutor {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl SqlExecutor for MySqlExecutor {
    fn execute(&mut self, sql: &str) -> ExecResult {
        if let Some(e) = multi_statement_error(sql) {
            return Err(e);
        }
        let lost = || SqlError::new(2013, "HY000", "Lost connection to MySQL server during query");
        let Some(tx) = &self.tx else { return Err(lost()) };
        let (rtx, rrx) = mpsc::channel();
        if tx.send(Req::Exec(sql.to_string(), rtx)).is_err() {
            return Err(lost());
        }
        rrx.recv().unwrap_or_else(|_| Err(lost()))
    }
}

/// MySQL's connector refuses a second statement in one call: the server reports a syntax error
/// at the start of the second statement.
pub fn multi_statement_error(sql: &str) -> Option<SqlError> {
    let toks = sqltext::lex(sql).ok()?;
    let stmts = sqltext::split_statements(&toks);
    if stmts.len() > 1 {
        return Some(SqlError::syntax(sql, toks[stmts[1].start].start));
    }
    None
}

/// Does a statement produce a result set (even an empty one)?
pub fn returns_rows(sql: &str) -> bool {
    let Ok(toks) = sqltext::lex(sql) else { return false };
    let first = toks.iter().find(|t| t.kind != TokKind::LParen);
    first.and_then(|t| t.upper()).is_some_and(|w| {
        matches!(w.as_str(), "SELECT" | "WITH" | "SHOW" | "DESCRIBE" | "DESC" | "EXPLAIN" | "VALUES" | "TABLE" | "CHECK" | "ANALYZE")
    })
}

fn env_err(what: &str, e: impl std::fmt::Display) -> EnvError {
    EnvError::Infra(format!("MySQL {what}: {e}"))
}

/// MySQL 8.0's default `sql_mode`, set on MariaDB sessions (MariaDB's default lacks
/// `ONLY_FULL_GROUP_BY`, `NO_ZERO_IN_DATE` and `NO_ZERO_DATE`).
pub const MYSQL8_SQL_MODE: &str =
    "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

/// MariaDB's collation closest to MySQL 8's `utf8mb4_0900_ai_ci` (MariaDB 10.10 and later).
const MARIADB_MYSQL8_COLLATION: &str = "utf8mb4_uca1400_nopad_ai_ci";

/// What the server is, as far as the session settings go.
#[derive(Clone, Debug, Default)]
struct ServerFlavour {
    /// The collation for the database and the connection on MariaDB (`None` on MySQL, whose
    /// defaults are already MySQL 8's, or on a MariaDB without the UCA 14 collations).
    collation: Option<String>,
    mariadb: bool,
}

async fn server_flavour(conn: &mut MySqlConnection) -> Result<ServerFlavour, EnvError> {
    let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(&mut *conn).await.map_err(|e| env_err("VERSION()", e))?;
    if !version.to_ascii_lowercase().contains("mariadb") {
        return Ok(ServerFlavour::default());
    }
    // MariaDB lists its UCA 14 collations without the character set (`uca1400_nopad_ai_ci`) in
    // information_schema: ask for the full name in a statement instead
    let probe = format!("SELECT _utf8mb4'a' COLLATE {MARIADB_MYSQL8_COLLATION}");
    let has = sqlx::raw_sql(AssertSqlSafe(probe)).execute(&mut *conn).await.is_ok();
    Ok(ServerFlavour { collation: has.then(|| MARIADB_MYSQL8_COLLATION.to_string()), mariadb: true })
}

async fn session_setup(conn: &mut MySqlConnection, db: &str, opts: &ExecOptions, flavour: &ServerFlavour) -> Result<(), EnvError> {
    sqlx::raw_sql(AssertSqlSafe(format!("USE {}", backquote(db)))).execute(&mut *conn).await.map_err(|e| env_err("USE", e))?;
    if let Some(c) = &flavour.collation {
        // string literals take the connection's collation
        sqlx::raw_sql(AssertSqlSafe(format!("SET NAMES utf8mb4 COLLATE {c}"))).execute(&mut *conn).await.map_err(|e| env_err("SET NAMES", e))?;
    }
    if flavour.mariadb {
        sqlx::raw_sql(AssertSqlSafe(format!("SET SESSION sql_mode = '{MYSQL8_SQL_MODE}'")))
            .execute(&mut *conn)
            .await
            .map_err(|e| env_err("SET sql_mode", e))?;
    }
    let ms = opts.time_limit.as_millis().max(1);
    let mysql = format!("SET SESSION max_execution_time = {ms}");
    if sqlx::raw_sql(AssertSqlSafe(mysql)).execute(&mut *conn).await.is_err() {
        // MariaDB spells it differently (seconds).
        let secs = opts.time_limit.as_secs_f64().max(0.001);
        let _ = sqlx::raw_sql(AssertSqlSafe(format!("SET SESSION max_statement_time = {secs}"))).execute(&mut *conn).await;
    }
    Ok(())
}

async fn setup(url: &str, tables: &[TableSpec], opts: &ExecOptions) -> Result<(MySqlConnection, String, ServerFlavour), EnvError> {
    let mut conn = MySqlConnection::connect(url).await.map_err(|e| env_err("connect", e))?;
    let flavour = server_flavour(&mut conn).await?;
    let db = format!("dbbench_{:016x}", rand::random::<u64>());
    let collate = flavour.collation.as_ref().map(|c| format!(" COLLATE {c}")).unwrap_or_default();
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE DATABASE {} CHARACTER SET utf8mb4{collate}", backquote(&db))))
        .execute(&mut conn)
        .await
        .map_err(|e| env_err("CREATE DATABASE", e))?;
    session_setup(&mut conn, &db, opts, &flavour).await?;
    for t in tables {
        let cols: Vec<String> = t.columns.iter().map(|c| format!("{} TEXT", backquote(&c.name))).collect();
        let create = format!("CREATE TABLE IF NOT EXISTS {} ({})", backquote(&t.name), cols.join(","));
        sqlx::raw_sql(AssertSqlSafe(create)).execute(&mut conn).await.map_err(|e| env_err(&format!("create `{}`", t.name), e))?;
        let names: Vec<String> = t.columns.iter().map(|c| backquote(&c.name)).collect();
        let tuple = format!("({})", vec!["?"; t.columns.len()].join(","));
        // Stay well under the 65535 placeholders of one prepared statement.
        let per_chunk = (60_000 / t.columns.len().max(1)).max(1);
        for chunk in t.rows.chunks(per_chunk) {
            let sql = format!("INSERT INTO {} ({}) VALUES {}", backquote(&t.name), names.join(","), vec![tuple.as_str(); chunk.len()].join(","));
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for row in chunk {
                for v in row {
                    q = q.bind(v.clone());
                }
            }
            q.execute(&mut conn).await.map_err(|e| env_err(&format!("load `{}`", t.name), e))?;
        }
    }
    Ok((conn, db, flavour))
}

fn decode_row(row: &MySqlRow) -> Vec<SqlValue> {
    (0..row.columns().len())
        .map(|i| {
            let Ok(raw) = row.try_get_raw(i) else { return SqlValue::Null };
            if raw.is_null() {
                return SqlValue::Null;
            }
            let ty = raw.type_info().name().to_string();
            let bytes: Vec<u8> = row.try_get_unchecked::<Vec<u8>, _>(i).unwrap_or_default();
            let text = || String::from_utf8_lossy(&bytes).into_owned();
            match ty.as_str() {
                "BOOLEAN" | "TINYINT" | "SMALLINT" | "INT" | "MEDIUMINT" | "BIGINT" | "TINYINT UNSIGNED" | "SMALLINT UNSIGNED" | "INT UNSIGNED"
                | "MEDIUMINT UNSIGNED" | "BIGINT UNSIGNED" | "YEAR" => match text().parse::<i64>() {
                    Ok(v) => SqlValue::Int(v),
                    Err(_) => SqlValue::Decimal(text()),
                },
                "FLOAT" | "DOUBLE" => text().parse::<f64>().map(SqlValue::Float).unwrap_or_else(|_| SqlValue::Text(text())),
                "DECIMAL" => SqlValue::Decimal(text()),
                "BLOB" | "TINYBLOB" | "MEDIUMBLOB" | "LONGBLOB" | "BINARY" | "VARBINARY" | "BIT" | "GEOMETRY" => SqlValue::Bytes(bytes.clone()),
                _ => SqlValue::Text(text()),
            }
        })
        .collect()
}

fn map_sqlx_error(e: sqlx::Error) -> SqlError {
    match e {
        sqlx::Error::Database(db) => match db.try_downcast_ref::<MySqlDatabaseError>() {
            Some(m) => SqlError::new(m.number() as u32, m.code().unwrap_or(""), m.message()),
            None => SqlError::new(1105, "HY000", db.message().to_string()),
        },
        other => SqlError::new(2013, "HY000", format!("Lost connection to MySQL server during query ({other})")),
    }
}

async fn exec(conn: &mut MySqlConnection, sql: &str, opts: &ExecOptions) -> Result<ExecResult, ()> {
    // rows are taken as they arrive, up to `max_rows` and `max_result_bytes`: a statement's
    // result is never held whole before it is cut
    let fetch = async {
        use tokio_stream::StreamExt;
        let mut stream = sqlx::raw_sql(AssertSqlSafe(sql.to_string())).fetch(&mut *conn);
        let (mut columns, mut rows, mut truncated, mut bytes) = (Vec::new(), Vec::new(), false, 0usize);
        while let Some(row) = stream.next().await {
            let row = row?;
            if columns.is_empty() {
                columns = row.columns().iter().map(|c| c.name().to_string()).collect();
            }
            if rows.len() >= opts.max_rows {
                truncated = true;
                break;
            }
            let values = decode_row(&row);
            bytes += values.iter().map(SqlValue::size).sum::<usize>();
            if bytes > opts.max_result_bytes {
                return Ok(Err(super::value::result_too_large(opts.max_result_bytes)));
            }
            rows.push(values);
        }
        let result_set = !rows.is_empty() || returns_rows(sql);
        Ok::<ExecResult, sqlx::Error>(Ok(RowSet { columns, rows, truncated, affected: 0, result_set }))
    };
    match tokio::time::timeout(opts.time_limit + Duration::from_secs(2), fetch).await {
        Err(_) => Err(()),
        Ok(Err(e)) => Ok(Err(map_sqlx_error(e))),
        Ok(Ok(result)) => Ok(result),
    }
}

fn worker_main(url: String, tables: Vec<TableSpec>, opts: ExecOptions, rx: mpsc::Receiver<Req>, ready: mpsc::Sender<Result<String, EnvError>>) {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(EnvError::Infra(format!("cannot start a runtime for MySQL: {e}"))));
            return;
        }
    };
    rt.block_on(async move {
        let (mut conn, db, flavour) = match setup(&url, &tables, &opts).await {
            Ok(x) => x,
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        let _ = ready.send(Ok(db.clone()));
        // This runtime runs nothing else, so a blocking receive is fine here.
        while let Ok(Req::Exec(sql, reply)) = rx.recv() {
            let result = match exec(&mut conn, &sql, &opts).await {
                Ok(r) => r,
                Err(()) => {
                    // The statement overran: drop the connection (the server aborts it) and
                    // reconnect to the same database.
                    match MySqlConnection::connect(&url).await {
                        Ok(mut c) => {
                            if session_setup(&mut c, &db, &opts, &flavour).await.is_ok() {
                                conn = c;
                            }
                        }
                        Err(_) => {
                            let _ = reply.send(Err(SqlError::new(2013, "HY000", "Lost connection to MySQL server during query")));
                            break;
                        }
                    }
                    Err(SqlError::timeout())
                }
            };
            let _ = reply.send(result);
        }
        let _ = sqlx::raw_sql(AssertSqlSafe(format!("DROP DATABASE IF EXISTS {}", backquote(&db)))).execute(&mut conn).await;
        let _ = conn.close().await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_second_statement_locally() {
        let e = multi_statement_error("SELECT 1; SELECT 2").unwrap();
        assert_eq!(e.errno, 1064);
        assert!(e.message.contains("near 'SELECT 2' at line 1"));
        assert!(multi_statement_error("SELECT 1;").is_none());
        assert!(multi_statement_error("SELECT ';'").is_none());
    }

    #[test]
    fn result_set_statements() {
        assert!(returns_rows("SELECT 1"));
        assert!(returns_rows("(SELECT 1)"));
        assert!(returns_rows("show tables"));
        assert!(!returns_rows("UPDATE t SET a = 1"));
    }

    #[test]
    fn unreachable_server_is_an_env_error() {
        let r = MySqlExecutor::connect("mysql://root:x@127.0.0.1:1/", &[], ExecOptions::default());
        assert!(r.is_err());
    }
}
