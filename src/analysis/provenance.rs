//! Provenance: what produced the numbers — workbench version, run, seeds, configuration, and a
//! hash of the dataset the run used.

use std::collections::{BTreeMap, BTreeSet};

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Data;
use crate::task::Task;

/// The hash of one suite's dataset.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct DatasetHash {
    pub suite: String,
    /// `bundled`, or the dataset file named in the configuration.
    pub source: String,
    pub tasks: usize,
    /// md5 over the tasks sorted by id: each task's id, a tab, its payload as JSON, a newline.
    pub md5: Option<String>,
    /// Why the dataset could not be hashed (it could not be loaded).
    pub error: Option<String>,
    /// Distinct task ids the run evaluated (phase `eval`), and the md5 of their sorted,
    /// newline-joined list: what the numbers are about, available even when the dataset cannot
    /// be loaded.
    pub used_tasks: usize,
    pub used_ids_md5: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Provenance {
    pub workbench_version: String,
    pub run_id: i64,
    pub run_name: String,
    pub status: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub seeds: Vec<u64>,
    pub iterations: Option<usize>,
    pub dataset: Vec<DatasetHash>,
    pub episodes: usize,
    /// Records by kind (`route`, `profile`, `distilled`).
    pub records: BTreeMap<String, usize>,
    /// The experiment configuration as stored (secrets redacted).
    #[ts(type = "ExperimentConfig")]
    pub config: Value,
    /// When this analysis was made (UTC).
    pub generated_at: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// md5 of tasks sorted by id: `id \t payload-json \n` each.
pub fn tasks_md5(tasks: &[Task]) -> String {
    let mut sorted: Vec<&Task> = tasks.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let mut h = Md5::new();
    for t in sorted {
        h.update(t.id.as_bytes());
        h.update(b"\t");
        h.update(serde_json::to_string(&t.payload).unwrap_or_default().as_bytes());
        h.update(b"\n");
    }
    hex(&h.finalize())
}

pub(crate) fn provenance(data: &Data) -> Provenance {
    let cfg = &data.run.config;
    let mut dataset = Vec::new();
    for suite in &data.suites {
        let file = cfg.get("datasets").and_then(|d| d.get(suite)).and_then(Value::as_str).map(str::to_string);
        let used: BTreeSet<&str> = data.phase("eval").filter(|r| &r.suite == suite).map(|r| r.task_id.as_str()).collect();
        let mut h = Md5::new();
        for id in &used {
            h.update(id.as_bytes());
            h.update(b"\n");
        }
        let loaded = match crate::suite::by_name(suite) {
            None => Err(format!("the workbench has no suite `{suite}`")),
            Some(s) => match &file {
                Some(f) => s.load_file(std::path::Path::new(f)).map_err(|e| e.to_string()),
                None => s.bundled_tasks().map_err(|e| e.to_string()),
            },
        };
        let (tasks, md5, error) = match loaded {
            Ok(t) if t.is_empty() => (0, None, Some("no tasks could be loaded".to_string())),
            Ok(t) => (t.len(), Some(tasks_md5(&t)), None),
            Err(e) => (0, None, Some(e)),
        };
        dataset.push(DatasetHash {
            suite: suite.clone(),
            source: file.unwrap_or_else(|| "bundled".into()),
            tasks,
            md5,
            error,
            used_tasks: used.len(),
            used_ids_md5: hex(&h.finalize()),
        });
    }
    let mut records = BTreeMap::new();
    records.insert("route".to_string(), data.routes.len());
    records.insert("profile".to_string(), data.profiles.len());
    if let Ok(n) = data.store.count_records(data.run.id, "distilled") {
        records.insert("distilled".to_string(), n as usize);
    }
    Provenance {
        workbench_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: data.run.id,
        run_name: data.run.name.clone(),
        status: data.run.status.as_str().to_string(),
        created_at: data.run.created_at.clone(),
        finished_at: data.run.finished_at.clone(),
        seeds: cfg.get("seeds").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default(),
        iterations: data.config_usize(&["iterations"]),
        dataset,
        episodes: data.episodes as usize,
        records,
        config: cfg.clone(),
        generated_at: crate::store::sql::now_utc(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_hash_is_order_free_and_payload_sensitive() {
        let t = |id: &str, p: Value| Task { id: id.into(), suite: "s".into(), family: "f".into(), instruction: String::new(), payload: p };
        let a = tasks_md5(&[t("a", serde_json::json!({"x": 1})), t("b", serde_json::json!(2))]);
        let b = tasks_md5(&[t("b", serde_json::json!(2)), t("a", serde_json::json!({"x": 1}))]);
        let c = tasks_md5(&[t("b", serde_json::json!(3)), t("a", serde_json::json!({"x": 1}))]);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 32);
    }
}
