//! One experiment on many machines: the coordinator (`experiment run --distributed`) keeps what
//! must be serial — routing, distillation, the learner's update, evaluation bookkeeping — and
//! queues each phase's episodes in the Postgres store; `harness-s worker` processes anywhere
//! claim them, run them and write the episodes back ([`crate::store`]'s episode queue).
//!
//! Results do not depend on the number of workers: an episode is determined by its job's key —
//! the experiment job (suite, arm, seed), the policy version, harness, task, try, seed and
//! temperature — never by the worker or the order, and a worker samples from the policy the
//! coordinator published for that version. A worker that dies loses only its lease: the job is
//! claimed again once the lease has passed.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::config::ExperimentConfig;
use super::learner::{Learner, WorkerPolicy};
use super::setup::{endpoint_policy, harness_library, setup_suite, SuiteSetup};
use crate::episode::Episode;
use crate::grammar::model::SparseModel;
use crate::harness::{run_episode, EpisodeRequest};
use crate::policy::builtin::BuiltinPolicy;
use crate::policy::Policy;
use crate::store::{BlockingStore, ClaimedJob, JobFailure, StoreError};

/// How long a claim lasts without a heartbeat, by default.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A job's claim is given up after this many claims (its worker died each time).
const MAX_ATTEMPTS: i64 = 5;

/// A job that costs nothing to run (its result is empty): what `cargo bench --bench queue`
/// queues to measure the queue itself.
pub const NOOP_REQUEST: &str = r#"{"noop":true}"#;

/// What a worker needs to run one episode. The key is built from every field.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EpisodeJob {
    /// The experiment job (suite/arm/seed index) whose policy samples.
    pub job: String,
    pub policy: PolicyRef,
    pub suite: String,
    pub harness: String,
    pub task: String,
    pub sample: u32,
    pub seed: u64,
    pub temperature: f32,
}

/// Which policy an episode samples from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PolicyRef {
    /// The built-in policy at this version, published in `policy_snapshots` under the job key.
    Builtin { version: u64 },
    /// The run's policy endpoint under this model name.
    Endpoint { model: String },
}

impl EpisodeJob {
    /// The queue key: unique per distinct episode of a run.
    pub fn key(&self) -> String {
        let policy = match &self.policy {
            PolicyRef::Builtin { version } => format!("v{version}"),
            PolicyRef::Endpoint { model } => format!("m:{model}"),
        };
        format!(
            "{}/{policy}/{}/{}/{}/{}/{:016x}/{:08x}",
            self.job,
            self.suite,
            self.harness,
            self.task,
            self.sample,
            self.seed,
            self.temperature.to_bits()
        )
    }
}

/// Why a distributed phase did not complete.
#[derive(Debug, thiserror::Error)]
pub enum DistributedError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("episode job `{key}` failed on a worker: {error}")]
    Job { key: String, error: String },
    #[error("episode job `{key}`: {what}")]
    Decode { key: String, what: String },
}

fn encode_json<T: Serialize>(value: &T) -> Vec<u8> {
    let json = serde_json::to_vec(value).unwrap_or_default();
    zstd::encode_all(&json[..], 3).unwrap_or(json)
}

/// A stored job's body that cannot be read back.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error("decompressing: {0}")]
    Decompress(std::io::Error),
    #[error("reading: {0}")]
    Json(serde_json::Error),
}

fn decode_json<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, BodyError> {
    let json = zstd::decode_all(bytes).map_err(BodyError::Decompress)?;
    serde_json::from_slice(&json).map_err(BodyError::Json)
}

/// The coordinator's side: queue a phase's episodes, wait for the workers, read them back.
pub(crate) struct Coordinator<'a> {
    store: &'a BlockingStore,
    run_id: i64,
    /// How often a waiting phase looks for finished jobs.
    poll: Duration,
    /// The policy version published per experiment job.
    published: Mutex<HashMap<String, u64>>,
}

impl<'a> Coordinator<'a> {
    pub fn new(store: &'a BlockingStore, run_id: i64) -> Self {
        Coordinator { store, run_id, poll: Duration::from_millis(50), published: Mutex::new(HashMap::new()) }
    }

    /// Publish `learner`'s current policy for job `job` (once per version) and say how workers
    /// find it.
    fn publish(&self, job: &str, learner: &dyn Learner) -> Result<PolicyRef, DistributedError> {
        let version = learner.version();
        let mut published = self.published.lock().unwrap_or_else(|p| p.into_inner());
        match learner.for_workers() {
            WorkerPolicy::Endpoint(model) => Ok(PolicyRef::Endpoint { model }),
            WorkerPolicy::Builtin(model) => {
                if published.get(job) != Some(&version) {
                    self.store.put_policy_snapshot(self.run_id, job, version as i64, encode_json(&model))?;
                    published.insert(job.to_string(), version);
                }
                Ok(PolicyRef::Builtin { version })
            }
        }
    }

    /// Run `jobs` on the workers; episodes in the order given. `done(i, episode)` as each
    /// arrives; `None` when `cancel` is set while waiting (the jobs no worker holds are removed).
    pub fn run(
        &self,
        job: &str,
        learner: &dyn Learner,
        wants: Vec<EpisodeJob>,
        cancel: Option<&AtomicBool>,
        done: &mut dyn FnMut(usize, &Episode),
    ) -> Result<Option<Vec<Episode>>, DistributedError> {
        if wants.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let policy = self.publish(job, learner)?;
        let rows: Vec<(String, String)> = wants
            .into_iter()
            .map(|mut w| {
                w.policy = policy.clone();
                (w.key(), serde_json::to_string(&w).unwrap_or_default())
            })
            .collect();
        let ids = self.store.enqueue_jobs(self.run_id, &rows)?;
        let index: HashMap<i64, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let mut episodes: Vec<Option<Episode>> = vec![None; ids.len()];
        let mut seen: HashSet<i64> = HashSet::new();
        while seen.len() < ids.len() {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                self.store.delete_jobs(&ids, true)?;
                return Ok(None);
            }
            let finished = self.store.finished_jobs(&ids, &seen)?;
            if finished.is_empty() {
                std::thread::sleep(self.poll);
                continue;
            }
            for f in finished {
                seen.insert(f.id);
                let i = index[&f.id];
                let key = &rows[i].0;
                let bytes = f.outcome.map_err(|JobFailure(error)| DistributedError::Job { key: key.clone(), error })?;
                let ep: Episode = decode_json(&bytes).map_err(|e| DistributedError::Decode { key: key.clone(), what: e.to_string() })?;
                done(i, &ep);
                episodes[i] = Some(ep);
            }
        }
        self.store.delete_jobs(&ids, false)?;
        Ok(Some(episodes.into_iter().flatten().collect()))
    }
}

/// How a worker process runs.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Its name in the `workers` table (default `<host>-<pid>`).
    pub name: String,
    /// Episodes at once.
    pub slots: usize,
    /// How long a claim lasts without a heartbeat (heartbeats come every third of it).
    pub lease: Duration,
    /// Exit after this long with nothing to claim (for batch schedulers); `None`: run until stopped.
    pub exit_after_idle: Option<Duration>,
}

/// What a worker did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkerReport {
    pub name: String,
    pub jobs_done: usize,
    pub jobs_failed: usize,
    /// Results refused because the lease had passed and another worker held the job.
    pub results_refused: usize,
}

/// What a worker keeps per run: the configuration's suites as set up.
struct RunContext {
    cfg: ExperimentConfig,
    suites: HashMap<String, SuiteSetup>,
}

/// The policies a worker built, by (run, experiment job): the reference each was built for.
type PolicyCache = HashMap<(i64, String), (PolicyRef, Arc<dyn Policy>)>;

/// A worker's caches, shared by its slots.
struct WorkerState<'a> {
    store: &'a BlockingStore,
    opts: &'a WorkerOptions,
    runs: Mutex<HashMap<i64, Arc<RunContext>>>,
    /// (run, job key) -> (version, policy)
    policies: Mutex<PolicyCache>,
    done: AtomicUsize,
    failed: AtomicUsize,
    refused: AtomicUsize,
    /// When a slot last had something to do.
    last_busy: Mutex<Instant>,
}

/// Why a claimed job cannot run here yet (it goes back to the queue) or at all (it fails).
enum JobTrouble {
    /// The coordinator has not published the policy version yet (or has moved past it).
    NotYet,
    Fatal(String),
}

impl WorkerState<'_> {
    fn run_context(&self, run_id: i64) -> Result<Arc<RunContext>, JobTrouble> {
        if let Some(c) = self.runs.lock().unwrap_or_else(|p| p.into_inner()).get(&run_id) {
            return Ok(c.clone());
        }
        let run =
            self.store.run(run_id).map_err(|e| JobTrouble::Fatal(e.to_string()))?.ok_or_else(|| JobTrouble::Fatal(format!("no run {run_id}")))?;
        let cfg: ExperimentConfig =
            serde_json::from_value(run.config).map_err(|e| JobTrouble::Fatal(format!("run {run_id}'s configuration: {e}")))?;
        if cfg.policy.backend != crate::policy::Backend::Builtin {
            // a model's actions are untrusted code: no episode without the sandbox
            for name in &cfg.suites {
                if let Some(s) = crate::suite::by_name(name) {
                    crate::suite::require_containment(s.as_ref()).map_err(|e| JobTrouble::Fatal(e.to_string()))?;
                }
            }
        }
        let lib = harness_library(&cfg).map_err(|e| JobTrouble::Fatal(e.to_string()))?;
        let mut suites = HashMap::new();
        for s in &cfg.suites {
            suites.insert(s.clone(), setup_suite(&cfg, s, &lib).map_err(|e| JobTrouble::Fatal(e.to_string()))?);
        }
        let c = Arc::new(RunContext { cfg, suites });
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).insert(run_id, c.clone());
        Ok(c)
    }

    fn policy(&self, run_id: i64, ctx: &RunContext, setup: &SuiteSetup, job: &EpisodeJob) -> Result<Arc<dyn Policy>, JobTrouble> {
        let cache_key = (run_id, job.job.clone());
        if let Some((r, p)) = self.policies.lock().unwrap_or_else(|p| p.into_inner()).get(&cache_key) {
            if r == &job.policy {
                return Ok(p.clone());
            }
        }
        let policy: Arc<dyn Policy> = match &job.policy {
            PolicyRef::Builtin { version } => {
                let Some((v, body)) = self.store.policy_snapshot(run_id, &job.job).map_err(|e| JobTrouble::Fatal(e.to_string()))? else {
                    return Err(JobTrouble::NotYet);
                };
                if v as u64 != *version {
                    return Err(JobTrouble::NotYet);
                }
                let model: SparseModel = decode_json(&body).map_err(|e| JobTrouble::Fatal(format!("policy snapshot of `{}`: {e}", job.job)))?;
                let grammar = setup
                    .suite
                    .grammar()
                    .ok_or_else(|| JobTrouble::Fatal(format!("suite `{}` has no grammar for the built-in policy", job.suite)))?;
                let p = BuiltinPolicy::new(grammar);
                p.restore(&model);
                Arc::new(p)
            }
            PolicyRef::Endpoint { model } => {
                Arc::new(endpoint_policy(&ctx.cfg.policy).map_err(|e| JobTrouble::Fatal(e.to_string()))?.with_model(model))
            }
        };
        self.policies.lock().unwrap_or_else(|p| p.into_inner()).insert(cache_key, (job.policy.clone(), policy.clone()));
        Ok(policy)
    }

    /// Run one claimed job: the episode, zstd-compressed JSON.
    fn run(&self, claimed: &ClaimedJob) -> Result<Vec<u8>, JobTrouble> {
        if claimed.attempts > MAX_ATTEMPTS {
            return Err(JobTrouble::Fatal(format!("claimed {} times without finishing (its workers stopped each time)", claimed.attempts - 1)));
        }
        if claimed.request == NOOP_REQUEST {
            return Ok(Vec::new());
        }
        let job: EpisodeJob = serde_json::from_str(&claimed.request).map_err(|e| JobTrouble::Fatal(format!("unreadable request: {e}")))?;
        let ctx = self.run_context(claimed.run_id)?;
        let setup = ctx.suites.get(&job.suite).ok_or_else(|| JobTrouble::Fatal(format!("the run has no suite `{}`", job.suite)))?;
        let task =
            setup.tasks.iter().find(|t| t.id == job.task).ok_or_else(|| {
                JobTrouble::Fatal(format!("suite `{}` has no task `{}` here (is the dataset the coordinator's?)", job.suite, job.task))
            })?;
        let harness =
            setup.harness(&job.harness).ok_or_else(|| JobTrouble::Fatal(format!("suite `{}` has no harness `{}`", job.suite, job.harness)))?;
        let policy = self.policy(claimed.run_id, &ctx, setup, &job)?;
        let req = EpisodeRequest {
            suite: setup.suite.as_ref(),
            harness,
            task,
            policy: policy.as_ref(),
            sample: job.sample,
            seed: job.seed,
            temperature: job.temperature,
            cancel: None,
        };
        let ep = run_episode(&req);
        crate::fault::point("rollout");
        Ok(encode_json(&ep))
    }

    /// One slot: claim, run, write back, until stopped (or idle long enough).
    fn slot(&self, stop: &AtomicBool) -> Result<(), StoreError> {
        let lease_ms = self.opts.lease.as_millis() as i64;
        let mut wait = Duration::from_millis(20);
        while !stop.load(Ordering::Relaxed) {
            let claimed = retry_store(stop, || self.store.claim_jobs(&self.opts.name, 1, lease_ms))?;
            let Some(job) = claimed.into_iter().next() else {
                if let Some(idle) = self.opts.exit_after_idle {
                    if self.last_busy.lock().unwrap_or_else(|p| p.into_inner()).elapsed() >= idle {
                        stop.store(true, Ordering::Relaxed);
                        break;
                    }
                }
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(500));
                continue;
            };
            wait = Duration::from_millis(20);
            *self.last_busy.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
            let outcome = match self.run(&job) {
                Ok(bytes) => Ok(bytes),
                Err(JobTrouble::NotYet) => {
                    retry_store(stop, || self.store.release_job(job.id, &self.opts.name))?;
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Err(JobTrouble::Fatal(e)) => {
                    tracing::warn!(job = job.key, "episode job failed: {e}");
                    Err(JobFailure(e))
                }
            };
            let failed = outcome.is_err();
            // the episode is done: keep trying to hand it in even while stopping
            if retry_store(&AtomicBool::new(false), || self.store.complete_job(job.id, &self.opts.name, outcome.clone()))? {
                if failed { &self.failed } else { &self.done }.fetch_add(1, Ordering::Relaxed);
            } else {
                self.refused.fetch_add(1, Ordering::Relaxed);
            }
            *self.last_busy.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        }
        Ok(())
    }
}

/// How long a worker keeps retrying a store call that fails before it gives up and exits.
const STORE_RETRY_FOR: Duration = Duration::from_secs(120);

/// Run a store call, retrying for up to [`STORE_RETRY_FOR`] with backoff while it fails: a
/// server restarting, a network blip or a connection limit reached for a moment must not end a
/// worker (its jobs would only come back after their leases). Gives up early once `stop` is set.
fn retry_store<T>(stop: &AtomicBool, mut call: impl FnMut() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let t0 = Instant::now();
    let mut wait = Duration::from_millis(100);
    loop {
        match call() {
            Ok(v) => return Ok(v),
            Err(e) if t0.elapsed() < STORE_RETRY_FOR && !stop.load(Ordering::Relaxed) && e.is_transient() => {
                tracing::warn!("store call failed, retrying in {:.1} s: {e}", wait.as_secs_f64());
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Run a worker until `stop` is set (or it has been idle for `exit_after_idle`): `slots`
/// threads claim and run episode jobs of any running experiment in the store; one more renews
/// the leases. A job in hand when it stops is finished first.
pub fn run_worker(store: &BlockingStore, opts: &WorkerOptions, stop: &AtomicBool) -> Result<WorkerReport, StoreError> {
    let host = hostname();
    store.register_worker(&opts.name, &host, opts.slots as i64)?;
    let state = WorkerState {
        store,
        opts,
        runs: Mutex::new(HashMap::new()),
        policies: Mutex::new(HashMap::new()),
        done: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
        refused: AtomicUsize::new(0),
        last_busy: Mutex::new(Instant::now()),
    };
    let slots_done = AtomicBool::new(false);
    let lease_ms = opts.lease.as_millis() as i64;
    let result = std::thread::scope(|scope| {
        let beat = scope.spawn(|| {
            let every = (opts.lease / 3).max(Duration::from_millis(100));
            let mut last = Instant::now();
            while !slots_done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                if last.elapsed() >= every {
                    if let Err(e) = store.heartbeat(&opts.name, lease_ms).and_then(|_| store.requeue_expired()) {
                        tracing::warn!("heartbeat: {e}");
                    }
                    last = Instant::now();
                }
            }
        });
        let slots: Vec<_> = (0..opts.slots.max(1)).map(|_| scope.spawn(|| state.slot(stop))).collect();
        let mut first_err = None;
        for s in slots {
            match s.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    stop.store(true, Ordering::Relaxed);
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
        slots_done.store(true, Ordering::Relaxed);
        let _ = beat.join();
        first_err.map_or(Ok(()), Err)
    });
    let _ = store.worker_stopped(&opts.name);
    result?;
    Ok(WorkerReport {
        name: opts.name.clone(),
        jobs_done: state.done.load(Ordering::Relaxed),
        jobs_failed: state.failed.load(Ordering::Relaxed),
        results_refused: state.refused.load(Ordering::Relaxed),
    })
}

/// This machine's name (for the `workers` table), from the kernel.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_everything_that_determines_the_episode() {
        let job = EpisodeJob {
            job: "dbbench/harness-s/0".into(),
            policy: PolicyRef::Builtin { version: 7 },
            suite: "dbbench".into(),
            harness: "base".into(),
            task: "t1".into(),
            sample: 2,
            seed: 42,
            temperature: 1.0,
        };
        let k = job.key();
        for other in [
            EpisodeJob { policy: PolicyRef::Builtin { version: 8 }, ..job.clone() },
            EpisodeJob { harness: "inspect-first".into(), ..job.clone() },
            EpisodeJob { sample: 3, ..job.clone() },
            EpisodeJob { seed: 43, ..job.clone() },
            EpisodeJob { temperature: 0.0, ..job.clone() },
            EpisodeJob { job: "dbbench/policy-only/0".into(), ..job.clone() },
        ] {
            assert_ne!(other.key(), k, "{other:?}");
        }
        assert_eq!(job.clone().key(), k);
        let back: EpisodeJob = serde_json::from_str(&serde_json::to_string(&job).unwrap()).unwrap();
        assert_eq!(back, job);
    }

    #[test]
    fn a_store_call_that_fails_for_a_moment_is_retried_and_a_broken_one_is_not() {
        let timeout = || StoreError::Query { location: "pg".into(), op: "claim".into(), source: sqlx::Error::PoolTimedOut };
        let mut calls = 0;
        let r = retry_store(&AtomicBool::new(false), || {
            calls += 1;
            if calls < 3 {
                Err(timeout())
            } else {
                Ok(calls)
            }
        });
        assert_eq!(r.unwrap(), 3, "two transient failures, then the call succeeds");
        let mut calls = 0;
        let r: Result<(), _> = retry_store(&AtomicBool::new(false), || {
            calls += 1;
            Err(StoreError::Query { location: "pg".into(), op: "claim".into(), source: sqlx::Error::RowNotFound })
        });
        assert!(r.is_err());
        assert_eq!(calls, 1, "an error a retry cannot mend is returned at once");
        let mut calls = 0;
        let r: Result<(), _> = retry_store(&AtomicBool::new(true), || {
            calls += 1;
            Err(timeout())
        });
        assert!(r.is_err());
        assert_eq!(calls, 1, "a stopping worker does not wait out the retries");
    }

    #[test]
    fn results_round_trip_through_the_queue_encoding() {
        let v = serde_json::json!({"a": [1.5, 2.25e-7, f32::MAX as f64], "b": "x".repeat(1000)});
        let back: serde_json::Value = decode_json(&encode_json(&v)).unwrap();
        assert_eq!(back, v);
    }
}
