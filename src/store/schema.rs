//! The store schema: a public contract. Other tools (notebooks, the desktop shell, SQL by hand)
//! read these tables directly, so columns are only ever added, never renamed or repurposed.
//!
//! The schema is created and upgraded by the migrations in `migrations/sqlite` and
//! `migrations/postgres` (kept column-for-column identical), run by [`Store::open`]. sqlx
//! records applied migrations in `_sqlx_migrations`.
//!
//! Conventions, both back-ends:
//! - ids are 64-bit integers assigned by the database, increasing: newest first is `id DESC`;
//! - timestamps are UTC RFC 3339 text with milliseconds (`2025-01-02T03:04:05.678Z`), which
//!   sorts chronologically;
//! - "JSON" columns hold JSON text (TEXT, not a JSON type, on both back-ends);
//! - integers are `INTEGER` on SQLite and `BIGINT` on Postgres, reals `REAL` / `DOUBLE
//!   PRECISION`; booleans are integers 0/1;
//! - deleting a run deletes its episodes, state and records (`ON DELETE CASCADE`).
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
//! | `status` | text, not null | `completed` \| `task_limit_reached` \| `infra_error` \| `cancelled` ([`EpisodeStatus`]) |
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
//! | `trajectory` | JSON, not null | the whole [`Episode`] as serialised by serde |
//! | `schema` | integer, not null | the trajectory schema version ([`TRAJECTORY_SCHEMA`] when written) |
//! | `created_at` | timestamp, not null | when the row was written |
//!
//! Indexes: `(run_id, id)`, `(run_id, arm, iteration)`, `(run_id, phase)`, `(run_id, success)`,
//! `(family)`, `(harness)`, `(task_id)`.
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
//! [`Store::open`]: super::Store::open
//! [`Store::finish_run`]: super::Store::finish_run
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
pub const STORE_SCHEMA_VERSION: i64 = 1;

/// Migrations for SQLite stores (`migrations/sqlite`).
pub static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("migrations/sqlite");

/// Migrations for Postgres stores (`migrations/postgres`).
pub static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("migrations/postgres");
