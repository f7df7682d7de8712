//! The run store: runs, episodes and their trajectories, in SQLite (default) or Postgres.
