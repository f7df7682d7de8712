//! The experiment runner: every (suite, arm, seed) is one job running the same training loop;
//! arms differ only in what they do with tasks on which all base tries failed.
//!
//! Per iteration: sample a batch of training tasks (the same batch for every arm of a seed), roll
//! out n times under the base harness, GRPO on groups with a success, and for all-fail groups:
//! - `policy-only`: nothing;
//! - `harness-s` / `keep-scaffold`: route to the top-k siblings, m tries each, distil rescues;
//! - `random-rescue`: k random siblings; `all-siblings`: the same k·m tries spread over every
//!   sibling in turn;
//! - `base-resample`: the same k·m tries under the base harness, GRPO over the enlarged group.
//!
//! Each job checkpoints its state after every iteration in the run store (`run_state`), and its
//! episodes carry their iteration, so a resumed run drops the episodes of the iteration a kill
//! interrupted and replays it identically: every random choice is derived from (seed, iteration,
//! task, try), never from a generator carried across iterations.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::batch::{BatchManifest, BatchMeta, Source, StepsRef, TrainSequence};
use super::config::{ExperimentConfig, RolloutEstimate, SuiteSize};
use super::distributed::{Coordinator, DistributedError, EpisodeJob, PolicyRef};
use super::external::{ExternalLearner, JobIdentity};
use super::learner::{BuiltinLearner, Learner, LearnerError};
use super::progress::{JobProgress, Plan, RunProgress};
use super::setup::{endpoint_policy, harness_library, setup_suite, SuiteSetup};
use crate::distil::{distil, DistillMode};
use crate::episode::Episode;
use crate::events::{Event, EventSink, ProgressUnit};
use crate::harness::{run_episode, EpisodeRequest, HarnessSpec};
use crate::message::{AssistantTurn, Context, ToolSpec};
use crate::policy::builtin::BuiltinPolicy;
use crate::policy::Policy;
use crate::records::{job_key, profile_key, task_record_key, Arm, Phase, ProfileRecord, RouteRecord, TRAIN_SPLIT};
pub use crate::records::{EvalPoint, JobState, RankOne, Rollouts};
use crate::route::{failure_signature, failure_summary, BehaviorProfile, RouteQuery, Router, RoutingDecision};
use crate::seed::SplitMix;
use crate::seed::{hash_str, shuffle};
use crate::stats::{bootstrap_ci, mean};
use crate::store::{BlockingStore, EpisodeContext, EpisodeFilter, NewRun, RunStatus, StoreError};
use crate::suite::Suite;
use crate::task::Task;

/// The result of `harness-s experiment run`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExperimentOutcome {
    pub run_id: i64,
    pub resumed: bool,
    pub finished: bool,
    /// arm -> split -> final base-harness success, mean over seeds
    pub arms: BTreeMap<String, BTreeMap<String, f64>>,
    pub heldout_delta: Option<Delta>,
    /// Paired held-out differences of `harness-s` against each other arm.
    pub deltas: Vec<Delta>,
    pub executor_rollouts: BTreeMap<String, u64>,
    pub rollouts_detail: BTreeMap<String, Rollouts>,
    pub rank_one: BTreeMap<String, Vec<RankOne>>,
    /// arm -> tasks on which all n base tries failed (summed over seeds)
    pub all_fail_tasks: BTreeMap<String, u64>,
    /// arm -> (iteration, mean training-family success over seeds)
    pub curves: BTreeMap<String, Vec<(usize, f64)>>,
    pub wall_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Delta {
    pub arm: String,
    pub baseline: String,
    pub mean: f64,
    pub ci95: [f64; 2],
    pub tasks: usize,
}

struct Shared<'a> {
    cfg: &'a ExperimentConfig,
    run_id: i64,
    store: &'a BlockingStore,
    sink: &'a dyn EventSink,
    cancel: &'a AtomicBool,
    suites: Vec<SuiteSetup>,
    total_units: usize,
    done_units: AtomicUsize,
    /// Episodes against the plan, and the phases: events only, never read back by the loop.
    progress: RunProgress<'a>,
    error: Mutex<Option<ExperimentError>>,
    /// One per seed: the first job of a seed searches its demonstrations, the others wait.
    demo_locks: Vec<Mutex<()>>,
    /// The router's voters, built once (an LLM voter holds its endpoint's client).
    router: Router,
    /// Where episodes run when the run is distributed; `None`: in the job's own thread.
    queue: Option<Coordinator<'a>>,
}

/// A solving action sequence for one training task, from the grammar search.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Demonstration {
    pub task_id: String,
    pub steps: crate::suite::Solution,
}

#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error(transparent)]
    Config(#[from] super::config::ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Setup(String),
    /// Another process is running this run (it holds the run's lease and heart-beats).
    #[error(
        "experiment run {run_id} is being run by {}; it can be resumed once that process stops (its lease lapses {} s after its last heartbeat)",
        holder.describe(),
        crate::store::LEASE_TTL_MS / 1000
    )]
    Busy { run_id: i64, holder: Box<crate::store::LeaseHolder> },
    /// A job (one suite, arm and seed) stopped; the run is marked failed and can be resumed.
    #[error("{suite} / {arm} / seed {seed_index}: {source}")]
    Job {
        suite: String,
        arm: String,
        seed_index: usize,
        #[source]
        source: Box<JobError>,
    },
}

/// Keeps this process's lease of a run alive: a thread renews it every
/// [`LEASE_HEARTBEAT_MS`](crate::store::LEASE_HEARTBEAT_MS) until dropped, then releases it.
struct LeaseKeeper {
    stop: std::sync::Arc<(Mutex<bool>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
    store: BlockingStore,
    run_id: i64,
    holder: String,
}

impl LeaseKeeper {
    fn start(store: &BlockingStore, run_id: i64, holder: &str) -> LeaseKeeper {
        // the containers this process starts from now on name the run they serve
        crate::suite::swegym::runtime::label_run(run_id);
        let stop = std::sync::Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        let (s, st, h) = (stop.clone(), store.clone(), holder.to_string());
        let thread = std::thread::Builder::new()
            .name("harness-s-lease".into())
            .spawn(move || {
                let (lock, wake) = &*s;
                let mut stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    let every = Duration::from_millis(crate::store::LEASE_HEARTBEAT_MS);
                    stopped = wake.wait_timeout(stopped, every).unwrap_or_else(|p| p.into_inner()).0;
                    if *stopped {
                        break;
                    }
                    match st.renew_run_lease(run_id, &h) {
                        Ok(true) => {}
                        // taken over: the fenced writes refuse from now on and the jobs stop
                        Ok(false) => {
                            tracing::warn!("run {run_id}: this process lost its lease; another coordinator took the run over");
                            break;
                        }
                        // a store that does not answer for a moment: the next beat tries again
                        Err(e) => tracing::warn!("run {run_id}: renewing the lease: {e}"),
                    }
                }
            })
            .ok();
        LeaseKeeper { stop, thread, store: store.clone(), run_id, holder: holder.to_string() }
    }
}

impl Drop for LeaseKeeper {
    fn drop(&mut self) {
        *self.stop.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.stop.1.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = self.store.release_run_lease(self.run_id, &self.holder);
    }
}

/// Why a job stopped.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A checkpoint or record this run stored does not read back.
    #[error(transparent)]
    Record(#[from] crate::records::RecordError),
    #[error("encoding {what}: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("distilling a rescue of task `{task}`: {source}")]
    Distil {
        task: String,
        #[source]
        source: crate::suite::EnvError,
    },
    /// The learner's update failed (an external trainer or the serving endpoint): an
    /// infrastructure error; the job resumes from its last completed update.
    #[error(transparent)]
    Learner(LearnerError),
    #[error("{0}")]
    Setup(String),
    /// A distributed phase failed (the store, or a job that failed on its worker).
    #[error(transparent)]
    Distributed(#[from] DistributedError),
}

fn encode<T: Serialize>(what: &'static str, value: &T) -> Result<serde_json::Value, JobError> {
    serde_json::to_value(value).map_err(|source| JobError::Encode { what, source })
}

/// The runner's salt for [`crate::seed::mix`].
const SALT: u64 = 0x51b1_1e55;

fn mix(parts: &[u64]) -> u64 {
    crate::seed::mix(SALT, parts)
}

/// The experiment's rollouts and rough wall time on a machine of `cores` cores
/// ([`ExperimentConfig::estimate`]), with each suite's split and sibling pool set up as a run
/// sets them up (so a setup error here is the one Start would give).
pub fn estimate(cfg: &ExperimentConfig, cores: usize) -> Result<RolloutEstimate, ExperimentError> {
    let lib = harness_library(cfg).map_err(|e| ExperimentError::Setup(e.to_string()))?;
    let mut sizes = Vec::new();
    for s in &cfg.suites {
        sizes.push(setup_suite(cfg, s, &lib).map_err(|e| ExperimentError::Setup(e.to_string()))?.size());
    }
    Ok(cfg.estimate(&sizes, cores))
}

/// Run (or resume) an experiment. Progress goes to `sink`; `cancel` stops it cleanly after the
/// work in flight, leaving it resumable.
pub fn run_experiment(
    cfg: &ExperimentConfig,
    store: &BlockingStore,
    sink: &dyn EventSink,
    cancel: &AtomicBool,
) -> Result<ExperimentOutcome, ExperimentError> {
    run_experiment_with(cfg, store, sink, cancel, Execution::Local)
}

/// Where an experiment's episodes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Execution {
    /// In this process, one thread per (suite, arm, seed) job up to `workers`.
    Local,
    /// On `harness-s worker` processes claiming them from the (Postgres) store; this process
    /// coordinates, every job at once.
    Distributed,
}

/// [`run_experiment`], with its episodes run where `execution` says.
pub fn run_experiment_with(
    cfg: &ExperimentConfig,
    store: &BlockingStore,
    sink: &dyn EventSink,
    cancel: &AtomicBool,
    execution: Execution,
) -> Result<ExperimentOutcome, ExperimentError> {
    let started = Instant::now();
    if execution == Execution::Distributed && store.store().backend() != crate::store::BackendKind::Postgres {
        return Err(ExperimentError::Setup(format!(
            "--distributed needs a Postgres store (--db postgres://…) that the workers reach; `{}` is SQLite",
            store.location()
        )));
    }
    if cfg.policy.backend != crate::policy::Backend::Builtin {
        // a model's actions are untrusted code: no run without the sandbox (or the user's say-so)
        for name in &cfg.suites {
            if let Some(s) = crate::suite::by_name(name) {
                crate::suite::require_containment(s.as_ref()).map_err(|e| ExperimentError::Setup(e.to_string()))?;
            }
        }
    }
    let lib = harness_library(cfg).map_err(|e| ExperimentError::Setup(e.to_string()))?;
    let mut suites = Vec::new();
    for s in &cfg.suites {
        suites.push(setup_suite(cfg, s, &lib).map_err(|e| ExperimentError::Setup(e.to_string()))?);
    }
    for h in cfg.heldout_families.iter().filter(|_| suites.len() > 1) {
        if !suites.iter().any(|s| s.tasks.iter().any(|t| &t.family == h)) {
            return Err(ExperimentError::Setup(format!("heldout_families: none of the suites ({}) has a family `{h}`", cfg.suites.join(", "))));
        }
    }
    let router = Router::with_llm(&cfg.router.voters, cfg.router.ucb_c, &cfg.router.llm).map_err(|e| ExperimentError::Setup(e.to_string()))?;
    let config_json = serde_json::to_value(cfg).map_err(|e| ExperimentError::Setup(e.to_string()))?;
    // Resume the newest unfinished run of the same configuration, if any.
    let mut resumed = false;
    let mut run_id = None;
    for r in store.runs()? {
        if r.kind == "experiment" && r.name == cfg.name && r.config == config_json {
            if r.status != RunStatus::Finished {
                run_id = Some(r.id);
                resumed = true;
            }
            break;
        }
    }
    // One coordinator per run: this process takes the run's lease (refused while another holds
    // it) and writes through a handle fenced by it.
    let (holder, host, pid) = crate::store::new_holder();
    let take = |id: i64| match store.acquire_run_lease(id, &holder, &host, pid)? {
        Ok(()) => Ok(()),
        Err(by) => Err(ExperimentError::Busy { run_id: id, holder: Box::new(by) }),
    };
    let run_id = match run_id {
        Some(id) => {
            take(id)?;
            store.set_run_status(id, RunStatus::Running)?;
            id
        }
        None => {
            let id = store.create_run(
                &NewRun::new("experiment", cfg.name.clone())
                    .suite(cfg.suites.join(","))
                    .policy(cfg.policy.backend.as_str())
                    .config(config_json.clone()),
            )?;
            take(id)?;
            id
        }
    };
    let fenced = store.fenced(run_id, &holder);
    let _lease = LeaseKeeper::start(&fenced, run_id, &holder);
    let store = &fenced;
    let jobs: Vec<(usize, String, usize)> =
        (0..suites.len()).flat_map(|s| cfg.arms.iter().flat_map(move |a| (0..cfg.seeds.len()).map(move |k| (s, a.clone(), k)))).collect();
    let total_units = jobs.len() * (cfg.iterations + 1);
    // The episodes a running experiment counts its progress against: the estimate's, from the
    // suites as set up here; a resumed run starts from what its store holds.
    let sizes: Vec<SuiteSize> = suites.iter().map(SuiteSetup::size).collect();
    let plan = cfg.estimate(&sizes, 1);
    let stored = if resumed { store.count_episodes(&EpisodeFilter::run(run_id)).unwrap_or(0) } else { 0 };
    let workers = match execution {
        // the coordinator's threads mostly wait for the workers: every job at once
        Execution::Distributed => jobs.len(),
        Execution::Local => {
            let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
            cfg.parallel_jobs(cores, &sizes)
        }
    };
    let plan = Plan {
        done: stored,
        episodes: (plan.episodes_min, plan.episodes_max),
        jobs: jobs.len(),
        workers: workers.min(jobs.len()).max(1),
        searches: if cfg.policy.warm_start_demos > 0 { cfg.seeds.len() * suites.len() } else { 0 },
        seconds_per_search: cfg.policy.warm_start_demos as f64 * super::config::SECONDS_PER_DEMONSTRATION,
    };
    let shared = Shared {
        cfg,
        run_id,
        store,
        sink,
        cancel,
        suites,
        total_units,
        done_units: AtomicUsize::new(0),
        progress: RunProgress::new(run_id, sink, plan),
        error: Mutex::new(None),
        demo_locks: cfg.seeds.iter().map(|_| Mutex::new(())).collect(),
        router,
        queue: (execution == Execution::Distributed).then(|| Coordinator::new(store, run_id)),
    };
    sink.emit(Event::RunStarted { run_id, total: total_units, label: format!("experiment {}", cfg.name) });
    if resumed {
        sink.emit(Event::Message { run_id, text: format!("resuming experiment run {run_id}") });
    }
    let next = AtomicUsize::new(0);
    let states: Mutex<Vec<Option<JobState>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers.min(jobs.len()).max(1) {
            scope.spawn(|| loop {
                if cancel.load(Ordering::Relaxed) || shared.error.lock().map(|e| e.is_some()).unwrap_or(true) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= jobs.len() {
                    break;
                }
                let (s, arm, k) = &jobs[i];
                match run_job(&shared, *s, arm, *k) {
                    Ok(st) => states.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(st),
                    Err(source) => {
                        let e = ExperimentError::Job {
                            suite: shared.suites[*s].suite.name().to_string(),
                            arm: arm.clone(),
                            seed_index: *k,
                            source: Box::new(source),
                        };
                        *shared.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = shared.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
        let _ = store.finish_run(run_id, RunStatus::Failed, &serde_json::json!({"error": e.to_string()}));
        return Err(e);
    }
    let states: Vec<JobState> = states.into_inner().unwrap_or_else(|p| p.into_inner()).into_iter().flatten().collect();
    let finished = states.len() == jobs.len() && states.iter().all(|s| s.finished);
    let outcome = summarise(cfg, run_id, resumed, finished, &states, started.elapsed().as_secs_f64());
    let summary = serde_json::to_value(&outcome).unwrap_or_default();
    if finished && execution == Execution::Distributed {
        store.clear_queue(run_id)?;
    }
    if finished {
        store.finish_run(run_id, RunStatus::Finished, &summary)?;
        sink.emit(Event::RunFinished { run_id, status: "finished".into() });
    } else {
        store.finish_run(run_id, RunStatus::Cancelled, &summary)?;
        sink.emit(Event::RunFinished { run_id, status: "cancelled".into() });
    }
    Ok(outcome)
}

/// One (suite, arm, seed) training run.
fn run_job(sh: &Shared, s: usize, arm: &str, seed_index: usize) -> Result<JobState, JobError> {
    let cfg = sh.cfg;
    let su = &sh.suites[s];
    let suite_name = su.suite.name().to_string();
    let key = job_key(&suite_name, arm, seed_index);
    let seed = cfg.seeds[seed_index];
    let kind = Arm::parse(arm).ok_or_else(|| JobError::Setup(format!("unknown arm `{arm}` (allowed: {})", Arm::names().join(", "))))?;
    let mut st: JobState = match sh.store.state(sh.run_id, &key)? {
        Some(v) => crate::records::parse("job checkpoint", &key, v)?,
        None => JobState { suite: suite_name.clone(), arm: arm.to_string(), seed_index, seed, ..Default::default() },
    };
    let progress =
        JobProgress::new(&sh.progress, &suite_name, arm, seed, cfg.iterations, if kind == Arm::BaseResample { "resamples" } else { "rescues" });
    // what an earlier session evaluated, for the live curves
    progress.evaluations(&st.curve);
    let identity = JobIdentity { run_id: sh.run_id, suite: suite_name.clone(), arm: arm.to_string(), seed, seed_index };
    let learner: Box<dyn Learner + '_> = match &cfg.trainer {
        None => {
            let grammar =
                su.suite.grammar().ok_or_else(|| JobError::Setup(format!("suite `{suite_name}` has no grammar for the built-in policy")))?;
            Box::new(BuiltinLearner::new(BuiltinPolicy::new(grammar), cfg.policy.learning_rate, cfg.policy.weight_decay))
        }
        Some(trainer) => {
            let policy = endpoint_policy(&cfg.policy).map_err(|e| JobError::Setup(e.to_string()))?;
            Box::new(ExternalLearner::new(policy, trainer.clone(), cfg.serving.clone().unwrap_or_default(), identity, sh.store, sh.sink))
        }
    };
    let learner = learner.as_ref();
    learner.load(&st).map_err(JobError::Learner)?;
    if st.finished {
        sh.done_units.fetch_add(cfg.iterations + 1, Ordering::SeqCst);
        progress.enter("finished", cfg.iterations, 0);
        return Ok(st);
    }
    // Drop what an interrupted iteration recorded; it is replayed identically below.
    let next_iter = if st.started { st.iterations_done as u32 + 1 } else { 0 };
    let dropped = sh.store.delete_episodes_from(sh.run_id, &suite_name, arm, seed_index as u32, next_iter)?;
    sh.progress.dropped(dropped);
    let job = Job { sh, su, kind, seed_index, seed, learner, suite_name: suite_name.clone(), progress };
    if !st.started {
        job.warm_start(&mut st)?;
        if kind.routed() {
            st.profiles = job.measure_profiles(0, 0, &mut st.rollouts)?;
            st.anchor = 0;
        }
        let points = job.evaluate(0)?;
        job.progress.evaluations(&points);
        st.curve.extend(points);
        st.started = true;
        learner.save(&mut st);
        job.checkpoint(&st)?;
        job.tick(&st);
    } else {
        sh.done_units.fetch_add(st.iterations_done + 1, Ordering::SeqCst);
    }
    while st.iterations_done < cfg.iterations {
        if sh.cancel.load(Ordering::Relaxed) {
            return Ok(st);
        }
        let it = st.iterations_done + 1;
        if !job.iteration(it, &mut st)? {
            // cancelled part-way: the checkpoint stays at the last whole iteration
            return Ok(st);
        }
        if kind.routed() && it.is_multiple_of(cfg.reanchor_every) && it < cfg.iterations {
            st.anchor += 1;
            st.profiles = job.measure_profiles(it, st.anchor, &mut st.rollouts)?;
        }
        if it.is_multiple_of(cfg.eval_every) || it == cfg.iterations {
            let points = job.evaluate(it)?;
            job.progress.evaluations(&points);
            st.curve.extend(points);
        }
        if it == cfg.iterations {
            if cfg.eval.rank_one {
                st.rank_one = job.rank_one(&st)?;
            }
            st.finished = true;
        }
        st.iterations_done = it;
        learner.save(&mut st);
        job.checkpoint(&st)?;
        job.tick(&st);
        if st.finished {
            job.progress.enter("finished", it, 0);
        }
    }
    Ok(st)
}

struct Job<'a> {
    sh: &'a Shared<'a>,
    su: &'a SuiteSetup,
    /// The arm (its name is `kind.as_str()`; the configuration was checked).
    kind: Arm,
    seed_index: usize,
    seed: u64,
    learner: &'a dyn Learner,
    suite_name: String,
    progress: JobProgress<'a, 'a>,
}

impl Job<'_> {
    fn arm(&self) -> &'static str {
        self.kind.as_str()
    }

    fn ctx(&self, iteration: usize, phase: Phase, split: &str) -> EpisodeContext {
        EpisodeContext::default()
            .with_arm(self.arm())
            .with_seed_index(self.seed_index as u32)
            .with_iteration(iteration as u32)
            .with_phase(phase.as_str())
            .with_split(split)
    }

    /// Run `wants`; their episodes in order, `done(i, episode)` as each finishes. `None` when
    /// the run is cancelled part-way (only where `cancellable`). In this thread, or on the
    /// workers of a distributed run: the same episodes either way.
    fn rollouts(&self, wants: &[Want], cancellable: bool, mut done: impl FnMut(usize, &Episode)) -> Result<Option<Vec<Episode>>, JobError> {
        // every path hands each episode over here, in `wants`' order
        let mut arrived = |i: usize, ep: &Episode| {
            if wants[i].kept {
                self.progress.episode();
            }
            done(i, ep);
        };
        if let Some(queue) = &self.sh.queue {
            let key = job_key(&self.suite_name, self.arm(), self.seed_index);
            let remote = wants
                .iter()
                .map(|w| EpisodeJob {
                    job: key.clone(),
                    policy: PolicyRef::Builtin { version: 0 },
                    suite: self.suite_name.clone(),
                    harness: w.harness.name.clone(),
                    task: w.task.id.clone(),
                    sample: w.sample,
                    seed: w.seed,
                    temperature: w.temperature,
                })
                .collect();
            let cancel = cancellable.then_some(self.sh.cancel);
            return Ok(queue.run(&key, self.learner, remote, cancel, &mut arrived)?);
        }
        let in_flight = self.sh.cfg.policy.episodes_in_flight().min(wants.len()).max(1);
        let mut out = Vec::with_capacity(wants.len());
        if in_flight == 1 {
            for (i, w) in wants.iter().enumerate() {
                if cancellable && self.sh.cancel.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let ep = self.trial(w.task, w.harness, w.sample, w.seed, w.temperature);
                arrived(i, &ep);
                out.push(ep);
            }
            return Ok(Some(out));
        }
        // An endpoint serves many requests at once (and batches them): several episodes run at a
        // time, and `done` still sees them in order, as the loop above gives them.
        let next = AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Episode)>();
        let (suite, policy, cancel) = (self.su.suite.as_ref(), self.learner.policy(), self.sh.cancel);
        std::thread::scope(|scope| {
            for _ in 0..in_flight {
                let (tx, next) = (tx.clone(), &next);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= wants.len() || (cancellable && cancel.load(Ordering::Relaxed)) {
                        break;
                    }
                    let w = &wants[i];
                    if tx.send((i, trial(suite, policy, w.task, w.harness, w.sample, w.seed, w.temperature))).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            let mut early: BTreeMap<usize, Episode> = BTreeMap::new();
            for (i, ep) in rx {
                early.insert(i, ep);
                while let Some(ep) = early.remove(&out.len()) {
                    arrived(out.len(), &ep);
                    out.push(ep);
                }
            }
        });
        Ok((out.len() == wants.len()).then_some(out))
    }

    /// One executor rollout, stored or not (the rank-one inference's base tries are not).
    fn trial(&self, task: &Task, harness: &HarnessSpec, sample: u32, seed: u64, temperature: f32) -> Episode {
        trial(self.su.suite.as_ref(), self.learner.policy(), task, harness, sample, seed, temperature)
    }

    fn meta(&self, iteration: usize) -> BatchMeta {
        BatchMeta { arm: self.arm().to_string(), seed: self.seed, iteration, policy_version: self.learner.version() }
    }

    fn family_of(&self, task_id: &str) -> &str {
        self.su.tasks.iter().find(|t| t.id == task_id).map(|t| t.family.as_str()).unwrap_or("")
    }

    fn save(&self, batch: &[(Episode, EpisodeContext)]) -> Result<Vec<i64>, JobError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.sh.store.insert_episodes(self.sh.run_id, batch)?)
    }

    fn checkpoint(&self, st: &JobState) -> Result<(), JobError> {
        crate::fault::point("checkpoint");
        let v = encode("a job checkpoint", st)?;
        Ok(self.sh.store.set_state(self.sh.run_id, &job_key(&self.suite_name, self.arm(), self.seed_index), &v)?)
    }

    fn tick(&self, st: &JobState) {
        let d = self.sh.done_units.fetch_add(1, Ordering::SeqCst) + 1;
        let total = self.sh.total_units;
        // from the episodes per second measured so far (none before a few seconds of them)
        let eta = self.sh.progress.eta_s(&self.sh.progress.count());
        let success = st.curve.iter().rev().find(|p| p.split == "train").map(|p| p.success).unwrap_or(0.0);
        self.sh.sink.emit(Event::Progress {
            run_id: self.sh.run_id,
            label: format!("{} seed {} it {}", self.arm(), self.seed, st.iterations_done),
            done: d,
            total,
            success_rate: success,
            eta_s: eta,
            unit: Some(ProgressUnit {
                suite: self.suite_name.clone(),
                arm: self.arm().to_string(),
                seed: self.seed,
                iteration: st.iterations_done,
                iterations: self.sh.cfg.iterations,
                rollouts: st.rollouts.total(),
                success,
            }),
        });
    }

    /// Demonstrations: solving action sequences found by searching the policy's grammar on
    /// training tasks under the base harness's frame, at most `warm_start_demos` of them. They
    /// depend only on the seed, so they are searched once per seed and shared by every arm.
    fn warm_start(&self, st: &mut JobState) -> Result<(), JobError> {
        let cfg = self.sh.cfg;
        let want = cfg.policy.warm_start_demos;
        if want == 0 {
            return Ok(());
        }
        self.progress.enter("demonstrations", 0, want);
        let clock = self.progress.demonstrations_start();
        let found = self.demonstrations(want);
        self.progress.demonstrations_end(clock, &self.demos_key(), found.as_ref().is_ok_and(|f| f.1));
        let (demos, _) = found?;
        let base = &self.su.base.name;
        // a search may leave the tool specs out of its contexts (a grammar reads messages only);
        // a trained model sees them, as it does in its rollouts
        let tools = self.su.base.offered_tools(self.su.suite.tools());
        let traces = self.learner.reads_decision_traces();
        let key = self.demos_key();
        let sequences: Vec<TrainSequence> = demos
            .iter()
            .enumerate()
            .map(|(index, d)| {
                let (id, family) = (&d.task_id, self.family_of(&d.task_id));
                let steps = demonstration_steps(d, &tools, traces);
                TrainSequence::new(id, family, &format!("warm-start/{id}"), 1.0, 1.0, 1.0, Source::WarmStart, base, steps)
                    .stored_at(StepsRef::Demonstration { key: key.clone(), index })
            })
            .collect();
        st.rollouts.demo += demos.len() as u64;
        self.record_batch(0, &sequences)?;
        self.learner.warm_start(&sequences, &self.meta(0)).map_err(JobError::Learner)?;
        Ok(())
    }

    fn demos_key(&self) -> String {
        format!("demos/{}/{}", self.suite_name, self.seed)
    }

    /// Store which sequences the update of iteration `it` learns from (a `batch` record), so
    /// that `harness-s export` can write the batch again.
    fn record_batch(&self, it: usize, batch: &[TrainSequence]) -> Result<(), JobError> {
        let manifest = BatchManifest {
            suite: self.suite_name.clone(),
            seed_index: self.seed_index,
            meta: self.meta(it),
            sequences: batch.iter().filter_map(TrainSequence::reference).collect(),
            base_tools: if batch.iter().any(|s| s.info.source == Source::WarmStart) {
                self.su.base.offered_tools(self.su.suite.tools())
            } else {
                Vec::new()
            },
        };
        let body = encode("a batch manifest", &manifest)?;
        let key = format!("{}/{}/{}/{it}", self.suite_name, self.arm(), self.seed_index);
        Ok(self.sh.store.put_record(self.sh.run_id, "batch", &key, &body)?)
    }

    /// The seed's demonstrations, and whether this job searched them (rather than found them stored).
    fn demonstrations(&self, want: usize) -> Result<(Vec<Demonstration>, bool), JobError> {
        let key = self.demos_key();
        // one search per seed, whichever arm gets there first
        let _guard = self.sh.demo_locks[self.seed_index].lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = self.sh.store.state(self.sh.run_id, &key)? {
            // runs of earlier versions stored the bare solutions
            if let Ok(bare) = serde_json::from_value::<Vec<crate::suite::Solution>>(v.clone()) {
                return Ok((bare.into_iter().map(|steps| Demonstration { task_id: String::new(), steps }).collect(), false));
            }
            return Ok((crate::records::parse("demonstrations", &key, v)?, false));
        }
        let mut order = self.su.train.clone();
        shuffle(&mut order, mix(&[self.seed, 0xde305]));
        let mut demos = Vec::new();
        for &t in order.iter().take(want * 3) {
            if demos.len() >= want {
                break;
            }
            let task = &self.su.tasks[t];
            if let (Some(steps), _) = crate::search::solve_with(self.su.suite.as_ref(), &self.su.base, task, 1500, false) {
                demos.push(Demonstration { task_id: task.id.clone(), steps });
                self.progress.step_now(demos.len());
            }
        }
        let v = encode("demonstrations", &demos)?;
        self.sh.store.set_state(self.sh.run_id, &key, &v)?;
        Ok((demos, true))
    }

    /// One training iteration; `Ok(false)` if it was cancelled part-way.
    fn iteration(&self, it: usize, st: &mut JobState) -> Result<bool, JobError> {
        let cfg = self.sh.cfg;
        let b = &cfg.budget;
        let mut order = self.su.train.clone();
        // the same batch for every arm of this seed
        shuffle(&mut order, mix(&[self.seed, it as u64, 0xba7c4]));
        let batch: Vec<usize> = order.into_iter().take(b.batch_tasks.min(self.su.train.len())).collect();
        let tasks: Vec<&Task> = batch.iter().map(|&t| &self.su.tasks[t]).collect();
        let mut examples: Vec<TrainSequence> = Vec::new();
        let mut to_save: Vec<(Episode, EpisodeContext)> = Vec::new();
        let mut successes = 0usize;
        let mut tries = 0usize;
        let temp = cfg.policy.temperature;
        // Every task's base tries at once (they depend on the policy alone), then every all-fail
        // task's extra tries at once (they depend on the base tries), then the groups in batch
        // order: the episodes are the ones a task-by-task loop would run, and so are the results.
        self.progress.enter("rollouts", it, batch.len());
        let n = b.base_tries.max(1);
        let wants: Vec<Want> = tasks
            .iter()
            .flat_map(|&task| {
                let tseed = hash_str(&task.id);
                (0..b.base_tries as u32).map(move |k| Want::kept(task, &self.su.base, k, mix(&[self.seed, it as u64, tseed, k as u64]), temp))
            })
            .collect();
        let mut any_ok = false;
        let done_base = |i: usize, ep: &Episode| {
            any_ok |= ep.success();
            if (i + 1).is_multiple_of(n) {
                self.progress.task(!any_ok);
                any_ok = false;
                self.progress.step((i + 1) / n);
            }
        };
        let Some(base) = self.rollouts(&wants, true, done_base)? else { return Ok(false) };
        let mut base = base.into_iter();
        let groups: Vec<Vec<Episode>> = tasks.iter().map(|_| base.by_ref().take(b.base_tries).collect()).collect();
        // what each all-fail task gets: extra base tries or a rescue plan, and its share of `extra`
        let resample = (b.rescue_siblings * b.rescue_tries) as u32;
        let mut plans: Vec<Option<RescuePlan>> = Vec::new();
        let mut extra_wants: Vec<Want> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        for (i, (&task, group)) in tasks.iter().zip(&groups).enumerate() {
            let before = extra_wants.len();
            let mut plan = None;
            if !group.iter().any(|e| e.success()) {
                let tseed = hash_str(&task.id);
                match self.kind {
                    Arm::PolicyOnly => {}
                    Arm::BaseResample => extra_wants.extend((0..resample).map(|k| {
                        Want::kept(task, &self.su.base, b.base_tries as u32 + k, mix(&[self.seed, it as u64, tseed, 0x7e5a, k as u64]), temp)
                    })),
                    _ => {
                        let p = self.plan_rescue(it, task, group, st);
                        extra_wants.extend(p.wants(self, it, task));
                        plan = Some(p);
                    }
                }
            }
            owner.extend(std::iter::repeat_n(i, extra_wants.len() - before));
            plans.push(plan);
        }
        let mut extra = Vec::new().into_iter();
        if !extra_wants.is_empty() {
            self.progress.enter("rescues", it, batch.len());
            let Some(eps) = self.rollouts(&extra_wants, true, |i, _| self.progress.step(owner[i]))? else { return Ok(false) };
            extra = eps.into_iter();
        }
        for (i, (&task, mut group)) in tasks.iter().zip(groups).enumerate() {
            st.rollouts.base += group.len() as u64;
            successes += group.iter().filter(|e| e.success()).count();
            tries += group.len();
            let any = group.iter().any(|e| e.success());
            let group_id = task_record_key(&self.suite_name, self.arm(), self.seed_index, it, &task.id);
            if any {
                grpo(&group, task, &group_id, to_save.len(), &mut examples);
                for e in group {
                    to_save.push((e, self.ctx(it, Phase::Train, TRAIN_SPLIT)));
                }
                continue;
            }
            st.all_fail_tasks += 1;
            let mine: Vec<Episode> = extra.by_ref().take(owner.iter().filter(|&&o| o == i).count()).collect();
            match self.kind {
                Arm::PolicyOnly => {}
                Arm::BaseResample => {
                    st.rollouts.resample += mine.len() as u64;
                    if mine.iter().any(|e| e.success()) {
                        st.rescued_tasks += 1;
                    }
                    let mut all = std::mem::take(&mut group);
                    let first_extra = all.len();
                    all.extend(mine);
                    grpo(&all, task, &group_id, to_save.len(), &mut examples);
                    for (i, e) in all.into_iter().enumerate() {
                        to_save.push((e, self.ctx(it, if i < first_extra { Phase::Train } else { Phase::Resample }, TRAIN_SPLIT)));
                    }
                    continue;
                }
                _ => {
                    let plan = plans[i].take().ok_or_else(|| JobError::Setup(format!("no rescue plan for task `{}`", task.id)))?;
                    if self.rescue(it, task, &group_id, (&group, to_save.len()), plan, mine, st, &mut examples)? {
                        st.rescued_tasks += 1;
                    }
                }
            }
            for e in group {
                to_save.push((e, self.ctx(it, Phase::Train, TRAIN_SPLIT)));
            }
        }
        self.progress.enter("update", it, 0);
        let ids = self.save(&to_save)?;
        for seq in &mut examples {
            if let Some(StepsRef::Unsaved { index }) = seq.steps_ref {
                seq.steps_ref = ids.get(index).map(|&id| StepsRef::Episode { id });
            }
        }
        if !examples.is_empty() {
            self.record_batch(it, &examples)?;
            self.learner.update(&examples, &self.meta(it)).map_err(JobError::Learner)?;
            crate::fault::point("update");
        }
        st.train_success.push(if tries > 0 { successes as f64 / tries as f64 } else { 0.0 });
        Ok(true)
    }

    /// Which siblings an all-fail task tries, and how often: the router's choice (harness-s,
    /// keep-scaffold), k random siblings, or every sibling in turn.
    fn plan_rescue(&self, it: usize, task: &Task, failed: &[Episode], st: &JobState) -> RescuePlan {
        let b = &self.sh.cfg.budget;
        let tseed = hash_str(&task.id);
        let mut rng = SplitMix(mix(&[self.seed, it as u64, tseed, 0x20e7e]));
        let signature = failure_signature(&failed[0]);
        let query =
            RouteQuery { task_id: task.id.clone(), family: task.family.clone(), signature: signature.clone(), summary: failure_summary(&failed[0]) };
        let sib_names: Vec<String> = self.su.siblings.iter().map(|s| s.name.clone()).collect();
        // (sibling, tries)
        let mut tries: Vec<(String, usize)> = Vec::new();
        let mut decision = None;
        match self.kind {
            Arm::HarnessS | Arm::KeepScaffold => {
                let d = self.sh.router.route(&query, &st.profiles, b.rescue_siblings, &mut rng);
                tries = d.chosen.iter().map(|s| (s.clone(), b.rescue_tries)).collect();
                decision = Some(d);
            }
            Arm::RandomRescue => {
                let mut names = sib_names.clone();
                shuffle(&mut names, rng.next_u64());
                tries = names.into_iter().take(b.rescue_siblings).map(|s| (s, b.rescue_tries)).collect();
            }
            Arm::AllSiblings => {
                let total = b.rescue_siblings * b.rescue_tries;
                let start = (rng.next_u64() % sib_names.len().max(1) as u64) as usize;
                let mut counts: BTreeMap<String, usize> = BTreeMap::new();
                for i in 0..total {
                    *counts.entry(sib_names[(start + i) % sib_names.len()].clone()).or_default() += 1;
                }
                tries = counts.into_iter().collect();
            }
            _ => {}
        }
        RescuePlan { query, tries, decision }
    }

    /// Distil the successes among an all-fail task's sibling tries (`episodes`, in the plan's
    /// order) and record the routing decision. Returns whether any sibling rescued the task.
    #[allow(clippy::too_many_arguments)]
    fn rescue(
        &self,
        it: usize,
        task: &Task,
        group_id: &str,
        // the failed base tries, and where the first of them will be in the iteration's save list
        (failed, first): (&[Episode], usize),
        plan: RescuePlan,
        episodes: Vec<Episode>,
        st: &mut JobState,
        examples: &mut Vec<TrainSequence>,
    ) -> Result<bool, JobError> {
        let cfg = self.sh.cfg;
        let RescuePlan { query, tries: plan, decision } = plan;
        let mode = if self.kind == Arm::KeepScaffold {
            DistillMode::KeepScaffold
        } else {
            DistillMode::parse(&cfg.distill.mode).unwrap_or(DistillMode::Strip)
        };
        let mut any = false;
        let mut rescued_by: Vec<(String, bool)> = Vec::new();
        // each successful try's distilled steps, in the context of the harness they were distilled to
        let mut rescues: Vec<(crate::suite::Solution, String, StepsRef)> = Vec::new();
        let mut k = 0u64;
        let mut episodes = episodes.into_iter();
        for (sib, tries) in &plan {
            if !self.su.siblings.iter().any(|s| &s.name == sib) {
                continue;
            }
            let mut ok = false;
            for _ in 0..*tries {
                let Some(ep) = episodes.next() else { break };
                k += 1;
                st.rollouts.rescue += 1;
                let success = ep.success();
                let mut distilled = None;
                if success {
                    ok = true;
                    let d = distil(mode, &ep, &self.su.base, self.su.suite.as_ref(), task, cfg.distill.weight)
                        .map_err(|source| JobError::Distil { task: task.id.clone(), source })?;
                    let key = format!("{}/{k}", task_record_key(&self.suite_name, self.arm(), self.seed_index, it, &task.id));
                    let steps = d.examples.iter().map(|x| (x.context.clone(), x.target.clone())).collect();
                    rescues.push((steps, d.to_harness.clone(), StepsRef::Distilled { key: key.clone() }));
                    distilled = Some((d, key));
                }
                let ids = self.save(&[(ep, self.ctx(it, Phase::Rescue, TRAIN_SPLIT))])?;
                if let (Some((d, key)), Some(id)) = (distilled, ids.first()) {
                    let body = serde_json::json!({"rescue_episode": id, "task_id": task.id, "arm": self.arm(), "seed_index": self.seed_index, "iteration": it, "sibling": sib, "distilled": d});
                    self.sh.store.put_record(self.sh.run_id, "distilled", &key, &body)?;
                }
            }
            any |= ok;
            rescued_by.push((sib.clone(), ok));
        }
        let w = cfg.distill.weight;
        let distilled = |steps, harness: &str, adv, at| {
            TrainSequence::new(&task.id, &task.family, group_id, 1.0, adv, w, Source::RescueDistilled, harness, steps).stored_at(at)
        };
        if cfg.distill.objective == "sft" {
            examples.extend(rescues.into_iter().map(|(steps, harness, at)| distilled(steps, &harness, 1.0, at)));
        } else if !rescues.is_empty() {
            // LUFFY-style: the rescues join the failed group as off-policy successes
            let failed: Vec<(usize, &Episode)> = failed.iter().enumerate().filter(|(_, e)| e.counts()).collect();
            let rewards: Vec<f64> = failed.iter().map(|_| 0.0).chain(rescues.iter().map(|_| 1.0)).collect();
            let adv = group_advantages(&rewards);
            for ((i, e), a) in failed.iter().zip(&adv) {
                push_episode(e, task, group_id, *a, first + i, examples);
            }
            for ((steps, harness, at), a) in rescues.into_iter().zip(&adv[failed.len()..]) {
                examples.push(distilled(steps, &harness, *a, at));
            }
        }
        let decision = match decision {
            Some(mut d) => {
                d.rescued = rescued_by;
                d
            }
            // arms without a router: which siblings were tried, and whether they rescued
            None => RoutingDecision {
                query,
                anchor: st.anchor,
                policy_version: self.learner.version(),
                rankings: Vec::new(),
                aggregate: Vec::new(),
                chosen: plan.iter().map(|p| p.0.clone()).collect(),
                rescued: rescued_by,
                abstained: Vec::new(),
            },
        };
        let key = task_record_key(&self.suite_name, self.arm(), self.seed_index, it, &task.id);
        let body = RouteRecord::body(&decision, self.arm(), self.seed_index, it)
            .map_err(|source| JobError::Encode { what: "a routing decision", source })?;
        self.sh.store.put_record(self.sh.run_id, "route", &key, &body)?;
        Ok(any)
    }

    /// Paired base-vs-sibling rollouts of the current policy on the probe set.
    fn measure_profiles(&self, it: usize, anchor: usize, rollouts: &mut Rollouts) -> Result<Vec<BehaviorProfile>, JobError> {
        let cfg = self.sh.cfg;
        let mut probe = self.su.train.clone();
        shuffle(&mut probe, mix(&[self.seed, 0x970be]));
        probe.truncate(cfg.budget.probe_tasks.min(probe.len()));
        let version = self.learner.version();
        let mut profiles: Vec<BehaviorProfile> = self
            .su
            .siblings
            .iter()
            .map(|s| BehaviorProfile {
                sibling: s.name.clone(),
                specialty: s.specialty.clone().unwrap_or_default(),
                policy_version: version,
                anchor,
                ..Default::default()
            })
            .collect();
        self.progress.enter("probing", it, probe.len());
        // per probe task: the base try, then each sibling's, all with the same seed
        let per = 1 + self.su.siblings.len();
        let wants: Vec<Want> = probe
            .iter()
            .flat_map(|&t| {
                let task = &self.su.tasks[t];
                let sd = mix(&[self.seed, anchor as u64, hash_str(&task.id), 0x9b0]);
                std::iter::once(&self.su.base).chain(&self.su.siblings).map(move |h| Want::kept(task, h, 0, sd, cfg.policy.temperature))
            })
            .collect();
        let episodes = self.rollouts(&wants, false, |i, _| self.progress.step(i / per))?.unwrap_or_default();
        let mut episodes = episodes.into_iter();
        let mut to_save = Vec::new();
        for &t in &probe {
            let task = &self.su.tasks[t];
            let Some(base) = episodes.next() else { break };
            rollouts.probe += 1;
            let sig = failure_signature(&base);
            for profile in profiles.iter_mut() {
                let Some(ep) = episodes.next() else { break };
                rollouts.probe += 1;
                profile.record(&task.family, &sig, base.success(), ep.success());
                to_save.push((ep, self.ctx(it, Phase::Probe, TRAIN_SPLIT)));
            }
            to_save.push((base, self.ctx(it, Phase::Probe, TRAIN_SPLIT)));
        }
        self.save(&to_save)?;
        for p in &mut profiles {
            p.summarise();
            let key = profile_key(&self.suite_name, self.arm(), self.seed_index, anchor, &p.sibling);
            let body =
                ProfileRecord::body(p, self.arm(), self.seed_index, it).map_err(|source| JobError::Encode { what: "a behaviour profile", source })?;
            self.sh.store.put_record(self.sh.run_id, "profile", &key, &body)?;
        }
        Ok(profiles)
    }

    fn eval_tasks(&self) -> Vec<(&'static str, Vec<usize>)> {
        let cfg = self.sh.cfg;
        let mut train = self.su.train.clone();
        if cfg.eval.train_tasks > 0 && cfg.eval.train_tasks < train.len() {
            shuffle(&mut train, mix(&[0xe7a1]));
            train.truncate(cfg.eval.train_tasks);
            train.sort();
        }
        let mut v = vec![("train", train)];
        if !self.su.heldout.is_empty() {
            let mut heldout = self.su.heldout.clone();
            if cfg.eval.heldout_tasks > 0 && cfg.eval.heldout_tasks < heldout.len() {
                shuffle(&mut heldout, mix(&[0xe7a2]));
                heldout.truncate(cfg.eval.heldout_tasks);
                heldout.sort();
            }
            v.push(("heldout", heldout));
        }
        v
    }

    /// Base-harness evaluation on training and held-out families.
    fn evaluate(&self, it: usize) -> Result<Vec<EvalPoint>, JobError> {
        let cfg = self.sh.cfg;
        let mut points = Vec::new();
        let mut to_save = Vec::new();
        let splits = self.eval_tasks();
        self.progress.enter("evaluation", it, splits.iter().map(|(_, idx)| idx.len()).sum());
        let wants: Vec<Want> = splits
            .iter()
            .flat_map(|(_, idx)| idx.iter())
            .map(|&t| {
                let task = &self.su.tasks[t];
                Want::kept(task, &self.su.base, 0, mix(&[self.seed, 0xe7a1, hash_str(&task.id)]), cfg.eval.temperature)
            })
            .collect();
        let episodes = self.rollouts(&wants, false, |i, _| self.progress.step(i + 1))?.unwrap_or_default();
        let mut episodes = episodes.into_iter();
        for (split, idx) in splits {
            let mut per_task = BTreeMap::new();
            for &t in &idx {
                let task = &self.su.tasks[t];
                let Some(ep) = episodes.next() else { break };
                per_task.insert(task.id.clone(), ep.success());
                to_save.push((ep, self.ctx(it, Phase::Eval, split)));
            }
            let n = per_task.len();
            let s = per_task.values().filter(|v| **v).count();
            points.push(EvalPoint { iteration: it, split: split.into(), success: if n > 0 { s as f64 / n as f64 } else { 0.0 }, tasks: n, per_task });
        }
        crate::fault::point("evaluation");
        self.save(&to_save)?;
        Ok(points)
    }

    /// Rank-one inference with this job's router (or, for arms without one, fresh profiles).
    fn rank_one(&self, st: &JobState) -> Result<Vec<RankOne>, JobError> {
        let cfg = self.sh.cfg;
        if self.su.siblings.is_empty() {
            return Ok(Vec::new());
        }
        let mut rollouts = Rollouts::default();
        let profiles = if st.profiles.is_empty() { self.measure_profiles(cfg.iterations, 99, &mut rollouts)? } else { st.profiles.clone() };
        let router = &self.sh.router;
        let it = cfg.iterations;
        let temp = cfg.policy.temperature;
        let mut out = Vec::new();
        let mut to_save = Vec::new();
        let splits = self.eval_tasks();
        let all: Vec<&Task> = splits.iter().flat_map(|(_, idx)| idx.iter().map(|&t| &self.su.tasks[t])).collect();
        self.progress.enter("rank_one", it, all.len());
        // first every task's base try (not stored: a trial, not an episode of the progress
        // count), then for each failure the router's rank-one sibling and a second base try
        let firsts: Vec<Want> =
            all.iter().map(|&task| Want::trial(task, &self.su.base, 0, mix(&[self.seed, 0x4a1, hash_str(&task.id)]), temp)).collect();
        let firsts = self.rollouts(&firsts, false, |i, _| self.progress.step(i + 1))?.unwrap_or_default();
        let mut seconds: Vec<Want> = Vec::new();
        // per task: whether it was routed to a sibling
        let mut routed: Vec<bool> = Vec::new();
        for (&task, first) in all.iter().zip(&firsts) {
            if first.success() {
                routed.push(false);
                continue;
            }
            let tseed = hash_str(&task.id);
            let q = RouteQuery { task_id: task.id.clone(), family: task.family.clone(), signature: failure_signature(first), summary: String::new() };
            let mut rng = SplitMix(mix(&[self.seed, 0x4a2, tseed]));
            let d = router.route(&q, &profiles, 1, &mut rng);
            let spec = d.chosen.first().and_then(|n| self.su.siblings.iter().find(|s| &s.name == n));
            if let Some(spec) = spec {
                seconds.push(Want::kept(task, spec, 1, mix(&[self.seed, 0x4a3, tseed]), temp));
            }
            routed.push(spec.is_some());
            seconds.push(Want::trial(task, &self.su.base, 1, mix(&[self.seed, 0x4a3, tseed]), temp));
        }
        let seconds = self.rollouts(&seconds, false, |_, _| {})?.unwrap_or_default();
        let (mut firsts, mut seconds, mut routed) = (firsts.into_iter(), seconds.into_iter(), routed.into_iter());
        for (split, idx) in splits {
            let (mut routed_ok, mut base_ok, mut r_roll, mut b_roll) = (0usize, 0usize, 0u64, 0u64);
            for _ in &idx {
                let (Some(first), Some(was_routed)) = (firsts.next(), routed.next()) else { break };
                r_roll += 1;
                b_roll += 1;
                if first.success() {
                    routed_ok += 1;
                    base_ok += 1;
                    continue;
                }
                if was_routed {
                    let Some(ep) = seconds.next() else { break };
                    r_roll += 1;
                    if ep.success() {
                        routed_ok += 1;
                    }
                    to_save.push((ep, self.ctx(it, Phase::Rank1, split)));
                }
                let Some(again) = seconds.next() else { break };
                b_roll += 1;
                if again.success() {
                    base_ok += 1;
                }
            }
            let n = idx.len().max(1) as f64;
            out.push(RankOne {
                split: split.into(),
                routed: routed_ok as f64 / n,
                base_only: base_ok as f64 / n,
                rollouts_routed: r_roll,
                rollouts_base_only: b_roll,
            });
        }
        self.save(&to_save)?;
        Ok(out)
    }
}

/// One episode a job wants run: what [`run_episode`] needs beyond the job's suite and policy.
#[derive(Clone, Copy)]
pub(crate) struct Want<'t> {
    pub task: &'t Task,
    pub harness: &'t HarnessSpec,
    pub sample: u32,
    pub seed: u64,
    pub temperature: f32,
    /// An episode the store keeps (it counts in the live progress), or a trial that is not.
    pub kept: bool,
}

impl<'t> Want<'t> {
    fn kept(task: &'t Task, harness: &'t HarnessSpec, sample: u32, seed: u64, temperature: f32) -> Self {
        Want { task, harness, sample, seed, temperature, kept: true }
    }

    fn trial(task: &'t Task, harness: &'t HarnessSpec, sample: u32, seed: u64, temperature: f32) -> Self {
        Want { task, harness, sample, seed, temperature, kept: false }
    }
}

/// An all-fail task's rescue: the query the router saw, the siblings with their tries, and the
/// router's decision (arms with a router).
struct RescuePlan {
    query: RouteQuery,
    tries: Vec<(String, usize)>,
    decision: Option<RoutingDecision>,
}

impl RescuePlan {
    /// The sibling tries, in the plan's order (a sibling the suite does not have is skipped).
    fn wants<'t>(&self, job: &'t Job<'_>, it: usize, task: &'t Task) -> Vec<Want<'t>> {
        let tseed = hash_str(&task.id);
        let mut k = 0u64;
        let mut out = Vec::new();
        for (sib, tries) in &self.tries {
            let Some(spec) = job.su.siblings.iter().find(|s| &s.name == sib) else { continue };
            for _ in 0..*tries {
                out.push(Want::kept(task, spec, 100 + k as u32, mix(&[job.seed, it as u64, tseed, 0x5e5c, k]), job.sh.cfg.policy.temperature));
                k += 1;
            }
        }
        out
    }
}

/// One executor rollout of `policy` on `task` under `harness`.
fn trial(suite: &dyn Suite, policy: &dyn Policy, task: &Task, harness: &HarnessSpec, sample: u32, seed: u64, temperature: f32) -> Episode {
    let ep = run_episode(&EpisodeRequest { suite, harness, task, policy, sample, seed, temperature, cancel: None });
    crate::fault::point("rollout");
    ep
}

/// Group-relative advantages `(r - mean) / std`; all zero when the group has no spread.
fn group_advantages(r: &[f64]) -> Vec<f32> {
    let m = mean(r);
    let var = r.iter().map(|x| (x - m).powi(2)).sum::<f64>() / r.len().max(1) as f64;
    let sd = var.sqrt();
    if sd < 1e-9 {
        return vec![0.0; r.len()];
    }
    r.iter().map(|x| ((x - m) / sd) as f32).collect()
}

/// The steps of `e` the update trains on: those that made a call.
pub(crate) fn episode_steps(e: &Episode) -> Vec<(Context, AssistantTurn)> {
    e.steps.iter().filter(|s| !s.output.tool_calls.is_empty()).map(|s| (s.context.clone(), s.output.clone())).collect()
}

/// A demonstration's steps as a learner sees them: with the base harness's tool specs where the
/// search left them out (a grammar reads messages only; a model sees the tools, as in its
/// rollouts), and without the grammar's decision trace unless the learner reads it (the next
/// step's context shows the call without it).
pub(crate) fn demonstration_steps(d: &Demonstration, tools: &[ToolSpec], traces: bool) -> Vec<(Context, AssistantTurn)> {
    d.steps
        .iter()
        .cloned()
        .map(|(mut c, mut t)| {
            if c.tools.is_empty() {
                c.tools = tools.to_vec();
            }
            if !traces {
                t.content.clear();
                t.raw.clear();
            }
            (c, t)
        })
        .collect()
}

/// The steps of `e` that made a call, as a rollout sequence of advantage `adv` (none when the
/// advantage is zero: it would teach nothing); `index` is the episode's place in the iteration's
/// save list.
fn push_episode(e: &Episode, task: &Task, group_id: &str, adv: f32, index: usize, out: &mut Vec<TrainSequence>) {
    if adv == 0.0 {
        return;
    }
    let seq = TrainSequence::new(&task.id, &task.family, group_id, e.reward(), adv, 1.0, Source::Rollout, &e.harness, episode_steps(e));
    out.push(seq.stored_at(StepsRef::Unsaved { index }));
}

/// GRPO: group-relative advantages for every step of every episode (infrastructure failures
/// excluded); the group is saved from position `first` of the iteration's save list.
fn grpo(group: &[Episode], task: &Task, group_id: &str, first: usize, out: &mut Vec<TrainSequence>) {
    for (i, a) in group_members(group) {
        push_episode(&group[i], task, group_id, a, first + i, out);
    }
}

/// A GRPO group's members — the tries that count ([`Episode::counts`]: all but infrastructure
/// errors and cancelled tries) — by their index in `group`, with their group-relative advantages.
pub fn group_members(group: &[Episode]) -> Vec<(usize, f32)> {
    let members: Vec<usize> = (0..group.len()).filter(|&i| group[i].counts()).collect();
    let rewards: Vec<f64> = members.iter().map(|&i| group[i].reward()).collect();
    members.into_iter().zip(group_advantages(&rewards)).collect()
}

fn last_point<'a>(st: &'a JobState, split: &str) -> Option<&'a EvalPoint> {
    st.curve.iter().rev().find(|p| p.split == split)
}

/// Final numbers over seeds, with the paired bootstrap on held-out tasks.
fn summarise(cfg: &ExperimentConfig, run_id: i64, resumed: bool, finished: bool, states: &[JobState], wall_s: f64) -> ExperimentOutcome {
    let mut arms: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut executor_rollouts = BTreeMap::new();
    let mut detail: BTreeMap<String, Rollouts> = BTreeMap::new();
    let mut rank_one: BTreeMap<String, Vec<RankOne>> = BTreeMap::new();
    let mut all_fail = BTreeMap::new();
    let mut curves = BTreeMap::new();
    for arm in &cfg.arms {
        let of_arm: Vec<&JobState> = states.iter().filter(|s| &s.arm == arm).collect();
        let mut splits = BTreeMap::new();
        for split in ["train", "heldout"] {
            let vals: Vec<f64> = of_arm.iter().filter_map(|s| last_point(s, split).map(|p| p.success)).collect();
            if !vals.is_empty() {
                splits.insert(split.to_string(), mean(&vals));
            }
        }
        arms.insert(arm.clone(), splits);
        let mut r = Rollouts::default();
        for s in &of_arm {
            r.base += s.rollouts.base;
            r.rescue += s.rollouts.rescue;
            r.resample += s.rollouts.resample;
            r.probe += s.rollouts.probe;
            r.demo += s.rollouts.demo;
        }
        executor_rollouts.insert(arm.clone(), r.training());
        all_fail.insert(arm.clone(), of_arm.iter().map(|s| s.all_fail_tasks).sum());
        let mut by_it: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for s in &of_arm {
            for p in s.curve.iter().filter(|p| p.split == "train") {
                by_it.entry(p.iteration).or_default().push(p.success);
            }
        }
        curves.insert(arm.clone(), by_it.into_iter().map(|(i, v)| (i, mean(&v))).collect());
        detail.insert(arm.clone(), r);
        if let Some(s) = of_arm.first() {
            // mean over seeds, per split
            let mut acc: Vec<RankOne> = s.rank_one.iter().map(|r| RankOne { split: r.split.clone(), ..Default::default() }).collect();
            for s in &of_arm {
                for (a, r) in acc.iter_mut().zip(&s.rank_one) {
                    a.routed += r.routed / of_arm.len() as f64;
                    a.base_only += r.base_only / of_arm.len() as f64;
                    a.rollouts_routed += r.rollouts_routed;
                    a.rollouts_base_only += r.rollouts_base_only;
                }
            }
            rank_one.insert(arm.clone(), acc);
        }
    }
    let delta = |arm: &str, baseline: &str| -> Option<Delta> {
        let split = if cfg.heldout_families.is_empty() { "train" } else { "heldout" };
        // by (suite, seed): a run of several suites pools their tasks
        let per_seed = |a: &str| -> BTreeMap<(&str, usize), &EvalPoint> {
            states.iter().filter(|s| s.arm == a).filter_map(|s| last_point(s, split).map(|p| ((s.suite.as_str(), s.seed_index), p))).collect()
        };
        let (xa, xb) = (per_seed(arm), per_seed(baseline));
        if xa.is_empty() || xb.is_empty() {
            return None;
        }
        // per task: mean over seeds of the paired difference
        let mut diffs: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
        for (k, pa) in &xa {
            let Some(pb) = xb.get(k) else { continue };
            for (t, sa) in &pa.per_task {
                if let Some(sb) = pb.per_task.get(t) {
                    diffs.entry((k.0, t.as_str())).or_default().push(*sa as i32 as f64 - *sb as i32 as f64);
                }
            }
        }
        let d: Vec<f64> = diffs.values().map(|v| mean(v)).collect();
        let (lo, hi) = bootstrap_ci(&d, 2000, 0xb007);
        Some(Delta { arm: arm.into(), baseline: baseline.into(), mean: mean(&d), ci95: [lo, hi], tasks: d.len() })
    };
    let routed = Arm::HarnessS.as_str();
    let heldout_delta = delta(routed, Arm::PolicyOnly.as_str());
    let deltas: Vec<Delta> = cfg.arms.iter().filter(|a| a.as_str() != routed).filter_map(|a| delta(routed, a)).collect();
    let _ = EpisodeFilter::default();
    ExperimentOutcome {
        run_id,
        resumed,
        finished,
        arms,
        heldout_delta,
        deltas,
        executor_rollouts,
        rollouts_detail: detail,
        rank_one,
        all_fail_tasks: all_fail,
        curves,
        wall_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::batch::{flatten, lines, BatchLine};
    use crate::harness::HarnessLibrary;
    use crate::message::{Origin, Role};
    use crate::suite::Suite;

    struct Bench {
        suite: Box<dyn Suite>,
        tasks: Vec<Task>,
        lib: HarnessLibrary,
        policy: BuiltinPolicy,
    }

    fn bench() -> Bench {
        let suite = crate::suite::by_name("dbbench").unwrap();
        let tasks = suite.bundled_tasks().unwrap();
        let policy = BuiltinPolicy::new(suite.grammar().unwrap());
        let lib = HarnessLibrary::builtin().unwrap();
        // warm-started as the runner does, so that groups have spread
        let base = lib.get("dbbench", "base").unwrap().spec.clone();
        let demos: Vec<crate::policy::builtin::TrainExample> = tasks
            .iter()
            .step_by(7)
            .take(30)
            .filter_map(|t| crate::search::solve_with(suite.as_ref(), &base, t, 1500, false).0)
            .flatten()
            .map(|(context, target)| crate::policy::builtin::TrainExample { context, target, weight: 1.0 })
            .collect();
        for _ in 0..20 {
            policy.train_decayed(&demos, 2.0, crate::policy::builtin::WEIGHT_DECAY);
        }
        Bench { suite, tasks, lib, policy }
    }

    fn episode(b: &Bench, task: &Task, harness: &HarnessSpec, seed: u64) -> Episode {
        run_episode(&EpisodeRequest { suite: b.suite.as_ref(), harness, task, policy: &b.policy, sample: 0, seed, temperature: 1.0, cancel: None })
    }

    fn meta() -> BatchMeta {
        BatchMeta { arm: "harness-s".into(), seed: 1, iteration: 3, policy_version: 2 }
    }

    #[test]
    fn batch_lines_carry_the_advantages_the_built_in_learner_trains_with() {
        let b = bench();
        let base = b.lib.get("dbbench", "base").unwrap().spec.clone();
        // groups of real rollouts, some with spread
        let mut checked = 0;
        for task in b.tasks.iter().take(40) {
            let group: Vec<Episode> = (0..4).map(|k| episode(&b, task, &base, 100 + k)).collect();
            let mut batch = Vec::new();
            grpo(&group, task, "g", 0, &mut batch);
            let rewards: Vec<f64> = group.iter().map(|e| e.reward()).collect();
            let adv = group_advantages(&rewards);
            // one sequence per episode with a non-zero advantage, in the group's order
            let expected: Vec<f32> = adv
                .iter()
                .zip(&group)
                .filter(|(a, e)| **a != 0.0 && e.steps.iter().any(|s| !s.output.tool_calls.is_empty()))
                .map(|(a, _)| *a)
                .collect();
            let got: Vec<f32> = batch.iter().map(|s| s.info.advantage).collect();
            assert_eq!(got, expected, "{}", task.id);
            // the built-in learner's example weights are the lines' weight × advantage
            let examples = flatten(&batch);
            let ls: Vec<BatchLine> = lines(&batch, &meta());
            let mut k = 0;
            for l in &ls {
                let targets = l.messages.iter().filter(|m| m["role"] == "assistant" && m["weight"] == 1).count();
                for _ in 0..targets {
                    assert_eq!(examples[k].weight, l.info.weight * l.info.advantage);
                    k += 1;
                }
                assert_eq!(l.messages.last().unwrap()["weight"], 1, "a line ends with a target");
                assert_eq!(l.info.source, Source::Rollout);
                assert_eq!((l.meta.arm.as_str(), l.meta.seed, l.meta.iteration, l.meta.policy_version), ("harness-s", 1, 3, 2));
            }
            assert_eq!(k, examples.len(), "every trained step is a target in exactly one line");
            checked += ls.len();
        }
        assert!(checked > 0, "some groups had spread");
    }

    #[test]
    fn a_strip_mode_sequence_holds_no_text_only_the_sibling_added() {
        let b = bench();
        let base = b.lib.get("dbbench", "base").unwrap().spec.clone();
        let mut compared = 0;
        for sib in b.lib.siblings("dbbench", "base") {
            for task in b.tasks.iter().take(12) {
                let rescue = episode(&b, task, &sib.spec, 7);
                let under_base = episode(&b, task, &base, 7);
                // text a sibling hook put into the policy's context, and that the base harness never shows
                let base_text: String = under_base.steps.iter().flat_map(|s| s.context.messages.iter().map(|m| m.content.clone())).collect();
                let sibling_only: Vec<String> = rescue
                    .steps
                    .iter()
                    .flat_map(|s| s.context.messages.iter())
                    .filter(|m| matches!(m.origin, Origin::Hook { .. }) && m.role != Role::Assistant && m.content.len() > 12)
                    .map(|m| m.content.clone())
                    .filter(|c| !base_text.contains(c.as_str()))
                    .collect();
                if sibling_only.is_empty() {
                    continue;
                }
                let d = crate::distil::distil(DistillMode::Strip, &rescue, &base, b.suite.as_ref(), task, 1.0).unwrap();
                assert_eq!(d.to_harness, "base");
                let seq = TrainSequence::new(
                    &task.id,
                    &task.family,
                    "g",
                    1.0,
                    1.0,
                    1.0,
                    Source::RescueDistilled,
                    &d.to_harness,
                    d.examples.iter().map(|x| (x.context.clone(), x.target.clone())),
                );
                for l in lines(&[seq], &meta()) {
                    assert_eq!(l.info.harness, "base");
                    let text = serde_json::to_string(&l.messages).unwrap();
                    for s in &sibling_only {
                        let s_json = serde_json::to_string(s).unwrap();
                        assert!(!text.contains(s_json.trim_matches('"')), "{} under {}: the line keeps sibling text {s:?}", task.id, sib.spec.name);
                    }
                    compared += 1;
                }
            }
        }
        assert!(compared > 0, "some sibling added text of its own");
    }

    #[test]
    fn a_rescue_joined_to_a_failed_group_is_pushed_up_and_the_failures_down() {
        // four failed base tries and one rescue: the group objective's rewards
        let a = group_advantages(&[0.0, 0.0, 0.0, 0.0, 1.0]);
        assert!(a[4] > 0.0 && a[..4].iter().all(|&x| x < 0.0), "{a:?}");
        assert!(a.iter().sum::<f32>().abs() < 1e-5, "advantages are centred: {a:?}");
        // steps a failure shares with the rescue cancel: 4 failures at -0.5 against one rescue at 2
        assert!((a[4] + 4.0 * a[0]).abs() < 1e-5);
        // a group without spread teaches nothing
        assert_eq!(group_advantages(&[0.0, 0.0, 0.0]), vec![0.0; 3]);
        assert_eq!(group_advantages(&[1.0, 1.0]), vec![0.0; 2]);
    }
}
