//! Reads of the run store for the analyses: episode summary rows of a run's phases, and
//! trajectories parsed into [`TrajectoryView`]s (steps without their contexts, which are most of
//! a trajectory's size).

use serde::Deserialize;

use crate::episode::{CallRecord, Episode, EpisodeStatus};
use crate::store::{BlockingStore, EpisodeFilter, EpisodeRow, StoreError};

/// The episode rows of a run in the given phases, in insertion order.
pub(crate) fn rows(store: &BlockingStore, run_id: i64, phases: &[&str]) -> Result<Vec<EpisodeRow>, StoreError> {
    store.handle().block_on(store.store().episode_rows_in_phases(run_id, phases))
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
        crate::episode::counts(self.status, self.infra_error.as_deref())
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
    let filter = EpisodeFilter {
        run_id: Some(q.run_id),
        suite: Some(q.suite.to_string()),
        phase: Some(q.phase.to_string()),
        harness: Some(q.harness.to_string()),
        arm: Some(q.arm.to_string()),
        iteration: Some(q.iteration),
        ..Default::default()
    };
    let views = store.handle().block_on(store.store().trajectory_views::<TrajectoryView>(&filter, q.ids))?;
    Ok(views.into_iter().map(|(_, v)| v).collect())
}
