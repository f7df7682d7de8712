//! The episode queue of a distributed experiment (Postgres only): the coordinator queues each
//! phase's episodes as jobs keyed by what determines them, `harness-s worker` processes claim
//! them with `SELECT … FOR UPDATE SKIP LOCKED` under a lease they renew by heart-beating, and
//! write the episode back; the coordinator reads the results and deletes the jobs.
//!
//! The rules that keep results exact whatever the number of workers:
//! - a job is queued once per `(run, key)` (`ON CONFLICT DO NOTHING`): a coordinator that resumes
//!   after a crash finds the results of its earlier incarnation instead of running them again;
//! - a job's lease is measured on the database's clock, never a worker's; a job whose worker
//!   stopped heart-beating goes back to the queue once its lease has passed (every live worker
//!   sweeps for such jobs with its heartbeats);
//! - a result is written only by the worker holding the job (`state = 'running' AND worker = me`),
//!   so a job completes at most once: a worker that lost its lease finds its write refused.

use serde::{Deserialize, Serialize};

use super::sql::{args, now_utc, Arg};
use super::{Backend, Store, StoreError};

/// The database clock in Unix milliseconds (the one clock every lease is measured on).
const NOW_MS: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// Rows per multi-row statement (well under Postgres' 65,535 bind parameters).
const CHUNK: usize = 500;

/// A finished job's row: id, state, result, error.
type FinishedRow = (i64, String, Option<Vec<u8>>, Option<String>);
/// A worker's row: name, host, slots, jobs done, started, ms since its heartbeat, stopped.
type WorkerTuple = (String, String, i64, i64, String, i64, Option<String>);

/// A job a worker claimed.
#[derive(Clone, Debug)]
pub struct ClaimedJob {
    pub id: i64,
    pub run_id: i64,
    pub key: String,
    /// The request as the coordinator wrote it (JSON).
    pub request: String,
    /// How many times the job has been claimed, this claim included.
    pub attempts: i64,
}

/// A finished job as the coordinator reads it back.
#[derive(Clone, Debug)]
pub struct FinishedJob {
    pub id: i64,
    /// The worker's result bytes, or why the job failed.
    pub outcome: Result<Vec<u8>, JobFailure>,
}

/// Why a worker could not finish an episode job, as it reported it (stored with the job).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct JobFailure(pub String);

/// One worker process as it registered and last heart-beat (also the `workers` command's rows).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct WorkerRow {
    pub name: String,
    pub host: String,
    pub slots: i64,
    pub jobs_done: i64,
    pub started_at: String,
    /// Milliseconds since its last heartbeat, on the database's clock.
    pub since_heartbeat_ms: i64,
    /// When it stopped (a clean exit); `None` while it runs or after it was killed.
    pub stopped_at: Option<String>,
}

/// A run's jobs by state.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct QueueCounts {
    pub queued: i64,
    pub running: i64,
    pub done: i64,
    pub failed: i64,
}

impl Store {
    fn require_postgres(&self, op: &str) -> Result<(), StoreError> {
        match self.inner.backend {
            Backend::Postgres(_) => Ok(()),
            Backend::Sqlite(_) => Err(StoreError::NeedsPostgres { location: self.inner.location.clone(), op: op.to_string() }),
        }
    }

    /// Queue jobs `(key, request)` of run `run_id`; a key already queued (or done) keeps its
    /// row. Returns each key's job id, in the order given.
    pub async fn enqueue_jobs(&self, run_id: i64, jobs: &[(String, String)]) -> Result<Vec<i64>, StoreError> {
        let op = format!("queue {} episode jobs of run {run_id}", jobs.len());
        self.require_postgres(&op)?;
        let now = now_utc();
        let mut ids = std::collections::HashMap::new();
        for chunk in jobs.chunks(CHUNK) {
            let mut args: Vec<Arg> = vec![run_id.into(), now.clone().into()];
            let mut rows = Vec::new();
            for (key, request) in chunk {
                args.push(key.as_str().into());
                args.push(request.as_str().into());
                rows.push(format!("($1, ${}, ${}, 'queued', $2)", args.len() - 1, args.len()));
            }
            let sql = format!(
                "INSERT INTO episode_jobs (run_id, key, request, state, created_at) VALUES {} ON CONFLICT (run_id, key) DO NOTHING",
                rows.join(", ")
            );
            self.execute(&op, sqlx::AssertSqlSafe(sql), args).await?;
            let mut args: Vec<Arg> = vec![run_id.into()];
            let marks: Vec<String> = chunk
                .iter()
                .map(|(k, _)| {
                    args.push(k.as_str().into());
                    format!("${}", args.len())
                })
                .collect();
            let sql = format!("SELECT id, key FROM episode_jobs WHERE run_id = $1 AND key IN ({})", marks.join(", "));
            let found: Vec<(i64, String)> = self.fetch_all(&op, sqlx::AssertSqlSafe(sql), args).await?;
            ids.extend(found.into_iter().map(|(id, k)| (k, id)));
        }
        jobs.iter().map(|(k, _)| ids.get(k).copied().ok_or_else(|| self.not_found(&op, format!("job `{k}`")))).collect()
    }

    /// Of the jobs `ids`, those finished (done or failed) and not in `seen`, with their results.
    pub async fn finished_jobs(&self, ids: &[i64], seen: &std::collections::HashSet<i64>) -> Result<Vec<FinishedJob>, StoreError> {
        let op = format!("read {} episode jobs", ids.len());
        self.require_postgres(&op)?;
        let mut out = Vec::new();
        for chunk in ids.chunks(CHUNK) {
            let marks = (1..=chunk.len()).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
            let args: Vec<Arg> = chunk.iter().map(|&i| i.into()).collect();
            let sql = format!("SELECT id FROM episode_jobs WHERE id IN ({marks}) AND state IN ('done', 'failed')");
            let done: Vec<(i64,)> = self.fetch_all(&op, sqlx::AssertSqlSafe(sql), args).await?;
            let new: Vec<i64> = done.into_iter().map(|(i,)| i).filter(|i| !seen.contains(i)).collect();
            for part in new.chunks(64) {
                let marks = (1..=part.len()).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
                let args: Vec<Arg> = part.iter().map(|&i| i.into()).collect();
                let sql = format!("SELECT id, state, result, error FROM episode_jobs WHERE id IN ({marks})");
                let rows: Vec<FinishedRow> = self.fetch_all(&op, sqlx::AssertSqlSafe(sql), args).await?;
                for (id, state, result, error) in rows {
                    let outcome = match (state.as_str(), result) {
                        ("done", Some(r)) => Ok(r),
                        _ => Err(JobFailure(error.unwrap_or_else(|| format!("job {id} ended `{state}` without a result")))),
                    };
                    out.push(FinishedJob { id, outcome });
                }
            }
        }
        Ok(out)
    }

    /// Delete jobs (their results have been read, or they are no longer wanted). With
    /// `queued_only`, only the jobs no worker holds.
    pub async fn delete_jobs(&self, ids: &[i64], queued_only: bool) -> Result<u64, StoreError> {
        let op = format!("delete {} episode jobs", ids.len());
        self.require_postgres(&op)?;
        let mut n = 0;
        for chunk in ids.chunks(CHUNK) {
            let marks = (1..=chunk.len()).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
            let args: Vec<Arg> = chunk.iter().map(|&i| i.into()).collect();
            let only = if queued_only { " AND state = 'queued'" } else { "" };
            n += self.execute(&op, sqlx::AssertSqlSafe(format!("DELETE FROM episode_jobs WHERE id IN ({marks}){only}")), args).await?;
        }
        Ok(n)
    }

    /// Delete every job and policy snapshot of run `run_id` (the run ended).
    pub async fn clear_queue(&self, run_id: i64) -> Result<(), StoreError> {
        let op = format!("clear the episode queue of run {run_id}");
        self.require_postgres(&op)?;
        self.execute(&op, "DELETE FROM episode_jobs WHERE run_id = $1", args![run_id]).await?;
        self.execute(&op, "DELETE FROM policy_snapshots WHERE run_id = $1", args![run_id]).await?;
        Ok(())
    }

    /// Claim up to `n` queued jobs for `worker`, oldest first, each under a lease of
    /// `lease_ms` (the `(state, id)` index serves it; rows other claims hold are skipped).
    pub async fn claim_jobs(&self, worker: &str, n: i64, lease_ms: i64) -> Result<Vec<ClaimedJob>, StoreError> {
        let op = format!("claim episode jobs for worker `{worker}`");
        self.require_postgres(&op)?;
        let sql = format!(
            "WITH c AS (SELECT id FROM episode_jobs WHERE state = 'queued' ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) \
             UPDATE episode_jobs j SET state = 'running', worker = $1, lease_until_ms = {NOW_MS} + $3, attempts = j.attempts + 1 \
             FROM c WHERE j.id = c.id RETURNING j.id, j.run_id, j.key, j.request, j.attempts"
        );
        let rows: Vec<(i64, i64, String, String, i64)> = self.fetch_all(&op, sqlx::AssertSqlSafe(sql), args![worker, n, lease_ms]).await?;
        let mut jobs: Vec<ClaimedJob> =
            rows.into_iter().map(|(id, run_id, key, request, attempts)| ClaimedJob { id, run_id, key, request, attempts }).collect();
        jobs.sort_by_key(|j| j.id);
        Ok(jobs)
    }

    /// Put back in the queue every running job whose lease has passed (its worker stopped
    /// heart-beating). Returns how many. Live workers call it with their heartbeats.
    pub async fn requeue_expired(&self) -> Result<u64, StoreError> {
        let op = "re-queue the jobs of stopped workers";
        self.require_postgres(op)?;
        let sql = format!(
            "UPDATE episode_jobs SET state = 'queued', worker = NULL, lease_until_ms = NULL \
             WHERE id IN (SELECT id FROM episode_jobs WHERE state = 'running' AND lease_until_ms < {NOW_MS} FOR UPDATE SKIP LOCKED)"
        );
        self.execute(op, sqlx::AssertSqlSafe(sql), vec![]).await
    }

    /// Write a claimed job's result (or its error). Refused — `Ok(false)` — when `worker` no
    /// longer holds the job (its lease passed and another worker claimed it).
    pub async fn complete_job(&self, id: i64, worker: &str, outcome: Result<Vec<u8>, JobFailure>) -> Result<bool, StoreError> {
        let op = format!("complete episode job {id}");
        self.require_postgres(&op)?;
        let (state, result, error) = match outcome {
            Ok(r) => ("done", Some(r), None),
            Err(JobFailure(e)) => ("failed", None, Some(e)),
        };
        let result: Arg = match result {
            Some(r) => r.into(),
            None => Arg::OptText(None),
        };
        let n = self
            .execute(
                &op,
                "UPDATE episode_jobs SET state = $3, result = $4, error = $5, finished_at = $6, lease_until_ms = NULL \
                 WHERE id = $1 AND state = 'running' AND worker = $2",
                vec![id.into(), worker.into(), state.into(), result, error.into(), now_utc().into()],
            )
            .await?;
        if n > 0 {
            self.execute(&op, "UPDATE workers SET jobs_done = jobs_done + 1 WHERE name = $1", args![worker]).await?;
        }
        Ok(n > 0)
    }

    /// Put a claimed job back in the queue (the worker is stopping, or cannot run it yet).
    pub async fn release_job(&self, id: i64, worker: &str) -> Result<(), StoreError> {
        let op = format!("release episode job {id}");
        self.require_postgres(&op)?;
        self.execute(
            &op,
            "UPDATE episode_jobs SET state = 'queued', worker = NULL, lease_until_ms = NULL, attempts = GREATEST(attempts - 1, 0) \
             WHERE id = $1 AND state = 'running' AND worker = $2",
            args![id, worker],
        )
        .await?;
        Ok(())
    }

    /// Register (or re-register) a worker process.
    pub async fn register_worker(&self, name: &str, host: &str, slots: i64) -> Result<(), StoreError> {
        let op = format!("register worker `{name}`");
        self.require_postgres(&op)?;
        let sql = format!(
            "INSERT INTO workers (name, host, slots, jobs_done, started_at, heartbeat_ms) VALUES ($1, $2, $3, 0, $4, {NOW_MS}) \
             ON CONFLICT (name) DO UPDATE SET host = excluded.host, slots = excluded.slots, jobs_done = 0, \
             started_at = excluded.started_at, heartbeat_ms = excluded.heartbeat_ms, stopped_at = NULL"
        );
        self.execute(&op, sqlx::AssertSqlSafe(sql), args![name, host, slots, now_utc()]).await?;
        Ok(())
    }

    /// A worker's heartbeat: it is alive, and its running jobs' leases extend by `lease_ms`.
    pub async fn heartbeat(&self, worker: &str, lease_ms: i64) -> Result<(), StoreError> {
        let op = format!("heartbeat of worker `{worker}`");
        self.require_postgres(&op)?;
        let now = NOW_MS;
        self.execute(&op, sqlx::AssertSqlSafe(format!("UPDATE workers SET heartbeat_ms = {now} WHERE name = $1")), args![worker]).await?;
        self.execute(
            &op,
            sqlx::AssertSqlSafe(format!("UPDATE episode_jobs SET lease_until_ms = {now} + $2 WHERE worker = $1 AND state = 'running'")),
            args![worker, lease_ms],
        )
        .await?;
        Ok(())
    }

    /// A worker stopped cleanly.
    pub async fn worker_stopped(&self, worker: &str) -> Result<(), StoreError> {
        let op = format!("stop worker `{worker}`");
        self.require_postgres(&op)?;
        self.execute(&op, "UPDATE workers SET stopped_at = $2 WHERE name = $1", args![worker, now_utc()]).await?;
        Ok(())
    }

    /// Every registered worker, most recently heart-beating first.
    pub async fn workers(&self) -> Result<Vec<WorkerRow>, StoreError> {
        let op = "list workers";
        self.require_postgres(op)?;
        let sql = format!(
            "SELECT name, host, slots, jobs_done, started_at, {NOW_MS} - heartbeat_ms, stopped_at FROM workers ORDER BY heartbeat_ms DESC, name"
        );
        let rows: Vec<WorkerTuple> = self.fetch_all(op, sqlx::AssertSqlSafe(sql), vec![]).await?;
        Ok(rows
            .into_iter()
            .map(|(name, host, slots, jobs_done, started_at, since_heartbeat_ms, stopped_at)| WorkerRow {
                name,
                host,
                slots,
                jobs_done,
                started_at,
                since_heartbeat_ms,
                stopped_at,
            })
            .collect())
    }

    /// Run `run_id`'s jobs by state (none on an SQLite store, which has no queue).
    pub async fn queue_counts(&self, run_id: i64) -> Result<QueueCounts, StoreError> {
        let op = format!("count the episode jobs of run {run_id}");
        let rows: Vec<(String, i64)> =
            self.fetch_all(&op, "SELECT state, COUNT(*) FROM episode_jobs WHERE run_id = $1 GROUP BY state", args![run_id]).await?;
        let mut c = QueueCounts::default();
        for (state, n) in rows {
            match state.as_str() {
                "queued" => c.queued = n,
                "running" => c.running = n,
                "done" => c.done = n,
                _ => c.failed += n,
            }
        }
        Ok(c)
    }

    /// Publish the policy a run's jobs of `key` sample from, at `version`.
    pub async fn put_policy_snapshot(&self, run_id: i64, key: &str, version: i64, body: Vec<u8>) -> Result<(), StoreError> {
        let op = format!("publish policy `{key}` v{version} of run {run_id}");
        self.execute(
            &op,
            "INSERT INTO policy_snapshots (run_id, key, version, body) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (run_id, key) DO UPDATE SET version = excluded.version, body = excluded.body",
            vec![run_id.into(), key.into(), version.into(), body.into()],
        )
        .await?;
        Ok(())
    }

    /// The policy snapshot published for `key`, with its version.
    pub async fn policy_snapshot(&self, run_id: i64, key: &str) -> Result<Option<(i64, Vec<u8>)>, StoreError> {
        let op = format!("read policy `{key}` of run {run_id}");
        self.fetch_optional(&op, "SELECT version, body FROM policy_snapshots WHERE run_id = $1 AND key = $2", args![run_id, key]).await
    }
}

impl super::BlockingStore {
    pub fn enqueue_jobs(&self, run_id: i64, jobs: &[(String, String)]) -> Result<Vec<i64>, StoreError> {
        self.handle().block_on(self.store().enqueue_jobs(run_id, jobs))
    }

    pub fn finished_jobs(&self, ids: &[i64], seen: &std::collections::HashSet<i64>) -> Result<Vec<FinishedJob>, StoreError> {
        self.handle().block_on(self.store().finished_jobs(ids, seen))
    }

    pub fn delete_jobs(&self, ids: &[i64], queued_only: bool) -> Result<u64, StoreError> {
        self.handle().block_on(self.store().delete_jobs(ids, queued_only))
    }

    pub fn clear_queue(&self, run_id: i64) -> Result<(), StoreError> {
        self.handle().block_on(self.store().clear_queue(run_id))
    }

    pub fn claim_jobs(&self, worker: &str, n: i64, lease_ms: i64) -> Result<Vec<ClaimedJob>, StoreError> {
        self.handle().block_on(self.store().claim_jobs(worker, n, lease_ms))
    }

    pub fn complete_job(&self, id: i64, worker: &str, outcome: Result<Vec<u8>, JobFailure>) -> Result<bool, StoreError> {
        self.handle().block_on(self.store().complete_job(id, worker, outcome))
    }

    pub fn requeue_expired(&self) -> Result<u64, StoreError> {
        self.handle().block_on(self.store().requeue_expired())
    }

    pub fn release_job(&self, id: i64, worker: &str) -> Result<(), StoreError> {
        self.handle().block_on(self.store().release_job(id, worker))
    }

    pub fn register_worker(&self, name: &str, host: &str, slots: i64) -> Result<(), StoreError> {
        self.handle().block_on(self.store().register_worker(name, host, slots))
    }

    pub fn heartbeat(&self, worker: &str, lease_ms: i64) -> Result<(), StoreError> {
        self.handle().block_on(self.store().heartbeat(worker, lease_ms))
    }

    pub fn worker_stopped(&self, worker: &str) -> Result<(), StoreError> {
        self.handle().block_on(self.store().worker_stopped(worker))
    }

    pub fn workers(&self) -> Result<Vec<WorkerRow>, StoreError> {
        self.handle().block_on(self.store().workers())
    }

    pub fn queue_counts(&self, run_id: i64) -> Result<QueueCounts, StoreError> {
        self.handle().block_on(self.store().queue_counts(run_id))
    }

    pub fn put_policy_snapshot(&self, run_id: i64, key: &str, version: i64, body: Vec<u8>) -> Result<(), StoreError> {
        self.handle().block_on(self.store().put_policy_snapshot(run_id, key, version, body))
    }

    pub fn policy_snapshot(&self, run_id: i64, key: &str) -> Result<Option<(i64, Vec<u8>)>, StoreError> {
        self.handle().block_on(self.store().policy_snapshot(run_id, key))
    }
}
