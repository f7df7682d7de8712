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
//!
//! This file holds the run and its jobs, and the one place a phase asks for its episodes
//! (`Job::rollouts`); each phase is a file: `warm_start.rs`, `iteration.rs` (with the rescues and
//! GRPO groups), `profiles.rs`, `evaluation.rs` (with the rank-one inference) and `summary.rs`.

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
use crate::stats::mean;
use crate::store::{BlockingStore, EpisodeContext, EpisodeFilter, NewRun, RunStatus, StoreError};
use crate::suite::Suite;
use crate::task::Task;

mod evaluation;
mod iteration;
mod profiles;
mod summary;
mod warm_start;

use evaluation::last_point;
pub(crate) use iteration::episode_steps;
pub use iteration::group_members;
use summary::summarise;
pub(crate) use warm_start::demonstration_steps;

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
    Ok(cfg.estimate(&suite_sizes(cfg)?, cores))
}

/// Each suite's tasks and sibling pool, in `cfg.suites`' order, set up as a run sets them up.
pub fn suite_sizes(cfg: &ExperimentConfig) -> Result<Vec<SuiteSize>, ExperimentError> {
    let lib = harness_library(cfg).map_err(|e| ExperimentError::Setup(e.to_string()))?;
    cfg.suites.iter().map(|s| setup_suite(cfg, s, &lib).map(|su| su.size()).map_err(|e| ExperimentError::Setup(e.to_string()))).collect()
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
    // the run's progress, kept in the store too, for every process that shows the store
    let snapshot = crate::experiment::snapshot::StoredSnapshot::new(sink, store, run_id, cfg);
    let sink: &dyn EventSink = &snapshot;
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
    let progress = JobProgress::new(
        &sh.progress,
        &suite_name,
        arm,
        seed,
        cfg.iterations,
        if kind.rescue() == crate::arm::Rescue::BaseTries { "resamples" } else { "rescues" },
    );
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

/// One executor rollout of `policy` on `task` under `harness`.
fn trial(suite: &dyn Suite, policy: &dyn Policy, task: &Task, harness: &HarnessSpec, sample: u32, seed: u64, temperature: f32) -> Episode {
    let ep = run_episode(&EpisodeRequest { suite, harness, task, policy, sample, seed, temperature, cancel: None });
    crate::fault::point("rollout");
    ep
}
