//! The experiment file (TOML): suites, split, policy back-end, arms, budgets, iterations, seeds.
//!
//! ```toml
//! name = "demo"
//! suites = ["dbbench"]
//! heldout_families = ["aggregation-AVG", "DELETE"]
//! arms = ["policy-only", "harness-s", "random-rescue", "base-resample", "keep-scaffold"]
//! seeds = [1, 2, 3, 4, 5]
//! iterations = 12
//! eval_every = 3        # E
//! reanchor_every = 4    # R
//!
//! [policy]
//! backend = "builtin"
//!
//! [budget]
//! batch_tasks = 32      # training tasks per iteration
//! base_tries = 4        # n
//! rescue_siblings = 2   # k
//! rescue_tries = 2      # m
//! ```

use crate::arm::Arm;
use crate::policy::Backend;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    pub name: String,
    #[serde(default = "default_suites")]
    pub suites: Vec<String>,
    /// Families never trained on; evaluated as the held-out split.
    #[serde(default)]
    pub heldout_families: Vec<String>,
    /// Optional dataset file per suite instead of the bundled set (suite name -> path).
    #[serde(default)]
    pub datasets: std::collections::BTreeMap<String, String>,
    #[serde(default = "default_arms")]
    pub arms: Vec<String>,
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    #[serde(default = "default_iterations")]
    pub iterations: usize,
    /// Evaluate every E iterations (and after the last).
    #[serde(default = "default_eval_every")]
    pub eval_every: usize,
    /// Re-measure behaviour profiles every R iterations.
    #[serde(default = "default_reanchor")]
    pub reanchor_every: usize,
    #[serde(default)]
    pub policy: PolicyConfig,
    #[serde(default)]
    pub budget: BudgetConfig,
    #[serde(default)]
    pub harness: HarnessConfig,
    #[serde(default)]
    pub router: RouterConfig,
    #[serde(default)]
    pub distill: DistillConfig,
    #[serde(default)]
    pub eval: EvalSettings,
    /// Parallel (suite, arm, seed) jobs; 0 = one per core, one more for suites whose agent code runs in a sandboxed process ([`Self::parallel_jobs`]).
    #[serde(default)]
    pub workers: usize,
    /// The external trainer that updates an `openai` policy (see `docs/trainer-protocol.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trainer: Option<TrainerConfig>,
    /// How a new checkpoint reaches the serving endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<ServingConfig>,
}

/// `[trainer]`: a command run once per update with a `request.json`; it writes `result.json`.
///
/// ```toml
/// [trainer]
/// kind = "command"
/// command = ["trainers/trl/.venv/bin/python", "trainers/trl/train_step.py", "{request}"]
/// timeout_s = 1800
/// base_model = "HuggingFaceTB/SmolLM2-135M-Instruct"   # default: policy.model
/// objective = "group"                                  # group | sft
/// workdir = "artifacts/trainer"
/// params = { lora_r = 8, learning_rate = 1e-4 }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct TrainerConfig {
    /// `command` (the only kind).
    #[serde(default = "default_trainer_kind")]
    pub kind: String,
    /// Program and arguments; `{request}` is replaced by the request file's path (which is also
    /// in the environment as `HARNESS_S_REQUEST`).
    pub command: Vec<String>,
    /// Seconds one update may take before it is stopped (an infrastructure error).
    #[serde(default = "default_trainer_timeout")]
    pub timeout_s: u64,
    /// The model the trainer starts from (default: `policy.model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_model: Option<String>,
    /// `group` (advantage-weighted policy gradient, default) or `sft` (weighted SFT on positive
    /// sequences). Warm-start demonstrations always use `sft`.
    #[serde(default = "default_objective")]
    pub objective: String,
    /// Where batches, requests, results and checkpoints go (default `artifacts/trainer`);
    /// each update gets `<workdir>/run-<id>/<suite>/<arm>/seed-<seed>/iter-<k>/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// Passed through to the trainer untouched.
    #[serde(default, skip_serializing_if = "toml_table_is_empty")]
    #[ts(type = "Record<string, unknown>")]
    pub params: toml::Table,
    /// The warm start's params, over `params` (the warm start is a longer SFT on many
    /// demonstrations: more epochs, mini-batches, a higher learning rate).
    #[serde(default, skip_serializing_if = "toml_table_is_empty")]
    #[ts(type = "Record<string, unknown>")]
    pub warm_start_params: toml::Table,
}

impl TrainerConfig {
    /// `params` with `warm_start_params` over them: what the warm start's trainer gets.
    pub fn warm_start_params(&self) -> toml::Table {
        let mut p = self.params.clone();
        p.extend(self.warm_start_params.clone());
        p
    }
}

fn toml_table_is_empty(t: &toml::Table) -> bool {
    t.is_empty()
}

/// `[serving]`: how the endpoint learns of a new checkpoint.
///
/// ```toml
/// [serving]
/// kind = "vllm-lora"     # vllm-lora | sglang-lora | command | none
/// ready_timeout_s = 120  # wait this long for /v1/models to list the new adapter
/// ```
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct ServingConfig {
    #[serde(default = "default_serving_kind")]
    pub kind: String,
    /// For `kind = "command"`: a program that makes the endpoint serve the checkpoint;
    /// `{checkpoint}` and `{name}` are replaced (also `HARNESS_S_CHECKPOINT`, `HARNESS_S_ADAPTER`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(default = "default_ready_timeout")]
    pub ready_timeout_s: u64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
fn default_trainer_kind() -> String {
    "command".into()
}
fn default_trainer_timeout() -> u64 {
    3600
}
fn default_serving_kind() -> String {
    "vllm-lora".into()
}
fn default_ready_timeout() -> u64 {
    120
}

impl Default for ServingConfig {
    fn default() -> Self {
        ServingConfig { kind: default_serving_kind(), command: Vec::new(), ready_timeout_s: default_ready_timeout() }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// `builtin` (offline, trains in process) or `openai` (an endpoint, an external trainer).
    #[serde(default)]
    #[ts(type = "\"builtin\" | \"openai\"")]
    pub backend: Backend,
    #[serde(default = "default_temperature")]
    pub temperature: f32,
    #[serde(default = "default_lr")]
    pub learning_rate: f32,
    /// Generated demonstrations for the warm start: one per training task, found by searching
    /// the built-in policy's grammar (about [`SECONDS_PER_DEMONSTRATION`] each; the estimate
    /// counts them). The built-in policy learns from a few dozen; a served model needs
    /// hundreds (at most [`MAX_WARM_START_DEMOS`]).
    #[serde(default = "default_demos")]
    pub warm_start_demos: usize,
    /// L2 weight decay of the warm start, relative to the learning rate: keeps the habits it
    /// teaches bounded, so hints and visible formats still move the policy.
    #[serde(default = "default_weight_decay")]
    pub weight_decay: f32,
    /// `openai` back-end: the endpoint's API root (e.g. `http://127.0.0.1:8000/v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// `openai` back-end: the model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `openai` back-end: the environment variable holding the API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// `openai` back-end: more replicas of the endpoint (API roots); requests are spread over
    /// them and a failing one is taken out for a while.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_urls: Vec<String>,
    /// `openai` back-end: the most tokens one reply may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// `openai` back-end: seconds one request may take (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// `openai` back-end: episodes one job runs at once against the endpoint (default 8), which
    /// serves (and batches) them together. The built-in policy runs one at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
}

impl PolicyConfig {
    /// Episodes one job runs at once: `concurrency` for an endpoint, one for the built-in policy
    /// (whose episodes are the workbench's own CPU work; jobs run side by side instead).
    pub fn episodes_in_flight(&self) -> usize {
        if self.backend == Backend::Builtin {
            1
        } else {
            self.concurrency.unwrap_or(8).max(1)
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    #[serde(default = "default_batch")]
    pub batch_tasks: usize,
    /// n: base tries per training task.
    #[serde(default = "default_n")]
    pub base_tries: usize,
    /// k: siblings per all-fail task.
    #[serde(default = "default_k")]
    pub rescue_siblings: usize,
    /// m: tries under each chosen sibling.
    #[serde(default = "default_m")]
    pub rescue_tries: usize,
    /// Training tasks in the probe set used to measure behaviour profiles.
    #[serde(default = "default_probe")]
    pub probe_tasks: usize,
    /// The training tasks the experiment draws from (batches, probes, demonstrations and the
    /// training evaluation): a fixed seeded subset of this many; 0 keeps every training task.
    /// A small pool makes the warm start's demonstrations cover the tasks the updates see.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub train_pool: usize,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct HarnessConfig {
    /// The base harness (default `base`).
    #[serde(default)]
    pub base: Option<String>,
    /// The sibling pool (default: every sibling of the base).
    #[serde(default)]
    pub siblings: Vec<String>,
    /// Extra directory of harness spec files.
    #[serde(default)]
    pub dir: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct RouterConfig {
    #[serde(default = "default_voters")]
    pub voters: Vec<String>,
    /// UCB exploration constant.
    #[serde(default = "default_ucb")]
    pub ucb_c: f64,
    /// LLM voters (OpenAI-compatible endpoints), each voting as `llm:<name>` beside `voters`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub llm: Vec<crate::route::LlmVoterConfig>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct DistillConfig {
    /// `strip` (default), `keep-scaffold`, `internalize`.
    #[serde(default = "default_mode")]
    pub mode: String,
    /// Weight of a distilled example relative to a unit GRPO advantage.
    #[serde(default = "default_weight")]
    pub weight: f32,
    /// How rescues enter the update: `group` (default) joins them to the task's failed base
    /// tries as off-policy successes, with group-relative advantages, so steps the failures
    /// share with the rescue cancel out; `sft` adds them as positive examples of `weight`.
    #[serde(default = "default_objective")]
    pub objective: String,
    /// `[distill.suites.<suite>]`: settings of one suite of a multi-suite experiment that differ
    /// from the ones above (a suite whose episodes are long needs a larger weight).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    #[ts(as = "Option<std::collections::BTreeMap<String, SuiteDistill>>", optional)]
    pub suites: std::collections::BTreeMap<String, SuiteDistill>,
}

/// One suite's `[distill.suites.<suite>]`: each setting given replaces the experiment's.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct SuiteDistill {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub weight: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub objective: Option<String>,
}

impl DistillConfig {
    /// The settings `suite` distils with: the experiment's, with the suite's own in their place.
    pub fn for_suite(&self, suite: &str) -> DistillConfig {
        let own = self.suites.get(suite).cloned().unwrap_or_default();
        DistillConfig {
            mode: own.mode.unwrap_or_else(|| self.mode.clone()),
            weight: own.weight.unwrap_or(self.weight),
            objective: own.objective.unwrap_or_else(|| self.objective.clone()),
            suites: Default::default(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct EvalSettings {
    /// Training-family tasks evaluated each time (0 = all).
    #[serde(default)]
    pub train_tasks: usize,
    /// Held-out tasks evaluated each time (0 = all).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub heldout_tasks: usize,
    /// Sampling temperature at evaluation (0 = greedy).
    #[serde(default)]
    pub temperature: f32,
    /// The rank-one inference after the last iteration (each evaluation task's base try, then
    /// the router's first sibling on a failure): about three evaluations' worth of episodes,
    /// which a served model on a small machine may skip (`false`).
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub rank_one: bool,
}

fn default_true() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

fn default_suites() -> Vec<String> {
    vec!["dbbench".into()]
}
fn default_arms() -> Vec<String> {
    vec!["policy-only".into(), "harness-s".into()]
}
fn default_seeds() -> Vec<u64> {
    vec![1]
}
fn default_iterations() -> usize {
    10
}
fn default_eval_every() -> usize {
    2
}
fn default_reanchor() -> usize {
    4
}
fn default_temperature() -> f32 {
    1.0
}
fn default_lr() -> f32 {
    1.0
}
fn default_demos() -> usize {
    40
}
fn default_weight_decay() -> f32 {
    crate::policy::builtin::WEIGHT_DECAY
}
fn default_batch() -> usize {
    32
}
fn default_n() -> usize {
    4
}
fn default_k() -> usize {
    2
}
fn default_m() -> usize {
    2
}
fn default_probe() -> usize {
    40
}
fn default_voters() -> Vec<String> {
    vec!["posterior".into(), "thompson".into(), "ucb".into()]
}
fn default_ucb() -> f64 {
    1.0
}
fn default_mode() -> String {
    "strip".into()
}
fn default_objective() -> String {
    "group".into()
}
fn default_weight() -> f32 {
    1.0
}

impl ExperimentConfig {
    /// `[trainer]` and `[serving]`: present exactly when an endpoint's policy is trained.
    fn validate_training(&self, file: &str) -> Result<(), ConfigError> {
        let err = |key: &str, message: String| Err(ConfigError { file: file.into(), key: key.into(), message });
        let external = self.policy.backend != Backend::Builtin;
        match (&self.trainer, external) {
            (None, true) => {
                return err(
                    "trainer",
                    format!(
                        "policy.backend = \"{}\" is trained by an external trainer: add a [trainer] table (kind = \"command\", command = [...]); see docs/trainer-protocol.md",
                        self.policy.backend
                    ),
                )
            }
            (Some(_), false) => return err("trainer", "the built-in policy trains in process; [trainer] is for policy.backend = \"openai\"".into()),
            _ => {}
        }
        if self.serving.is_some() && !external {
            return err("serving", "[serving] is for policy.backend = \"openai\"".into());
        }
        if let Some(t) = &self.trainer {
            if t.kind != "command" {
                return err("trainer.kind", format!("`{}` (allowed: command)", t.kind));
            }
            if t.command.is_empty() || t.command[0].trim().is_empty() {
                return err("trainer.command", "the program to run and its arguments, e.g. [\"python3\", \"train_step.py\", \"{request}\"]".into());
            }
            if t.timeout_s == 0 {
                return err("trainer.timeout_s", "must be a whole number ≥ 1, got 0".into());
            }
            if !["group", "sft"].contains(&t.objective.as_str()) {
                return err("trainer.objective", format!("`{}` (allowed: group, sft)", t.objective));
            }
        }
        if let Some(s) = &self.serving {
            if !SERVING_KINDS.contains(&s.kind.as_str()) {
                return err("serving.kind", format!("`{}` (allowed: {})", s.kind, SERVING_KINDS.join(", ")));
            }
            if s.kind == "command" && s.command.is_empty() {
                return err("serving.command", "kind = \"command\" needs the program that reloads the endpoint".into());
            }
            if s.ready_timeout_s == 0 {
                return err("serving.ready_timeout_s", "must be a whole number ≥ 1, got 0".into());
            }
        }
        Ok(())
    }
}

/// The ways a new checkpoint reaches the endpoint.
pub const SERVING_KINDS: [&str; 4] = ["vllm-lora", "sglang-lora", "command", "none"];

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            backend: Backend::Builtin,
            temperature: default_temperature(),
            learning_rate: default_lr(),
            warm_start_demos: default_demos(),
            weight_decay: default_weight_decay(),
            base_url: None,
            model: None,
            api_key_env: None,
            base_urls: Vec::new(),
            max_tokens: None,
            timeout_s: None,
            concurrency: None,
        }
    }
}
impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            batch_tasks: default_batch(),
            base_tries: default_n(),
            rescue_siblings: default_k(),
            rescue_tries: default_m(),
            probe_tasks: default_probe(),
            train_pool: 0,
        }
    }
}
impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig { voters: default_voters(), ucb_c: default_ucb(), llm: Vec::new() }
    }
}
impl Default for DistillConfig {
    fn default() -> Self {
        DistillConfig { mode: default_mode(), weight: default_weight(), objective: default_objective(), suites: Default::default() }
    }
}
impl Default for EvalSettings {
    fn default() -> Self {
        EvalSettings { train_tasks: 0, heldout_tasks: 0, temperature: 0.0, rank_one: true }
    }
}

/// Upper bounds of the numbers in an experiment file: no allocation or loop is sized by a user's
/// number without one.
pub const MAX_ITERATIONS: usize = 100_000;
pub const MAX_SEEDS: usize = 1_000;
pub const MAX_WORKERS: usize = 1_024;
pub const MAX_TASKS: usize = 1_000_000;
pub const MAX_TRIES: usize = 1_024;
pub const MAX_SIBLINGS: usize = 64;
/// Executor rollouts one experiment may plan for (training and probing, worst case).
pub const MAX_ROLLOUTS: u128 = 1_000_000_000;

/// What an experiment can cost, in executor rollouts (see [`ExperimentConfig::cost_estimate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CostEstimate {
    pub per_job: u128,
    pub jobs: u128,
    pub total: u128,
}

/// What a rollout estimate needs to know of a suite that the experiment file does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuiteSize {
    /// Tasks of the training families.
    pub train_tasks: usize,
    /// Tasks of the held-out families.
    pub heldout_tasks: usize,
    /// Siblings in the pool of the base harness.
    pub siblings: usize,
    /// The suite's episodes run agent code in a sandboxed process ([`crate::suite::Suite::runs_agent_code`]).
    pub runs_agent_code: bool,
}

/// Siblings a pool is assumed to have when the harness library is not at hand.
const ASSUMED_SIBLINGS: usize = 16;

/// Rough seconds one episode takes on one core, per suite: (built-in policy, an endpoint's
/// model). Measured on a 2-core machine with a release build (built-in policy) or guessed from a
/// few model calls of a few seconds each (endpoint); they say whether an experiment takes
/// minutes or days, not more.
pub const SECONDS_PER_EPISODE: &[(&str, f64, f64)] = &[("dbbench", 0.001, 10.0), ("appworld", 0.02, 30.0), ("swegym", 0.15, 60.0)];
/// The same for a suite the table does not list.
pub const SECONDS_PER_EPISODE_OTHER: (f64, f64) = (0.1, 30.0);
/// The most warm-start demonstrations an experiment may ask for.
pub const MAX_WARM_START_DEMOS: usize = 2000;

/// Rough seconds the warm start's grammar search takes per demonstration (1,500 paths a task).
pub const SECONDS_PER_DEMONSTRATION: f64 = 0.25;
/// Above this many executor rollouts (or [`LARGE_SECONDS`]) the estimate carries a warning.
pub const LARGE_ROLLOUTS: u64 = 1_000_000;
pub const LARGE_SECONDS: f64 = 12.0 * 3600.0;

/// Rough seconds per episode of `suite` under `backend` (see [`SECONDS_PER_EPISODE`]).
pub fn seconds_per_episode(suite: &str, backend: Backend) -> f64 {
    let (builtin, endpoint) = SECONDS_PER_EPISODE.iter().find(|(s, _, _)| *s == suite).map(|(_, b, e)| (*b, *e)).unwrap_or(SECONDS_PER_EPISODE_OTHER);
    if backend == Backend::Builtin {
        builtin
    } else {
        endpoint
    }
}

/// How many executor rollouts (episodes) an experiment will run, and roughly how long it takes:
/// the one estimate the app shows before Start ([`ExperimentConfig::estimate`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct RolloutEstimate {
    /// (suite, arm, seed) jobs.
    pub jobs: u64,
    /// Jobs that run at the same time ([`ExperimentConfig::parallel_jobs`]).
    pub parallel: u64,
    /// Fewest rollouts: every training task succeeds in some base try, so nothing is rescued.
    pub min: u64,
    /// Most rollouts: every training task fails all its base tries and gets the whole rescue
    /// budget (`max` = `train` + `rescue` + `probe` + `eval`).
    pub max: u64,
    /// Base tries on the training batches.
    pub train: u64,
    /// At most this many extra tries on all-fail tasks (sibling rescues, or base resamples).
    pub rescue: u64,
    /// Paired base and sibling rollouts measuring behaviour profiles.
    pub probe: u64,
    /// Evaluation under the base harness, and the rank-one inference at the end.
    pub eval: u64,
    /// Warm-start demonstrations searched (once per suite and seed; not rollouts).
    pub demonstrations: u64,
    /// Fewest episodes the store holds at the end: the rollouts less the rank-one inference's
    /// base tries, which are not stored (each evaluation task's first try, and its second after
    /// a failure). A running experiment counts its progress against these two.
    pub episodes_min: u64,
    /// Most episodes the store holds at the end.
    pub episodes_max: u64,
    /// Rough wall time for `min` and for `max` rollouts, in seconds.
    pub seconds_min: f64,
    pub seconds_max: f64,
    /// Set when the experiment is large (more than [`LARGE_ROLLOUTS`] rollouts or
    /// [`LARGE_SECONDS`]); it may still run.
    pub warning: Option<String>,
}

/// One job's rollouts by phase; `rescue` and the rank-one retries are the most they can be.
#[derive(Clone, Copy, Debug, Default)]
struct JobRollouts {
    train: u128,
    rescue: u128,
    probe: u128,
    eval: u128,
    /// Rank-one retries that happen only when a first try fails.
    eval_retries: u128,
    /// Of `eval`, the rank-one first tries, which are not stored.
    unstored: u128,
    /// Of `eval_retries`, the rank-one second base tries, which are not stored.
    unstored_retries: u128,
}

impl ExperimentConfig {
    /// The tasks each evaluation of a suite of `size` runs: (training families, held-out).
    pub fn evaluated_tasks(&self, size: &SuiteSize) -> (usize, usize) {
        let pick = |want: usize, have: usize| if want > 0 && want < have { want } else { have };
        (pick(self.eval.train_tasks, size.train_tasks), pick(self.eval.heldout_tasks, size.heldout_tasks))
    }

    /// One (arm, suite) job's rollouts, from the loop in `runner.rs`: per iteration the batch's
    /// base tries and, for each all-fail task, the arm's rescue budget; behaviour profiles
    /// measured on the probe set at the start and every `reanchor_every` iterations (routed
    /// arms); evaluation at the start, every `eval_every` iterations and after the last; at the
    /// end the rank-one inference (a first try, a routed sibling and a second base try per
    /// evaluation task, with profiles measured once for arms that have none).
    fn job_rollouts(&self, arm: Arm, size: &SuiteSize) -> JobRollouts {
        let b = &self.budget;
        let it = self.iterations as u128;
        let batch = b.batch_tasks.min(size.train_tasks) as u128;
        let sibs = size.siblings;
        let per_rescue = arm.rescue().tries_per_task(b.rescue_siblings, b.rescue_tries, sibs);
        let per_rescue = per_rescue as u128;
        let probe_once = (b.probe_tasks.min(size.train_tasks) as u128) * (1 + sibs as u128);
        let anchors = if arm.routed() { 1 + (self.iterations.saturating_sub(1) / self.reanchor_every.max(1)) as u128 } else { 0 };
        let (train_eval, heldout_eval) = self.evaluated_tasks(size);
        let eval_tasks = (train_eval + heldout_eval) as u128;
        let evals = 1 + (self.iterations / self.eval_every.max(1)) as u128 + u128::from(!self.iterations.is_multiple_of(self.eval_every.max(1)));
        let rank_one = sibs > 0 && self.eval.rank_one;
        let (rank_one_probe, rank_one_retries) = if rank_one { (if arm.routed() { 0 } else { probe_once }, 2 * eval_tasks) } else { (0, 0) };
        JobRollouts {
            train: it * batch * b.base_tries as u128,
            rescue: it * batch * per_rescue,
            probe: anchors * probe_once + rank_one_probe,
            eval: evals * eval_tasks + if rank_one { eval_tasks } else { 0 },
            eval_retries: rank_one_retries,
            unstored: if rank_one { eval_tasks } else { 0 },
            unstored_retries: rank_one_retries / 2,
        }
    }

    /// (suite, arm, seed) jobs that run at once on a machine of `cores` cores, given the suites'
    /// sizes: `workers` if set, else one per core, and one more where a suite's episodes run
    /// agent code in a sandboxed process: a job waits on that process between steps, and the
    /// extra job fills the waits. Jobs are independent, so how many run at once never changes a
    /// result.
    pub fn parallel_jobs(&self, cores: usize, sizes: &[SuiteSize]) -> usize {
        match self.workers {
            0 => cores.max(1) + usize::from(sizes.iter().any(|s| s.runs_agent_code)),
            n => n,
        }
    }

    /// The rollouts and rough wall time of this experiment, given each suite's size (in the
    /// order of `suites`) and the cores of the machine that runs it.
    pub fn estimate(&self, sizes: &[SuiteSize], cores: usize) -> RolloutEstimate {
        let clamp = |n: u128| u64::try_from(n).unwrap_or(u64::MAX);
        let mut sum = JobRollouts::default();
        let (mut secs_min, mut secs_max) = (0.0f64, 0.0f64);
        for (suite, size) in self.suites.iter().zip(sizes) {
            let spe = seconds_per_episode(suite, self.policy.backend);
            for arm in self.arms.iter().filter_map(|a| Arm::parse(a)) {
                let j = self.job_rollouts(arm, size);
                let seeds = self.seeds.len() as u128;
                sum.train += j.train * seeds;
                sum.rescue += j.rescue * seeds;
                sum.probe += j.probe * seeds;
                sum.eval += j.eval * seeds;
                sum.eval_retries += j.eval_retries * seeds;
                sum.unstored += j.unstored * seeds;
                sum.unstored_retries += j.unstored_retries * seeds;
                let least = (j.train + j.probe + j.eval) * seeds;
                secs_min += least as f64 * spe;
                secs_max += (least + (j.rescue + j.eval_retries) * seeds) as f64 * spe;
            }
        }
        let demos = (self.policy.warm_start_demos * self.seeds.len() * self.suites.len()) as u64;
        let jobs = (self.arms.len() * self.seeds.len() * self.suites.len()) as u64;
        let parallel = (self.parallel_jobs(cores, sizes) as u64).min(jobs).max(1);
        let demo_secs = demos as f64 * SECONDS_PER_DEMONSTRATION;
        let min = clamp(sum.train + sum.probe + sum.eval);
        let max = clamp(sum.train + sum.rescue + sum.probe + sum.eval + sum.eval_retries);
        // an extra job fills waits, it adds no core: the time divides by the cores in use
        let busy = parallel.min(cores.max(1) as u64) as f64;
        let seconds_min = (secs_min + demo_secs) / busy;
        let seconds_max = (secs_max + demo_secs) / busy;
        let warning = (max > LARGE_ROLLOUTS || seconds_max > LARGE_SECONDS).then(|| {
            format!(
                "a large experiment: up to {} executor rollouts, roughly {} here; fewer iterations, seeds, arms or a smaller batch make it smaller",
                thousands(max),
                rough_duration(seconds_max)
            )
        });
        RolloutEstimate {
            jobs,
            parallel,
            min,
            max,
            train: clamp(sum.train),
            rescue: clamp(sum.rescue),
            probe: clamp(sum.probe),
            eval: clamp(sum.eval + sum.eval_retries),
            demonstrations: demos,
            episodes_min: clamp((sum.train + sum.probe + sum.eval).saturating_sub(sum.unstored)),
            episodes_max: clamp(
                (sum.train + sum.rescue + sum.probe + sum.eval + sum.eval_retries).saturating_sub(sum.unstored + sum.unstored_retries),
            ),
            seconds_min,
            seconds_max,
            warning,
        }
    }
}

/// `754,024,680`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `40 s`, `12 min`, `3.5 h`, `9 days`.
fn rough_duration(s: f64) -> String {
    if s < 90.0 {
        format!("{} s", s.round())
    } else if s < 90.0 * 60.0 {
        format!("{} min", (s / 60.0).round())
    } else if s < 48.0 * 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{} days", (s / 86400.0).round())
    }
}

/// The smallest whole number a count setting takes (0 unless it must be at least 1).
pub fn whole_number_min(key: &str) -> usize {
    const AT_LEAST_ONE: [&str; 7] =
        ["iterations", "eval_every", "reanchor_every", "budget.base_tries", "budget.batch_tasks", "trainer.timeout_s", "serving.ready_timeout_s"];
    usize::from(AT_LEAST_ONE.contains(&key))
}

/// A deserializer's complaint about a number in words a person uses: `integer `-1`, expected
/// usize` becomes `must be a whole number ≥ 1, got -1`.
fn plain_message(key: &str, msg: &str) -> String {
    let Some((what, want)) =
        msg.strip_prefix("invalid value: ").or_else(|| msg.strip_prefix("invalid type: ")).and_then(|r| r.rsplit_once(", expected "))
    else {
        return msg.to_string();
    };
    let got = match what.split('`').nth(1) {
        Some(inner) => inner.to_string(),
        None => what.strip_prefix("string ").unwrap_or(what).to_string(),
    };
    match want {
        "usize" | "u64" | "u32" | "u16" | "u8" => format!("must be a whole number ≥ {}, got {got}", whole_number_min(key)),
        "f32" | "f64" => format!("must be a number, got {got}"),
        _ => msg.to_string(),
    }
}

/// The dotted key a TOML value at byte `offset` belongs to: `table.key` from the nearest table
/// header above and the `key =` of its line.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let line_start = text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line.split_once('=').map(|(k, _)| k.trim().trim_matches('"').to_string()).filter(|k| !k.is_empty())?;
    let table = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key,
    })
}

/// A bad experiment file: names the key and what is allowed.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{file}: {key}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub key: String,
    pub message: String,
}

impl ExperimentConfig {
    pub fn parse(file: &str, text: &str) -> Result<Self, ConfigError> {
        let cfg: ExperimentConfig = toml::from_str(text).map_err(|e| {
            let msg = e.message().to_string();
            let start = e.span().map(|s| s.start.min(text.len()));
            let line = start.map(|s| text[..s].matches('\n').count() + 1).unwrap_or(0);
            // unknown keys are named in the message; a bad value is named by the line it is on
            let key = match msg.strip_prefix("unknown field `") {
                Some(rest) => rest.split('`').next().unwrap_or("(file)").to_string(),
                None => start.and_then(|s| key_at(text, s)).unwrap_or_else(|| "(file)".into()),
            };
            let msg = plain_message(&key, &msg);
            ConfigError { file: file.into(), key, message: format!("line {line}: {msg}") }
        })?;
        cfg.validate(file)?;
        Ok(cfg)
    }

    /// An upper bound of the executor rollouts the experiment's training and probing can spend
    /// (every task of every batch all-fail and rescued), per arm × seed and in all, without the
    /// dataset at hand: [`Self::estimate`]'s count with every batch full and a pool of
    /// [`ASSUMED_SIBLINGS`]; evaluation comes on top and depends on the dataset.
    pub fn cost_estimate(&self) -> CostEstimate {
        let size = SuiteSize {
            train_tasks: self.budget.batch_tasks.max(self.budget.probe_tasks),
            heldout_tasks: 0,
            siblings: ASSUMED_SIBLINGS,
            runs_agent_code: false,
        };
        let per_job = Arm::ALL
            .into_iter()
            .filter(|a| self.arms.iter().any(|x| x == a.as_str()))
            .map(|a| {
                let j = self.job_rollouts(a, &size);
                j.train + j.rescue + j.probe
            })
            .max()
            .unwrap_or(0);
        let jobs = (self.arms.len() * self.seeds.len() * self.suites.len()) as u128;
        CostEstimate { per_job, jobs, total: per_job.saturating_mul(jobs) }
    }

    pub fn load(path: &std::path::Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = crate::files::read_text_limited(path, crate::files::MAX_CONFIG_BYTES).map_err(|e| ConfigError {
            file: file.clone(),
            key: "(file)".into(),
            message: e.to_string(),
        })?;
        Self::parse(&file, &text)
    }

    pub fn validate(&self, file: &str) -> Result<(), ConfigError> {
        let err = |key: &str, message: String| Err(ConfigError { file: file.into(), key: key.into(), message });
        if self.name.trim().is_empty() {
            return err("name", "must not be empty".into());
        }
        for s in &self.suites {
            if crate::suite::by_name(s).is_none() {
                let known = crate::suite::names();
                return err("suites", format!("unknown suite `{s}` (allowed: {})", known.join(", ")));
            }
        }
        if self.suites.is_empty() {
            return err("suites", "list at least one suite".into());
        }
        if self.arms.is_empty() {
            return err("arms", format!("list at least one arm (allowed: {})", Arm::names().join(", ")));
        }
        for a in &self.arms {
            if Arm::parse(a).is_none() {
                return err("arms", format!("unknown arm `{a}` (allowed: {})", Arm::names().join(", ")));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for a in &self.arms {
            if !seen.insert(a) {
                return err("arms", format!("`{a}` is listed twice"));
            }
        }
        if self.seeds.is_empty() {
            return err("seeds", "list at least one seed".into());
        }
        if self.iterations == 0 {
            return err("iterations", "must be a whole number ≥ 1, got 0".into());
        }
        if self.eval_every == 0 {
            return err("eval_every", "must be a whole number ≥ 1, got 0".into());
        }
        if self.reanchor_every == 0 {
            return err("reanchor_every", "must be a whole number ≥ 1, got 0".into());
        }
        match self.policy.backend {
            Backend::Builtin => {}
            Backend::OpenAi => {
                if self.policy.base_url.as_deref().is_none_or(|u| u.trim().is_empty()) {
                    return err("policy.base_url", "the `openai` back-end needs the endpoint's API root, e.g. \"http://127.0.0.1:8000/v1\"".into());
                }
                if self.policy.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
                    return err("policy.model", "the `openai` back-end needs a model name".into());
                }
            }
        }
        self.validate_training(file)?;
        if self.policy.warm_start_demos > MAX_WARM_START_DEMOS {
            return err(
                "policy.warm_start_demos",
                format!(
                    "at most {MAX_WARM_START_DEMOS} demonstrations (one per training task, each a grammar search), got {}",
                    self.policy.warm_start_demos
                ),
            );
        }
        if let Some(c) = self.policy.concurrency {
            if !(1..=256).contains(&c) {
                return err("policy.concurrency", format!("between 1 and 256 episodes at once, got {c}"));
            }
        }
        if !(0.0..=0.5).contains(&self.policy.weight_decay) {
            return err("policy.weight_decay", format!("must be between 0 and 0.5, got {}", self.policy.weight_decay));
        }
        if !(0.0..=10.0).contains(&self.policy.temperature) {
            return err("policy.temperature", "must be between 0 and 10".into());
        }
        if self.budget.base_tries == 0 {
            return err("budget.base_tries", "n must be a whole number ≥ 1, got 0".into());
        }
        if self.budget.batch_tasks == 0 {
            return err("budget.batch_tasks", "must be a whole number ≥ 1, got 0".into());
        }
        for (key, value, max) in [
            ("iterations", self.iterations, MAX_ITERATIONS),
            ("eval_every", self.eval_every, MAX_ITERATIONS),
            ("reanchor_every", self.reanchor_every, MAX_ITERATIONS),
            ("seeds", self.seeds.len(), MAX_SEEDS),
            ("workers", self.workers, MAX_WORKERS),
            ("budget.batch_tasks", self.budget.batch_tasks, MAX_TASKS),
            ("budget.base_tries", self.budget.base_tries, MAX_TRIES),
            ("budget.rescue_siblings", self.budget.rescue_siblings, MAX_SIBLINGS),
            ("budget.rescue_tries", self.budget.rescue_tries, MAX_TRIES),
            ("budget.probe_tasks", self.budget.probe_tasks, MAX_TASKS),
            ("budget.train_pool", self.budget.train_pool, MAX_TASKS),
            ("eval.train_tasks", self.eval.train_tasks, MAX_TASKS),
            ("eval.heldout_tasks", self.eval.heldout_tasks, MAX_TASKS),
        ] {
            if value > max {
                return err(key, format!("at most {max}, got {value}"));
            }
        }
        let cost = self.cost_estimate();
        if cost.total > MAX_ROLLOUTS {
            return err(
                "budget",
                format!(
                    "this experiment could spend up to {} executor rollouts ({} per arm and seed: iterations × batch_tasks × (base_tries + rescue_siblings × rescue_tries), plus probes), over the limit of {}; lower iterations, seeds, arms or the budget",
                    cost.total, cost.per_job, MAX_ROLLOUTS
                ),
            );
        }
        check_distill(&self.distill).map_err(|(k, message)| ConfigError { file: file.into(), key: format!("distill.{k}"), message })?;
        for suite in self.distill.suites.keys() {
            if !self.suites.contains(suite) {
                return err(
                    &format!("distill.suites.{suite}"),
                    format!("`{suite}` is not one of this experiment's suites ({})", self.suites.join(", ")),
                );
            }
            // the experiment's own settings passed, so a fault here is the suite's
            check_distill(&self.distill.for_suite(suite)).map_err(|(k, message)| ConfigError {
                file: file.into(),
                key: format!("distill.suites.{suite}.{k}"),
                message,
            })?;
        }
        for (key, v) in [("policy.learning_rate", self.policy.learning_rate as f64), ("router.ucb_c", self.router.ucb_c)] {
            if !v.is_finite() || !(0.0..=100.0).contains(&v) {
                return err(key, format!("must be a number between 0 and 100, got {v}"));
            }
        }
        for (i, l) in self.router.llm.iter().enumerate() {
            if l.base_url.trim().is_empty() {
                return err(&format!("router.llm[{i}].base_url"), "the endpoint's API root, e.g. \"http://127.0.0.1:8000/v1\"".into());
            }
            if l.model.trim().is_empty() {
                return err(&format!("router.llm[{i}].model"), "a model name".into());
            }
        }
        if self.router.voters.is_empty() && self.router.llm.is_empty() {
            return err("router.voters", "list at least one voter".into());
        }
        for v in &self.router.voters {
            if !crate::route::VOTERS.contains(&v.as_str()) {
                return err("router.voters", format!("unknown voter `{v}` (allowed: {})", crate::route::VOTERS.join(", ")));
            }
        }
        Ok(())
    }
}

/// One set of distillation settings checked: the setting at fault (`mode`, `weight`,
/// `objective`) and what was expected.
fn check_distill(d: &DistillConfig) -> Result<(), (&'static str, String)> {
    let w = d.weight as f64;
    if !w.is_finite() || !(0.0..=100.0).contains(&w) {
        return Err(("weight", format!("must be a number between 0 and 100, got {w}")));
    }
    if !["strip", "keep-scaffold", "internalize"].contains(&d.mode.as_str()) {
        return Err(("mode", format!("`{}` (allowed: strip, keep-scaffold, internalize)", d.mode)));
    }
    if !["group", "sft"].contains(&d.objective.as_str()) {
        return Err(("objective", format!("`{}` (allowed: group, sft)", d.objective)));
    }
    Ok(())
}
