-- Run store schema, version 2 (SQLite). See `harness_s::store::schema`.
-- Episodes: the summary columns come first and the trajectory last, as an encoded blob
-- (`codec` says how: 0 = the v1 JSON text, as converted rows keep until `store compact`;
-- 1 = JSON with long strings interned in `strings`, zstd-compressed, with the dictionary
-- `dictionary` when set). Only the indexes a query uses are kept.

CREATE TABLE strings (
    id    INTEGER PRIMARY KEY,
    hash  INTEGER NOT NULL UNIQUE,
    body  TEXT    NOT NULL
);

CREATE TABLE dictionaries (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    suite      TEXT    NOT NULL,
    body       BLOB    NOT NULL,
    created_at TEXT    NOT NULL
);

CREATE TABLE episodes_v2 (
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
    schema            INTEGER NOT NULL,
    created_at        TEXT    NOT NULL,
    codec             INTEGER NOT NULL CHECK (codec IN (0, 1)),
    dictionary        INTEGER REFERENCES dictionaries (id),
    trajectory        BLOB    NOT NULL
);

INSERT INTO episodes_v2 (id, run_id, task_id, suite, family, harness, policy, sample, seed, status, success, reward,
    infra_error, n_steps, n_interventions, prompt_tokens, completion_tokens, duration_ms, arm, seed_index, iteration,
    phase, split, schema, created_at, codec, dictionary, trajectory)
SELECT id, run_id, task_id, suite, family, harness, policy, sample, seed, status, success, reward,
    infra_error, n_steps, n_interventions, prompt_tokens, completion_tokens, duration_ms, arm, seed_index, iteration,
    phase, split, schema, created_at, 0, NULL, CAST(trajectory AS BLOB)
FROM episodes ORDER BY id;

-- ids keep counting from where v1 stopped (AUTOINCREMENT never reuses one)
DELETE FROM sqlite_sequence WHERE name = 'episodes_v2';
INSERT INTO sqlite_sequence (name, seq) SELECT 'episodes_v2', seq FROM sqlite_sequence WHERE name = 'episodes';

DROP TABLE episodes;
ALTER TABLE episodes_v2 RENAME TO episodes;

CREATE INDEX episodes_run_idx   ON episodes (run_id, id);
CREATE INDEX episodes_arm_idx   ON episodes (run_id, arm, iteration);
CREATE INDEX episodes_phase_idx ON episodes (run_id, phase);
CREATE INDEX episodes_task_idx  ON episodes (task_id);
