//! Lean reads of the run store for the analyses, against its documented schema
//! ([`crate::store::schema`]): episode summary rows with only the columns the analyses use, and
//! trajectories parsed into [`TrajectoryView`]s (steps without their contexts).
//!
//! Why not [`crate::store::Store::episode_rows`]: that returns every summary column, and two of
//! them (`schema`, `created_at`) sit after the trajectory in the row, so SQLite has to walk each
//! trajectory's overflow pages to reach them; and a full [`crate::episode::Episode`] rebuilds
//! every step's context. On a run of 100,000 episodes both cost seconds.

use serde::Deserialize;

use crate::episode::{CallRecord, Episode, EpisodeStatus};
use crate::store::sql::{args, Arg};
use crate::store::{BlockingStore, EpisodeContext, StoreError};

/// The part of an episode row the analyses read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row {
    pub id: i64,
    pub task_id: String,
    pub suite: String,
    pub harness: String,
    pub status: EpisodeStatus,
    pub success: bool,
    pub infra_error: bool,
    pub context: EpisodeContext,
}

#[derive(sqlx::FromRow)]
struct RawRow {
    id: i64,
    task_id: String,
    suite: String,
    harness: String,
    status: String,
    success: i64,
    infra_error: Option<String>,
    arm: Option<String>,
    seed_index: Option<i64>,
    iteration: Option<i64>,
    phase: Option<String>,
    split: Option<String>,
}

/// The episode rows of a run in the given phases, in insertion order.
pub(crate) fn rows(store: &BlockingStore, run_id: i64, phases: &[&str]) -> Result<Vec<Row>, StoreError> {
    let op = format!("list episodes of run {run_id} for analysis");
    let marks: Vec<String> = (0..phases.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT id, task_id, suite, harness, status, success, infra_error, arm, seed_index, iteration, phase, split \
         FROM episodes WHERE run_id = $1 AND phase IN ({}) ORDER BY id",
        marks.join(", ")
    );
    let mut a = args![run_id];
    a.extend(phases.iter().map(|p| Arg::from(*p)));
    let raw: Vec<RawRow> = store.handle().block_on(store.store().fetch_all(&op, sqlx::AssertSqlSafe(sql), a))?;
    raw.into_iter()
        .map(|r| {
            // the store's own reader refuses an unknown status; so does this one
            let status = EpisodeStatus::parse(&r.status)
                .ok_or_else(|| store.store().corrupt(&op, format!("episode {}: unknown status `{}`", r.id, r.status)))?;
            Ok(Row {
                id: r.id,
                task_id: r.task_id,
                suite: r.suite,
                harness: r.harness,
                status,
                success: r.success != 0,
                infra_error: r.infra_error.is_some(),
                context: EpisodeContext {
                    arm: r.arm,
                    seed_index: r.seed_index.and_then(|v| u32::try_from(v).ok()),
                    iteration: r.iteration.and_then(|v| u32::try_from(v).ok()),
                    phase: r.phase,
                    split: r.split,
                },
            })
        })
        .collect()
}

/// One step of a trajectory as a tagger reads it: the calls the policy made (proposed and
/// executed action), with what the environment returned and its signals. The context the policy
/// saw and its raw reply are left out (they are most of a trajectory's size).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct StepView {
    #[serde(default)]
    pub calls: Vec<CallRecord>,
}

/// A trajectory without its contexts.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct TrajectoryView {
    pub task_id: String,
    pub status: EpisodeStatus,
    #[serde(default)]
    pub infra_error: Option<String>,
    pub steps: Vec<StepView>,
}

impl TrajectoryView {
    pub fn from_episode(ep: &Episode) -> TrajectoryView {
        TrajectoryView {
            task_id: ep.task_id.clone(),
            status: ep.status,
            infra_error: ep.infra_error.clone(),
            steps: ep.steps.iter().map(|s| StepView { calls: s.calls.clone() }).collect(),
        }
    }

    /// Every call of every step, in order.
    pub fn calls(&self) -> impl Iterator<Item = &CallRecord> {
        self.steps.iter().flat_map(|s| s.calls.iter())
    }

    /// Counts in task metrics (not an infrastructure error, not cancelled).
    pub fn counts(&self) -> bool {
        self.infra_error.is_none() && !matches!(self.status, EpisodeStatus::InfraError | EpisodeStatus::Cancelled)
    }
}

/// Which trajectories to read.
pub(crate) struct TrajectoryQuery<'a> {
    pub run_id: i64,
    pub suite: &'a str,
    pub phase: &'a str,
    pub harness: &'a str,
    pub arm: &'a str,
    pub iteration: u32,
    /// Only these episode ids (a sample); all when `None`.
    pub ids: Option<&'a [i64]>,
}

/// Trajectories of one (suite, phase, harness, arm, iteration) cell.
pub(crate) fn trajectories(store: &BlockingStore, q: &TrajectoryQuery) -> Result<Vec<TrajectoryView>, StoreError> {
    let op = format!("read {} trajectories of run {} ({}/{} iteration {})", q.phase, q.run_id, q.suite, q.arm, q.iteration);
    let mut sql = String::from(
        "SELECT trajectory FROM episodes WHERE run_id = $1 AND suite = $2 AND phase = $3 AND harness = $4 AND arm = $5 AND iteration = $6",
    );
    let mut a: Vec<Arg> = args![q.run_id, q.suite, q.phase, q.harness, q.arm, i64::from(q.iteration)];
    if let Some(ids) = q.ids {
        let marks: Vec<String> = ids.iter().enumerate().map(|(i, _)| format!("${}", i + 7)).collect();
        sql.push_str(&format!(" AND id IN ({})", marks.join(", ")));
        a.extend(ids.iter().map(|id| Arg::from(*id)));
    }
    sql.push_str(" ORDER BY id");
    let raw: Vec<(String,)> = store.handle().block_on(store.store().fetch_all(&op, sqlx::AssertSqlSafe(sql), a))?;
    raw.into_iter().map(|(json,)| serde_json::from_str::<TrajectoryView>(&json).map_err(|e| store.store().json_error(&op, e))).collect()
}
