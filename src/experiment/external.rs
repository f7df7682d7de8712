//! The external learner: a served model (vLLM, SGLang, or any OpenAI-compatible endpoint) trained
//! by the user's trainer, one update per iteration, under the protocol of
//! `docs/trainer-protocol.md`:
//!
//! 1. the batch goes to `<dir>/batch.jsonl` ([`super::batch`]), the request to
//!    `<dir>/request.json`;
//! 2. the trainer command runs (its output to `<dir>/trainer.log`, live progress, and the tail to
//!    the store) and writes `<dir>/result.json` naming the new checkpoint;
//! 3. the checkpoint reaches the endpoint ([`ServingConfig`]): loaded as a LoRA adapter under a
//!    name that carries run, suite, arm, seed and iteration (so every arm of an experiment can
//!    share one server), listed by `GET /v1/models`, answered in one smoke request;
//! 4. the next rollouts sample from it.
//!
//! Any failure is a [`LearnerError`] (infrastructure, never a task failure); the job's checkpoint
//! stays at the last completed update, and a resumed run replays the interrupted iteration.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::batch::{write_jsonl, write_lines, BatchMeta, TrainSequence};
use super::config::{ServingConfig, TrainerConfig};
use super::learner::{Learner, LearnerError};
use crate::events::{Event, EventSink};
use crate::message::{Context, Message, Origin};
use crate::policy::openai::OpenAiPolicy;
use crate::policy::{AssistantTurn, CallKind, CallOptions, Policy, PolicyError};
use crate::records::JobState;
use crate::store::BlockingStore;

/// The version of the request/result files.
pub const PROTOCOL: u32 = 1;

/// The name prefix of a warm-start adapter, shared by the arms of a seed.
pub const WARM_START_ADAPTER: &str = "hs-warm-";

/// Lines of the trainer's output kept in the store.
const LOG_TAIL: usize = 40;

/// Which job an external learner trains, and where it may write.
#[derive(Clone, Debug)]
pub struct JobIdentity {
    pub run_id: i64,
    pub suite: String,
    pub arm: String,
    pub seed: u64,
    pub seed_index: usize,
}

/// What the learner keeps in the job's checkpoint.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ExternalState {
    /// Completed updates (0 = the base model).
    pub version: u64,
    /// The newest checkpoint the trainer wrote.
    pub checkpoint: Option<String>,
    /// The model name rollouts are sampled from (`policy.model` until the first update).
    pub served: Option<String>,
    /// The adapter served before it (unloaded at the next update).
    pub previous: Option<String>,
}

/// The request file (`request.json`) of one update.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TrainRequest {
    pub protocol: u32,
    /// The batch (JSONL, one line per sequence; see `docs/trainer-batch.schema.json`).
    pub batch: String,
    pub lines: usize,
    /// The checkpoint to continue from (null: start from `base_model`).
    pub previous_checkpoint: Option<String>,
    /// Where the trainer writes the new checkpoint.
    pub output_dir: String,
    /// Where the trainer writes `result.json`.
    pub result: String,
    pub base_model: String,
    /// `group` (advantage-weighted policy gradient) or `sft` (weighted SFT on positive sequences).
    pub objective: String,
    /// `[trainer] params`, passed through.
    pub params: Value,
    pub run_id: i64,
    pub suite: String,
    pub arm: String,
    pub seed: u64,
    pub iteration: usize,
    /// The version the batch's rollouts were sampled from; the checkpoint becomes version + 1.
    pub policy_version: u64,
}

/// The result file (`result.json`) the trainer writes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TrainResult {
    /// The new checkpoint (a directory a server can load); relative paths are relative to the
    /// request's folder.
    pub checkpoint: String,
    /// Free-form figures (`loss`, `sequences`, `seconds`, ...), shown and stored as they are.
    #[serde(default)]
    pub metrics: serde_json::Map<String, Value>,
}

/// The endpoint's policy under its current model name; switched after each update.
struct ServedPolicy(RwLock<OpenAiPolicy>);

impl Policy for ServedPolicy {
    fn name(&self) -> String {
        self.0.read().unwrap_or_else(|p| p.into_inner()).name()
    }

    fn act(&self, ctx: &Context, opts: &CallOptions) -> Result<AssistantTurn, PolicyError> {
        // a handle (sharing the runtime and pool), so that a switch never waits for requests
        let p = self.0.read().unwrap_or_else(|p| p.into_inner()).clone();
        p.act(ctx, opts)
    }
}

/// An OpenAI-compatible policy trained by an external trainer.
pub struct ExternalLearner<'a> {
    trainer: TrainerConfig,
    serving: ServingConfig,
    /// The endpoint under the base model's name (admin calls go through it).
    base: OpenAiPolicy,
    served: ServedPolicy,
    state: Mutex<ExternalState>,
    job: JobIdentity,
    workdir: PathBuf,
    store: &'a BlockingStore,
    sink: &'a dyn EventSink,
    /// Each replica's request count at the previous update (for the request rate).
    replica_marks: Mutex<Vec<(Instant, u64)>>,
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> LearnerError {
    let path = path.display().to_string();
    move |source| LearnerError::Io { what, path, source }
}

impl<'a> ExternalLearner<'a> {
    pub fn new(
        policy: OpenAiPolicy,
        trainer: TrainerConfig,
        serving: ServingConfig,
        job: JobIdentity,
        store: &'a BlockingStore,
        sink: &'a dyn EventSink,
    ) -> Self {
        let workdir = PathBuf::from(trainer.workdir.clone().unwrap_or_else(|| "artifacts/trainer".into()));
        let served = ServedPolicy(RwLock::new(policy.clone()));
        let replica_marks = Mutex::new(policy.replica_stats().iter().map(|r| (Instant::now(), r.requests)).collect());
        ExternalLearner {
            trainer,
            serving,
            base: policy,
            served,
            state: Mutex::new(ExternalState::default()),
            job,
            workdir,
            store,
            sink,
            replica_marks,
        }
    }

    /// The adapter name of the checkpoint an update at `iteration` produces.
    pub fn adapter_name(&self, iteration: usize) -> String {
        let clean = |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect::<String>();
        format!("hs-r{}-{}-{}-s{}-it{}", self.job.run_id, clean(&self.job.suite), clean(&self.job.arm), self.job.seed, iteration)
    }

    /// The folder of one update's files.
    pub fn update_dir(&self, iteration: usize) -> PathBuf {
        self.workdir
            .join(format!("run-{}", self.job.run_id))
            .join(&self.job.suite)
            .join(&self.job.arm)
            .join(format!("seed-{}", self.job.seed))
            .join(format!("iter-{iteration:04}"))
    }

    fn say(&self, text: String) {
        self.sink.emit(Event::Message { run_id: self.job.run_id, text });
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ExternalState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Requests per second since the previous update, per replica (when there are several).
    fn report_replicas(&self) {
        let replicas = self.base.replica_stats();
        if !replicas.is_empty() {
            // requests per second since the previous update, per replica
            let mut last = self.replica_marks.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let each: Vec<String> = replicas
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let rate = match last.get(i) {
                        Some((t, n)) if now > *t => (r.requests.saturating_sub(*n)) as f64 / (now - *t).as_secs_f64(),
                        _ => 0.0,
                    };
                    format!(
                        "{} {} ({rate:.1} req/s, {} requests, {} failed)",
                        r.base_url,
                        if r.healthy { "up" } else { "DOWN" },
                        r.requests,
                        r.failures
                    )
                })
                .collect();
            *last = replicas.iter().map(|r| (now, r.requests)).collect();
            self.say(format!("endpoint replicas: {}", each.join("; ")));
        }
    }

    /// Write the batch and request, run the trainer, read its result; then serve the checkpoint.
    fn train(&self, batch: &[TrainSequence], meta: &BatchMeta, objective: &str) -> Result<(), LearnerError> {
        self.report_replicas();
        let dir = self.update_dir(meta.iteration);
        std::fs::create_dir_all(&dir).map_err(io_err("creating the update folder", &dir))?;
        let dir = dir.canonicalize().map_err(io_err("resolving the update folder", &dir))?;
        let batch_path = dir.join("batch.jsonl");
        let lines = write_jsonl(&batch_path, batch, meta).map_err(io_err("writing the batch", &batch_path))?;
        let result_path = dir.join("result.json");
        let previous = self.state().checkpoint.clone();
        let request = TrainRequest {
            protocol: PROTOCOL,
            batch: batch_path.display().to_string(),
            lines,
            previous_checkpoint: previous,
            output_dir: dir.join("checkpoint").display().to_string(),
            result: result_path.display().to_string(),
            base_model: self.trainer.base_model.clone().unwrap_or_else(|| self.base.model().to_string()),
            objective: objective.to_string(),
            params: serde_json::to_value(&self.trainer.params).unwrap_or(Value::Null),
            run_id: self.job.run_id,
            suite: self.job.suite.clone(),
            arm: self.job.arm.clone(),
            seed: self.job.seed,
            iteration: meta.iteration,
            policy_version: meta.policy_version,
        };
        self.say(format!(
            "phase: training {} seed {} iteration {} on {lines} sequences ({objective}) with {}",
            self.job.arm, self.job.seed, meta.iteration, self.trainer.command[0]
        ));
        let run = run_trainer(&self.trainer, &request, &dir, |line| {
            self.say(format!("trainer [{} seed {} it {}] {line}", self.job.arm, self.job.seed, meta.iteration))
        })?;
        let seconds = run.seconds;
        let record = |result: Option<&TrainResult>, error: Option<&str>| {
            let body = json!({
                "arm": self.job.arm, "seed": self.job.seed, "seed_index": self.job.seed_index, "iteration": meta.iteration,
                "policy_version": meta.policy_version, "batch": request.batch, "lines": lines, "objective": objective,
                "exit": run.status, "seconds": seconds, "log_tail": run.tail,
                "checkpoint": result.map(|r| r.checkpoint.clone()), "metrics": result.map(|r| r.metrics.clone()), "error": error,
            });
            let key = format!("{}/{}/{}/{}", self.job.suite, self.job.arm, self.job.seed_index, meta.iteration);
            let _ = self.store.put_record(self.job.run_id, "trainer", &key, &body);
        };
        let (result, checkpoint) = match run.result {
            Ok(r) => r,
            Err(e) => {
                let msg = e.to_string();
                record(None, Some(&msg));
                return Err(LearnerError::Trainer(msg));
            }
        };
        record(Some(&result), None);
        let figures: Vec<String> = result.metrics.iter().map(|(k, v)| format!("{k} {v}")).collect();
        self.say(format!(
            "{} seed {} iteration {}: update done in {seconds:.1} s ({})",
            self.job.arm,
            self.job.seed,
            meta.iteration,
            figures.join(", ")
        ));
        self.adopt(&checkpoint, &self.adapter_name(meta.iteration))
    }

    /// The job's next version: serve `checkpoint` as `name` and sample from it from now on.
    fn adopt(&self, checkpoint: &Path, name: &str) -> Result<(), LearnerError> {
        self.say(format!("phase: reloading {} as `{name}` ({})", checkpoint.display(), self.serving.kind));
        self.serve(&checkpoint.display().to_string(), name)?;
        self.say(format!("phase: sampling {} seed {} from `{name}`", self.job.arm, self.job.seed));
        let mut st = self.state();
        st.version += 1;
        st.checkpoint = Some(checkpoint.display().to_string());
        if self.serving.kind != "none" {
            // the adapter before this one is unloaded at the next update, unless it is the shared
            // warm start, which other arms sample from
            st.previous = st.served.replace(name.to_string()).filter(|old| !old.starts_with(WARM_START_ADAPTER));
            *self.served.0.write().unwrap_or_else(|p| p.into_inner()) = self.base.with_model(name);
        }
        Ok(())
    }

    /// The warm start: SFT on the demonstrations, trained once for every arm that has the same
    /// demonstrations (the arms of a seed), and once for every run with the same inputs. Its
    /// checkpoint is kept in `<workdir>/warm-start/<key>/`, the key a digest of the base model,
    /// the trainer command, the warm start's params and the demonstrations' conversations; a job
    /// that finds it there serves it without training. Served as `hs-warm-<key>`, shared by the
    /// arms (never unloaded by one of them), it is version 1 of every arm.
    fn shared_warm_start(&self, demonstrations: &[TrainSequence], meta: &BatchMeta) -> Result<(), LearnerError> {
        self.report_replicas();
        let params = self.trainer.warm_start_params();
        let base_model = self.trainer.base_model.clone().unwrap_or_else(|| self.base.model().to_string());
        let lines = super::batch::lines(demonstrations, meta);
        let key = {
            use md5::{Digest, Md5};
            let mut h = Md5::new();
            h.update(serde_json::to_vec(&json!({"base_model": base_model, "command": self.trainer.command, "params": params})).unwrap_or_default());
            for l in &lines {
                h.update(serde_json::to_vec(&json!([l.messages, l.tools, l.info.weight, l.info.advantage])).unwrap_or_default());
            }
            format!("{:x}", h.finalize())[..20].to_string()
        };
        let dir = self.workdir.join("warm-start").join(&key);
        // one training per key in this process: the other arms wait for it, then find it made
        let lock = {
            static LOCKS: std::sync::OnceLock<Mutex<std::collections::HashMap<String, Arc<Mutex<()>>>>> = std::sync::OnceLock::new();
            let mut locks = LOCKS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
            locks.entry(key.clone()).or_default().clone()
        };
        let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        std::fs::create_dir_all(&dir).map_err(io_err("creating the warm-start folder", &dir))?;
        let dir = dir.canonicalize().map_err(io_err("resolving the warm-start folder", &dir))?;
        let result_path = dir.join("result.json");
        let cached = read_result(&result_path, &dir).ok();
        let started = Instant::now();
        let record = |status: Option<i32>, tail: &[String], cached: bool, result: Option<&TrainResult>, error: Option<&str>| {
            let body = json!({
                "arm": self.job.arm, "seed": self.job.seed, "seed_index": self.job.seed_index, "iteration": 0, "policy_version": 0,
                "batch": dir.join("batch.jsonl").display().to_string(), "lines": lines.len(), "objective": "sft", "warm_start": key,
                "cached": cached, "exit": status, "seconds": started.elapsed().as_secs_f64(), "log_tail": tail,
                "checkpoint": result.map(|r| r.checkpoint.clone()), "metrics": result.map(|r| r.metrics.clone()), "error": error,
            });
            let _ =
                self.store.put_record(self.job.run_id, "trainer", &format!("{}/{}/{}/0", self.job.suite, self.job.arm, self.job.seed_index), &body);
        };
        let (result, checkpoint, run_tail, status, fresh) = match cached {
            Some((result, checkpoint)) => {
                // the record shows the training's own log, whichever job ran it
                let log = std::fs::read_to_string(dir.join("trainer.log")).unwrap_or_default();
                let lines: Vec<String> = log.lines().map(str::to_string).collect();
                let tail = lines[lines.len().saturating_sub(LOG_TAIL)..].to_vec();
                (result, checkpoint, tail, Some(0), false)
            }
            None => {
                let batch_path = dir.join("batch.jsonl");
                let n = write_lines(&batch_path, &lines).map_err(io_err("writing the batch", &batch_path))?;
                let request = TrainRequest {
                    protocol: PROTOCOL,
                    batch: batch_path.display().to_string(),
                    lines: n,
                    previous_checkpoint: None,
                    output_dir: dir.join("checkpoint").display().to_string(),
                    result: result_path.display().to_string(),
                    base_model: base_model.clone(),
                    objective: "sft".into(),
                    params: serde_json::to_value(&params).unwrap_or(Value::Null),
                    run_id: self.job.run_id,
                    suite: self.job.suite.clone(),
                    arm: "warm-start".into(),
                    seed: self.job.seed,
                    iteration: 0,
                    policy_version: 0,
                };
                self.say(format!("phase: warm start, training on {n} demonstrations (sft) with {}", self.trainer.command[0]));
                let run = run_trainer(&self.trainer, &request, &dir, |line| self.say(format!("trainer [warm start seed {}] {line}", self.job.seed)))?;
                match run.result {
                    Ok((result, checkpoint)) => (result, checkpoint, run.tail, run.status, true),
                    Err(e) => {
                        let msg = e.to_string();
                        record(run.status, &run.tail, false, None, Some(&msg));
                        return Err(LearnerError::Trainer(msg));
                    }
                }
            }
        };
        record(status, &run_tail, !fresh, Some(&result), None);
        self.say(format!(
            "{} seed {}: warm start {} ({key})",
            self.job.arm,
            self.job.seed,
            if fresh { format!("trained in {:.1} s", started.elapsed().as_secs_f64()) } else { "found in the cache".into() }
        ));
        self.adopt(&checkpoint, &format!("{WARM_START_ADAPTER}{}", &key[..12]))
    }

    /// Make the endpoint serve `checkpoint` as `name`, wait until it lists it, ask it once, and
    /// unload the adapter served before the current one.
    fn serve(&self, checkpoint: &str, name: &str) -> Result<(), LearnerError> {
        let serving_err = |e: PolicyError| LearnerError::Serving(format!("{} at {}: {e}", self.serving.kind, self.base.base_url()));
        match self.serving.kind.as_str() {
            "none" => return Ok(()),
            "vllm-lora" => self.base.load_lora_adapter(name, checkpoint).map_err(serving_err)?,
            "sglang-lora" => self.base.load_lora_adapter_sglang(name, checkpoint).map_err(serving_err)?,
            _ => {
                let dir = PathBuf::from(checkpoint);
                let cwd = dir.parent().unwrap_or(Path::new("."));
                let (status, _) = run_command(
                    &self.serving.command,
                    &[("{checkpoint}", checkpoint), ("{name}", name)],
                    cwd,
                    Duration::from_secs(self.serving.ready_timeout_s),
                    &[("HARNESS_S_CHECKPOINT", checkpoint.to_string()), ("HARNESS_S_ADAPTER", name.to_string())],
                    "serving.log",
                    |line| self.say(format!("serving [{}] {line}", self.job.arm)),
                )
                .map_err(|e| LearnerError::Serving(e.to_string()))?;
                if status != Some(0) {
                    return Err(LearnerError::Serving(format!("`{}` ended with {status:?}", self.serving.command.join(" "))));
                }
            }
        }
        self.wait_listed(name)?;
        let smoke = Context { messages: vec![Message::user("Reply with OK.", Origin::Frame)], tools: Vec::new() };
        self.base
            .with_model(name)
            .act(&smoke, &CallOptions { kind: CallKind::Act, seed: 0, temperature: 0.0 })
            .map_err(|e| LearnerError::Serving(format!("{} lists `{name}` but a request to it failed: {e}", self.base.base_url())))?;
        let previous = self.state().previous.clone();
        if let Some(old) = previous {
            // the version before last: nothing samples from it any more
            let r = match self.serving.kind.as_str() {
                "vllm-lora" => self.base.unload_lora_adapter(&old),
                "sglang-lora" => self.base.unload_lora_adapter_sglang(&old),
                _ => Ok(()),
            };
            if let Err(e) = r {
                tracing::warn!(adapter = %old, error = %e, "unloading an old adapter failed");
            }
        }
        self.say(format!("{} serves `{name}`", self.base.base_url()));
        Ok(())
    }

    /// Poll `GET /v1/models` until it lists `name`, for at most `serving.ready_timeout_s`.
    fn wait_listed(&self, name: &str) -> Result<(), LearnerError> {
        let deadline = Instant::now() + Duration::from_secs(self.serving.ready_timeout_s);
        loop {
            let last = match self.base.list_models() {
                Ok(ids) if ids.iter().any(|m| m == name) => return Ok(()),
                Ok(ids) => format!("it lists {}", if ids.is_empty() { "nothing".to_string() } else { ids.join(", ") }),
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(LearnerError::Serving(format!(
                    "{}/models did not list the new adapter `{name}` within {} s (serving.ready_timeout_s); {last}",
                    self.base.base_url(),
                    self.serving.ready_timeout_s
                )));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Learner for ExternalLearner<'_> {
    fn policy(&self) -> &dyn Policy {
        &self.served
    }

    fn version(&self) -> u64 {
        self.state().version
    }

    fn for_workers(&self) -> super::learner::WorkerPolicy {
        super::learner::WorkerPolicy::Endpoint(self.served.0.read().unwrap_or_else(|p| p.into_inner()).model().to_string())
    }

    fn warm_start(&self, demonstrations: &[TrainSequence], meta: &BatchMeta) -> Result<(), LearnerError> {
        if demonstrations.is_empty() {
            return Ok(());
        }
        self.shared_warm_start(demonstrations, meta)
    }

    fn update(&self, batch: &[TrainSequence], meta: &BatchMeta) -> Result<(), LearnerError> {
        self.train(batch, meta, &self.trainer.objective)
    }

    fn save(&self, st: &mut JobState) {
        st.learner = serde_json::to_value(&*self.state()).ok();
    }

    fn load(&self, st: &JobState) -> Result<(), LearnerError> {
        let Some(v) = &st.learner else { return Ok(()) };
        let saved: ExternalState = serde_json::from_value(v.clone())
            .map_err(|e| LearnerError::Trainer(format!("the job checkpoint's learner state does not read back: {e}")))?;
        if let (Some(name), Some(ckpt)) = (&saved.served, &saved.checkpoint) {
            // a resumed run: the server may have restarted since; serve the checkpoint again
            if !st.finished {
                *self.state() = ExternalState { previous: None, ..saved.clone() };
                self.serve(ckpt, name)?;
            }
            *self.served.0.write().unwrap_or_else(|p| p.into_inner()) = self.base.with_model(name);
        }
        *self.state() = saved;
        Ok(())
    }
}

/// What one trainer run produced.
pub struct TrainerRun {
    /// Exit code (`None`: stopped at the timeout).
    pub status: Option<i32>,
    pub tail: Vec<String>,
    pub seconds: f64,
    /// The result and the checkpoint it names (resolved), or why there is none.
    pub result: Result<(TrainResult, PathBuf), TrainerFailure>,
}

/// Why a trainer run gave no usable checkpoint.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainerFailure {
    #[error("the trainer exited 0 but wrote no {path} ({error})")]
    NoResult { path: String, error: String },
    /// The result file is not `{"checkpoint": ..., "metrics": ...}`, or names no checkpoint
    /// that exists.
    #[error("{0}")]
    BadResult(String),
    #[error("`{command}` exited with status {code} after {seconds:.1} s; its log: {log}")]
    Exited { command: String, code: i32, seconds: f64, log: String },
    #[error("`{command}` was stopped after {timeout_s} s (trainer.timeout_s); its log: {log}")]
    TimedOut { command: String, timeout_s: u64, log: String },
}

impl TrainerFailure {
    /// The failure without the log's path (for a caller whose log goes away with it).
    pub fn without_log(&self) -> String {
        match self {
            TrainerFailure::Exited { command, code, seconds, .. } => format!("`{command}` exited with status {code} after {seconds:.1} s"),
            TrainerFailure::TimedOut { command, timeout_s, .. } => format!("`{command}` was stopped after {timeout_s} s (trainer.timeout_s)"),
            other => other.to_string(),
        }
    }
}

/// The result file at `path` and the checkpoint it names (relative to `dir` unless absolute),
/// checked to exist.
fn read_result(path: &Path, dir: &Path) -> Result<(TrainResult, PathBuf), TrainerFailure> {
    let text = std::fs::read_to_string(path).map_err(|e| TrainerFailure::NoResult { path: path.display().to_string(), error: e.to_string() })?;
    let r = serde_json::from_str::<TrainResult>(&text)
        .map_err(|e| TrainerFailure::BadResult(format!("{}: {e} (expected {{\"checkpoint\": \"<path>\", \"metrics\": {{...}}}})", path.display())))?;
    let c = if Path::new(&r.checkpoint).is_absolute() { PathBuf::from(&r.checkpoint) } else { dir.join(&r.checkpoint) };
    if r.checkpoint.trim().is_empty() || !c.exists() {
        return Err(TrainerFailure::BadResult(format!("{}: checkpoint `{}` does not exist", path.display(), c.display())));
    }
    Ok((r, c))
}

/// Write `request` into `dir`, run the trainer on it, and read and check its result.
pub fn run_trainer(trainer: &TrainerConfig, request: &TrainRequest, dir: &Path, on_line: impl Fn(&str) + Sync) -> Result<TrainerRun, LearnerError> {
    let request_path = dir.join("request.json");
    let text = serde_json::to_string_pretty(request).unwrap_or_default();
    crate::files::write(&request_path, text).map_err(io_err("writing the request", &request_path))?;
    let result_path = PathBuf::from(&request.result);
    // a result left by an interrupted earlier attempt must not be taken for this one's
    let _ = std::fs::remove_file(&result_path);
    let started = Instant::now();
    let (status, tail) = run_command(
        &trainer.command,
        &[("{request}", &request_path.display().to_string())],
        dir,
        Duration::from_secs(trainer.timeout_s),
        &[("HARNESS_S_REQUEST", request_path.display().to_string())],
        "trainer.log",
        on_line,
    )
    .map_err(|e| LearnerError::Trainer(e.to_string()))?;
    let seconds = started.elapsed().as_secs_f64();
    let log = dir.join("trainer.log").display().to_string();
    let command = trainer.command.join(" ");
    let result = match status {
        Some(0) => read_result(&result_path, dir),
        Some(code) => Err(TrainerFailure::Exited { command, code, seconds, log }),
        None => Err(TrainerFailure::TimedOut { command, timeout_s: trainer.timeout_s, log }),
    };
    Ok(TrainerRun { status, tail, seconds, result })
}

/// The outcome of [`test_trainer`].
#[derive(Clone, Debug, Serialize, Deserialize, ts_rs::TS)]
pub struct TrainerCheck {
    pub ok: bool,
    pub seconds: f64,
    #[ts(type = "Record<string, unknown>")]
    pub metrics: serde_json::Map<String, Value>,
    pub log_tail: Vec<String>,
    pub error: Option<String>,
}

/// Run the trainer once on a one-line batch in a scratch folder (the app's "Test trainer"): the
/// command starts, reads the request and the batch, and writes a checkpoint and its result.
pub fn test_trainer(trainer: &TrainerConfig, base_model: &str) -> Result<TrainerCheck, LearnerError> {
    use crate::message::{Role, ToolCall, ToolSpec};
    let scratch = crate::sandbox::scratch::ScratchDir::new("trainer-test").map_err(io_err("making a scratch folder", Path::new("(scratch)")))?;
    let dir = scratch.path().to_path_buf();
    let tool = ToolSpec {
        name: "execute_sql".into(),
        description: "Run one SQL statement.".into(),
        parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    };
    let ctx = Context {
        messages: vec![Message::system("Answer with SQL."), Message::new(Role::User, "How many rows does table `t` have?", Origin::Frame)],
        tools: vec![tool],
    };
    let turn = AssistantTurn {
        tool_calls: vec![ToolCall { id: "call_0".into(), name: "execute_sql".into(), arguments: json!({"query": "SELECT COUNT(*) FROM `t`"}) }],
        ..Default::default()
    };
    let seq = TrainSequence::new("check", "check", "check", 1.0, 1.0, 1.0, super::batch::Source::WarmStart, "base", [(ctx, turn)]);
    let meta = BatchMeta { arm: "check".into(), seed: 0, iteration: 0, policy_version: 0 };
    let batch = dir.join("batch.jsonl");
    let lines = write_jsonl(&batch, &[seq], &meta).map_err(io_err("writing the batch", &batch))?;
    let request = TrainRequest {
        protocol: PROTOCOL,
        batch: batch.display().to_string(),
        lines,
        previous_checkpoint: None,
        output_dir: dir.join("checkpoint").display().to_string(),
        result: dir.join("result.json").display().to_string(),
        base_model: trainer.base_model.clone().unwrap_or_else(|| base_model.to_string()),
        objective: "sft".into(),
        params: serde_json::to_value(&trainer.params).unwrap_or(Value::Null),
        run_id: 0,
        suite: "check".into(),
        arm: "check".into(),
        seed: 0,
        iteration: 0,
        policy_version: 0,
    };
    let run = run_trainer(trainer, &request, &dir, |_| {})?;
    Ok(match run.result {
        Ok((r, _)) => TrainerCheck { ok: true, seconds: run.seconds, metrics: r.metrics, log_tail: run.tail, error: None },
        // the scratch folder goes with this call: its log is in `log_tail`, not at the path named
        Err(e) => TrainerCheck { ok: false, seconds: run.seconds, metrics: Default::default(), log_tail: run.tail, error: Some(e.without_log()) },
    })
}

/// A trainer or serving command that could not be started or waited for.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {error}")]
struct CommandError {
    what: String,
    error: std::io::Error,
}

/// Run `argv` (with `{placeholders}` replaced) in `cwd` with extra environment, its output
/// appended to `cwd/<log>` and passed line by line to `on_line`; stop it (and its process group)
/// after `timeout`. Returns the exit code (`None` when stopped) and the output's last lines.
/// Errors when the command cannot be started or waited for.
fn run_command(
    argv: &[String],
    placeholders: &[(&str, &str)],
    cwd: &Path,
    timeout: Duration,
    env: &[(&str, String)],
    log: &str,
    on_line: impl Fn(&str) + Sync,
) -> Result<(Option<i32>, Vec<String>), CommandError> {
    let args: Vec<String> = argv.iter().map(|a| placeholders.iter().fold(a.clone(), |a, (k, v)| a.replace(k, v))).collect();
    let log_path = cwd.join(log);
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| CommandError { what: log_path.display().to_string(), error: e })?;
    let log_file = Mutex::new(log_file);
    let mut cmd = Command::new(&args[0]);
    cmd.args(&args[1..]).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // dies with the workbench, leads its own process group (a timeout kills all of it)
    crate::sandbox::contain(&mut cmd, None, None);
    let mut child = cmd.spawn().map_err(|e| CommandError { what: format!("cannot start `{}`", args[0]), error: e })?;
    let pid = child.id();
    let tail: Arc<Mutex<VecDeque<String>>> = Arc::new(Mutex::new(VecDeque::new()));
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let status = std::thread::scope(|scope| {
        for stream in [out.map(|s| Box::new(s) as Box<dyn std::io::Read + Send>), err.map(|s| Box::new(s) as Box<dyn std::io::Read + Send>)]
            .into_iter()
            .flatten()
        {
            let (tail, log_file, on_line) = (tail.clone(), &log_file, &on_line);
            scope.spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    {
                        use std::io::Write;
                        let mut f = log_file.lock().unwrap_or_else(|p| p.into_inner());
                        let _ = writeln!(f, "{line}");
                    }
                    on_line(&line);
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    t.push_back(line);
                    if t.len() > LOG_TAIL {
                        t.pop_front();
                    }
                }
            });
        }
        let deadline = Instant::now() + timeout;
        loop {
            match child.try_wait() {
                Ok(Some(s)) => return Ok(s.code()),
                Ok(None) if Instant::now() >= deadline => {
                    crate::sandbox::kill_group(pid);
                    let _ = child.wait();
                    return Ok(None);
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(CommandError { what: format!("waiting for `{}`", args[0]), error: e }),
            }
        }
    })?;
    let tail = tail.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
    Ok((status, tail))
}
