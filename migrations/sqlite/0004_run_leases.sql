-- Run store schema, version 4 (SQLite). See `harness_s::store::schema`.
-- One coordinator per run: the process running an experiment holds its run's lease and renews
-- it by heart-beating (Unix milliseconds on the database's clock); another may take the run
-- over only after the lease has lapsed. A coordinator's writes commit only while it holds it.

CREATE TABLE run_leases (
    run_id       INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    holder       TEXT    NOT NULL,
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    acquired_at  TEXT    NOT NULL,
    heartbeat_ms INTEGER NOT NULL
);
