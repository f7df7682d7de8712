//! `harness-s export`: a run's training examples and evaluation trajectories, for training
//! elsewhere.
//!
//! Training examples are rebuilt from the run's `batch` records (which sequences each update
//! learned from, with their advantages and weights) and the stored episodes, distillations and
//! demonstrations they point to, through the same [`super::batch::lines`] the trainer protocol
//! uses; evaluation trajectories are the `eval` episodes. Formats:
//! - `openai-chat`: JSONL, one batch line per conversation (TRL; OpenAI fine-tuning reads the
//!   `messages` with their per-message `weight`);
//! - `sharegpt`: a JSON array in LLaMA-Factory's / axolotl's ShareGPT form with function calls
//!   (`conversations` of `human` / `gpt` / `function_call` / `observation`, `system`, `tools`),
//!   plus the `dataset_info.json` entry that registers it;
//! - `verl-sft`: JSONL with a `messages` column (verl's multi-turn SFT dataset), converted to
//!   parquet by [`PARQUET_SCRIPT`] when a Python with `pyarrow` is at hand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::batch::{lines, BatchLine, BatchManifest, BatchMeta, Source, StepsRef, TrainSequence};
use super::runner::{demonstration_steps, episode_steps, Demonstration};
use crate::message::{AssistantTurn, Context};
use crate::store::{BlockingStore, EpisodeFilter, StoreError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    OpenAiChat,
    ShareGpt,
    VerlSft,
}

impl ExportFormat {
    pub const NAMES: [&'static str; 3] = ["openai-chat", "sharegpt", "verl-sft"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "openai-chat" => Some(Self::OpenAiChat),
            "sharegpt" => Some(Self::ShareGpt),
            "verl-sft" => Some(Self::VerlSft),
            _ => None,
        }
    }
}

/// What to export.
#[derive(Clone, Debug)]
pub struct ExportRequest {
    pub run_id: i64,
    pub format: ExportFormat,
    pub out: PathBuf,
    pub arm: Option<String>,
    /// A seed value of the experiment (not its index).
    pub seed: Option<u64>,
    /// `train` (training examples and training-family evaluations) or `heldout` (held-out
    /// evaluations); both when unset.
    pub split: Option<String>,
    /// Only these sources (`rollout`, `rescue-distilled`, `warm-start`, `evaluation`).
    pub sources: Option<Vec<Source>>,
}

/// What an export wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExportSummary {
    pub files: Vec<String>,
    /// Conversations written, per source.
    pub conversations: BTreeMap<String, usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Input(String),
    #[error("writing {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError {
    let path = path.display().to_string();
    move |source| ExportError::Io { path, source }
}

/// Turns the parquet export's JSONL into parquet (`python3 - in.jsonl out.parquet`).
pub const PARQUET_SCRIPT: &str = r#"
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
rows = [json.loads(l) for l in open(sys.argv[1])]
# tool-call arguments as JSON text: one column type for every tool's arguments
for r in rows:
    for m in r["messages"]:
        for c in m.get("tool_calls") or []:
            if not isinstance(c["function"]["arguments"], str):
                c["function"]["arguments"] = json.dumps(c["function"]["arguments"])
    r["tools"] = json.dumps(r["tools"])
pq.write_table(pa.Table.from_pylist(rows), sys.argv[2])
print(len(rows))
"#;

/// The run's training sequences, rebuilt batch by batch, with their batch's identity.
fn training(store: &BlockingStore, req: &ExportRequest) -> Result<Vec<(BatchMeta, TrainSequence)>, ExportError> {
    let mut out = Vec::new();
    let mut demos: BTreeMap<String, Vec<Demonstration>> = BTreeMap::new();
    let cfg = store.run(req.run_id)?.map(|r| r.config).unwrap_or(Value::Null);
    let traces = cfg.get("trainer").is_none_or(Value::is_null);
    for (key, body) in store.records(req.run_id, "batch")? {
        let m: BatchManifest = serde_json::from_value(body).map_err(|e| ExportError::Input(format!("batch record `{key}`: {e}")))?;
        if req.arm.as_ref().is_some_and(|a| a != &m.meta.arm) || req.seed.is_some_and(|s| s != m.meta.seed) {
            continue;
        }
        for r in &m.sequences {
            if req.sources.as_ref().is_some_and(|s| !s.contains(&r.info.source)) {
                continue;
            }
            let steps: Vec<(Context, AssistantTurn)> = match &r.steps {
                StepsRef::Episode { id } => match store.episode(*id)? {
                    Some(e) => episode_steps(&e),
                    None => return Err(ExportError::Input(format!("batch record `{key}` names episode {id}, which is not in the store"))),
                },
                StepsRef::Distilled { key: dk } => {
                    let body = store.record(req.run_id, "distilled", dk)?.ok_or_else(|| {
                        ExportError::Input(format!("batch record `{key}` names distilled record `{dk}`, which is not in the store"))
                    })?;
                    let d: crate::distil::DistilledExample =
                        serde_json::from_value(body["distilled"].clone()).map_err(|e| ExportError::Input(format!("distilled record `{dk}`: {e}")))?;
                    d.examples.into_iter().map(|x| (x.context, x.target)).collect()
                }
                StepsRef::Demonstration { key: dk, index } => {
                    if !demos.contains_key(dk) {
                        let v = store.state(req.run_id, dk)?.unwrap_or(Value::Null);
                        let parsed: Vec<Demonstration> =
                            serde_json::from_value(v).map_err(|e| ExportError::Input(format!("demonstrations `{dk}`: {e}")))?;
                        demos.insert(dk.clone(), parsed);
                    }
                    let d = demos[dk]
                        .get(*index)
                        .ok_or_else(|| ExportError::Input(format!("batch record `{key}` names demonstration {index} of `{dk}`, which has fewer")))?;
                    demonstration_steps(d, &m.base_tools, traces)
                }
                StepsRef::Unsaved { .. } => continue,
            };
            out.push((m.meta.clone(), TrainSequence::from_reference(r, steps)));
        }
    }
    Ok(out)
}

/// The run's evaluation trajectories (every step), one sequence each.
fn evaluations(store: &BlockingStore, req: &ExportRequest) -> Result<Vec<(BatchMeta, TrainSequence)>, ExportError> {
    if req.sources.as_ref().is_some_and(|s| !s.contains(&Source::Evaluation)) {
        return Ok(Vec::new());
    }
    let seeds: Vec<u64> =
        store.run(req.run_id)?.and_then(|r| r.config.get("seeds").and_then(|s| serde_json::from_value(s.clone()).ok())).unwrap_or_default();
    let filter = EpisodeFilter {
        run_id: Some(req.run_id),
        arm: req.arm.clone(),
        phase: Some("eval".into()),
        split: req.split.clone(),
        seed_index: match req.seed {
            Some(s) => {
                Some(seeds.iter().position(|x| *x == s).ok_or_else(|| ExportError::Input(format!("--seed {s}: the run's seeds are {seeds:?}")))?
                    as u32)
            }
            None => None,
        },
        ..Default::default()
    };
    let mut out = Vec::new();
    for row in store.episode_rows(&filter)? {
        let id = row.id;
        let Some(e) = store.episode(id)? else { continue };
        let steps = e.steps.iter().map(|s| (s.context.clone(), s.output.clone()));
        let seq = TrainSequence::new(&e.task_id, &e.family, &format!("eval/{id}"), e.reward(), 0.0, 1.0, Source::Evaluation, &e.harness, steps)
            .stored_at(StepsRef::Episode { id });
        let ctx = row.context;
        let meta = BatchMeta {
            arm: ctx.arm.unwrap_or_default(),
            seed: ctx.seed_index.and_then(|i| seeds.get(i as usize).copied()).unwrap_or_default(),
            iteration: ctx.iteration.unwrap_or_default() as usize,
            policy_version: 0,
        };
        out.push((meta, seq));
    }
    Ok(out)
}

/// A batch line in ShareGPT form with function calls (LLaMA-Factory's `sharegpt` formatting).
fn sharegpt(l: &BatchLine) -> Value {
    let mut system = String::new();
    let mut conv = Vec::new();
    for m in &l.messages {
        let content = m["content"].as_str().unwrap_or_default().to_string();
        match m["role"].as_str().unwrap_or_default() {
            "system" => system = content,
            "user" => conv.push(json!({"from": "human", "value": content})),
            "tool" => conv.push(json!({"from": "observation", "value": content})),
            _ => match m["tool_calls"].as_array() {
                Some(calls) if !calls.is_empty() => {
                    let calls: Vec<Value> =
                        calls.iter().map(|c| json!({"name": c["function"]["name"], "arguments": c["function"]["arguments"]})).collect();
                    let value = if calls.len() == 1 { calls[0].to_string() } else { Value::Array(calls).to_string() };
                    conv.push(json!({"from": "function_call", "value": value}));
                }
                _ => conv.push(json!({"from": "gpt", "value": content})),
            },
        }
    }
    let tools: Vec<Value> = l.tools.iter().map(|t| t["function"].clone()).collect();
    json!({
        "conversations": conv, "system": system, "tools": Value::Array(tools).to_string(),
        "task_id": l.info.task_id, "source": l.info.source, "reward": l.info.reward, "advantage": l.info.advantage, "weight": l.info.weight,
        "arm": l.meta.arm, "seed": l.meta.seed, "iteration": l.meta.iteration,
    })
}

/// Export the run as `req` asks; returns the files written and the counts.
pub fn export(store: &BlockingStore, req: &ExportRequest) -> Result<ExportSummary, ExportError> {
    let run = store.run(req.run_id)?.ok_or_else(|| ExportError::Input(format!("no run {} in the store", req.run_id)))?;
    if run.kind != "experiment" {
        return Err(ExportError::Input(format!("run {} is a `{}` run; export reads an experiment's batches", req.run_id, run.kind)));
    }
    if let Some(s) = &req.split {
        if s != "train" && s != "heldout" {
            return Err(ExportError::Input(format!("--split: `{s}` (allowed: train, heldout)")));
        }
    }
    let mut seqs = Vec::new();
    if req.split.as_deref() != Some("heldout") {
        seqs.extend(training(store, req)?);
    }
    seqs.extend(evaluations(store, req)?);
    let mut all: Vec<BatchLine> = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (meta, seq) in &seqs {
        for l in lines(std::slice::from_ref(seq), meta) {
            *counts.entry(l.info.source.as_str().to_string()).or_default() += 1;
            all.push(l);
        }
    }
    std::fs::create_dir_all(&req.out).map_err(io(&req.out))?;
    let mut files = Vec::new();
    let write_jsonl = |path: &Path, rows: &mut dyn Iterator<Item = Value>| -> Result<(), ExportError> {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(crate::files::create(path, true).map_err(io(path))?);
        for r in rows {
            serde_json::to_writer(&mut f, &r).map_err(|e| ExportError::Io { path: path.display().to_string(), source: e.into() })?;
            f.write_all(b"\n").map_err(io(path))?;
        }
        f.flush().map_err(io(path))
    };
    match req.format {
        ExportFormat::OpenAiChat => {
            let path = req.out.join("examples.jsonl");
            write_jsonl(&path, &mut all.iter().map(|l| serde_json::to_value(l).unwrap_or_default()))?;
            files.push(path);
        }
        ExportFormat::ShareGpt => {
            let path = req.out.join("examples.json");
            let rows: Vec<Value> = all.iter().map(sharegpt).collect();
            crate::files::write(&path, serde_json::to_string_pretty(&rows).unwrap_or_default()).map_err(io(&path))?;
            files.push(path);
            let info = req.out.join("dataset_info.json");
            let entry = json!({"harness_s": {"file_name": "examples.json", "formatting": "sharegpt",
                "columns": {"messages": "conversations", "system": "system", "tools": "tools"}}});
            crate::files::write(&info, serde_json::to_string_pretty(&entry).unwrap_or_default()).map_err(io(&info))?;
            files.push(info);
        }
        ExportFormat::VerlSft => {
            let jsonl = req.out.join("examples.verl.jsonl");
            write_jsonl(&jsonl, &mut all.iter().map(|l| serde_json::to_value(l).unwrap_or_default()))?;
            let parquet = req.out.join("examples.parquet");
            // made here first, where a link in its place is refused; Python then writes that file
            crate::files::create(&parquet, true).map_err(io(&parquet))?;
            let python = std::env::var("HARNESS_S_PYTHON").unwrap_or_else(|_| "python3".into());
            let out = std::process::Command::new(&python).arg("-c").arg(PARQUET_SCRIPT).arg(&jsonl).arg(&parquet).output().map_err(|e| {
                ExportError::Input(format!("verl-sft: cannot run `{python}` to write parquet ({e}); set HARNESS_S_PYTHON to a Python with pyarrow"))
            })?;
            if !out.status.success() {
                return Err(ExportError::Input(format!(
                    "verl-sft: `{python}` could not write {} (it needs pyarrow: pip install pyarrow; or set HARNESS_S_PYTHON): {}",
                    parquet.display(),
                    String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
                )));
            }
            files.push(parquet);
        }
    }
    Ok(ExportSummary { files: files.iter().map(|p| p.display().to_string()).collect(), conversations: counts })
}
