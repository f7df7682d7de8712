-- Run store schema, version 1 (SQLite). The schema is a public contract: see `harness_s::store::schema`.
-- Timestamps are UTC RFC 3339 text with milliseconds ("2025-01-02T03:04:05.678Z").
-- JSON columns hold JSON text.

CREATE TABLE runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    suite       TEXT,
    harness     TEXT,
    policy      TEXT,
    config      TEXT    NOT NULL,
    status      TEXT    NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'finished', 'failed', 'cancelled')),
    summary     TEXT,
    created_at  TEXT    NOT NULL,
    finished_at TEXT
);

CREATE INDEX runs_kind_idx ON runs (kind, id);

CREATE TABLE episodes (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id            INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    task_id           TEXT    NOT NULL,
    suite             TEXT    NOT NULL,
    family            TEXT    NOT NULL,
    harness           TEXT    NOT NULL,
    policy            TEXT    NOT NULL,
    sample            INTEGER NOT NULL,
    seed              INTEGER NOT NULL,
    status            TEXT    NOT NULL,
    success           INTEGER NOT NULL CHECK (success IN (0, 1)),
    reward            REAL,
    infra_error       TEXT,
    n_steps           INTEGER NOT NULL,
    n_interventions   INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    duration_ms       REAL    NOT NULL,
    arm               TEXT,
    seed_index        INTEGER,
    iteration         INTEGER,
    phase             TEXT,
    split             TEXT,
    trajectory        TEXT    NOT NULL,
    schema            INTEGER NOT NULL,
    created_at        TEXT    NOT NULL
);

CREATE INDEX episodes_run_idx     ON episodes (run_id, id);
CREATE INDEX episodes_arm_idx     ON episodes (run_id, arm, iteration);
CREATE INDEX episodes_phase_idx   ON episodes (run_id, phase);
CREATE INDEX episodes_family_idx  ON episodes (family);
CREATE INDEX episodes_harness_idx ON episodes (harness);
CREATE INDEX episodes_success_idx ON episodes (run_id, success);
CREATE INDEX episodes_task_idx    ON episodes (task_id);

CREATE TABLE run_state (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key        TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (run_id, key)
);

CREATE TABLE records (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    UNIQUE (run_id, kind, key)
);
