// Generated from src/workbench/api.rs by `HARNESS_S_WRITE_API_TYPES=1 cargo test --test api_types`; do not edit.
// The shapes every workbench command returns (docs/api.md).
import type { ExperimentConfig, RouteDecision, StoredEpisode, TrainExample } from "./types";

export type ErrorBody = { error: string, kind: string, };

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

export type ConfigCheck = { ok: true, config: ExperimentConfig, 
/**
 * `null` when a suite cannot be set up (a dataset file that does not load).
 */
estimate: RolloutEstimate | null, } | { ok: false, error: string, 
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

export type ChartStyle = { arms: Array<string>, looks: Array<SeriesLook>, other_arm: SeriesLook, other_run_dash: string, };

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
curves: Array<TransferCurve>, };

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

export type Rescue = { task_id: string, suite: string, family: string, arm: string, seed_index: number, iteration: number, sibling: string, base_failures: Array<number>, rescue: number, attempts: Array<Attempt>, distilled: { mode: string; examples: TrainExample[] }, route: RouteDecision | null, };

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
ci95: [number, number], tasks: number, seeds: number, };

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
notes: Array<string>, };

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
other_transfer: Array<TransferCurve>, };

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
notes: Array<string>, };

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
notes: Array<string>, };

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
