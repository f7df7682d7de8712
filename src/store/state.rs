//! Per-run key/value checkpoints (`run_state`), for resuming a run that was killed.

use serde_json::Value;

use super::sql::{args, now_utc};
use super::{Store, StoreError};

impl Store {
    /// Set `key` of run `run_id` to `value`, replacing any earlier value (upsert). Committed
    /// when this returns.
    pub async fn set_state(&self, run_id: i64, key: &str, value: &Value) -> Result<(), StoreError> {
        let op = format!("set state `{key}` of run {run_id}");
        let value = serde_json::to_string(value).map_err(|e| self.json_error(&op, e))?;
        self.execute_for_run(
            &op,
            run_id,
            "INSERT INTO run_state (run_id, key, value, updated_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            args![run_id, key, value, now_utc()],
        )
        .await?;
        Ok(())
    }

    /// The value of `key` of run `run_id`, if set.
    pub async fn state(&self, run_id: i64, key: &str) -> Result<Option<Value>, StoreError> {
        let op = format!("read state `{key}` of run {run_id}");
        let row: Option<(String,)> =
            self.fetch_optional(&op, "SELECT value FROM run_state WHERE run_id = $1 AND key = $2", args![run_id, key]).await?;
        row.map(|(v,)| serde_json::from_str(&v).map_err(|e| self.json_error(&op, e))).transpose()
    }

    /// Every state key of run `run_id` with its value, by key.
    pub async fn states(&self, run_id: i64) -> Result<Vec<(String, Value)>, StoreError> {
        let op = format!("read state of run {run_id}");
        let rows: Vec<(String, String)> =
            self.fetch_all(&op, "SELECT key, value FROM run_state WHERE run_id = $1 ORDER BY key", args![run_id]).await?;
        rows.into_iter().map(|(k, v)| serde_json::from_str(&v).map(|v| (k, v)).map_err(|e| self.json_error(&op, e))).collect()
    }
}
