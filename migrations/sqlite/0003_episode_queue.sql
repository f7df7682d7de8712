-- Run store schema, version 3 (SQLite). See `harness_s::store::schema`.
-- A distributed experiment's episodes: the coordinator queues them, `harness-s worker`
-- processes claim them under a lease they renew, run them and write the episode back; the
-- workers and the policy snapshots they sample from.

CREATE TABLE episode_jobs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key            TEXT   NOT NULL,
    request        TEXT   NOT NULL,
    state          TEXT   NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    worker         TEXT,
    lease_until_ms INTEGER,
    attempts       INTEGER NOT NULL DEFAULT 0,
    result         BLOB,
    error          TEXT,
    created_at     TEXT   NOT NULL,
    finished_at    TEXT,
    UNIQUE (run_id, key)
);
CREATE INDEX episode_jobs_claim_idx ON episode_jobs (state, id);

CREATE TABLE workers (
    name         TEXT   PRIMARY KEY,
    host         TEXT   NOT NULL,
    slots        INTEGER NOT NULL,
    jobs_done    INTEGER NOT NULL DEFAULT 0,
    started_at   TEXT   NOT NULL,
    heartbeat_ms INTEGER NOT NULL,
    stopped_at   TEXT
);

CREATE TABLE policy_snapshots (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key     TEXT   NOT NULL,
    version INTEGER NOT NULL,
    body    BLOB   NOT NULL,
    PRIMARY KEY (run_id, key)
);
