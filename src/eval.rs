//! `harness-s eval`: run a policy on a suite's tasks under one harness, store every trajectory
//! as it finishes, and report the benchmark's own metrics.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::episode::{Episode, EpisodeStatus};
use crate::events::{Event, EventSink};
use crate::harness::{run_episode, EpisodeRequest, HarnessSpec};
use crate::policy::Policy;
use crate::seed::hash_str;
use crate::store::{BlockingStore, EpisodeContext, NewRun, RunStatus};
use crate::suite::{OutcomeForMetrics, Suite};
use crate::task::Task;

/// What to evaluate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvalConfig {
    pub suite: String,
    pub harness: String,
    pub policy: String,
    /// Tries per task.
    pub samples: u32,
    /// Episodes run at once.
    pub concurrency: usize,
    pub temperature: f32,
    pub seed: u64,
    /// Where the tasks came from (bundled, or a file path), for provenance.
    pub dataset: String,
    pub task_ids: Vec<String>,
    /// Policy back-end settings as given (secrets are never here: keys come from the environment).
    pub policy_config: serde_json::Value,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvalSummary {
    pub run_id: i64,
    pub episodes: usize,
    pub completed: usize,
    pub infra_errors: usize,
    pub success_rate: f64,
    /// The benchmark's own metrics (for DBBench: AgentBench's per-type accuracies).
    pub metrics: serde_json::Value,
    pub cancelled: bool,
    pub wall_s: f64,
}

/// Run every (task, sample) pair through the harness engine on `concurrency` worker threads.
/// Episodes are written to the store one by one as they finish, so a killed run keeps them.
#[allow(clippy::too_many_arguments)]
pub fn run_eval(
    cfg: &EvalConfig,
    suite: &dyn Suite,
    harness: &HarnessSpec,
    tasks: &[Task],
    policy: &dyn Policy,
    store: &BlockingStore,
    sink: &dyn EventSink,
    cancel: &AtomicBool,
) -> Result<EvalSummary, crate::store::StoreError> {
    let started = Instant::now();
    let config_json = serde_json::to_value(cfg).unwrap_or_default();
    let run_id = store.create_run(
        &NewRun::new("eval", format!("eval {} / {} / {}", cfg.suite, cfg.harness, cfg.policy))
            .suite(cfg.suite.clone())
            .harness(cfg.harness.clone())
            .policy(cfg.policy.clone())
            .config(config_json),
    )?;
    let jobs: Vec<(usize, u32)> = (0..tasks.len()).flat_map(|t| (0..cfg.samples).map(move |s| (t, s))).collect();
    let total = jobs.len();
    sink.emit(Event::RunStarted { run_id, total, label: format!("{} under {}", cfg.suite, cfg.harness) });
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let successes = AtomicUsize::new(0);
    let results: Mutex<Vec<Episode>> = Mutex::new(Vec::with_capacity(total));
    let store_error: Mutex<Option<crate::store::StoreError>> = Mutex::new(None);
    let workers = cfg.concurrency.max(1).min(total.max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                if cancel.load(Ordering::Relaxed) || store_error.lock().map(|e| e.is_some()).unwrap_or(true) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= jobs.len() {
                    break;
                }
                let (t, sample) = jobs[i];
                let task = &tasks[t];
                let seed = cfg.seed ^ (hash_str(&task.id).wrapping_mul(31).wrapping_add(sample as u64));
                let req = EpisodeRequest { suite, harness, task, policy, sample, seed, temperature: cfg.temperature, cancel: Some(cancel) };
                let ep = run_episode(&req);
                if ep.status == EpisodeStatus::Cancelled {
                    break;
                }
                if let Err(e) = store.insert_episode(run_id, &ep, &EpisodeContext::default()) {
                    *store_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    break;
                }
                if ep.success() {
                    successes.fetch_add(1, Ordering::SeqCst);
                }
                let d = done.fetch_add(1, Ordering::SeqCst) + 1;
                sink.emit(Event::EpisodeFinished {
                    run_id,
                    task_id: ep.task_id.clone(),
                    harness: ep.harness.clone(),
                    success: ep.success(),
                    infra_error: ep.infra_error.is_some(),
                    done: d,
                    total,
                });
                let elapsed = started.elapsed().as_secs_f64();
                let eta = if d > 0 { Some(elapsed / d as f64 * (total - d) as f64) } else { None };
                sink.emit(Event::Progress {
                    run_id,
                    label: cfg.harness.clone(),
                    done: d,
                    total,
                    success_rate: successes.load(Ordering::SeqCst) as f64 / d as f64,
                    eta_s: eta,
                    unit: None,
                });
                results.lock().unwrap_or_else(|p| p.into_inner()).push(ep);
            });
        }
    });
    if let Some(e) = store_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        let _ = store.finish_run(run_id, RunStatus::Failed, &serde_json::json!({"error": e.to_string()}));
        return Err(e);
    }
    let episodes = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let summary = summarise(run_id, suite, tasks, &episodes, cancel.load(Ordering::Relaxed), started.elapsed().as_secs_f64());
    let status = if summary.cancelled { RunStatus::Cancelled } else { RunStatus::Finished };
    store.finish_run(run_id, status, &serde_json::to_value(&summary).unwrap_or_default())?;
    sink.emit(Event::RunFinished { run_id, status: status.as_str().into() });
    Ok(summary)
}

/// Metrics over finished episodes; infrastructure errors (and cancelled tries) are counted apart
/// and excluded ([`Episode::counts`]); a try that failed by its own action counts as a failure.
pub fn summarise(run_id: i64, suite: &dyn Suite, tasks: &[Task], episodes: &[Episode], cancelled: bool, wall_s: f64) -> EvalSummary {
    let by_id: std::collections::HashMap<&str, &Task> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let scored: Vec<OutcomeForMetrics<'_>> = episodes
        .iter()
        .filter(|e| e.counts())
        .filter_map(|e| by_id.get(e.task_id.as_str()).map(|t| OutcomeForMetrics { task: t, score: e.score.as_ref() }))
        .collect();
    let completed = scored.len();
    let succ = episodes.iter().filter(|e| e.counts() && e.success()).count();
    EvalSummary {
        run_id,
        episodes: episodes.len(),
        completed,
        infra_errors: episodes.iter().filter(|e| e.infra_error.is_some()).count(),
        success_rate: if completed > 0 { succ as f64 / completed as f64 } else { 0.0 },
        metrics: suite.metrics(&scored),
        cancelled,
        wall_s,
    }
}
