//! Progress and results as events, emitted to a sink the caller supplies (the CLI prints them,
//! the desktop shell and `serve` forward them to the UI).

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "event", rename_all = "snake_case")]
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
#[derive(Clone, Debug, Serialize, PartialEq)]
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
