//! A running experiment as its events describe it so far: progress, each (suite, arm, seed)
//! job's phase, the evaluations recorded, the newest messages. The workbench folds the events of
//! the runs it started into one; the runner also keeps one and writes it to the store (record
//! `progress`/`run`, every [`SNAPSHOT_EVERY`] and when the run ends), so that any process showing
//! the store — another app, `serve`, a laptop watching a cluster run — shows a run started
//! elsewhere just as live.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::events::{EpisodeCount, Event, EventSink};
use crate::store::BlockingStore;

/// The record a run's snapshot is stored under.
pub const SNAPSHOT_KIND: &str = "progress";
pub const SNAPSHOT_KEY: &str = "run";
/// How often the runner writes its snapshot at most.
pub const SNAPSHOT_EVERY: Duration = Duration::from_secs(2);
/// Messages kept.
const MESSAGES: usize = 50;

/// One evaluation a running experiment recorded (the `evaluation` event): a point of its
/// transfer curves.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct LiveEvaluation {
    pub suite: String,
    pub arm: String,
    pub seed: u64,
    pub iteration: usize,
    pub split: String,
    pub success: f64,
    pub tasks: usize,
}

/// A run's progress, folded from its events.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunSnapshot {
    pub name: String,
    /// Set once the runner has created (or found) the run.
    pub run_id: Option<i64>,
    pub status: String,
    pub error: Option<String>,
    pub done: usize,
    pub total: usize,
    pub eta_s: Option<f64>,
    pub success_rate: f64,
    /// Per (suite, arm, seed) job, sorted so: the unit's numbers with its phase, as the progress
    /// events carry them.
    pub units: Vec<Value>,
    pub messages: Vec<String>,
    pub episodes: Option<EpisodeCount>,
    /// The newest phase of any job, in words.
    pub now: Option<String>,
    pub evaluations: Vec<LiveEvaluation>,
    /// The experiment's seeds, in order: an evaluation's seed index is its place here.
    pub seeds: Vec<u64>,
}

impl RunSnapshot {
    pub fn new(name: &str, seeds: &[u64]) -> RunSnapshot {
        RunSnapshot { name: name.to_string(), status: "starting".into(), seeds: seeds.to_vec(), ..Default::default() }
    }

    /// The snapshot of a run of `cfg` before any event: every (suite, arm, seed) job listed as
    /// waiting, so the ones that have not started yet are shown too.
    pub fn of_config(cfg: &super::ExperimentConfig) -> RunSnapshot {
        let mut s = RunSnapshot::new(&cfg.name, &cfg.seeds);
        for suite in &cfg.suites {
            for arm in &cfg.arms {
                for seed in &cfg.seeds {
                    if let Some(o) = s.unit(suite, arm, *seed, cfg.iterations).as_object_mut() {
                        o.insert("phase".into(), json!("waiting"));
                        o.insert("label".into(), json!("waiting for a free job slot"));
                        o.insert("step".into(), json!(0));
                        o.insert("steps".into(), json!(0));
                    }
                }
            }
        }
        s
    }

    /// The job's entry, created blank (no iteration done, no rollouts) when a phase comes first.
    fn unit(&mut self, suite: &str, arm: &str, seed: u64, iterations: usize) -> &mut Value {
        let key =
            |u: &Value| (u["suite"].as_str().unwrap_or("").to_string(), u["arm"].as_str().unwrap_or("").to_string(), u["seed"].as_u64().unwrap_or(0));
        let want = (suite.to_string(), arm.to_string(), seed);
        let at = match self.units.binary_search_by(|u| key(u).cmp(&want)) {
            Ok(i) => i,
            Err(i) => {
                let blank =
                    json!({"suite": suite, "arm": arm, "seed": seed, "iteration": 0, "iterations": iterations, "rollouts": 0, "success": null});
                self.units.insert(i, blank);
                i
            }
        };
        &mut self.units[at]
    }

    /// Take in one event.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::RunStarted { run_id, total, .. } => {
                self.run_id = Some(*run_id);
                self.total = *total;
                self.status = "running".into();
            }
            Event::Progress { done, total, eta_s, success_rate, unit, .. } => {
                self.done = *done;
                self.total = *total;
                self.eta_s = *eta_s;
                self.success_rate = *success_rate;
                if let Some(u) = unit {
                    // the unit's numbers, keeping its phase
                    let entry = self.unit(&u.suite, &u.arm, u.seed, u.iterations);
                    if let (Some(o), Value::Object(new)) = (entry.as_object_mut(), serde_json::to_value(u).unwrap_or_default()) {
                        o.extend(new);
                    }
                }
            }
            Event::Phase { suite, arm, seed, phase, iterations, label, step, steps, episodes, eta_s, .. } => {
                if self.episodes.is_none_or(|e| e.done <= episodes.done) {
                    self.episodes = Some(*episodes);
                    self.eta_s = *eta_s;
                }
                self.now = Some(format!("{arm} seed {seed}: {label}"));
                if let Some(o) = self.unit(suite, arm, *seed, *iterations).as_object_mut() {
                    o.insert("phase".into(), json!(phase));
                    o.insert("label".into(), json!(label));
                    o.insert("step".into(), json!(step));
                    o.insert("steps".into(), json!(steps));
                }
            }
            Event::Evaluation { suite, arm, seed, iteration, split, success, tasks, .. } => self.evaluations.push(LiveEvaluation {
                suite: suite.clone(),
                arm: arm.clone(),
                seed: *seed,
                iteration: *iteration,
                split: split.clone(),
                success: *success,
                tasks: *tasks,
            }),
            Event::Message { text, .. } => {
                self.messages.push(text.clone());
                if self.messages.len() > MESSAGES {
                    self.messages.remove(0);
                }
            }
            Event::RunFinished { status, .. } => self.status = status.clone(),
            Event::EpisodeFinished { .. } => {}
        }
    }

    /// At most about `keep` iterations of the evaluations (every k-th, and the newest), so that
    /// a long run's snapshot stays small.
    pub fn thinned(&self, keep: usize) -> Vec<LiveEvaluation> {
        let points = &self.evaluations;
        let iterations: std::collections::BTreeSet<usize> = points.iter().map(|p| p.iteration).collect();
        if iterations.len() <= keep {
            return points.to_vec();
        }
        let stride = iterations.len().div_ceil(keep);
        let last = iterations.last().copied();
        let kept: std::collections::BTreeSet<usize> =
            iterations.iter().enumerate().filter(|(i, it)| i % stride == 0 || Some(**it) == last).map(|(_, it)| *it).collect();
        points.iter().filter(|p| kept.contains(&p.iteration)).cloned().collect()
    }

    /// The snapshot of run `run_id` stored by the process running it, if any.
    pub fn stored(store: &BlockingStore, run_id: i64) -> Option<RunSnapshot> {
        let records = store.records_with_prefix(run_id, SNAPSHOT_KIND, SNAPSHOT_KEY).ok()?;
        let (_, body) = records.into_iter().find(|(k, _)| k == SNAPSHOT_KEY)?;
        serde_json::from_value(body).ok()
    }
}

/// Forwards a run's events to `inner` and keeps the run's snapshot in the store, written at most
/// every [`SNAPSHOT_EVERY`] and whenever the run starts or ends. A failed write is left for the
/// next one: the snapshot is for watching, the run's results never depend on it.
pub(crate) struct StoredSnapshot<'a> {
    inner: &'a dyn EventSink,
    store: &'a BlockingStore,
    run_id: i64,
    state: Mutex<(RunSnapshot, Option<Instant>)>,
}

impl<'a> StoredSnapshot<'a> {
    pub fn new(inner: &'a dyn EventSink, store: &'a BlockingStore, run_id: i64, cfg: &super::ExperimentConfig) -> StoredSnapshot<'a> {
        StoredSnapshot { inner, store, run_id, state: Mutex::new((RunSnapshot::of_config(cfg), None)) }
    }
}

impl EventSink for StoredSnapshot<'_> {
    fn emit(&self, event: Event) {
        let body = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.0.apply(&event);
            let due = state.1.is_none_or(|t| t.elapsed() >= SNAPSHOT_EVERY);
            let edge = matches!(event, Event::RunStarted { .. } | Event::RunFinished { .. });
            if due || edge {
                state.1 = Some(Instant::now());
                let mut snapshot = state.0.clone();
                snapshot.evaluations = state.0.thinned(200);
                serde_json::to_value(&snapshot).ok()
            } else {
                None
            }
        };
        if let Some(body) = body {
            if let Err(e) = self.store.put_record(self.run_id, SNAPSHOT_KIND, SNAPSHOT_KEY, &body) {
                tracing::debug!("run {}: its progress snapshot was not stored: {e}", self.run_id);
            }
        }
        self.inner.emit(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::ProgressUnit;

    #[test]
    fn units_stay_sorted_by_suite_arm_and_seed_and_keep_their_phase() {
        let mut s = RunSnapshot::new("x", &[1, 2, 10]);
        let phase = |arm: &str, seed: u64| Event::Phase {
            run_id: 1,
            suite: "dbbench".into(),
            arm: arm.into(),
            seed,
            phase: "rescues".into(),
            iteration: 1,
            iterations: 4,
            label: "iteration 1 of 4: rescues".into(),
            step: 0,
            steps: 8,
            episodes: EpisodeCount { done: 5, min: 10, max: 20, expected: None },
            eta_s: Some(3.0),
        };
        s.apply(&phase("policy-only", 10));
        s.apply(&phase("harness-s", 2));
        s.apply(&phase("policy-only", 2));
        let unit =
            ProgressUnit { suite: "dbbench".into(), arm: "harness-s".into(), seed: 2, iteration: 1, iterations: 4, rollouts: 30, success: 0.5 };
        s.apply(&Event::Progress { run_id: 1, label: "x".into(), done: 1, total: 12, eta_s: None, success_rate: 0.5, unit: Some(unit) });
        let keys: Vec<(String, u64)> = s.units.iter().map(|u| (u["arm"].as_str().unwrap().to_string(), u["seed"].as_u64().unwrap())).collect();
        assert_eq!(keys, [("harness-s".to_string(), 2), ("policy-only".into(), 2), ("policy-only".into(), 10)]);
        assert_eq!((s.units[0]["phase"].as_str(), s.units[0]["rollouts"].as_u64()), (Some("rescues"), Some(30)));
        assert_eq!(s.now.as_deref(), Some("policy-only seed 2: iteration 1 of 4: rescues"));
    }

    #[test]
    fn every_job_is_listed_as_waiting_before_it_starts() {
        let mut cfg = crate::experiment::ExperimentConfig::parse("demo", include_str!("../../experiments/demo.toml")).unwrap();
        cfg.seeds = vec![1, 2];
        let s = RunSnapshot::of_config(&cfg);
        assert_eq!(s.units.len(), cfg.arms.len() * 2);
        assert!(s.units.iter().all(|u| u["phase"] == "waiting" && u["iteration"] == 0 && u["iterations"] == cfg.iterations));
    }
}
