//! Runs: one evaluation or experiment, its configuration, status and summary.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::redact::redact_secrets;
use super::sql::{args, arguments, now_utc};
use super::StoreError;
use super::{on_backend, Backend, Store};

/// `runs.kind` of an evaluation run.
pub const KIND_EVAL: &str = "eval";
/// `runs.kind` of an experiment (training / routing / distillation) run.
pub const KIND_EXPERIMENT: &str = "experiment";

/// `runs.status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Started and not finished; also what a killed run stays at.
    Running,
    Finished,
    Failed,
    Cancelled,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        match s {
            "running" => Some(RunStatus::Running),
            "finished" => Some(RunStatus::Finished),
            "failed" => Some(RunStatus::Failed),
            "cancelled" => Some(RunStatus::Cancelled),
            _ => None,
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A run to create ([`Store::create_run`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    /// [`KIND_EVAL`], [`KIND_EXPERIMENT`], or another kind.
    pub kind: String,
    pub name: String,
    pub suite: Option<String>,
    pub harness: Option<String>,
    pub policy: Option<String>,
    /// The run's configuration; stored with secrets redacted.
    pub config: Value,
}

impl NewRun {
    /// A run of `kind` named `name`, with no suite/harness/policy and an empty config object.
    pub fn new(kind: impl Into<String>, name: impl Into<String>) -> NewRun {
        NewRun { kind: kind.into(), name: name.into(), suite: None, harness: None, policy: None, config: Value::Object(Default::default()) }
    }
    pub fn suite(mut self, suite: impl Into<String>) -> NewRun {
        self.suite = Some(suite.into());
        self
    }
    pub fn harness(mut self, harness: impl Into<String>) -> NewRun {
        self.harness = Some(harness.into());
        self
    }
    pub fn policy(mut self, policy: impl Into<String>) -> NewRun {
        self.policy = Some(policy.into());
        self
    }
    pub fn config(mut self, config: Value) -> NewRun {
        self.config = config;
        self
    }
}

/// A row of `runs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub kind: String,
    pub name: String,
    pub suite: Option<String>,
    pub harness: Option<String>,
    pub policy: Option<String>,
    /// As stored: secrets redacted.
    pub config: Value,
    pub status: RunStatus,
    pub summary: Option<Value>,
    pub created_at: String,
    pub finished_at: Option<String>,
}

#[derive(sqlx::FromRow)]
struct RawRun {
    id: i64,
    kind: String,
    name: String,
    suite: Option<String>,
    harness: Option<String>,
    policy: Option<String>,
    config: String,
    status: String,
    summary: Option<String>,
    created_at: String,
    finished_at: Option<String>,
}

/// What [`Store::delete_run`] removed: the run and every row recorded for it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletedRun {
    pub run_id: i64,
    /// Rows of `episodes` (each with its whole trajectory: steps, calls, interventions).
    pub episodes: u64,
    /// Rows of `records`: routing decisions, profiles, distilled examples, batches, checkpoints.
    pub records: u64,
    /// Rows of `run_state`.
    pub states: u64,
}

const RUN_COLUMNS: &str = "id, kind, name, suite, harness, policy, config, status, summary, created_at, finished_at";

impl Store {
    /// Create a run with status `running`; its id. The config is stored with secrets redacted
    /// ([`redact_secrets`]).
    pub async fn create_run(&self, run: &NewRun) -> Result<i64, StoreError> {
        let op = "create run";
        let mut config = run.config.clone();
        redact_secrets(&mut config);
        let config = serde_json::to_string(&config).map_err(|e| self.json_error(op, e))?;
        let (id,): (i64,) = self
            .fetch_one(
                op,
                "INSERT INTO runs (kind, name, suite, harness, policy, config, status, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                args![
                    run.kind.as_str(),
                    run.name.as_str(),
                    run.suite.clone(),
                    run.harness.clone(),
                    run.policy.clone(),
                    config,
                    RunStatus::Running.as_str(),
                    now_utc(),
                ],
            )
            .await?;
        Ok(id)
    }

    /// Set a run's final status and summary (secrets redacted) and stamp `finished_at`.
    /// [`StoreError::NotFound`] if there is no such run.
    pub async fn finish_run(&self, id: i64, status: RunStatus, summary: &Value) -> Result<(), StoreError> {
        let op = format!("finish run {id}");
        let mut summary = summary.clone();
        redact_secrets(&mut summary);
        let summary = serde_json::to_string(&summary).map_err(|e| self.json_error(&op, e))?;
        let changed = self
            .execute_for_run(
                &op,
                id,
                "UPDATE runs SET status = $1, summary = $2, finished_at = $3 WHERE id = $4",
                args![status.as_str(), summary, now_utc(), id],
            )
            .await?;
        if changed == 0 {
            return Err(self.not_found(&op, format!("run {id}")));
        }
        Ok(())
    }

    /// Set a run's status without touching its summary (a resumed run goes back to `running`).
    pub async fn set_run_status(&self, id: i64, status: RunStatus) -> Result<(), StoreError> {
        let op = format!("set status of run {id}");
        let changed = self.execute_for_run(&op, id, "UPDATE runs SET status = $1 WHERE id = $2", args![status.as_str(), id]).await?;
        if changed == 0 {
            return Err(self.not_found(&op, format!("run {id}")));
        }
        Ok(())
    }

    /// Delete a run and everything recorded for it — its episodes, records and state, and any
    /// other table's rows keyed by the run (their foreign keys cascade) — in one transaction:
    /// all of it goes, or (on any error) none. A run marked `running` may still be
    /// written to and is refused with [`StoreError::RunRunning`] unless `force` is set (for a run
    /// killed before finishing, which stays `running`). [`StoreError::NotFound`] if there is no
    /// such run. Interned strings and dictionaries are shared by runs and stay.
    pub async fn delete_run(&self, id: i64, force: bool) -> Result<DeletedRun, StoreError> {
        let op = format!("delete run {id}");
        let result: Result<Option<(String, u64, u64, u64)>, sqlx::Error> = on_backend!(self, |pool, DB| {
            async {
                let mut tx = pool.begin().await?;
                // Postgres: lock the row, so the run cannot start running again meanwhile (a
                // SQLite transaction that read it fails to write if another writer came first).
                let read = match self.backend() {
                    super::BackendKind::Postgres => "SELECT status FROM runs WHERE id = $1 FOR UPDATE",
                    super::BackendKind::Sqlite => "SELECT status FROM runs WHERE id = $1",
                };
                let status: Option<(String,)> =
                    sqlx::query_as_with::<DB, (String,), _>(read, arguments::<DB>(args![id])?).fetch_optional(&mut *tx).await?;
                let Some((status,)) = status else { return Ok(None) };
                if status == RunStatus::Running.as_str() && !force {
                    return Ok(Some((status, 0, 0, 0)));
                }
                let mut removed = [0u64; 3];
                for (n, table) in ["episodes", "records", "run_state"].into_iter().enumerate() {
                    let sql = sqlx::AssertSqlSafe(format!("DELETE FROM {table} WHERE run_id = $1"));
                    removed[n] = sqlx::query_with::<DB, _>(sql, arguments::<DB>(args![id])?).execute(&mut *tx).await?.rows_affected();
                }
                sqlx::query_with::<DB, _>("DELETE FROM runs WHERE id = $1", arguments::<DB>(args![id])?).execute(&mut *tx).await?;
                tx.commit().await?;
                Ok(Some((status, removed[0], removed[1], removed[2])))
            }
            .await
        });
        match result.map_err(|e| self.query_error(&op, e))? {
            None => Err(self.not_found(&op, format!("run {id}"))),
            Some((status, ..)) if status == RunStatus::Running.as_str() && !force => {
                Err(StoreError::RunRunning { location: self.location().to_string(), op, id })
            }
            Some((_, episodes, records, states)) => Ok(DeletedRun { run_id: id, episodes, records, states }),
        }
    }

    /// The run with this id.
    pub async fn run(&self, id: i64) -> Result<Option<RunRow>, StoreError> {
        let op = format!("read run {id}");
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1");
        let raw: Option<RawRun> = self.fetch_optional(&op, sqlx::AssertSqlSafe(sql), args![id]).await?;
        raw.map(|r| self.run_row(&op, r)).transpose()
    }

    /// All runs, newest first.
    pub async fn runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let op = "list runs";
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC");
        let raw: Vec<RawRun> = self.fetch_all(op, sqlx::AssertSqlSafe(sql), args![]).await?;
        raw.into_iter().map(|r| self.run_row(op, r)).collect()
    }

    /// The newest run, of `kind` if given.
    pub async fn latest_run(&self, kind: Option<&str>) -> Result<Option<RunRow>, StoreError> {
        let op = "read latest run";
        let raw: Option<RawRun> = match kind {
            Some(kind) => {
                let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE kind = $1 ORDER BY id DESC LIMIT 1");
                self.fetch_optional(op, sqlx::AssertSqlSafe(sql), args![kind]).await?
            }
            None => {
                let sql = format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT 1");
                self.fetch_optional(op, sqlx::AssertSqlSafe(sql), args![]).await?
            }
        };
        raw.map(|r| self.run_row(op, r)).transpose()
    }

    fn run_row(&self, op: &str, raw: RawRun) -> Result<RunRow, StoreError> {
        let status = RunStatus::parse(&raw.status).ok_or_else(|| self.corrupt(op, format!("run {}: unknown status `{}`", raw.id, raw.status)))?;
        let config = serde_json::from_str(&raw.config).map_err(|e| self.json_error(op, e))?;
        let summary = raw.summary.as_deref().map(serde_json::from_str).transpose().map_err(|e| self.json_error(op, e))?;
        Ok(RunRow {
            id: raw.id,
            kind: raw.kind,
            name: raw.name,
            suite: raw.suite,
            harness: raw.harness,
            policy: raw.policy,
            config,
            status,
            summary,
            created_at: raw.created_at,
            finished_at: raw.finished_at,
        })
    }
}
