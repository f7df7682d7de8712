//! The run store (placeholder API; replaced by the sqlx store).
use crate::episode::Episode;
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);
#[derive(Default, Clone, Debug)]
pub struct EpisodeContext {}
pub struct NewRun { pub kind: String, pub name: String, pub suite: String, pub harness: String, pub policy: String, pub config: serde_json::Value }
pub struct BlockingStore;
impl BlockingStore {
    pub fn open(_: &str) -> Result<Self, StoreError> { Ok(BlockingStore) }
    pub fn create_run(&self, _: &NewRun) -> Result<i64, StoreError> { Ok(1) }
    pub fn insert_episode(&self, _: i64, _: &Episode, _: &EpisodeContext) -> Result<i64, StoreError> { Ok(1) }
    pub fn finish_run(&self, _: i64, _: &str, _: &serde_json::Value) -> Result<(), StoreError> { Ok(()) }
}
