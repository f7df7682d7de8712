// Generated from src/workbench/api.rs and src/workbench/commands.rs by `HARNESS_S_WRITE_API_TYPES=1 cargo test --test api_types`; do not edit.
// The shapes every workbench command takes and returns, and every event it sends (docs/api.md).

export type ErrorBody = { error: string, kind: string, };

export type HookKind = "on_init" | "pre_hint" | "before_action" | "post_step" | "plan" | "reflect" | "critique";

export type Role = "system" | "user" | "assistant" | "tool";

export type Origin = { "by": "frame" } | { "by": "policy" } | { "by": "environment" } | { "by": "hook", hook: string, kind: HookKind, };

export type ToolCall = { id: string, name: string, 
/**
 * Parsed JSON arguments (an object for well-formed calls).
 */
arguments: unknown, };

export type Message = { role: Role, content: string, tool_calls?: Array<ToolCall>, tool_call_id?: string | null, origin: Origin, };

export type ToolSpec = { name: string, description: string, 
/**
 * JSON Schema of the arguments object.
 */
parameters: unknown, };

export type Context = { messages: Array<Message>, tools: Array<ToolSpec>, };

export type CallKind = "act" | "plan" | "reflect" | "critique";

export type AssistantTurn = { 
/**
 * Free text (thoughts, or the whole answer for a text-only model).
 */
content: string, tool_calls: Array<ToolCall>, 
/**
 * The raw text of the model's reply as received (for the inspector).
 */
raw: string, prompt_tokens: number, completion_tokens: number, 
/**
 * Token log-probabilities where the back-end reports them.
 */
logprobs?: Array<number> | null, };

export type Signals = { 
/**
 * A short error class such as `unknown_column`, `unknown_table`, `syntax`, `timeout`,
 * `bad_arguments`, `unknown_tool`; `None` when the step did not fail.
 */
error_kind?: string | null, 
/**
 * The action ran a query / code / command against the environment.
 */
executed: boolean, 
/**
 * The action returned an empty result set.
 */
empty_result: boolean, 
/**
 * The action was the final answer / submission.
 */
submitted: boolean, };

export type Score = { reward: number, success: boolean, 
/**
 * Suite-specific details (answer, ground truth, type, hash, failing tests, ...).
 */
details: unknown, };

export type CallRecord = { 
/**
 * The action as the policy proposed it.
 */
proposed: ToolCall, 
/**
 * The action actually executed (after a rewrite), `None` if blocked.
 */
executed: ToolCall | null, 
/**
 * The raw observation (environment output, or the block message).
 */
observation: string, signals: Signals, duration_ms: number, };

export type Effect = { "effect": "inject", text: string, } | { "effect": "block", message: string, } | { "effect": "rewrite", from: ToolCall, to: ToolCall, } | { "effect": "call", call_kind: CallKind, prompt: string, output: string, prompt_tokens: number, completion_tokens: number, };

export type Intervention = { hook: string, kind: HookKind, when: Array<string>, } & ({ "effect": "inject", text: string, } | { "effect": "block", message: string, } | { "effect": "rewrite", from: ToolCall, to: ToolCall, } | { "effect": "call", call_kind: CallKind, prompt: string, output: string, prompt_tokens: number, completion_tokens: number, });

export type EpisodeStatus = "completed" | "task_limit_reached" | "infra_error" | "cancelled" | "action_error";

export type StoredStep = { index: number, keep: number, add: Array<Message>, 
/**
 * Tools are written on the first step only, and where they change.
 */
tools?: Array<ToolSpec> | null, output: AssistantTurn, calls: Array<CallRecord>, interventions: Array<Intervention>, policy_ms: number, env_ms: number, };

export type StoredEpisode = { schema: number, task_id: string, suite: string, family: string, harness: string, policy: string, 
/**
 * Which of the n tries at this task this is.
 */
sample: number, seed: number, status: EpisodeStatus, 
/**
 * Stored compactly: each step's context is written as the messages it adds to the previous
 * step's context (see [`compact_steps`]); readers always see full contexts.
 */
steps: Array<StoredStep>, score: Score | null, 
/**
 * The infrastructure error, if any; kept apart from task failures.
 */
infra_error: string | null, duration_ms: number, prompt_tokens: number, completion_tokens: number, };

export type TrainExample = { context: Context, target: AssistantTurn, weight: number, };

export type RouteQuery = { task_id: string, family: string, signature: string, summary: string, };

export type RouteDecision = { query: RouteQuery, anchor: number, policy_version: number, 
/**
 * Each voter's ranking.
 */
rankings: Array<[string, Array<string>]>, 
/**
 * The aggregated ranking.
 */
aggregate: Array<string>, 
/**
 * The siblings tried.
 */
chosen: Array<string>, 
/**
 * Per chosen sibling: did any of its tries rescue the task.
 */
rescued: Array<[string, boolean]>, 
/**
 * Voters that abstained from this decision, and why.
 */
abstained?: Array<[string, string]>, };

export type LlmVoterConfig = { 
/**
 * Short name; the voter is `llm:<name>` (default: the model name).
 */
name: string | null, base_url: string, model: string, api_key_env?: string | null, temperature: number, 
/**
 * Per-request timeout in seconds (default 60).
 */
timeout_s: number, 
/**
 * Retries after the first attempt (default 2).
 */
max_retries: number, };

export type PolicyConfig = { 
/**
 * `builtin` (offline, trains in process) or `openai` (an endpoint, an external trainer).
 */
backend: "builtin" | "openai", temperature: number, learning_rate: number, 
/**
 * Generated demonstrations for the warm start: one per training task, found by searching
 * the built-in policy's grammar (about [`SECONDS_PER_DEMONSTRATION`] each; the estimate
 * counts them). The built-in policy learns from a few dozen; a served model needs
 * hundreds (at most [`MAX_WARM_START_DEMOS`]).
 */
warm_start_demos: number, 
/**
 * L2 weight decay of the warm start, relative to the learning rate: keeps the habits it
 * teaches bounded, so hints and visible formats still move the policy.
 */
weight_decay: number, 
/**
 * `openai` back-end: the endpoint's API root (e.g. `http://127.0.0.1:8000/v1`).
 */
base_url?: string | null, 
/**
 * `openai` back-end: the model name.
 */
model?: string | null, 
/**
 * `openai` back-end: the environment variable holding the API key.
 */
api_key_env?: string | null, 
/**
 * `openai` back-end: more replicas of the endpoint (API roots); requests are spread over
 * them and a failing one is taken out for a while.
 */
base_urls?: Array<string>, 
/**
 * `openai` back-end: the most tokens one reply may have.
 */
max_tokens?: number | null, 
/**
 * `openai` back-end: seconds one request may take (default 120).
 */
timeout_s?: number | null, 
/**
 * `openai` back-end: episodes one job runs at once against the endpoint (default 8), which
 * serves (and batches) them together. The built-in policy runs one at a time.
 */
concurrency?: number | null, };

export type BudgetConfig = { batch_tasks: number, 
/**
 * n: base tries per training task.
 */
base_tries: number, 
/**
 * k: siblings per all-fail task.
 */
rescue_siblings: number, 
/**
 * m: tries under each chosen sibling.
 */
rescue_tries: number, 
/**
 * Training tasks in the probe set used to measure behaviour profiles.
 */
probe_tasks: number, 
/**
 * The training tasks the experiment draws from (batches, probes, demonstrations and the
 * training evaluation): a fixed seeded subset of this many; 0 keeps every training task.
 * A small pool makes the warm start's demonstrations cover the tasks the updates see.
 */
train_pool?: number, };

export type HarnessConfig = { 
/**
 * The base harness (default `base`).
 */
base: string | null, 
/**
 * The sibling pool (default: every sibling of the base).
 */
siblings: Array<string>, 
/**
 * Extra directory of harness spec files.
 */
dir: string | null, };

export type RouterConfig = { voters: Array<string>, 
/**
 * UCB exploration constant.
 */
ucb_c: number, 
/**
 * LLM voters (OpenAI-compatible endpoints), each voting as `llm:<name>` beside `voters`.
 */
llm?: Array<LlmVoterConfig>, };

export type SuiteDistill = { mode?: string, weight?: number, objective?: string, };

export type DistillConfig = { 
/**
 * `strip` (default), `keep-scaffold`, `internalize`.
 */
mode: string, 
/**
 * Weight of a distilled example relative to a unit GRPO advantage.
 */
weight: number, 
/**
 * How rescues enter the update: `group` (default) joins them to the task's failed base
 * tries as off-policy successes, with group-relative advantages, so steps the failures
 * share with the rescue cancel out; `sft` adds them as positive examples of `weight`.
 */
objective: string, 
/**
 * `[distill.suites.<suite>]`: settings of one suite of a multi-suite experiment that differ
 * from the ones above (a suite whose episodes are long needs a larger weight).
 */
suites?: { [key in string]: SuiteDistill }, };

export type EvalSettings = { 
/**
 * Training-family tasks evaluated each time (0 = all).
 */
train_tasks: number, 
/**
 * Held-out tasks evaluated each time (0 = all).
 */
heldout_tasks?: number, 
/**
 * Sampling temperature at evaluation (0 = greedy).
 */
temperature: number, 
/**
 * The rank-one inference after the last iteration (each evaluation task's base try, then
 * the router's first sibling on a failure): about three evaluations' worth of episodes,
 * which a served model on a small machine may skip (`false`).
 */
rank_one?: boolean, };

export type TrainerConfig = { 
/**
 * `command` (the only kind).
 */
kind: string, 
/**
 * Program and arguments; `{request}` is replaced by the request file's path (which is also
 * in the environment as `HARNESS_S_REQUEST`).
 */
command: Array<string>, 
/**
 * Seconds one update may take before it is stopped (an infrastructure error).
 */
timeout_s: number, 
/**
 * The model the trainer starts from (default: `policy.model`).
 */
base_model?: string | null, 
/**
 * `group` (advantage-weighted policy gradient, default) or `sft` (weighted SFT on positive
 * sequences). Warm-start demonstrations always use `sft`.
 */
objective: string, 
/**
 * Where batches, requests, results and checkpoints go (default `artifacts/trainer`);
 * each update gets `<workdir>/run-<id>/<suite>/<arm>/seed-<seed>/iter-<k>/`.
 */
workdir?: string | null, 
/**
 * Passed through to the trainer untouched.
 */
params?: Record<string, unknown>, 
/**
 * The warm start's params, over `params` (the warm start is a longer SFT on many
 * demonstrations: more epochs, mini-batches, a higher learning rate).
 */
warm_start_params?: Record<string, unknown>, };

export type ServingConfig = { kind: string, 
/**
 * For `kind = "command"`: a program that makes the endpoint serve the checkpoint;
 * `{checkpoint}` and `{name}` are replaced (also `HARNESS_S_CHECKPOINT`, `HARNESS_S_ADAPTER`).
 */
command?: Array<string>, ready_timeout_s: number, };

export type ExperimentConfig = { name: string, suites: Array<string>, 
/**
 * Families never trained on; evaluated as the held-out split.
 */
heldout_families: Array<string>, 
/**
 * Optional dataset file per suite instead of the bundled set (suite name -> path).
 */
datasets: { [key in string]: string }, arms: Array<string>, seeds: Array<number>, iterations: number, 
/**
 * Evaluate every E iterations (and after the last).
 */
eval_every: number, 
/**
 * Re-measure behaviour profiles every R iterations.
 */
reanchor_every: number, policy: PolicyConfig, budget: BudgetConfig, harness: HarnessConfig, router: RouterConfig, distill: DistillConfig, eval: EvalSettings, 
/**
 * Parallel (suite, arm, seed) jobs; 0 = one per core, one more for suites whose agent code runs in a sandboxed process ([`Self::parallel_jobs`]).
 */
workers: number, 
/**
 * The external trainer that updates an `openai` policy (see `docs/trainer-protocol.md`).
 */
trainer?: TrainerConfig | null, 
/**
 * How a new checkpoint reaches the serving endpoint.
 */
serving?: ServingConfig | null, };

export type ProgressUnit = { suite: string, arm: string, seed: number, 
/**
 * Iterations completed (0 = warm start and first evaluation done).
 */
iteration: number, iterations: number, 
/**
 * Executor rollouts spent so far by this job.
 */
rollouts: number, 
/**
 * The latest base-harness success rate on the training split.
 */
success: number, };

export type WorkbenchEvent = { "event": "run_started", run_id: number, total: number, label: string, } | { "event": "episode_finished", run_id: number, task_id: string, harness: string, success: boolean, infra_error: boolean, done: number, total: number, } | { "event": "progress", run_id: number, label: string, done: number, total: number, success_rate: number, eta_s: number | null, 
/**
 * The experiment job (suite, arm, seed) this progress belongs to; `None` for plain evaluations.
 */
unit?: ProgressUnit | null, } | { "event": "phase", run_id: number, suite: string, arm: string, seed: number, 
/**
 * `demonstrations`, `probing`, `rollouts`, `rescues`, `update`, `evaluation`, `rank_one`
 * or `finished` ([`PHASES`]).
 */
phase: string, 
/**
 * The training iteration the phase belongs to (0: warm start, first probing and
 * evaluation).
 */
iteration: number, iterations: number, 
/**
 * The phase in words: `warm-start demonstrations`, `iteration 3 of 8: rescues`.
 */
label: string, 
/**
 * Where the phase stands: demonstrations found, tasks done (0 of 0 when it has no steps).
 */
step: number, steps: number, 
/**
 * Episodes of the whole run.
 */
episodes: EpisodeCount, 
/**
 * Seconds left, from the episodes per second measured so far; `None` until a few
 * seconds of episodes are in.
 */
eta_s: number | null, } | { "event": "evaluation", run_id: number, suite: string, arm: string, seed: number, iteration: number, 
/**
 * `train` or `heldout`.
 */
split: string, success: number, tasks: number, } | { "event": "message", run_id: number, text: string, } | { "event": "run_finished", run_id: number, status: string, };

export type Workspace = { db: string, workspace_dir: string, version: string, 
/**
 * The newest demo run, whatever its state (a reopened window follows a running demo).
 */
demo_run_id: number | null, demo_status: string | null, 
/**
 * The newest demo run that finished.
 */
demo_finished_run_id: number | null, running: Array<number>, };

export type FamilyCount = { family: string, tasks: number, };

export type Dataset = { name: string, 
/**
 * `null` when the file no longer loads.
 */
tasks: number | null, path: string, };

export type Suite = { name: string, description: string, tasks: number, families: Array<FamilyCount>, datasets: Array<Dataset>, 
/**
 * What the suite's importer reads, in the benchmark's own terms.
 */
import_format: string, 
/**
 * Whether the built-in policy has a grammar for this suite (it can be trained here).
 */
builtin_policy: boolean, };

export type TaskRow = { id: string, family: string, instruction: string, };

export type TaskDetail = { id: string, family: string, instruction: string, 
/**
 * The prompt exactly as an episode presents it.
 */
prompt: string, payload: unknown, };

export type ImportProblem = { line: number, message: string, };

export type ImportResult = { ok: true, name: string, path: string, tasks: number, families: Array<FamilyCount>, } | { ok: false, errors: Array<ImportProblem>, };

export type DiffLine = { 
/**
 * `+`, `-` or ` `.
 */
op: "+" | "-" | " ", line: string, };

export type HookRef = { id: string, kind: string, };

export type Counts = { 
/**
 * Base failed, sibling passed.
 */
fix: number, 
/**
 * Base passed, sibling failed.
 */
regress: number, both_pass: number, both_fail: number, };

export type ProfileBucket = { family: string, signature: string, 
/**
 * Base failed, sibling passed.
 */
fix: number, 
/**
 * Base passed, sibling failed.
 */
regress: number, both_pass: number, both_fail: number, };

export type Profile = { run_id: number, arm: string, anchor: number, policy_version: number, buckets: Array<ProfileBucket>, evidence: Array<string>, 
/**
 * Base failed, sibling passed.
 */
fix: number, 
/**
 * Base passed, sibling failed.
 */
regress: number, both_pass: number, both_fail: number, };

export type ProfileRun = { run_id: number, name: string, status: string, 
/**
 * The arm whose profiles are shown (harness-s when the run has it).
 */
arm: string, 
/**
 * The last re-anchor measured.
 */
anchor: number, siblings: number, 
/**
 * Paired probe outcomes (base against sibling) behind the profiles, all siblings together.
 */
pairs: number, 
/**
 * The run `harnesses` takes its profiles from when none is named: the most pairs.
 */
default: boolean, };

export type Harness = { name: string, description: string, specialty: string | null, base: boolean, extends: string | null, file: string, 
/**
 * The spec file's own text.
 */
spec: string, 
/**
 * What the harness changes against the base (resolved specs, line by line).
 */
diff: Array<DiffLine>, hooks: Array<HookRef>, profile: Profile | null, };

export type ConfigText = { toml: string, };

export type RolloutEstimate = { 
/**
 * (suite, arm, seed) jobs.
 */
jobs: number, 
/**
 * Jobs that run at the same time ([`ExperimentConfig::parallel_jobs`]).
 */
parallel: number, 
/**
 * Fewest rollouts: every training task succeeds in some base try, so nothing is rescued.
 */
min: number, 
/**
 * Most rollouts: every training task fails all its base tries and gets the whole rescue
 * budget (`max` = `train` + `rescue` + `probe` + `eval`).
 */
max: number, 
/**
 * Base tries on the training batches.
 */
train: number, 
/**
 * At most this many extra tries on all-fail tasks (sibling rescues, or base resamples).
 */
rescue: number, 
/**
 * Paired base and sibling rollouts measuring behaviour profiles.
 */
probe: number, 
/**
 * Evaluation under the base harness, and the rank-one inference at the end.
 */
eval: number, 
/**
 * Warm-start demonstrations searched (once per suite and seed; not rollouts).
 */
demonstrations: number, 
/**
 * Fewest episodes the store holds at the end: the rollouts less the rank-one inference's
 * base tries, which are not stored (each evaluation task's first try, and its second after
 * a failure). A running experiment counts its progress against these two.
 */
episodes_min: number, 
/**
 * Most episodes the store holds at the end.
 */
episodes_max: number, 
/**
 * Rough wall time for `min` and for `max` rollouts, in seconds.
 */
seconds_min: number, seconds_max: number, 
/**
 * Set when the experiment is large (more than [`LARGE_ROLLOUTS`] rollouts or
 * [`LARGE_SECONDS`]); it may still run.
 */
warning: string | null, };

export type SuitePower = { suite: string, 
/**
 * The split the headline compares on: `heldout` when the design has held-out families.
 */
split: string, 
/**
 * The design: tasks per evaluation of that split, and seeds.
 */
tasks: number, seeds: number, 
/**
 * The pilot run the spread comes from; `null` when no finished run on this suite has one.
 */
pilot_run: number | null, pilot_name: string | null, pilot_split: string | null, 
/**
 * The pilot's paired tasks and its mean seeds per task.
 */
pilot_tasks: number | null, pilot_seeds: number | null, 
/**
 * Variance of the true per-task differences, and of one seed's around its task's mean.
 */
between: number | null, within: number | null, 
/**
 * The difference (as a share, 0.05 = 5 points) this design detects with 80% power at
 * two-sided 5%.
 */
mde: number | null, 
/**
 * The effect asked about, and the tasks (at these seeds) and seeds (at these tasks) it
 * needs; `seeds_needed` is `null` when no number of seeds reaches it.
 */
effect: number | null, tasks_needed: number | null, seeds_needed: number | null, 
/**
 * The plan in one sentence.
 */
sentence: string, };

export type ConfigCheck = { ok: true, config: ExperimentConfig, 
/**
 * `null` when a suite cannot be set up (a dataset file that does not load).
 */
estimate: RolloutEstimate | null, 
/**
 * Per suite, what the design can detect, planned from the newest finished run on that
 * suite (`docs/power.md`); empty when a suite cannot be set up.
 */
power: Array<SuitePower>, } | { ok: false, error: string, 
/**
 * The setting the error is about (`iterations`, `budget.batch_tasks`, `policy.base_url`,
 * ...) as a TOML key path.
 */
key: string, 
/**
 * The line of the checked `toml`; `null` for a `config` given as JSON.
 */
line: number | null, };

export type SavedFile = { path: string, };

export type ConnectionCheck = { ok: boolean, models: Array<string>, error: string | null, };

export type ExportedFiles = { dir: string, files: Array<string>, 
/**
 * Conversations written, per source.
 */
conversations: { [key in string]: number }, };

export type PolicyVersion = { key: string, arm: string, 
/**
 * The experiment's seed (its value, as in the experiment file).
 */
seed: number, seed_index: number, iteration: number, trained_from: number, ok: boolean, loss: number | null, sequences: number | null, seconds: number, checkpoint: string | null, error: string | null, };

export type TrainerCheck = { ok: boolean, seconds: number, metrics: Record<string, unknown>, log_tail: Array<string>, error: string | null, };

export type StartedRun = { run_id: number, 
/**
 * Set when an unfinished run of the same configuration was resumed instead.
 */
note?: string, };

export type Acknowledged = { ok: boolean, };

export type RunDeleted = { run_id: number, 
/**
 * Episodes, each with its whole trajectory (steps, calls, interventions).
 */
episodes: number, 
/**
 * Records: routing decisions, profiles, distilled examples, batches, checkpoints.
 */
records: number, 
/**
 * Per-run state (resume checkpoints).
 */
states: number, };

export type WorkerRow = { name: string, host: string, slots: number, jobs_done: number, started_at: string, 
/**
 * Milliseconds since its last heartbeat, on the database's clock.
 */
since_heartbeat_ms: number, 
/**
 * When it stopped (a clean exit); `None` while it runs or after it was killed.
 */
stopped_at: string | null, };

export type QueueCounts = { queued: number, running: number, done: number, failed: number, };

export type RunningExperiment = { run_id: number, name: string, created_at: string, episodes: number, queue: QueueCounts | null, };

export type Workers = { backend: string, running: Array<RunningExperiment>, workers: Array<WorkerRow>, };

export type Unit = { suite: string, arm: string, seed: number, iteration: number, iterations: number, rollouts: number, success: number | null, 
/**
 * What the job is doing now (the `phase` event's `phase`, `label`, `step` and `steps`).
 */
phase?: string, label?: string, step?: number, steps?: number, };

export type EpisodeCount = { done: number, 
/**
 * Fewest planned (no task needs a rescue).
 */
min: number, 
/**
 * Most planned (every task needs the whole rescue budget).
 */
max: number, 
/**
 * Expected, from the share of tasks that have needed a rescue so far; `None` before any.
 */
expected: number | null, };

export type LiveEvaluation = { suite: string, arm: string, seed: number, iteration: number, split: string, success: number, tasks: number, };

export type SeriesLook = { color: string, dash: string | null, marker: string, };

export type ArmLook = { arm: string, look: SeriesLook, };

export type ArmInfo = { arm: string, 
/**
 * What it does with a task on which every base try failed.
 */
description: string, 
/**
 * It consults the router (and measures behaviour profiles).
 */
routed: boolean, 
/**
 * It runs sibling harnesses at all.
 */
uses_siblings: boolean, };

export type ChartStyle = { arms: Array<ArmLook>, other_arm: SeriesLook, other_run_dash: string, };

export type Job = { run_id: number, name: string, status: string, error: string | null, done: number, total: number, eta_s: number | null, success_rate: number, 
/**
 * As the progress events carry them.
 */
units: Unit[], messages: Array<string>, 
/**
 * The run's episodes against the plan, once a phase event has counted them.
 */
episodes: EpisodeCount | null, 
/**
 * The newest phase of any job, in words: `harness-s seed 2: iteration 3 of 8: rescues`.
 */
now: string | null, 
/**
 * Evaluations recorded so far, in order (a long run's thinned to about 200 iterations).
 */
evaluations: Array<LiveEvaluation>, 
/**
 * The transfer curves of `evaluations`, as the analysis computes them.
 */
curves: Array<TransferCurve>, 
/**
 * Who runs it when this process does not (another app, `harness-s experiment run`, a
 * coordinator elsewhere): its progress is then read from the snapshot that process keeps
 * in the store, and only that process can cancel it.
 */
elsewhere: string | null, };

export type ExperimentRow = { id: number, name: string, status: string, created_at: string, finished_at: string | null, suites: Array<string>, policy: unknown, summary: unknown, 
/**
 * The routed arm against policy-only, from the same analysis as the run's results (at
 * the last evaluation every arm and seed reached, which each headline names).
 */
headline: Array<Headline>, pooled: Pooled | null, };

export type ExperimentDetail = { config: ExperimentConfig, config_toml: string, id: number, name: string, status: string, created_at: string, finished_at: string | null, suites: Array<string>, policy: unknown, summary: unknown, 
/**
 * The routed arm against policy-only, from the same analysis as the run's results (at
 * the last evaluation every arm and seed reached, which each headline names).
 */
headline: Array<Headline>, pooled: Pooled | null, };

export type EpisodeRow = { 
/**
 * A successful rescue episode.
 */
rescued: boolean, id: number, run_id: number, task_id: string, suite: string, family: string, harness: string, policy: string, sample: number, seed: number, status: "completed" | "task_limit_reached" | "infra_error" | "cancelled" | "action_error", success: boolean, 
/**
 * `None` when the episode was not scored.
 */
reward: number | null, infra_error: string | null, n_steps: number, n_interventions: number, prompt_tokens: number, completion_tokens: number, duration_ms: number, 
/**
 * The trajectory schema version of the stored episode.
 */
schema: number, created_at: string, 
/**
 * The experiment arm (e.g. a harness variant or training condition).
 */
arm: string | null, 
/**
 * Which replicate seed of the experiment.
 */
seed_index: number | null, 
/**
 * The training iteration.
 */
iteration: number | null, 
/**
 * `train`, `rescue`, `probe`, `eval`, ...
 */
phase: string | null, 
/**
 * `train` or `heldout`.
 */
split: string | null, };

export type EpisodePage = { total: number, offset: number, rows: Array<EpisodeRow>, };

export type EpisodeRecord = { id: number, run_id: number, row: EpisodeRow, 
/**
 * The stored trajectory (`StoredEpisode` in the UI's types).
 */
episode: StoredEpisode, };

export type Attempt = { id: number, harness: string, success: boolean, };

export type Rescue = { task_id: string, suite: string, family: string, arm: string, seed_index: number, iteration: number, 
/**
 * The sibling harness whose try rescued the task.
 */
sibling: string, base_failures: Array<number>, 
/**
 * The rescuing episode (`null` in a record that does not name it).
 */
rescue: number | null, attempts: Array<Attempt>, 
/**
 * The distilled examples; the built-in policy's carry `producible`: can its grammar produce
 * the target from this context (false: training skips the example).
 */
distilled: { mode: string; examples: (TrainExample & { producible?: boolean })[] }, route: RouteDecision | null, };

export type RunInfo = { id: number, name: string, kind: string, 
/**
 * `running`, `finished`, `failed` or `cancelled`.
 */
status: string, created_at: string, finished_at: string | null, };

export type DatasetHash = { suite: string, 
/**
 * `bundled`, or the dataset file named in the configuration.
 */
source: string, tasks: number, 
/**
 * md5 over the tasks sorted by id: each task's id, a tab, its payload as JSON, a newline.
 */
md5: string | null, 
/**
 * Why the dataset could not be hashed (it could not be loaded).
 */
error: string | null, 
/**
 * Distinct task ids the run evaluated (phase `eval`), and the md5 of their sorted,
 * newline-joined list: what the numbers are about, available even when the dataset cannot
 * be loaded.
 */
used_tasks: number, used_ids_md5: string, };

export type Provenance = { workbench_version: string, run_id: number, run_name: string, status: string, created_at: string, finished_at: string | null, seeds: Array<number>, iterations: number | null, dataset: Array<DatasetHash>, episodes: number, 
/**
 * Records by kind (`route`, `profile`, `distilled`).
 */
records: { [key in string]: number }, 
/**
 * The experiment configuration as stored (secrets redacted).
 */
config: ExperimentConfig, 
/**
 * When this analysis was made (UTC).
 */
generated_at: string, };

export type PairedDelta = { arm: string, baseline: string, 
/**
 * Mean over tasks of (arm − baseline), each task's difference averaged over the seeds both
 * arms evaluated it with.
 */
mean: number, 
/**
 * Paired percentile bootstrap over tasks.
 */
ci95: [number, number], tasks: number, seeds: number, 
/**
 * The minimum detectable effect of this comparison: the true difference its size (these
 * tasks, each averaged over these seeds) detects with 80% power at two-sided 5%
 * ([`crate::stats::minimum_detectable_effect`]); `None` below two tasks.
 */
mde: number | null, };

export type Headline = { suite: string, split: string, iteration: number, delta: PairedDelta, covers_zero: boolean, 
/**
 * Success of the arm and of the baseline on that split (each over its own tasks).
 */
arm_success: number, baseline_success: number | null, 
/**
 * What it means, in one plain sentence.
 */
sentence: string, };

export type Pooled = { split: string, suites: Array<string>, delta: PairedDelta, covers_zero: boolean, 
/**
 * Success of the arm and of the baseline over the pooled tasks.
 */
arm_success: number, baseline_success: number, sentence: string, };

export type SeedValue = { seed_index: number, success: number, 
/**
 * Evaluated tasks (episodes that count).
 */
tasks: number, };

export type CurvePoint = { iteration: number, 
/**
 * Mean over seeds of each seed's success rate.
 */
mean: number, 
/**
 * 95% t-interval over seeds, clipped to [0, 1]; the point itself with one seed.
 */
ci95: [number, number], seeds: number, per_seed: Array<SeedValue>, };

export type TransferCurve = { suite: string, arm: string, 
/**
 * `train` (training families) or `heldout` (families never trained on).
 */
split: string, points: Array<CurvePoint>, };

export type FinalRow = { suite: string, arm: string, split: string, iteration: number, seeds: Array<number>, tasks: number, 
/**
 * Mean over tasks of the per-task success averaged over seeds.
 */
success: number, ci95: [number, number], 
/**
 * Against [`BASELINE_ARM`] (absent for the baseline itself, or when it is not in the run).
 */
delta: PairedDelta | null, 
/**
 * Per task id: success averaged over seeds.
 */
per_task: { [key in string]: number }, };

export type RoutedDelta = { suite: string, split: string, delta: PairedDelta, };

export type FinalTable = { baseline: string, 
/**
 * Per suite: the iteration the table is at.
 */
iterations: { [key in string]: number }, rows: Array<FinalRow>, 
/**
 * The routed arm against every other arm, paired on the same tasks and seeds: does routing
 * beat the controls that spend the same budget (random siblings, more base tries, ...)?
 */
routed_vs: Array<RoutedDelta>, };

export type LocalityCell = { suite: string, 
/**
 * `None` in the totals (summed over every arm and anchor).
 */
arm: string | null, anchor: number | null, sibling: string, family: string, fix: number, regress: number, both_pass: number, both_fail: number, 
/**
 * Profiles (arm × seed × anchor) summed into this cell.
 */
profiles: number, };

export type Locality = { 
/**
 * Per suite, the sibling pool in its fixed order.
 */
siblings: { [key in string]: Array<string> }, 
/**
 * Per suite, the families measured.
 */
families: { [key in string]: Array<string> }, 
/**
 * Per (arm, anchor, sibling, family), summed over seeds.
 */
by_anchor: Array<LocalityCell>, 
/**
 * Per (sibling, family), summed over arms, anchors and seeds.
 */
total: Array<LocalityCell>, };

export type CoveragePoint = { 
/**
 * Executor rollouts per failed task.
 */
budget: number, covered: number, share: number, ci95: [number, number], };

export type CoverageCurve = { 
/**
 * `base-resample`, `sibling-union` or `routed`.
 */
strategy: string, 
/**
 * A legend label.
 */
label: string, 
/**
 * Which failed tasks the curve is measured on.
 */
population: string, 
/**
 * Failed task occasions in the population.
 */
units: number, points: Array<CoveragePoint>, 
/**
 * Why the curve could not be measured from this run's data.
 */
not_measured: string | null, };

export type Complementarity = { suite: string, 
/**
 * Probe occasions whose base rollout failed.
 */
base_failed_probe_tasks: number, siblings: Array<string>, curves: Array<CoverageCurve>, };

export type RouterSource = { 
/**
 * From probe rollouts of every sibling at the same anchor.
 */
probe: number, 
/**
 * From the routing record's rescued flags (tried siblings only).
 */
record: number, };

export type RouterQuality = { suite: string, arm: string, 
/**
 * `None`: every anchor together.
 */
anchor: number | null, 
/**
 * Routed (all-fail) task occasions.
 */
tasks: number, source: RouterSource, 
/**
 * The sibling pool size (K: k runs 1..=K).
 */
pool: number, 
/**
 * hit@k for k = 1..=K.
 */
routed: Array<number>, 
/**
 * Wilson 95% interval of each routed hit@k.
 */
routed_ci95: Array<[number, number]>, random: Array<number>, oracle: Array<number>, };

export type SiblingUtility = { suite: string, arm: string, seed_index: number, anchor: number, iteration: number, sibling: string, 
/**
 * Fix rate among base failures; `None` when the probe saw no base failure.
 */
utility: number | null, base_failures: number, policy_version: number, };

export type RankCorrelation = { suite: string, arm: string, 
/**
 * `None` in the means over seeds.
 */
seed_index: number | null, from_anchor: number, to_anchor: number, 
/**
 * Spearman's rho (per seed), or the mean over the seeds that have one.
 */
rho: number | null, 
/**
 * 95% t-interval over seeds (means only).
 */
ci95: [number, number] | null, 
/**
 * Siblings compared (per seed), or seeds averaged (means).
 */
n: number, };

export type Nonstationarity = { utilities: Array<SiblingUtility>, per_seed: Array<RankCorrelation>, 
/**
 * Per (suite, arm, anchor pair), the mean over seeds.
 */
mean: Array<RankCorrelation>, 
/**
 * Per (suite, arm): the mean of every defined per-seed rho over all anchor pairs.
 */
overall: Array<RankCorrelation>, };

export type BehaviourRow = { suite: string, arm: string, iteration: number, tag: string, 
/**
 * Episodes tagged.
 */
episodes: number, with_tag: number, share: number, 
/**
 * Wilson 95% interval.
 */
ci95: [number, number], };

export type BehaviourPersistence = { suite: string, 
/**
 * The phase the trajectories come from (`eval`, or `train` before any evaluation).
 */
phase: string, 
/**
 * (tag, short label, meaning).
 */
tags: Array<[string, string, string]>, rows: Array<BehaviourRow>, 
/**
 * Base-harness episodes of that phase, and how many were tagged.
 */
episodes_total: number, episodes_tagged: number, 
/**
 * Whether some cell was sampled (at most [`MAX_PER_CELL`] per arm and iteration).
 */
sampled: boolean, };

export type RankOneRow = { suite: string, arm: string, split: string, seeds: number, 
/**
 * Base try, then the rank-one sibling on failure.
 */
routed: number, routed_ci95: [number, number], 
/**
 * Two base tries.
 */
base_only: number, base_only_ci95: [number, number], 
/**
 * routed − base_only, per seed, then averaged.
 */
gain: number, gain_ci95: [number, number], 
/**
 * Executor rollouts spent, summed over seeds.
 */
rollouts_routed: number, rollouts_base_only: number, 
/**
 * From the `rank1` episodes: sibling tries after a failed base try, and their successes.
 */
sibling_tries: number, sibling_rescues: number, };

export type RankOneAnalysis = { 
/**
 * Where the rates come from.
 */
source: string, rows: Array<RankOneRow>, 
/**
 * Jobs that have not reached the end yet (rank-one inference runs after the last iteration).
 */
jobs_pending: number, };

export type Analysis = { 
/**
 * The run's status, repeated at the top so a reader sees at once whether the run is done.
 */
status: string, 
/**
 * Only a finished run's numbers are final.
 */
finished: boolean, run: RunInfo, provenance: Provenance, suites: Array<string>, arms: Array<string>, base_harness: string, 
/**
 * The held-out (or, without held-out families, training) paired difference of `harness-s`
 * against `policy-only`, per suite.
 */
headline: Array<Headline>, 
/**
 * The same difference over every suite's tasks at once, for a run of several suites.
 */
pooled: Pooled | null, transfer: Array<TransferCurve>, final_table: FinalTable, locality: Locality, complementarity: Array<Complementarity>, router: Array<RouterQuality>, nonstationarity: Nonstationarity, behaviour: Array<BehaviourPersistence>, rank_one: RankOneAnalysis, 
/**
 * Caveats about the data (missing phases, sampling, fallbacks), in plain language.
 */
notes: Array<string>, 
/**
 * The numbers report sections compute themselves, beyond the fields above, by section id
 * (`crate::report::section`); left out when there are none.
 */
sections?: Record<string, unknown>, };

export type ConfigDifference = { 
/**
 * The configuration key (`seeds`, `iterations`, `budget.batch_tasks`, `dataset.dbbench`, ...).
 */
key: string, 
/**
 * What to call it in a sentence (`seeds`, `batch tasks`, `dbbench dataset`, ...).
 */
label: string, 
/**
 * This run's value, and the other run's, as short text.
 */
this: string, other: string, };

export type CompareRow = { suite: string, arm: string, split: string, this: number | null, this_ci95: [number, number] | null, 
/**
 * Seeds behind this run's number (0 when it has none).
 */
this_seeds: number, other: number | null, other_ci95: [number, number] | null, 
/**
 * Seeds behind the other run's number (0 when it has none).
 */
other_seeds: number, 
/**
 * The iteration of this run's number (its final table's), and of the other run's.
 */
this_iteration: number | null, other_iteration: number | null, 
/**
 * this − other (each the mean over its own tasks and seeds; not paired).
 */
difference: number | null, 
/**
 * this − other over the tasks both evaluated (per task: mean over seeds), with a paired
 * bootstrap interval over those tasks; its `seeds` is the smaller of the two runs' seed
 * counts.
 */
paired: PairedDelta | null, };

export type Comparison = { this_run: number, other_run: RunInfo, other_final_table: FinalTable, other_headline: Array<Headline>, other_dataset_md5: Array<[string, string | null]>, rows: Array<CompareRow>, 
/**
 * The settings in which the configurations differ (the name aside), most telling first:
 * seeds, iterations, budgets, suites, datasets, held-out families, policy, then the rest.
 * Empty: the same configuration except the name.
 */
differences: Array<ConfigDifference>, 
/**
 * The other run's transfer curves.
 */
other_transfer: Array<TransferCurve>, 
/**
 * What makes the two runs' numbers hard to compare, in sentences: suites only one run
 * has, final tables at different iterations, arms only one run has. Empty: nothing.
 */
warnings: Array<string>, };

export type ChartRef = { id: string, title: string, file: string, series: Array<string>, svg?: string, };

export type ReportJson = { comparison: Comparison | null, 
/**
 * The charts drawn: id, title and the series they show.
 */
charts: Array<ChartRef>, 
/**
 * The run's status, repeated at the top so a reader sees at once whether the run is done.
 */
status: string, 
/**
 * Only a finished run's numbers are final.
 */
finished: boolean, run: RunInfo, provenance: Provenance, suites: Array<string>, arms: Array<string>, base_harness: string, 
/**
 * The held-out (or, without held-out families, training) paired difference of `harness-s`
 * against `policy-only`, per suite.
 */
headline: Array<Headline>, 
/**
 * The same difference over every suite's tasks at once, for a run of several suites.
 */
pooled: Pooled | null, transfer: Array<TransferCurve>, final_table: FinalTable, locality: Locality, complementarity: Array<Complementarity>, router: Array<RouterQuality>, nonstationarity: Nonstationarity, behaviour: Array<BehaviourPersistence>, rank_one: RankOneAnalysis, 
/**
 * Caveats about the data (missing phases, sampling, fallbacks), in plain language.
 */
notes: Array<string>, 
/**
 * The numbers report sections compute themselves, beyond the fields above, by section id
 * (`crate::report::section`); left out when there are none.
 */
sections?: Record<string, unknown>, };

export type Report = { other: RunInfo | null, comparison: Comparison | null, 
/**
 * The charts drawn: id, title and the series they show.
 */
charts: Array<ChartRef>, 
/**
 * The run's status, repeated at the top so a reader sees at once whether the run is done.
 */
status: string, 
/**
 * Only a finished run's numbers are final.
 */
finished: boolean, run: RunInfo, provenance: Provenance, suites: Array<string>, arms: Array<string>, base_harness: string, 
/**
 * The held-out (or, without held-out families, training) paired difference of `harness-s`
 * against `policy-only`, per suite.
 */
headline: Array<Headline>, 
/**
 * The same difference over every suite's tasks at once, for a run of several suites.
 */
pooled: Pooled | null, transfer: Array<TransferCurve>, final_table: FinalTable, locality: Locality, complementarity: Array<Complementarity>, router: Array<RouterQuality>, nonstationarity: Nonstationarity, behaviour: Array<BehaviourPersistence>, rank_one: RankOneAnalysis, 
/**
 * Caveats about the data (missing phases, sampling, fallbacks), in plain language.
 */
notes: Array<string>, 
/**
 * The numbers report sections compute themselves, beyond the fields above, by section id
 * (`crate::report::section`); left out when there are none.
 */
sections?: Record<string, unknown>, };

export type ReportPaths = { dir: string, html: string, json: string, csv: Array<string>, charts: Array<string>, };

export type ReportFile = { file_name: string, mime: string, 
/**
 * The file's text; for a binary file (`encoding: "base64"`), its bytes in base64.
 */
text: string, encoding?: string, 
/**
 * For a CSV of several tables: the tables it holds.
 */
tables?: Array<string>, };

export type NoArgs = Record<symbol, never>;

export type SuiteArgs = { suite: string, };

export type IdArgs = { id: number, };

export type RunArgs = { run_id: number, };

export type TasksArgs = { suite: string, family?: string, 
/**
 * An imported dataset's name instead of the bundled tasks.
 */
dataset?: string, };

export type TaskArgs = { suite: string, id: string, dataset?: string, };

export type ImportArgs = { suite: string, name: string, 
/**
 * The file's text, in the benchmark's own format.
 */
text: string, };

export type HarnessesArgs = { suite: string, 
/**
 * Profiles from this run's behaviour measurements.
 */
run?: number, };

export type ConfigCheckArgs = { toml?: string, config?: ExperimentConfig, 
/**
 * An effect to size for, as a share (0.05 = 5 points): the plan then gives the tasks
 * and seeds it needs.
 */
effect?: number, };

export type ConfigRenderArgs = { config: ExperimentConfig, 
/**
 * The file being edited, whose comments the rendering keeps.
 */
original?: string, };

export type ConfigSaveArgs = { toml: string, path: string, overwrite?: boolean, };

export type ConnectionArgs = { base_url: string, model?: string, api_key_env?: string, };

export type TrainerArgs = { trainer: TrainerConfig, base_model?: string, };

export type StartArgs = { 
/**
 * The experiment file's text.
 */
toml: string, };

export type CompareArgs = { id: number, other: number, };

export type EpisodesArgs = { run_id: number, suite?: string, arm?: string, family?: string, harness?: string, phase?: string, split?: string, task_id?: string, success?: boolean, 
/**
 * Words every listed episode's trajectory contains.
 */
text?: string, 
/**
 * Only successful rescues (true) or everything else (false).
 */
rescued?: boolean, limit?: number, offset?: number, };

export type RescueArgs = { episode_id: number, };

export type ExportReportArgs = { id: number, compare?: number, out_dir: string, };

export type ReportFileArgs = { id: number, compare?: number, 
/**
 * `html`, `json`, `csv` (with `table`) or `csv-zip`.
 */
format: string, table?: string, };

export type ExportTrainingArgs = { id: number, 
/**
 * `openai-chat`, `trl-sft` or `trl-dpo`.
 */
format: string, };

/** Every command: its arguments and its response (`call` in client.ts is typed by it). */
export type Commands = {
  workspace: { args: NoArgs; response: Workspace };
  suites: { args: NoArgs; response: Array<Suite> };
  tasks: { args: TasksArgs; response: Array<TaskRow> };
  task: { args: TaskArgs; response: TaskDetail };
  import_dataset: { args: ImportArgs; response: ImportResult };
  harnesses: { args: HarnessesArgs; response: Array<Harness> };
  profile_runs: { args: SuiteArgs; response: Array<ProfileRun> };
  config_template: { args: NoArgs; response: ConfigText };
  config_check: { args: ConfigCheckArgs; response: ConfigCheck };
  config_render: { args: ConfigRenderArgs; response: ConfigText };
  config_save: { args: ConfigSaveArgs; response: SavedFile };
  test_connection: { args: ConnectionArgs; response: ConnectionCheck };
  test_trainer: { args: TrainerArgs; response: TrainerCheck };
  experiment_start: { args: StartArgs; response: StartedRun };
  experiment_cancel: { args: RunArgs; response: Acknowledged };
  experiment_resume: { args: RunArgs; response: StartedRun };
  run_demo: { args: NoArgs; response: StartedRun };
  jobs: { args: NoArgs; response: Array<Job> };
  experiments: { args: NoArgs; response: Array<ExperimentRow> };
  experiment: { args: IdArgs; response: ExperimentDetail };
  run_delete: { args: IdArgs; response: RunDeleted };
  workers: { args: NoArgs; response: Workers };
  results: { args: IdArgs; response: Report };
  compare: { args: CompareArgs; response: Report };
  episodes: { args: EpisodesArgs; response: EpisodePage };
  episode: { args: IdArgs; response: EpisodeRecord };
  rescue: { args: RescueArgs; response: Rescue };
  export_report: { args: ExportReportArgs; response: ReportPaths };
  report_file: { args: ReportFileArgs; response: ReportFile };
  export_training: { args: ExportTrainingArgs; response: ExportedFiles };
  policy_versions: { args: IdArgs; response: Array<PolicyVersion> };
  chart_style: { args: NoArgs; response: ChartStyle };
  arms: { args: NoArgs; response: Array<ArmInfo> };
};
