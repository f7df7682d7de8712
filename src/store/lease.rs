//! One coordinator per run (`run_leases`): the process that runs an experiment holds its run's
//! lease and renews it by heart-beating; another process may take the run over only once the
//! lease has lapsed ([`LEASE_TTL_MS`] after the last heartbeat, on the database's clock), or at
//! once when the holder was a process of the same machine that has ended (a coordinator killed
//! with SIGKILL is resumed without a wait).
//!
//! A coordinator's writes are *fenced* ([`Store::fenced`]): an episode, a checkpoint or a record
//! it writes for its run commits only while it still holds the lease, checked in the same
//! transaction. So a coordinator that stalled past its lease (suspended, cut off from the
//! store) and then wakes up after another took the run over finds its writes refused, and the
//! run's episodes stay exactly one per key.

use serde::{Deserialize, Serialize};

use super::sql::{args, now_utc};
use super::{on_backend, Backend, Store, StoreError};

/// How long a lease lasts after its holder's last heartbeat.
pub const LEASE_TTL_MS: i64 = 30_000;
/// How often a holder renews its lease.
pub const LEASE_HEARTBEAT_MS: u64 = 5_000;

/// The database clock in Unix milliseconds, per back-end (the one clock leases are measured on).
fn now_ms(backend: &Backend) -> &'static str {
    match backend {
        Backend::Sqlite(_) => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
        Backend::Postgres(_) => "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT",
    }
}

/// Who holds (or last held) a run's lease.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct LeaseHolder {
    /// The holder's identity: `host:pid:boot:start:nonce`.
    pub holder: String,
    pub host: String,
    pub pid: i64,
    /// When it took the run (UTC, RFC 3339).
    pub acquired_at: String,
    /// Milliseconds since its last heartbeat (database clock).
    pub heartbeat_age_ms: i64,
}

impl LeaseHolder {
    /// The lease is still held: its holder heart-beat within [`LEASE_TTL_MS`] and is not a
    /// process known to be gone ([`LeaseHolder::gone`]).
    pub fn live(&self) -> bool {
        self.heartbeat_age_ms <= LEASE_TTL_MS && !self.gone()
    }

    /// The holder ran on this machine, in this boot, and its process has ended (killed, say): its
    /// lease need not be waited out. Known only for a holder on this machine (its identity holds
    /// the boot id and the process's start time, so a reused process id is not mistaken for it).
    pub fn gone(&self) -> bool {
        let parts: Vec<&str> = self.holder.split(':').collect();
        let [.., pid, boot, start, _nonce] = parts.as_slice() else { return false };
        let Ok(pid) = pid.parse::<u32>() else { return false };
        if *boot != boot_id() || boot.is_empty() {
            return false;
        }
        process_start(pid).as_deref() != Some(*start)
    }

    /// "process 123 on host h (since ..., last heartbeat 2 s ago)".
    pub fn describe(&self) -> String {
        format!(
            "process {} on host {} (since {}, last heartbeat {:.0} s ago)",
            self.pid,
            self.host,
            self.acquired_at,
            self.heartbeat_age_ms.max(0) as f64 / 1000.0
        )
    }
}

/// This machine's boot id (`/proc/sys/kernel/random/boot_id`): the same only on this machine
/// until it restarts.
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|b| b.trim().replace(':', "")).unwrap_or_default()
}

/// When process `pid` started (clock ticks after boot, `/proc/<pid>/stat` field 22), if it runs.
fn process_start(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name (field 2) may hold spaces and parentheses: count from its last `)`
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_string)
}

/// A coordinator identity for this process, `host:pid:boot:start:nonce`, with its host and pid.
pub fn new_holder() -> (String, String, i64) {
    use rand::RngCore;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "localhost".into());
    let pid = std::process::id();
    let start = process_start(pid).unwrap_or_default();
    let nonce = rand::rngs::OsRng.next_u32();
    (format!("{}:{pid}:{}:{start}:{nonce:08x}", host.replace(':', "_"), boot_id()), host, pid as i64)
}

/// The fence a coordinator's store handle carries: its run and its holder identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    pub run_id: i64,
    pub holder: String,
}

type HolderRow = (String, String, i64, String, i64);

impl Store {
    /// Take run `run_id`'s lease for `holder`: `Ok(Ok(()))` when it was free, lapsed or already
    /// `holder`'s; `Ok(Err(h))` when `h` holds it and is alive.
    pub async fn acquire_run_lease(&self, run_id: i64, holder: &str, host: &str, pid: i64) -> Result<Result<(), LeaseHolder>, StoreError> {
        let op = format!("take the lease of run {run_id}");
        let now = now_ms(&self.inner.backend);
        let sql = format!(
            "INSERT INTO run_leases (run_id, holder, host, pid, acquired_at, heartbeat_ms) VALUES ($1, $2, $3, $4, $5, {now}) \
             ON CONFLICT (run_id) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid, \
             acquired_at = excluded.acquired_at, heartbeat_ms = excluded.heartbeat_ms \
             WHERE run_leases.heartbeat_ms < {now} - $6 OR run_leases.holder = excluded.holder"
        );
        let changed = self.execute(&op, sqlx::AssertSqlSafe(sql), args![run_id, holder, host, pid, now_utc(), LEASE_TTL_MS]).await?;
        if changed == 1 {
            return Ok(Ok(()));
        }
        match self.run_lease(run_id).await? {
            // its holder was a process of this machine that has ended: take the run from it
            // (only from that holder, should another take it meanwhile)
            Some(h) if h.gone() => {
                let sql = format!(
                    "UPDATE run_leases SET holder = $2, host = $3, pid = $4, acquired_at = $5, heartbeat_ms = {now} WHERE run_id = $1 AND holder = $6"
                );
                let taken = self.execute(&op, sqlx::AssertSqlSafe(sql), args![run_id, holder, host, pid, now_utc(), h.holder.as_str()]).await?;
                if taken == 1 {
                    Ok(Ok(()))
                } else {
                    Box::pin(self.acquire_run_lease(run_id, holder, host, pid)).await
                }
            }
            Some(h) => Ok(Err(h)),
            // released between the two statements: try once more
            None => Box::pin(self.acquire_run_lease(run_id, holder, host, pid)).await,
        }
    }

    /// Renew `holder`'s lease of run `run_id`; `false` when it no longer holds it (it lapsed
    /// and another process took the run).
    pub async fn renew_run_lease(&self, run_id: i64, holder: &str) -> Result<bool, StoreError> {
        let op = format!("renew the lease of run {run_id}");
        let sql = format!("UPDATE run_leases SET heartbeat_ms = {} WHERE run_id = $1 AND holder = $2", now_ms(&self.inner.backend));
        Ok(self.execute(&op, sqlx::AssertSqlSafe(sql), args![run_id, holder]).await? == 1)
    }

    /// Give up `holder`'s lease of run `run_id` (nothing when it no longer holds it).
    pub async fn release_run_lease(&self, run_id: i64, holder: &str) -> Result<(), StoreError> {
        let op = format!("release the lease of run {run_id}");
        self.execute(&op, "DELETE FROM run_leases WHERE run_id = $1 AND holder = $2", args![run_id, holder]).await?;
        Ok(())
    }

    /// Who holds (or last held) run `run_id`'s lease, live or lapsed; `None` when nobody does.
    pub async fn run_lease(&self, run_id: i64) -> Result<Option<LeaseHolder>, StoreError> {
        let op = format!("read the lease of run {run_id}");
        let sql = format!("SELECT holder, host, pid, acquired_at, {} - heartbeat_ms FROM run_leases WHERE run_id = $1", now_ms(&self.inner.backend));
        let row: Option<HolderRow> = self.fetch_optional(&op, sqlx::AssertSqlSafe(sql), args![run_id]).await?;
        Ok(row.map(|(holder, host, pid, acquired_at, heartbeat_age_ms)| LeaseHolder { holder, host, pid, acquired_at, heartbeat_age_ms }))
    }

    /// This store handle, its writes for run `run_id` fenced by `holder`'s lease: each commits
    /// only while `holder` holds it ([`StoreError::LeaseLost`] otherwise).
    pub fn fenced(&self, run_id: i64, holder: &str) -> Store {
        Store { inner: self.inner.clone(), fence: Some(std::sync::Arc::new(Fence { run_id, holder: holder.to_string() })) }
    }

    /// The fence that applies to writes of run `run_id`, if any.
    pub(crate) fn fence_for(&self, run_id: i64) -> Option<&Fence> {
        self.fence.as_deref().filter(|f| f.run_id == run_id)
    }

    /// The statement that reads a run's lease holder inside a write transaction, last before
    /// the commit. On SQLite the transaction already holds the one write lock, so no takeover
    /// can commit in between; on Postgres `FOR SHARE` makes a takeover wait for this commit.
    pub(crate) fn fence_check_sql(&self) -> &'static str {
        match &self.inner.backend {
            Backend::Sqlite(_) => "SELECT holder FROM run_leases WHERE run_id = $1",
            Backend::Postgres(_) => "SELECT holder FROM run_leases WHERE run_id = $1 FOR SHARE",
        }
    }

    /// Run one write statement for run `run_id`, fenced when this handle carries a fence for
    /// it; the rows it changed.
    pub(crate) async fn execute_for_run(&self, op: &str, run_id: i64, sql: &'static str, args: Vec<super::sql::Arg>) -> Result<u64, StoreError> {
        let Some(fence) = self.fence_for(run_id) else { return self.execute(op, sql, args).await };
        let check = self.fence_check_sql();
        // the rows changed, or (rolled back) who holds the lease now
        let result: Result<Result<u64, HeldBy>, sqlx::Error> = on_backend!(self, |pool, DB| {
            async {
                let mut tx = pool.begin().await?;
                let a = super::sql::arguments::<DB>(args)?;
                let changed = sqlx::query_with::<DB, _>(sql, a).execute(&mut *tx).await?.rows_affected();
                let holder: Option<(String,)> = sqlx::query_as::<DB, (String,)>(check).bind(run_id).fetch_optional(&mut *tx).await?;
                match holder {
                    Some((h,)) if h == fence.holder => {
                        tx.commit().await?;
                        Ok(Ok(changed))
                    }
                    other => {
                        tx.rollback().await?;
                        Ok(Err(HeldBy(other.map(|(h,)| h).unwrap_or_else(|| "nobody".into()))))
                    }
                }
            }
            .await
        });
        match result.map_err(|e| self.query_error(op, e))? {
            Ok(n) => Ok(n),
            Err(HeldBy(now)) => Err(self.lease_lost(op, run_id, &now)),
        }
    }

    pub(crate) fn lease_lost(&self, op: &str, run_id: i64, now_held_by: &str) -> StoreError {
        StoreError::LeaseLost { location: self.inner.location.clone(), op: op.to_string(), run_id, holder: now_held_by.to_string() }
    }
}

/// Who holds a run's lease when a fenced write finds it is not this handle ("nobody" when no
/// one does).
pub(crate) struct HeldBy(pub String);
