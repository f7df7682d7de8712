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

export type Counts = { fix: number, regress: number, both_pass: number, both_fail: number, };

export type ProfileBucket = { family: string, signature: string, fix: number, regress: number, both_pass: number, both_fail: number, };

export type Profile = { run_id: number, arm: string, anchor: number, policy_version: number, buckets: Array<ProfileBucket>, evidence: Array<string>, fix: number, regress: number, both_pass: number, both_fail: number, };

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

export type ConfigCheck = { ok: true, config: ExperimentConfig, } | { ok: false, error: string, 
/**
 * The setting the error is about (`iterations`, `policy.base_url`, ...); empty when none.
 */
key: string, line: number | null, };

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

export type Unit = { suite: string, arm: string, seed: number, iteration: number, iterations: number, rollouts: number, success: number | null, };

export type Job = { run_id: number, name: string, status: string, error: string | null, done: number, total: number, eta_s: number | null, success_rate: number, 
/**
 * As the progress events carry them.
 */
units: Unit[], messages: Array<string>, };

export type ExperimentRow = { id: number, name: string, status: string, created_at: string, finished_at: string | null, suites: Array<string>, policy: unknown, summary: unknown, };

export type ExperimentDetail = { config: ExperimentConfig, config_toml: string, id: number, name: string, status: string, created_at: string, finished_at: string | null, suites: Array<string>, policy: unknown, summary: unknown, };

export type EpisodeRow = { 
/**
 * A successful rescue episode.
 */
rescued: boolean, id: number, run_id: number, task_id: string, suite: string, family: string, harness: string, policy: string, sample: number, seed: number, status: "completed" | "task_limit_reached" | "infra_error" | "cancelled", success: boolean, 
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

export type ReportPaths = { dir: string, html: string, json: string, csv: Array<string>, charts: Array<string>, };

export type ReportFile = { file_name: string, mime: string, text: string, 
/**
 * For a CSV of several tables: the tables it holds.
 */
tables?: Array<string>, };
