//! `harness-s export`: a run's batches and evaluation trajectories written again for training
//! elsewhere, and read back with each format's own reader (JSON for openai-chat and sharegpt,
//! pandas/pyarrow for verl-sft's parquet when `HARNESS_S_PYTHON` names a Python that has them).

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use harness_s::events::NullSink;
use harness_s::experiment::{run_experiment, ExperimentConfig};
use harness_s::store::BlockingStore;
use serde_json::Value;

#[path = "support/chat_server.rs"]
mod chat_server;
use chat_server::{ChatServer, Script};

const BUILTIN: &str = r#"
name = "export"
suites = ["dbbench"]
heldout_families = ["DELETE"]
arms = ["policy-only", "harness-s"]
seeds = [3]
iterations = 2
eval_every = 1
reanchor_every = 2
workers = 2

[policy]
warm_start_demos = 8
learning_rate = 2.0
temperature = 0.6

[budget]
batch_tasks = 10
base_tries = 3
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 4

# the suite's own setting replaces the experiment's (a one-suite file could set `[distill]`; this
# checks that the runner reads the suite's)
[distill.suites.dbbench]
weight = 3.0

[eval]
train_tasks = 6
heldout_tasks = 4
"#;

fn bin() -> String {
    env!("CARGO_BIN_EXE_harness-s").to_string()
}

fn export(db: &Path, run: i64, format: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(bin())
        .args(["export", &run.to_string(), "--format", format, "--out", out.to_str().unwrap(), "--db", db.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn builtin_run(dir: &Path) -> (std::path::PathBuf, i64) {
    let db = dir.join("e.db");
    let store = BlockingStore::open(db.to_str().unwrap()).unwrap();
    let cfg = ExperimentConfig::parse("export.toml", BUILTIN).unwrap();
    let out = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).unwrap();
    assert!(out.finished);
    (db, out.run_id)
}

#[test]
fn openai_chat_and_sharegpt_exports_read_back_with_every_source() {
    let dir = tempfile::tempdir().unwrap();
    let (db, run) = builtin_run(dir.path());
    let out = dir.path().join("openai");
    let o = export(&db, run, "openai-chat", &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = jsonl(&out.join("examples.jsonl"));
    let by = |s: &str| lines.iter().filter(|l| l["source"] == s).count();
    assert!(by("warm-start") > 0 && by("rollout") > 0 && by("evaluation") > 0, "every source: {}", String::from_utf8_lossy(&o.stderr));
    assert!(by("rescue-distilled") > 0, "harness-s distilled some rescues");
    for l in &lines {
        let msgs = l["messages"].as_array().unwrap();
        assert_eq!(msgs.last().unwrap()["role"], "assistant");
        assert!(l["tools"].as_array().is_some_and(|t| !t.is_empty()), "{l}");
        if l["source"] == "rescue-distilled" {
            assert_eq!(l["harness"], "base", "strip mode: distilled into the base harness's context");
            assert_eq!(l["weight"], 3.0, "`[distill.suites.dbbench] weight`: {l}");
        } else {
            assert_eq!(l["weight"], 1.0, "{l}");
        }
        if l["source"] != "evaluation" {
            assert_ne!(l["family"], "DELETE", "held-out families are never trained on");
        }
    }
    // GRPO groups of rollouts alone are centred: their advantages sum to zero per group
    let mut groups: std::collections::BTreeMap<String, (f64, bool)> = Default::default();
    for l in lines.iter().filter(|l| l["source"] == "rollout" || l["source"] == "rescue-distilled") {
        let g = groups.entry(l["group_id"].as_str().unwrap().to_string()).or_default();
        g.0 += l["advantage"].as_f64().unwrap();
        g.1 |= l["source"] == "rescue-distilled";
    }
    assert!(!groups.is_empty());

    // filters: one arm, held-out evaluations only, one source
    let only = dir.path().join("only");
    let o = export(&db, run, "openai-chat", &only, &["--arm", "harness-s", "--split", "heldout"]);
    assert!(o.status.success());
    let held = jsonl(&only.join("examples.jsonl"));
    assert!(!held.is_empty() && held.iter().all(|l| l["arm"] == "harness-s" && l["source"] == "evaluation" && l["family"] == "DELETE"));
    let o = export(&db, run, "openai-chat", &only, &["--source", "rescue-distilled", "--seed", "3"]);
    assert!(o.status.success());
    assert!(jsonl(&only.join("examples.jsonl")).iter().all(|l| l["source"] == "rescue-distilled" && l["seed"] == 3));

    // ShareGPT with function calls, as LLaMA-Factory registers it
    let sg = dir.path().join("sharegpt");
    let o = export(&db, run, "sharegpt", &sg, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(sg.join("examples.json")).unwrap()).unwrap();
    assert_eq!(rows.len(), lines.len());
    for r in &rows {
        let conv = r["conversations"].as_array().unwrap();
        assert_eq!(conv[0]["from"], "human");
        for turn in conv {
            let from = turn["from"].as_str().unwrap();
            assert!(["human", "gpt", "function_call", "observation"].contains(&from), "{from}");
            if from == "function_call" {
                let call: Value = serde_json::from_str(turn["value"].as_str().unwrap()).unwrap();
                assert!(call["name"].is_string() && call["arguments"].is_object(), "{call}");
            }
        }
        let tools: Value = serde_json::from_str(r["tools"].as_str().unwrap()).unwrap();
        assert!(tools.as_array().unwrap().iter().all(|t| t["name"].is_string()));
    }
    let info: Value = serde_json::from_str(&std::fs::read_to_string(sg.join("dataset_info.json")).unwrap()).unwrap();
    assert_eq!(info["harness_s"]["formatting"], "sharegpt");

    // bad input: a clear error
    let o = export(&db, run, "openai-chat", &only, &["--source", "rollouts"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--source: `rollouts`"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = export(&db, 99, "openai-chat", &only, &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no run 99"));
}

#[test]
fn verl_sft_parquet_reads_back_with_pandas() {
    let Ok(python) = std::env::var("HARNESS_S_PYTHON") else {
        eprintln!("skipped: HARNESS_S_PYTHON (a Python with pandas and pyarrow) is not set; ./scripts/test sets it");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (db, run) = builtin_run(dir.path());
    let out = dir.path().join("verl");
    let o = export(&db, run, "verl-sft", &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let n = jsonl(&out.join("examples.verl.jsonl")).len();
    let check = r#"
import sys, json, pandas as pd
df = pd.read_parquet(sys.argv[1])
assert "messages" in df.columns, df.columns
m = df["messages"].iloc[0]
assert m[-1]["role"] == "assistant", m[-1]
calls = [c for msgs in df["messages"] for x in msgs if x.get("tool_calls") is not None for c in x["tool_calls"]]
assert calls and all(isinstance(c["function"]["arguments"], str) for c in calls)
print(len(df))
"#;
    let r = Command::new(&python).args(["-c", check, out.join("examples.parquet").to_str().unwrap()]).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), n.to_string());
}

#[test]
fn the_export_writes_again_exactly_the_batch_an_external_trainer_read() {
    let dir = tempfile::tempdir().unwrap();
    let server = ChatServer::start(Script::new().lora().always(|_| (200, chat_server::text_reply("no idea"))));
    let trainer = dir.path().join("t.py");
    std::fs::write(
        &trainer,
        "import json,os,sys\nr=json.load(open(sys.argv[1]))\nos.makedirs(r['output_dir'],exist_ok=True)\njson.dump({'checkpoint':r['output_dir'],'metrics':{}},open(r['result'],'w'))\n",
    )
    .unwrap();
    let text = format!(
        "name = \"x\"\nheldout_families = [\"DELETE\"]\narms = [\"harness-s\"]\niterations = 1\nworkers = 1\n[policy]\nbackend = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\nwarm_start_demos = 4\n[budget]\nbatch_tasks = 2\nbase_tries = 2\nprobe_tasks = 1\n[harness]\nsiblings = [\"inspect-first\"]\n[eval]\ntrain_tasks = 1\nheldout_tasks = 1\n[trainer]\ncommand = [\"python3\", \"{}\", \"{{request}}\"]\nworkdir = \"{}\"\n",
        server.url(),
        trainer.display(),
        dir.path().join("work").display()
    );
    let cfg = ExperimentConfig::parse("x.toml", &text).unwrap();
    let db = dir.path().join("x.db");
    let store = BlockingStore::open(db.to_str().unwrap()).unwrap();
    let out = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).unwrap();
    // the warm start's batch, in its shared folder (one per content key)
    let warm: Vec<_> = std::fs::read_dir(dir.path().join("work/warm-start")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(warm.len(), 1, "{warm:?}");
    let trained = jsonl(&warm[0].join("batch.jsonl"));
    assert!(!trained.is_empty());
    let ex = dir.path().join("ex");
    let o = export(&db, out.run_id, "openai-chat", &ex, &["--source", "warm-start"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(jsonl(&ex.join("examples.jsonl")), trained, "the export is the batch the trainer read, line for line");
}
