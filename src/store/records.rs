//! Other per-run records (`records`): routing decisions, behaviour profiles, distilled
//! examples, keyed by kind and key.

use serde_json::Value;

use super::sql::{args, now_utc};
use super::{Store, StoreError};

impl Store {
    /// Store `body` as the record `key` of `kind` in run `run_id`, replacing an earlier record
    /// with the same kind and key (upsert; the record keeps its original position).
    pub async fn put_record(&self, run_id: i64, kind: &str, key: &str, body: &Value) -> Result<(), StoreError> {
        let op = format!("put {kind} record `{key}` of run {run_id}");
        let body = serde_json::to_string(body).map_err(|e| self.json_error(&op, e))?;
        let now = now_utc();
        self.execute_for_run(
            &op,
            run_id,
            "INSERT INTO records (run_id, kind, key, body, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) \
             ON CONFLICT (run_id, kind, key) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
            args![run_id, kind, key, body, now],
        )
        .await?;
        Ok(())
    }

    /// The records of `kind` in run `run_id`, as (key, body), in the order first put.
    pub async fn records(&self, run_id: i64, kind: &str) -> Result<Vec<(String, Value)>, StoreError> {
        let op = format!("read {kind} records of run {run_id}");
        let rows: Vec<(String, String)> =
            self.fetch_all(&op, "SELECT key, body FROM records WHERE run_id = $1 AND kind = $2 ORDER BY id", args![run_id, kind]).await?;
        rows.into_iter().map(|(k, v)| serde_json::from_str(&v).map(|v| (k, v)).map_err(|e| self.json_error(&op, e))).collect()
    }

    /// The records of `kind` in run `run_id` whose key starts with `prefix`, in the order first put.
    pub async fn records_with_prefix(&self, run_id: i64, kind: &str, prefix: &str) -> Result<Vec<(String, Value)>, StoreError> {
        let op = format!("read {kind} records `{prefix}*` of run {run_id}");
        // substr instead of LIKE: exact and case-sensitive on both back-ends, nothing to escape.
        let rows: Vec<(String, String)> = self
            .fetch_all(
                &op,
                "SELECT key, body FROM records WHERE run_id = $1 AND kind = $2 AND substr(key, 1, length($3)) = $3 ORDER BY id",
                args![run_id, kind, prefix],
            )
            .await?;
        rows.into_iter().map(|(k, v)| serde_json::from_str(&v).map(|v| (k, v)).map_err(|e| self.json_error(&op, e))).collect()
    }

    /// How many records of `kind` run `run_id` holds (their bodies are not read).
    pub async fn count_records(&self, run_id: i64, kind: &str) -> Result<u64, StoreError> {
        let op = format!("count {kind} records of run {run_id}");
        let (n,): (i64,) = self.fetch_one(&op, "SELECT COUNT(*) FROM records WHERE run_id = $1 AND kind = $2", args![run_id, kind]).await?;
        Ok(n.max(0) as u64)
    }

    /// One record, if present.
    pub async fn record(&self, run_id: i64, kind: &str, key: &str) -> Result<Option<Value>, StoreError> {
        let op = format!("read {kind} record `{key}` of run {run_id}");
        let row: Option<(String,)> =
            self.fetch_optional(&op, "SELECT body FROM records WHERE run_id = $1 AND kind = $2 AND key = $3", args![run_id, kind, key]).await?;
        row.map(|(v,)| serde_json::from_str(&v).map_err(|e| self.json_error(&op, e))).transpose()
    }
}
