//! A synchronous facade over [`Store`] for callers on plain worker threads.

use std::sync::Arc;

use serde_json::Value;
use tokio::runtime::{Handle, Runtime};

use crate::episode::Episode;

use super::location::display_location;
use super::{DeletedRun, EpisodeContext, EpisodeFilter, EpisodeRow, LeaseHolder, NewRun, RunRow, RunStatus, Store, StoreError};

/// The [`Store`] API, blocking: each method runs the async one to completion with
/// [`Handle::block_on`].
///
/// **Do not call it from inside an async context** (a task or `async fn` running on a tokio
/// runtime): `block_on` panics there ("Cannot start a runtime from within a runtime"). Async
/// code uses [`Store`] directly; threads started with `std::thread::spawn` or
/// `tokio::task::spawn_blocking` may use this. Clones share the store and the runtime and may be
/// used from many threads at once.
///
/// A `BlockingStore` made with [`BlockingStore::open`] owns a small runtime; the last clone to
/// be dropped closes the store (see [`Store::close`]) and shuts the runtime down, so that last
/// drop must not happen inside an async context either.
#[derive(Clone)]
pub struct BlockingStore {
    // Field order is drop order: the store (and its pool) goes before the runtime it runs on.
    store: Store,
    handle: Handle,
    _runtime: Option<Arc<Runtime>>,
}

impl Drop for BlockingStore {
    /// The last clone of a store that owns its runtime closes it, which merges an SQLite store's
    /// write-ahead log into its main file: every command that opened one leaves a single file.
    fn drop(&mut self) {
        if self._runtime.as_ref().is_some_and(|rt| Arc::strong_count(rt) == 1) {
            self.handle.block_on(self.store.close());
        }
    }
}

impl std::fmt::Debug for BlockingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingStore").field("store", &self.store).finish_non_exhaustive()
    }
}

impl BlockingStore {
    /// Open the store at `location` (see [`Store::open`]) on a runtime of its own.
    pub fn open(location: &str) -> Result<BlockingStore, StoreError> {
        BlockingStore::open_with_connections(location, super::POSTGRES_MAX_CONNECTIONS)
    }

    /// [`BlockingStore::open`] with at most `postgres_connections` connections to a Postgres
    /// server (see [`Store::open_with_connections`]).
    pub fn open_with_connections(location: &str, postgres_connections: u32) -> Result<BlockingStore, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("harness-s-store")
            .enable_all()
            .build()
            .map_err(|source| StoreError::Runtime { location: display_location(location), source })?;
        let store = runtime.block_on(Store::open_with_connections(location, postgres_connections))?;
        Ok(BlockingStore { store, handle: runtime.handle().clone(), _runtime: Some(Arc::new(runtime)) })
    }

    /// Open the store at `location` on the runtime behind `handle`, which must stay alive as long
    /// as the store is used (a multi-thread runtime, so that it runs while this thread blocks).
    pub fn open_with(handle: Handle, location: &str) -> Result<BlockingStore, StoreError> {
        let store = handle.block_on(Store::open(location))?;
        Ok(BlockingStore { store, handle, _runtime: None })
    }

    /// Wrap an open store; `handle` must be the runtime the store was opened on (or one that is
    /// alive as long as the store is used).
    pub fn from_store(store: Store, handle: Handle) -> BlockingStore {
        BlockingStore { store, handle, _runtime: None }
    }

    /// The async store underneath.
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    pub fn location(&self) -> &str {
        self.store.location()
    }

    pub fn close(&self) {
        self.handle.block_on(self.store.close())
    }

    /// This handle with its writes for run `run_id` fenced by `holder`'s lease
    /// ([`Store::fenced`]).
    pub fn fenced(&self, run_id: i64, holder: &str) -> BlockingStore {
        BlockingStore { store: self.store.fenced(run_id, holder), handle: self.handle.clone(), _runtime: self._runtime.clone() }
    }

    pub fn acquire_run_lease(&self, run_id: i64, holder: &str, host: &str, pid: i64) -> Result<Result<(), LeaseHolder>, StoreError> {
        self.handle.block_on(self.store.acquire_run_lease(run_id, holder, host, pid))
    }

    pub fn renew_run_lease(&self, run_id: i64, holder: &str) -> Result<bool, StoreError> {
        self.handle.block_on(self.store.renew_run_lease(run_id, holder))
    }

    pub fn release_run_lease(&self, run_id: i64, holder: &str) -> Result<(), StoreError> {
        self.handle.block_on(self.store.release_run_lease(run_id, holder))
    }

    pub fn run_lease(&self, run_id: i64) -> Result<Option<LeaseHolder>, StoreError> {
        self.handle.block_on(self.store.run_lease(run_id))
    }

    pub fn create_run(&self, run: &NewRun) -> Result<i64, StoreError> {
        self.handle.block_on(self.store.create_run(run))
    }

    pub fn finish_run(&self, id: i64, status: RunStatus, summary: &Value) -> Result<(), StoreError> {
        self.handle.block_on(self.store.finish_run(id, status, summary))
    }

    pub fn set_run_status(&self, id: i64, status: RunStatus) -> Result<(), StoreError> {
        self.handle.block_on(self.store.set_run_status(id, status))
    }

    pub fn delete_run(&self, id: i64, force: bool) -> Result<DeletedRun, StoreError> {
        self.handle.block_on(self.store.delete_run(id, force))
    }

    pub fn delete_episodes_from(&self, run_id: i64, suite: &str, arm: &str, seed_index: u32, iteration: u32) -> Result<u64, StoreError> {
        self.handle.block_on(self.store.delete_episodes_from(run_id, suite, arm, seed_index, iteration))
    }

    pub fn run(&self, id: i64) -> Result<Option<RunRow>, StoreError> {
        self.handle.block_on(self.store.run(id))
    }

    pub fn runs(&self) -> Result<Vec<RunRow>, StoreError> {
        self.handle.block_on(self.store.runs())
    }

    pub fn latest_run(&self, kind: Option<&str>) -> Result<Option<RunRow>, StoreError> {
        self.handle.block_on(self.store.latest_run(kind))
    }

    pub fn insert_episode(&self, run_id: i64, episode: &Episode, context: &EpisodeContext) -> Result<i64, StoreError> {
        self.handle.block_on(self.store.insert_episode(run_id, episode, context))
    }

    pub fn insert_episodes(&self, run_id: i64, episodes: &[(Episode, EpisodeContext)]) -> Result<Vec<i64>, StoreError> {
        self.handle.block_on(self.store.insert_episodes(run_id, episodes))
    }

    pub fn episode(&self, id: i64) -> Result<Option<Episode>, StoreError> {
        self.handle.block_on(self.store.episode(id))
    }

    pub fn episode_json(&self, id: i64) -> Result<Option<Value>, StoreError> {
        self.handle.block_on(self.store.episode_json(id))
    }

    pub fn episode_row(&self, id: i64) -> Result<Option<EpisodeRow>, StoreError> {
        self.handle.block_on(self.store.episode_row(id))
    }

    pub fn episode_rows(&self, filter: &EpisodeFilter) -> Result<Vec<EpisodeRow>, StoreError> {
        self.handle.block_on(self.store.episode_rows(filter))
    }

    pub fn episode_page(&self, filter: &EpisodeFilter) -> Result<(u64, Vec<EpisodeRow>), StoreError> {
        self.handle.block_on(self.store.episode_page(filter))
    }

    pub fn episodes(&self, filter: &EpisodeFilter) -> Result<Vec<(i64, Episode)>, StoreError> {
        self.handle.block_on(self.store.episodes(filter))
    }

    pub fn count_episodes(&self, filter: &EpisodeFilter) -> Result<u64, StoreError> {
        self.handle.block_on(self.store.count_episodes(filter))
    }

    pub fn set_state(&self, run_id: i64, key: &str, value: &Value) -> Result<(), StoreError> {
        self.handle.block_on(self.store.set_state(run_id, key, value))
    }

    pub fn state(&self, run_id: i64, key: &str) -> Result<Option<Value>, StoreError> {
        self.handle.block_on(self.store.state(run_id, key))
    }

    pub fn states(&self, run_id: i64) -> Result<Vec<(String, Value)>, StoreError> {
        self.handle.block_on(self.store.states(run_id))
    }

    pub fn put_record(&self, run_id: i64, kind: &str, key: &str, body: &Value) -> Result<(), StoreError> {
        self.handle.block_on(self.store.put_record(run_id, kind, key, body))
    }

    pub fn count_records(&self, run_id: i64, kind: &str) -> Result<u64, StoreError> {
        self.handle.block_on(self.store.count_records(run_id, kind))
    }

    pub fn records(&self, run_id: i64, kind: &str) -> Result<Vec<(String, Value)>, StoreError> {
        self.handle.block_on(self.store.records(run_id, kind))
    }

    pub fn records_with_prefix(&self, run_id: i64, kind: &str, prefix: &str) -> Result<Vec<(String, Value)>, StoreError> {
        self.handle.block_on(self.store.records_with_prefix(run_id, kind, prefix))
    }

    pub fn record(&self, run_id: i64, kind: &str, key: &str) -> Result<Option<Value>, StoreError> {
        self.handle.block_on(self.store.record(run_id, kind, key))
    }
}
