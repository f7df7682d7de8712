//! The store schema: a public contract. Other tools (notebooks, the desktop shell, SQL by hand)
//! read these tables directly, so columns are only ever added, never renamed or repurposed.
//!
//! The schema is created and upgraded by the migrations in `migrations/sqlite` and
//! `migrations/postgres` (kept column-for-column identical), run by [`Store::open`]. sqlx
//! records applied migrations in `_sqlx_migrations`.
//!
//! Version 2 changed one column's contents, the only such change: `episodes.trajectory` is an
//! encoded blob instead of JSON text (see `codec` below), and `episodes` lost the indexes no
//! query used. A v1 store is upgraded when a v2 release opens it: its rows keep their JSON text
//! (`codec` 0, read in place) until `harness-s store compact` converts them. Readers outside the
//! workbench get an episode's JSON with `harness-s store episode ID`, or decode it as
//! described under `codec`.
//!
//! Conventions, both back-ends:
//! - ids are 64-bit integers assigned by the database, increasing: newest first is `id DESC`;
//! - timestamps are UTC RFC 3339 text with milliseconds (`2025-01-02T03:04:05.678Z`), which
//!   sorts chronologically;
//! - "JSON" columns hold JSON text (TEXT, not a JSON type, on both back-ends);
//! - integers are `INTEGER` on SQLite and `BIGINT` on Postgres, reals `REAL` / `DOUBLE
//!   PRECISION`; booleans are integers 0/1;
//! - deleting a run ([`Store::delete_run`], one transaction) deletes its episodes, state and
//!   records, and every other row keyed by the run (`ON DELETE CASCADE`); interned strings and
//!   dictionaries are shared by runs and stay.
//!
//! ## `runs`
//! One evaluation or experiment.
//!
//! | column | type | |
//! |---|---|---|
//! | `id` | integer, primary key | |
//! | `kind` | text, not null | `eval`, `experiment`, ... (open set; see [`KIND_EVAL`]) |
//! | `name` | text, not null | human label |
//! | `suite`, `harness`, `policy` | text, null | what the run is about, where there is one |
//! | `config` | JSON, not null | the run's configuration, secrets redacted ([`redact_secrets`]) |
//! | `status` | text, not null | `running` \| `finished` \| `failed` \| `cancelled` ([`RunStatus`]); a run killed before finishing stays `running` |
//! | `summary` | JSON, null | set by [`Store::finish_run`] (secrets redacted) |
//! | `created_at` | timestamp, not null | |
//! | `finished_at` | timestamp, null | set by [`Store::finish_run`] |
//!
//! Index: `(kind, id)`.
//!
//! ## `episodes`
//! One finished attempt at one task ([`Episode`]), written as soon as it finishes.
//!
//! | column | type | |
//! |---|---|---|
//! | `id` | integer, primary key | |
//! | `run_id` | integer, not null | → `runs.id` |
//! | `task_id`, `suite`, `family`, `harness`, `policy` | text, not null | copied from the episode |
//! | `sample` | integer, not null | which of the n tries at the task |
//! | `seed` | integer, not null | the `u64` seed stored as the signed 64-bit integer with the same bits (seeds ≥ 2⁶³ read back negative in SQL; the trajectory keeps the exact value) |
//! | `status` | text, not null | `completed` \| `task_limit_reached` \| `infra_error` \| `cancelled` \| `action_error` ([`EpisodeStatus`]; `action_error` since version 4: the agent's own action broke its environment, a failed try that counts) |
//! | `success` | integer 0/1, not null | 0 when unscored |
//! | `reward` | real, null | null when the episode has no score (e.g. an infrastructure error) |
//! | `infra_error` | text, null | the infrastructure error, kept apart from task failures |
//! | `n_steps`, `n_interventions` | integer, not null | steps, and harness interventions over all steps |
//! | `prompt_tokens`, `completion_tokens` | integer, not null | |
//! | `duration_ms` | real, not null | |
//! | `arm` | text, null | experiment context ([`EpisodeContext`]): the arm (e.g. a harness variant) |
//! | `seed_index` | integer, null | which replicate seed of the experiment |
//! | `iteration` | integer, null | the training iteration |
//! | `phase` | text, null | `train`, `rescue`, `probe`, `eval`, ... |
//! | `split` | text, null | `train` or `heldout` |
//! | `schema` | integer, not null | the trajectory schema version ([`TRAJECTORY_SCHEMA`] when written) |
//! | `created_at` | timestamp, not null | when the row was written |
//! | `codec` | integer, not null | how `trajectory` is encoded: 0 or 1, below |
//! | `dictionary` | integer, null | → `dictionaries.id`, the zstd dictionary `trajectory` was compressed with |
//! | `trajectory` | blob, not null | the whole [`Episode`] as serialised by serde, encoded |
//!
//! The summary columns come before the trajectory so that reading them never walks a
//! trajectory's overflow pages.
//!
//! `codec` 0: the serde JSON text as UTF-8 bytes (rows of a v1 store not yet compacted).
//! `codec` 1: the serde JSON with every string value of 48 bytes or more replaced by a
//! reference — the character U+007F followed by the decimal id of its row in `strings` (a
//! string value that itself starts with U+007F is written with one more in front) — then
//! compressed as one zstd frame, with the dictionary `dictionary` when set.
//!
//! Indexes, each with the queries it serves:
//! - `(run_id, id)`: a run's episodes in order — the episode list's pages (a deep page reads
//!   the index, not a sort of the run: 3 ms instead of 75 ms at offset 68,000), counts;
//! - `(run_id, arm, iteration)`: an arm's episodes of one iteration — the analyses' trajectory
//!   reads, the rescue view, the resume's deletion of an interrupted iteration, the episode
//!   list's arm filter;
//! - `(run_id, phase)`: the analyses' summary rows by phase; deleting a run (the cascade finds
//!   its episodes);
//! - `(task_id)`: every try at one task across runs (the episode list's task filter).
//!
//! ## `strings`
//! Texts that recur in trajectories (system prompts, tool descriptions, task prompts,
//! observations), each stored once.
//!
//! | column | type | |
//! |---|---|---|
//! | `id` | integer, primary key | what references name |
//! | `hash` | integer, not null, unique | FNV-1a 64 of the UTF-8 text (same-bits signed); a text whose hash is taken by another stays inline |
//! | `body` | text, not null | |
//!
//! ## `dictionaries`
//! zstd dictionaries, one trained per suite on its first 200 episodes written to the store.
//!
//! | column | type | |
//! |---|---|---|
//! | `id` | integer, primary key | |
//! | `suite` | text, not null | |
//! | `body` | blob, not null | the dictionary as `zstd --train` writes it |
//! | `created_at` | timestamp, not null | |
//!
//! ## `run_state`
//! Key/value checkpoints of a run's progress, for resume ([`Store::set_state`], an upsert).
//!
//! | column | type | |
//! |---|---|---|
//! | `run_id` | integer, not null | → `runs.id`; primary key with `key` |
//! | `key` | text, not null | |
//! | `value` | JSON, not null | |
//! | `updated_at` | timestamp, not null | |
//!
//! ## `records`
//! Other per-run records keyed by kind and key: routing decisions, behaviour profiles, distilled
//! examples ([`Store::put_record`], an upsert on `(run_id, kind, key)`).
//!
//! | column | type | |
//! |---|---|---|
//! | `id` | integer, primary key | insertion order |
//! | `run_id` | integer, not null | → `runs.id` |
//! | `kind` | text, not null | e.g. `routing`, `behaviour_profile`, `distilled_example` |
//! | `key` | text, not null | unique within `(run_id, kind)` |
//! | `body` | JSON, not null | |
//! | `created_at`, `updated_at` | timestamp, not null | |
//!
//! ## `episode_jobs`
//! The episode queue of a distributed experiment (`experiment run --distributed`, Postgres
//! only; the table exists on SQLite for a single schema but stays empty). Rows live while the
//! coordinator waits for them: it deletes them once read, and all of a run's when it ends.
//!
//! | column | type | |
//! |---|---|---|
//! | `id` | integer, primary key | claim order |
//! | `run_id` | integer, not null | → `runs.id` |
//! | `key` | text, not null | what determines the episode (job, policy version, harness, task, try, seed); unique within the run |
//! | `request` | JSON, not null | what a worker needs to run it |
//! | `state` | text, not null | `queued` \| `running` \| `done` \| `failed` |
//! | `worker` | text, null | → `workers.name`, the claimant |
//! | `lease_until_ms` | integer, null | the claim's lease (Unix ms, the database's clock), renewed by heartbeats; past it the job is claimable again |
//! | `attempts` | integer, not null | claims so far |
//! | `result` | blob, null | the episode (serde JSON, zstd) |
//! | `error` | text, null | why a `failed` job failed |
//! | `created_at`, `finished_at` | timestamp | |
//!
//! Index: `(state, id)` (the claim).
//!
//! ## `workers`
//! `harness-s worker` processes: `name` (primary key), `host`, `slots`, `jobs_done`,
//! `started_at`, `heartbeat_ms` (Unix ms, the database's clock), `stopped_at` (a clean exit).
//!
//! ## `policy_snapshots`
//! The policy each experiment job's episodes sample from, for workers: `(run_id, key)` primary
//! key (the job key), `version`, `body` (the built-in policy's weights, serde JSON, zstd).
//!
//! ## `run_leases`
//! One coordinator per run (version 4): the process running an experiment holds its run's lease.
//!
//! | column | type | |
//! |---|---|---|
//! | `run_id` | integer, primary key | → `runs.id` |
//! | `holder` | text, not null | the coordinator: `host:pid:nonce` |
//! | `host`, `pid` | text, integer, not null | where it runs, for the message that refuses a second one |
//! | `acquired_at` | timestamp, not null | when it took the run |
//! | `heartbeat_ms` | integer, not null | its last heartbeat, Unix ms on the database's clock |
//!
//! A lease lapses [`LEASE_TTL_MS`] after its last heartbeat; only then may another process
//! take the run. A coordinator's writes for its run (episodes, `run_state`, `records`, the run's
//! status) check, in their own transaction, that it still holds the lease, and are refused
//! otherwise ([`Store::fenced`]).
//!
//! [`Store::open`]: super::Store::open
//! [`Store::fenced`]: super::Store::fenced
//! [`LEASE_TTL_MS`]: super::LEASE_TTL_MS
//! [`Store::finish_run`]: super::Store::finish_run
//! [`Store::delete_run`]: super::Store::delete_run
//! [`Store::set_state`]: super::Store::set_state
//! [`Store::put_record`]: super::Store::put_record
//! [`KIND_EVAL`]: super::KIND_EVAL
//! [`redact_secrets`]: super::redact_secrets
//! [`RunStatus`]: super::RunStatus
//! [`EpisodeContext`]: super::EpisodeContext
//! [`Episode`]: crate::episode::Episode
//! [`EpisodeStatus`]: crate::episode::EpisodeStatus
//! [`TRAJECTORY_SCHEMA`]: crate::episode::TRAJECTORY_SCHEMA

use sqlx::migrate::Migrator;

/// The latest store schema version (the number of the newest migration).
pub const STORE_SCHEMA_VERSION: i64 = 4;

/// Migrations for SQLite stores (`migrations/sqlite`).
pub static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("migrations/sqlite");

/// Migrations for Postgres stores (`migrations/postgres`).
pub static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("migrations/postgres");
