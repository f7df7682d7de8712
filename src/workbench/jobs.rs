//! Experiment files and running experiments: check, render and save the TOML the CLI reads;
//! start, cancel and resume experiments in the background with live progress per arm and seed.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use super::{api, commands, CommandError, Hub, Workbench};
use crate::events::{Event, EventSink};
use crate::experiment::snapshot::{LiveEvaluation, RunSnapshot};
use crate::experiment::{run_experiment, ConfigError, ExperimentConfig, ExperimentError};
use crate::store::{BlockingStore, RunStatus};

/// The transfer curves of `points`, computed by the analysis that computes a finished run's
/// curves.
fn live_curves(points: &[LiveEvaluation], seeds: &[u64]) -> Vec<crate::analysis::TransferCurve> {
    let live: Vec<crate::analysis::LivePoint<'_>> = points
        .iter()
        .map(|p| crate::analysis::LivePoint {
            suite: &p.suite,
            arm: &p.arm,
            split: &p.split,
            iteration: p.iteration as u32,
            seed_index: seeds.iter().position(|s| *s == p.seed).unwrap_or(seeds.len()) as u32,
            success: p.success,
            tasks: p.tasks,
        })
        .collect();
    crate::analysis::live_curves(&live, &crate::chart::style::ARM_ORDER)
}

/// What the UI shows of a run: its snapshot (a long run's evaluations thinned to about 200
/// iterations) with the curves of its evaluations; `elsewhere` says who runs it when this
/// process does not.
fn job_of(run_id: i64, v: &RunSnapshot, elsewhere: Option<String>) -> api::Job {
    let evaluations = v.thinned(200);
    api::Job {
        run_id,
        name: v.name.clone(),
        status: v.status.clone(),
        error: v.error.clone(),
        done: v.done,
        total: v.total,
        eta_s: v.eta_s,
        success_rate: v.success_rate,
        units: v.units.clone(),
        messages: v.messages.clone(),
        episodes: v.episodes,
        now: v.now.clone(),
        curves: live_curves(&evaluations, &v.seeds),
        evaluations,
        elsewhere,
    }
}

struct Job {
    cancel: Arc<AtomicBool>,
    view: Arc<Mutex<RunSnapshot>>,
    thread: Option<JoinHandle<()>>,
}

pub(super) struct Jobs {
    store: Arc<BlockingStore>,
    hub: Arc<Hub>,
    jobs: Mutex<BTreeMap<i64, Job>>,
}

/// Forwards the runner's events to the subscribers and keeps the job's view current.
struct JobSink {
    hub: Arc<Hub>,
    view: Arc<Mutex<RunSnapshot>>,
    started: Mutex<Option<mpsc::Sender<Result<i64, CommandError>>>>,
}

impl EventSink for JobSink {
    fn emit(&self, event: Event) {
        self.view.lock().unwrap_or_else(|p| p.into_inner()).apply(&event);
        if let Event::RunStarted { run_id, .. } = &event {
            if let Some(tx) = self.started.lock().unwrap_or_else(|p| p.into_inner()).take() {
                let _ = tx.send(Ok(*run_id));
            }
        }
        self.hub.publish(&serde_json::to_value(&event).unwrap_or_default());
    }
}

impl Jobs {
    pub(super) fn new(store: Arc<BlockingStore>, hub: Arc<Hub>) -> Jobs {
        Jobs { store, hub, jobs: Mutex::new(BTreeMap::new()) }
    }

    pub(super) fn start_toml(&self, toml_text: &str) -> Result<api::StartedRun, CommandError> {
        let cfg = ExperimentConfig::parse("experiment file", toml_text).map_err(|e| CommandError::BadArguments(e.to_string()))?;
        self.start(cfg)
    }

    /// Start `cfg` in the background (the runner resumes an unfinished run of the same
    /// configuration) and return its run id once the run exists.
    fn start(&self, cfg: ExperimentConfig) -> Result<api::StartedRun, CommandError> {
        {
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            for (id, j) in jobs.iter() {
                let v = j.view.lock().unwrap_or_else(|p| p.into_inner());
                if v.status == "running" && v.name == cfg.name {
                    return Err(CommandError::BadArguments(format!("experiment `{}` is already running (run {id})", cfg.name)));
                }
            }
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let view = Arc::new(Mutex::new(RunSnapshot::of_config(&cfg)));
        let (tx, rx) = mpsc::channel();
        let sink = Arc::new(JobSink { hub: self.hub.clone(), view: view.clone(), started: Mutex::new(Some(tx.clone())) });
        let store = self.store.clone();
        let hub = self.hub.clone();
        let c = cancel.clone();
        let v = view.clone();
        let thread = std::thread::Builder::new()
            .name(format!("experiment {}", cfg.name))
            .spawn(move || {
                let result = run_experiment(&cfg, &store, sink.as_ref(), &c);
                if let Err(e) = result {
                    let msg = e.to_string();
                    let mut view = v.lock().unwrap_or_else(|p| p.into_inner());
                    view.status = "failed".into();
                    view.error = Some(msg.clone());
                    let run_id = view.run_id;
                    drop(view);
                    if let Some(tx) = sink.started.lock().unwrap_or_else(|p| p.into_inner()).take() {
                        let refused = match e {
                            // another process runs it: a conflict, not a bad request
                            ExperimentError::Busy { .. } => CommandError::Conflict(msg.clone()),
                            _ => CommandError::BadArguments(msg.clone()),
                        };
                        let _ = tx.send(Err(refused));
                    }
                    if let Some(run_id) = run_id {
                        // The runner marks the run failed in the store; tell the UI too.
                        hub.publish(&json!({"event": "run_finished", "run_id": run_id, "status": "failed", "error": msg}));
                    }
                }
            })
            .map_err(|e| CommandError::Internal(format!("starting the experiment thread: {e}")))?;
        drop(tx);
        // Setting up (loading tasks, checking harnesses) takes well under a second; the wait is
        // bounded anyway so a stuck store cannot hang the caller.
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(Ok(run_id)) => {
                self.jobs.lock().unwrap_or_else(|p| p.into_inner()).insert(run_id, Job { cancel, view, thread: Some(thread) });
                Ok(api::StartedRun { run_id, note: None })
            }
            Ok(Err(refused)) => {
                let _ = thread.join();
                Err(refused)
            }
            Err(_) => {
                cancel.store(true, Ordering::SeqCst);
                Err(CommandError::Internal("the experiment did not start within 120 s".into()))
            }
        }
    }

    pub(super) fn cancel(&self, run_id: i64) -> Result<api::Acknowledged, CommandError> {
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        match jobs.get(&run_id) {
            Some(j) => {
                j.cancel.store(true, Ordering::SeqCst);
                j.view.lock().unwrap_or_else(|p| p.into_inner()).messages.push("cancelling after the work in flight".into());
                Ok(api::Acknowledged { ok: true })
            }
            None => Err(CommandError::NotFound(format!("experiment run {run_id} is not running here"))),
        }
    }

    /// Resume a cancelled, failed or interrupted run from its checkpoints.
    pub(super) fn resume(&self, run_id: i64) -> Result<api::StartedRun, CommandError> {
        let run = self.store.run(run_id)?.ok_or_else(|| CommandError::NotFound(format!("no experiment run {run_id}")))?;
        if run.status == RunStatus::Finished {
            return Err(CommandError::BadArguments(format!("experiment run {run_id} is finished; nothing to resume")));
        }
        let ended = {
            let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            // The store marks a cancelled run before its job sends its last event: a job still
            // "running" here whose run the store has ended is wrapping up, and is waited for.
            if let Some(j) = jobs.get(&run_id) {
                if run.status == RunStatus::Running && j.view.lock().unwrap_or_else(|p| p.into_inner()).status == "running" {
                    return Err(CommandError::BadArguments(format!("experiment run {run_id} is running")));
                }
            }
            jobs.remove(&run_id)
        };
        if let Some(t) = ended.and_then(|mut old| old.thread.take()) {
            let _ = t.join();
        }
        // another process (the CLI, another app, a coordinator on another machine) runs it
        if let Some(h) = self.store.run_lease(run_id)?.filter(|h| h.live()) {
            return Err(CommandError::Conflict(format!(
                "experiment run {run_id} is being run by {}; resume it once that process stops (its lease lapses {} s after its last heartbeat)",
                h.describe(),
                crate::store::LEASE_TTL_MS / 1000
            )));
        }
        let cfg: ExperimentConfig = serde_json::from_value(run.config.clone())
            .map_err(|e| CommandError::BadArguments(format!("run {run_id}: its stored configuration is not an experiment file: {e}")))?;
        let started = self.start(cfg)?;
        if started.run_id != run_id {
            // A newer unfinished run of the same configuration exists; the runner resumed that one.
            let note = format!("resumed run {} (the newest unfinished run of this configuration)", started.run_id);
            return Ok(api::StartedRun { note: Some(note), ..started });
        }
        Ok(started)
    }

    /// The runs this process runs (or ran), then the store's other running runs, each from the
    /// snapshot its own process keeps in the store: a run started from the command line, another
    /// app or a cluster is as live here as one started here.
    pub(super) fn list(&self) -> Result<Vec<api::Job>, CommandError> {
        let mut out: Vec<api::Job> = {
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            jobs.iter().rev().map(|(id, j)| job_of(*id, &j.view.lock().unwrap_or_else(|p| p.into_inner()), None)).collect()
        };
        for run in self.store.runs()?.into_iter().filter(|r| r.kind == crate::store::KIND_EXPERIMENT && r.status == RunStatus::Running) {
            if out.iter().any(|j| j.run_id == run.id) {
                continue;
            }
            let mut snapshot = RunSnapshot::stored(&self.store, run.id).unwrap_or_else(|| {
                let seeds: Vec<u64> =
                    run.config.get("seeds").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default();
                RunSnapshot::new(&run.name, &seeds)
            });
            snapshot.status = "running".into();
            let elsewhere = match self.store.run_lease(run.id)? {
                Some(h) if h.live() => h.describe(),
                Some(h) => {
                    snapshot.eta_s = None;
                    format!(
                        "{} — no heartbeat for over {} s: it may have stopped; resume it to go on",
                        h.describe(),
                        crate::store::LEASE_TTL_MS / 1000
                    )
                }
                None => "another process".to_string(),
            };
            out.push(job_of(run.id, &snapshot, Some(elsewhere)));
        }
        Ok(out)
    }

    /// Forget a run that is about to be deleted: refused while it runs here; a finished job's
    /// entry (and its ended thread) goes.
    pub(super) fn forget(&self, run_id: i64) -> Result<(), CommandError> {
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(j) = jobs.get(&run_id) {
            if j.view.lock().unwrap_or_else(|p| p.into_inner()).status == "running" {
                return Err(CommandError::Conflict(format!("run {run_id} is running; cancel it before deleting it")));
            }
        }
        if let Some(mut old) = jobs.remove(&run_id) {
            if let Some(t) = old.thread.take() {
                let _ = t.join();
            }
        }
        Ok(())
    }

    pub(super) fn running(&self) -> Vec<i64> {
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        jobs.iter().filter(|(_, j)| j.view.lock().unwrap_or_else(|p| p.into_inner()).status == "running").map(|(id, _)| *id).collect()
    }

    pub(super) fn cancel_all_and_wait(&self) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        for j in jobs.values() {
            j.cancel.store(true, Ordering::SeqCst);
        }
        for j in jobs.values_mut() {
            if let Some(t) = j.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Floats of an experiment file are short decimals (0.6, 2.0); f32 fields would otherwise be
/// written with their binary expansion (0.6000000238418579).
fn tidy_floats(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64() {
                let short: f64 = (f as f32).to_string().parse().unwrap_or(f);
                if let Some(m) = serde_json::Number::from_f64(short) {
                    *n = m;
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy_floats),
        Value::Object(o) => o.values_mut().for_each(tidy_floats),
        _ => {}
    }
}

/// TOML has no null: an unset option is simply not written.
fn drop_nulls(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.retain(|_, x| !x.is_null());
            o.values_mut().for_each(drop_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// A configuration as the JSON an experiment file reads back as: short floats, no nulls.
fn config_json(cfg: &ExperimentConfig) -> Result<Value, CommandError> {
    let mut v = serde_json::to_value(cfg).map_err(|e| CommandError::Internal(e.to_string()))?;
    tidy_floats(&mut v);
    drop_nulls(&mut v);
    Ok(v)
}

/// `cfg` as a fresh experiment file.
fn render_config(cfg: &ExperimentConfig) -> Result<String, CommandError> {
    toml::to_string(&config_json(cfg)?).map_err(|e| CommandError::Internal(format!("writing the experiment file: {e}")))
}

/// The experiment file for a configuration given as JSON (checked first).
pub(super) fn render_toml(config: &Value) -> Result<String, CommandError> {
    let cfg: ExperimentConfig = serde_json::from_value(config.clone()).map_err(|e| CommandError::BadArguments(format!("config: {e}")))?;
    render_config(&cfg)
}

/// A configuration given as JSON (the builder's form), checked as a file is. A value of the wrong
/// type is named by its key, as in a file (`budget.batch_tasks: must be a whole number ≥ 1, got
/// -1`), without the line of a text nobody sees.
fn config_from_json(v: &Value) -> Result<ExperimentConfig, ConfigError> {
    const FILE: &str = "config";
    match serde_json::from_value::<ExperimentConfig>(v.clone()) {
        Ok(cfg) => cfg.validate(FILE).map(|_| cfg),
        Err(e) => {
            let mut plain = v.clone();
            drop_nulls(&mut plain);
            let named = toml::to_string(&plain).ok().and_then(|text| ExperimentConfig::parse(FILE, &text).err());
            Err(match named {
                Some(mut ce) => {
                    if let Some((_, rest)) = ce.message.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
                        ce.message = rest.to_string();
                    }
                    ce
                }
                None => ConfigError { file: FILE.into(), key: "(config)".into(), message: e.to_string() },
            })
        }
    }
}

/// `original` with the settings that differ in `cfg` changed in place: its comments, blank
/// lines, key order and the layout of everything else are kept. An original that is not a valid
/// experiment file gives way to `cfg` written afresh.
pub(super) fn edit_toml(original: &str, cfg: &ExperimentConfig) -> Result<String, CommandError> {
    let fresh_text = render_config(cfg)?;
    let (Ok(before), Ok(mut doc)) = (ExperimentConfig::parse("original", original), original.parse::<toml_edit::DocumentMut>()) else {
        return Ok(fresh_text);
    };
    let fresh: toml_edit::DocumentMut = fresh_text.parse().map_err(|e| CommandError::Internal(format!("reading the rendered file: {e}")))?;
    if let (Value::Object(old), Value::Object(new)) = (config_json(&before)?, config_json(cfg)?) {
        merge_changes(doc.as_table_mut(), fresh.as_table(), &old, &new);
    }
    Ok(doc.to_string())
}

/// Apply to `dst` every setting whose value differs between `old` and `new` (the JSON of the
/// configuration before and after), taking the new items from `fresh` (`new` rendered).
fn merge_changes(
    dst: &mut dyn toml_edit::TableLike,
    fresh: &dyn toml_edit::TableLike,
    old: &serde_json::Map<String, Value>,
    new: &serde_json::Map<String, Value>,
) {
    let keys: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for k in keys {
        let (before, after) = (old.get(k), new.get(k));
        if before == after {
            continue;
        }
        let (Some(after), Some(fresh_item)) = (after, fresh.get(k)) else {
            dst.remove(k);
            continue;
        };
        if let (Value::Object(after), Some(fresh_table)) = (after, fresh_item.as_table_like()) {
            if !dst.get(k).is_some_and(toml_edit::Item::is_table_like) {
                dst.insert(k, toml_edit::Item::Table(toml_edit::Table::new()));
            }
            let empty = serde_json::Map::new();
            let before = before.and_then(Value::as_object).unwrap_or(&empty);
            if let Some(t) = dst.get_mut(k).and_then(toml_edit::Item::as_table_like_mut) {
                merge_changes(t, fresh_table, before, after);
            }
            continue;
        }
        match (dst.get_mut(k), fresh_item.as_value()) {
            // the same place, spacing and trailing comment; the new value
            (Some(toml_edit::Item::Value(v)), Some(fresh_value)) => {
                let decor = v.decor().clone();
                *v = fresh_value.clone();
                *v.decor_mut() = decor;
            }
            _ => {
                dst.insert(k, fresh_item.clone());
            }
        }
    }
}

/// `config_check`: an experiment file (`toml`) or the form's configuration (`config`) checked;
/// valid, it comes back as JSON with its rollout estimate.
pub(super) fn config_check(wb: &Workbench, a: commands::ConfigCheckArgs) -> Result<api::ConfigCheck, CommandError> {
    let parsed = match &a.toml {
        Some(text) => ExperimentConfig::parse("experiment file", text),
        None => match &a.config {
            Some(v) => config_from_json(v),
            None => {
                return Err(CommandError::BadArguments(
                    "config_check: missing argument `toml` (an experiment file's text) or `config` (its JSON)".into(),
                ))
            }
        },
    };
    match parsed {
        Ok(cfg) => {
            let mut config = serde_json::to_value(&cfg).map_err(|e| CommandError::Internal(e.to_string()))?;
            tidy_floats(&mut config);
            let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
            // A suite that cannot be set up (a missing dataset file) has no estimate; Start says why.
            let sizes = crate::experiment::suite_sizes(&cfg).ok();
            let estimate = sizes.as_ref().map(|sizes| cfg.estimate(sizes, cores));
            let power = match &sizes {
                Some(sizes) => cfg.suites.iter().zip(sizes).map(|(suite, size)| wb.plan(&cfg, suite, size, a.effect)).collect(),
                None => Vec::new(),
            };
            Ok(api::ConfigCheck::Valid { ok: true, config, estimate, power })
        }
        Err(e) => {
            let line = e.message.strip_prefix("line ").and_then(|r| r.split(':').next()).and_then(|n| n.parse::<u64>().ok());
            Ok(api::ConfigCheck::Invalid { ok: false, error: e.to_string(), key: e.key.clone(), line })
        }
    }
}

/// `config_render`: the experiment file for the form's configuration; with `original`, that file
/// edited in place (comments and order kept).
pub(super) fn config_render(a: commands::ConfigRenderArgs) -> Result<api::ConfigText, CommandError> {
    let cfg = config_from_json(&a.config).map_err(|e| CommandError::BadArguments(e.to_string()))?;
    let toml = match &a.original {
        Some(original) => edit_toml(original, &cfg)?,
        None => render_config(&cfg)?,
    };
    // What is rendered must also pass the checks `experiment run` makes.
    ExperimentConfig::parse("experiment file", &toml).map_err(|e| CommandError::BadArguments(e.to_string()))?;
    Ok(api::ConfigText { toml })
}

/// Save an experiment file at `path` inside the workspace's `experiments` folder. The text is
/// checked first so a saved file always runs; an existing file is replaced only with
/// `overwrite: true` (otherwise a `Conflict`).
pub(super) fn config_save(a: commands::ConfigSaveArgs, workspace: &Path) -> Result<api::SavedFile, CommandError> {
    use std::io::Write;
    let text = a.toml.as_str();
    let rel = a.path.as_str();
    let overwrite = a.overwrite.unwrap_or(false);
    let path = super::confined_path(workspace, "experiments", "config_save", "path", rel)?;
    if path.extension().and_then(|e| e.to_str()) != Some("toml") {
        return Err(CommandError::BadArguments(format!("config_save: path `{rel}` should end in .toml")));
    }
    ExperimentConfig::parse(&path.display().to_string(), text).map_err(|e| CommandError::BadArguments(e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| CommandError::Internal(format!("creating {}: {e}", dir.display())))?;
    }
    // created only if absent unless `overwrite`, in one step (a file that appears meanwhile is
    // not replaced either), and never through a link, symbolic or hard
    let written = crate::files::create(&path, overwrite).and_then(|mut f| f.write_all(text.as_bytes()));
    match written {
        Ok(()) => Ok(api::SavedFile { path: path.display().to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(CommandError::Conflict(format!("config_save: {} already exists; save with `overwrite: true` to replace it", path.display())))
        }
        Err(e) => Err(CommandError::Internal(format!("writing {}: {e}", path.display()))),
    }
}

/// List the endpoint's models (`GET {base_url}/models`) and check the model is among them.
pub(super) fn test_connection(a: commands::ConnectionArgs) -> Result<api::ConnectionCheck, CommandError> {
    use crate::policy::openai::{OpenAiConfig, OpenAiPolicy};
    let model = a.model.as_deref().unwrap_or("");
    let mut cfg = OpenAiConfig::new(&a.base_url, if model.is_empty() { "(none)" } else { model });
    cfg.api_key_env = a.api_key_env.clone();
    cfg.timeout = Duration::from_secs(10);
    cfg.max_retries = 0;
    let policy = match OpenAiPolicy::new(cfg) {
        Ok(p) => p,
        Err(e) => return Ok(api::ConnectionCheck { ok: false, models: vec![], error: Some(e.to_string()) }),
    };
    match policy.list_models() {
        Ok(models) => {
            if !model.is_empty() && !models.iter().any(|m| m == model) {
                let error = format!("connected, but the endpoint does not serve model `{model}` (it serves: {})", models.join(", "));
                return Ok(api::ConnectionCheck { ok: false, models, error: Some(error) });
            }
            Ok(api::ConnectionCheck { ok: true, models, error: None })
        }
        Err(e) => Ok(api::ConnectionCheck { ok: false, models: vec![], error: Some(e.to_string()) }),
    }
}

/// Run the trainer of an experiment file's `[trainer]` (given as JSON) once on a one-line batch.
pub(super) fn test_trainer(a: commands::TrainerArgs) -> Result<api::TrainerCheck, CommandError> {
    let trainer: crate::experiment::config::TrainerConfig = serde_json::from_value(a.trainer)
        .map_err(|e| CommandError::BadArguments(format!("trainer: {e} (expected the [trainer] table: command = [...], timeout_s, ...)")))?;
    if trainer.command.is_empty() {
        return Err(CommandError::BadArguments("trainer.command: the program to run and its arguments".into()));
    }
    let base_model = a.base_model.as_deref().unwrap_or("");
    match crate::experiment::external::test_trainer(&trainer, base_model) {
        Ok(check) => Ok(check),
        Err(e) => Ok(api::TrainerCheck { ok: false, seconds: 0.0, metrics: Default::default(), log_tail: Vec::new(), error: Some(e.to_string()) }),
    }
}

impl Workbench {
    pub(super) fn workers(&self) -> Result<api::Workers, CommandError> {
        Ok(cluster_status(&self.store)?)
    }
}

/// The running experiments of a store (episodes stored, and their episode queue on Postgres) and
/// the `harness-s worker` processes that registered with it: what `experiment status` prints and
/// the app's Workers panel shows.
pub fn cluster_status(store: &BlockingStore) -> Result<api::Workers, crate::store::StoreError> {
    use crate::store::{BackendKind, EpisodeFilter, KIND_EXPERIMENT};
    let postgres = store.store().backend() == BackendKind::Postgres;
    let mut running = Vec::new();
    for r in store.runs()?.into_iter().filter(|r| r.kind == KIND_EXPERIMENT && r.status == RunStatus::Running) {
        let episodes = store.count_episodes(&EpisodeFilter::run(r.id))? as i64;
        let queue = if postgres { Some(store.queue_counts(r.id)?).filter(|q| q.queued + q.running + q.done + q.failed > 0) } else { None };
        running.push(api::RunningExperiment { run_id: r.id, name: r.name, created_at: r.created_at, episodes, queue });
    }
    let workers = if postgres { store.workers()? } else { Vec::new() };
    Ok(api::Workers { backend: if postgres { "postgres" } else { "sqlite" }.into(), running, workers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendered_experiment_files_round_trip_with_short_floats() {
        let cfg = ExperimentConfig::parse("demo", super::super::DEMO_CONFIG).unwrap();
        let v = serde_json::to_value(&cfg).unwrap();
        let text = render_toml(&v).unwrap();
        assert!(text.contains("temperature = 0.6\n"), "{text}");
        assert_eq!(ExperimentConfig::parse("rendered", &text).unwrap(), cfg);
    }
}
