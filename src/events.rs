//! Progress and results as events, emitted to a sink the caller supplies (the CLI prints them,
//! the desktop shell and `serve` forward them to the UI).

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq, ts_rs::TS)]
#[serde(tag = "event", rename_all = "snake_case")]
#[ts(rename = "WorkbenchEvent")]
pub enum Event {
    RunStarted {
        run_id: i64,
        total: usize,
        label: String,
    },
    EpisodeFinished {
        run_id: i64,
        task_id: String,
        harness: String,
        success: bool,
        infra_error: bool,
        done: usize,
        total: usize,
    },
    Progress {
        run_id: i64,
        label: String,
        done: usize,
        total: usize,
        success_rate: f64,
        eta_s: Option<f64>,
        /// The experiment job (suite, arm, seed) this progress belongs to; `None` for plain evaluations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<ProgressUnit>,
    },
    /// What one (suite, arm, seed) job of an experiment is doing now, with the run's episodes
    /// so far: sent when the job's phase changes and, at most a few times a second, as episodes
    /// finish.
    Phase {
        run_id: i64,
        suite: String,
        arm: String,
        seed: u64,
        /// `demonstrations`, `probing`, `rollouts`, `rescues`, `update`, `evaluation`, `rank_one`
        /// or `finished` ([`PHASES`]).
        phase: String,
        /// The training iteration the phase belongs to (0: warm start, first probing and
        /// evaluation).
        iteration: usize,
        iterations: usize,
        /// The phase in words: `warm-start demonstrations`, `iteration 3 of 8: rescues`.
        label: String,
        /// Where the phase stands: demonstrations found, tasks done (0 of 0 when it has no steps).
        step: usize,
        steps: usize,
        /// Episodes of the whole run.
        episodes: EpisodeCount,
        /// Seconds left, from the episodes per second measured so far; `None` until a few
        /// seconds of episodes are in.
        eta_s: Option<f64>,
    },
    /// A job's base-harness evaluation on one split (the points of the transfer curves).
    Evaluation {
        run_id: i64,
        suite: String,
        arm: String,
        seed: u64,
        iteration: usize,
        /// `train` or `heldout`.
        split: String,
        success: f64,
        tasks: usize,
    },
    Message {
        run_id: i64,
        text: String,
    },
    RunFinished {
        run_id: i64,
        status: String,
    },
}

/// Where one (suite, arm, seed) job of an experiment stands.
#[derive(Clone, Debug, Serialize, PartialEq, ts_rs::TS)]
pub struct ProgressUnit {
    pub suite: String,
    pub arm: String,
    pub seed: u64,
    /// Iterations completed (0 = warm start and first evaluation done).
    pub iteration: usize,
    pub iterations: usize,
    /// Executor rollouts spent so far by this job.
    pub rollouts: u64,
    /// The latest base-harness success rate on the training split.
    pub success: f64,
}

/// A job's phases in the order they come: `demonstrations`, `probing` and `evaluation` before
/// the first iteration; in each iteration `rollouts` (base tries) and `rescues` (sibling rescues,
/// or the base-resample arm's extra tries) task by task, then `update`, `probing` when the
/// profiles are measured again, `evaluation`; `rank_one` after the last; then `finished`.
pub const PHASES: [&str; 8] = ["demonstrations", "probing", "rollouts", "rescues", "update", "evaluation", "rank_one", "finished"];

/// An experiment's episodes: done, and planned (the store's episodes when it ends, from the
/// rollout estimate; the span is the rescue budget, spent only on tasks whose base tries fail).
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize, PartialEq, ts_rs::TS)]
pub struct EpisodeCount {
    pub done: u64,
    /// Fewest planned (no task needs a rescue).
    pub min: u64,
    /// Most planned (every task needs the whole rescue budget).
    pub max: u64,
    /// Expected, from the share of tasks that have needed a rescue so far; `None` before any.
    pub expected: Option<u64>,
}

pub trait EventSink: Send + Sync {
    fn emit(&self, event: Event);
}

/// Drops every event.
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: Event) {}
}

/// Collects events (tests, and the serve adapter's replay buffer).
#[derive(Default)]
pub struct VecSink(pub std::sync::Mutex<Vec<Event>>);

impl EventSink for VecSink {
    fn emit(&self, event: Event) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(event);
    }
}
