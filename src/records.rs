//! The records an experiment stores beside its episodes, as typed shapes with their key
//! builders: job checkpoints (`state`, key `job/<suite>/<arm>/<seed>`), behaviour profiles
//! (`profile` records) and routing decisions (`route` records). The runner writes them and the
//! analyses, the workbench and the report read them through these types only; a record that does
//! not parse is an error naming its key, never skipped.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::arm::Arm;
use crate::grammar::model::SparseModel;
use crate::route::{BehaviorProfile, RoutingDecision};

/// A stored record that does not have its type's shape.
#[derive(Debug, thiserror::Error)]
#[error("{kind} record `{key}` is unreadable: {source}")]
pub struct RecordError {
    pub kind: &'static str,
    pub key: String,
    #[source]
    pub source: serde_json::Error,
}

/// Parse a stored record of `kind` at `key` as `T`.
pub fn parse<T: serde::de::DeserializeOwned>(kind: &'static str, key: &str, body: serde_json::Value) -> Result<T, RecordError> {
    serde_json::from_value(body).map_err(|source| RecordError { kind, key: key.to_string(), source })
}

/// The key of a job's checkpoint (`state`).
pub fn job_key(suite: &str, arm: &str, seed_index: usize) -> String {
    format!("job/{suite}/{arm}/{seed_index}")
}

/// The key of a per-task record (routing decision, distilled examples) of one iteration.
/// `suite/arm/seed_index/iteration/task_id` for its routing decision, and that plus `/try` for
/// each distilled rescue. The inspector finds a rescue's records by it.
pub fn task_record_key(suite: &str, arm: &str, seed_index: impl std::fmt::Display, iteration: impl std::fmt::Display, task_id: &str) -> String {
    format!("{suite}/{arm}/{seed_index}/{iteration}/{task_id}")
}

/// The key of a behaviour profile measured at `anchor`.
pub fn profile_key(suite: &str, arm: &str, seed_index: usize, anchor: usize, sibling: &str) -> String {
    format!("{suite}/{arm}/{seed_index}/{anchor}/{sibling}")
}

/// Executor rollouts spent, by purpose.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Rollouts {
    pub base: u64,
    pub rescue: u64,
    pub resample: u64,
    pub probe: u64,
    pub demo: u64,
}

impl Rollouts {
    /// Training rollouts: base tries plus whatever was spent on all-fail tasks.
    pub fn training(&self) -> u64 {
        self.base + self.rescue + self.resample
    }
    pub fn total(&self) -> u64 {
        self.base + self.rescue + self.resample + self.probe + self.demo
    }
}

/// Base-harness success at one evaluation point.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EvalPoint {
    pub iteration: usize,
    pub split: String,
    pub success: f64,
    pub tasks: usize,
    /// Per task id: success.
    pub per_task: BTreeMap<String, bool>,
}

/// Rank-one inference at the end: base try, then the router's first sibling on failure,
/// against two base tries (the same executor rollouts).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RankOne {
    pub split: String,
    pub routed: f64,
    pub base_only: f64,
    pub rollouts_routed: u64,
    pub rollouts_base_only: u64,
}

/// Everything a job keeps between iterations (its checkpoint). Fields missing from a stored
/// checkpoint take their defaults.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct JobState {
    pub suite: String,
    pub arm: String,
    pub seed_index: usize,
    pub seed: u64,
    /// Iterations completed (0 = warm start and first evaluation done).
    pub iterations_done: usize,
    pub started: bool,
    pub finished: bool,
    pub model: Option<SparseModel>,
    pub profiles: Vec<BehaviorProfile>,
    pub anchor: usize,
    pub rollouts: Rollouts,
    pub curve: Vec<EvalPoint>,
    pub rank_one: Vec<RankOne>,
    pub rescued_tasks: u64,
    pub all_fail_tasks: u64,
    pub train_success: Vec<f64>,
    /// An external learner's state (policy version, checkpoint, served adapter names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learner: Option<serde_json::Value>,
}

/// A record body: `inner`'s fields plus the job (`arm`, `seed_index`) and `iteration` it belongs to.
fn job_scoped<T: Serialize>(inner: &T, arm: &str, seed_index: usize, iteration: usize) -> Result<serde_json::Value, serde_json::Error> {
    let mut body = serde_json::to_value(inner)?;
    if let Some(o) = body.as_object_mut() {
        o.insert("arm".into(), arm.into());
        o.insert("seed_index".into(), seed_index.into());
        o.insert("iteration".into(), iteration.into());
    }
    Ok(body)
}

/// A stored behaviour profile (`profile` record): the profile and the job and iteration that
/// measured it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProfileRecord {
    /// Filled from the key by readers (the runner's records carry it in the key only).
    #[serde(default, skip_serializing)]
    pub suite: String,
    pub arm: String,
    pub seed_index: u32,
    /// The iteration whose probe episodes measured it.
    pub iteration: u32,
    #[serde(flatten)]
    pub profile: BehaviorProfile,
}

impl ProfileRecord {
    /// The stored body: the profile's fields, then `arm`, `seed_index` and `iteration`.
    pub fn body(profile: &BehaviorProfile, arm: &str, seed_index: usize, iteration: usize) -> Result<serde_json::Value, serde_json::Error> {
        job_scoped(profile, arm, seed_index, iteration)
    }
}

/// A stored routing decision (`route` record): the decision and the job and iteration that made
/// it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RouteRecord {
    /// Filled from the key by readers.
    #[serde(default, skip_serializing)]
    pub suite: String,
    pub arm: String,
    pub seed_index: u32,
    pub iteration: u32,
    #[serde(flatten)]
    pub decision: RoutingDecision,
}

impl RouteRecord {
    /// The stored body: the decision's fields, then `arm`, `seed_index` and `iteration`.
    pub fn body(decision: &RoutingDecision, arm: &str, seed_index: usize, iteration: usize) -> Result<serde_json::Value, serde_json::Error> {
        job_scoped(decision, arm, seed_index, iteration)
    }
}

/// What an episode of an experiment was for (its `phase` in the store).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// A base-harness training try.
    Train,
    /// An extra base-harness try of the base-resample arm.
    Resample,
    /// A sibling's try on an all-fail task.
    Rescue,
    /// A probe episode that measures behaviour profiles.
    Probe,
    /// A base-harness evaluation episode.
    Eval,
    /// The rank-one inference at the end (base try, then the router's first sibling).
    Rank1,
}

impl Phase {
    pub const fn as_str(self) -> &'static str {
        match self {
            Phase::Train => "train",
            Phase::Resample => "resample",
            Phase::Rescue => "rescue",
            Phase::Probe => "probe",
            Phase::Eval => "eval",
            Phase::Rank1 => "rank1",
        }
    }
}

/// A split of the task families.
pub const TRAIN_SPLIT: &str = "train";
/// The held-out families, never trained on.
pub const HELDOUT_SPLIT: &str = "heldout";

#[cfg(test)]
mod tests {
    use super::Arm;

    #[test]
    fn arms_read_back_from_their_names() {
        for a in Arm::ALL {
            assert_eq!(Arm::parse(a.as_str()), Some(a));
        }
        assert_eq!(Arm::parse("magic"), None);
        assert_eq!(Arm::ALL.iter().filter(|a| a.routed()).count(), 2);
    }
}
