//! Bad input never panics: bounded-time fuzzing of every parser that reads a user's or a
//! server's bytes — experiment files, harness spec files, the DBBench / AppWorld / SWE-Gym
//! loaders, the OpenAI-compatible reply parser, and the command set behind `serve`'s request
//! bodies. See `tests/support/fuzz.rs` for the mutator, the time budget and the saved cases.

#[path = "support/fuzz.rs"]
mod fuzz;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use harness_s::experiment::ExperimentConfig;
use harness_s::harness::HarnessLibrary;
use harness_s::suite::Suite;
use serde_json::{json, Value};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(rel: &str) -> Vec<u8> {
    std::fs::read(root().join(rel)).unwrap()
}

/// The first `n` lines of a bundled file.
fn lines(rel: &str, n: usize) -> Vec<Vec<u8>> {
    String::from_utf8(text(rel)).unwrap().lines().take(n).map(|l| l.as_bytes().to_vec()).collect()
}

#[test]
fn fuzz_experiment_files() {
    let seeds: Vec<Vec<u8>> =
        ["demo.toml", "appworld.toml", "swegym-demo.toml", "all-suites.toml"].iter().map(|f| text(&format!("experiments/{f}"))).collect();
    let dict = [
        "[budget]",
        "[policy]",
        "[[router.llm]]",
        "iterations = ",
        "seeds = [",
        "base_tries = ",
        "backend = \"openai\"",
        "=",
        "\"",
        "'''",
        "#",
        "\n",
    ];
    fuzz::fuzz("experiment_toml", &seeds, &dict, |data| {
        let text = String::from_utf8_lossy(data);
        if let Ok(c) = ExperimentConfig::parse("fuzz.toml", &text) {
            let _ = c.cost_estimate();
            let _ = toml::to_string(&c);
        }
    });
}

#[test]
fn fuzz_harness_spec_files() {
    let dir = root().join("harnesses");
    let mut shipped: Vec<(String, String)> = Vec::new();
    for suite in std::fs::read_dir(&dir).unwrap().flatten() {
        for f in std::fs::read_dir(suite.path()).unwrap().flatten() {
            let rel = format!("{}/{}", suite.file_name().to_string_lossy(), f.file_name().to_string_lossy());
            shipped.push((rel, std::fs::read_to_string(f.path()).unwrap()));
        }
    }
    shipped.sort();
    let seeds: Vec<Vec<u8>> = shipped.iter().map(|(_, t)| t.as_bytes().to_vec()).collect();
    let dict = [
        "[[hooks]]",
        "when = ",
        "extends = \"base\"",
        "kind = \"before_action\"",
        "kind = \"call\"",
        "predicate = ",
        "text = ",
        "[frame]",
        "max_rounds = ",
        "{",
        "}",
    ];
    fuzz::fuzz("harness_spec", &seeds, &dict, |data| {
        // the mutated file joins the shipped ones (as a new sibling, or replacing one)
        let t = String::from_utf8_lossy(data).to_string();
        let mut files = shipped.clone();
        let k = data.len() % (files.len() + 1);
        if k < files.len() {
            files[k].1 = t;
        } else {
            files.push(("dbbench/fuzzed.toml".into(), t));
        }
        let _ = HarnessLibrary::from_files(files);
    });
}

#[test]
fn fuzz_dbbench_loader() {
    let mut seeds = lines("datasets/dbbench/bundled.jsonl", 12);
    if let Ok(official) = std::fs::read(root().join("../shared/data/dbbench/dev.jsonl")) {
        seeds.extend(String::from_utf8_lossy(&official).lines().take(20).map(|l| l.as_bytes().to_vec()));
    }
    let dict = ["\"type\":", "\"INSERT\"", "\"answer_md5\":", "\"table\":", "\"columns\":", "\"rows\":", "\"label\":", "`", "'", "\\\\"];
    let suite = harness_s::suite::dbbench::DbBench::new();
    fuzz::fuzz("dbbench_loader", &seeds, &dict, |data| {
        if let Ok(records) = harness_s::suite::dbbench::record::parse_jsonl(data, "fuzz.jsonl") {
            for r in records.iter().take(2) {
                let task = r.to_task("fuzz");
                let _ = r.prompt();
                // the loader's output must also make a database without panicking
                if let Ok(mut env) = suite.make_env(&task) {
                    let _ = env.score(None);
                }
            }
        }
    });
}

#[test]
fn fuzz_appworld_task_id_files() {
    let seeds = vec![b"82e2fac_1\n# comment\nabc_2\n".to_vec(), br#"["82e2fac_1", "music_3"]"#.to_vec(), b"".to_vec()];
    fuzz::fuzz("appworld_ids", &seeds, &["_", "#", "[", "\"", ","], |data| {
        let _ = harness_s::suite::appworld::parse_ids("fuzz.txt", &String::from_utf8_lossy(data));
    });
}

#[test]
fn fuzz_swegym_loader() {
    let mut seeds = lines("datasets/swegym/bundled.jsonl", 3);
    if let Ok(official) = std::fs::read_dir(root().join("../shared/data/swegym")) {
        for f in official.flatten().take(2) {
            if let Ok(t) = std::fs::read_to_string(f.path()) {
                seeds.push(t.lines().take(2).collect::<Vec<_>>().join("\n").into_bytes());
            }
        }
    }
    let dict = ["\"FAIL_TO_PASS\":", "\"[\\\"a\\\"]\"", "\"instance_id\":", "\"repo\":", "diff --git a/", "\n", "["];
    fuzz::fuzz("swegym_loader", &seeds, &dict, |data| {
        if let Ok(items) = harness_s::suite::swegym::instance::parse("fuzz.jsonl", &String::from_utf8_lossy(data)) {
            for (_, inst, raw) in items.into_iter().take(3) {
                let task = inst.to_task(raw);
                let _ = harness_s::suite::swegym::instance::instance_of(&task);
                let _ = harness_s::suite::swegym::score::test_command(&inst);
            }
        }
    });
}

#[test]
fn fuzz_openai_replies() {
    let tool = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "execute_sql", "arguments": "{\"query\": \"SELECT 1\"}"}}]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 10, "completion_tokens": 5}});
    let text = json!({"choices": [{"message": {"role": "assistant", "content": "<tool_call>\n{\"name\": \"execute_sql\", \"arguments\": {\"query\": \"SELECT 1\"}}\n</tool_call>"}, "logprobs": {"content": [{"token": "a", "logprob": -0.5}]}}]});
    let seeds = vec![tool.to_string().into_bytes(), text.to_string().into_bytes(), br#"{"error": {"message": "bad"}}"#.to_vec()];
    let dict = ["\"arguments\":", "<tool_call>", "</tool_call>", "```json", "\"tool_calls\":", "\"content\":", "{\"name\":"];
    fuzz::fuzz("openai_reply", &seeds, &dict, |data| {
        let body = String::from_utf8_lossy(data);
        for text_mode in [false, true] {
            if let Ok(turn) = harness_s::policy::openai::wire::parse_reply(&body, text_mode, 0) {
                let _ = serde_json::to_string(&turn);
            }
        }
        let _ = harness_s::policy::openai::text_tools::parse_tool_calls(&body, 0);
    });
}

/// Commands `serve` and the app run on a request body (the ones that only read, or write inside
/// the workspace).
const COMMANDS: &[&str] = &[
    "workspace",
    "suites",
    "tasks",
    "task",
    "import_dataset",
    "harnesses",
    "config_template",
    "config_check",
    "config_render",
    "jobs",
    "experiments",
    "experiment",
    "results",
    "compare",
    "episodes",
    "episode",
    "rescue",
    "report_file",
];

#[test]
fn fuzz_serve_request_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wb.db").display().to_string();
    // a store with one small finished experiment, so ids lead somewhere
    let cfg = ExperimentConfig::parse(
        "tiny.toml",
        "name = \"tiny\"\nheldout_families = [\"DELETE\"]\narms = [\"policy-only\", \"harness-s\"]\niterations = 1\n[policy]\nwarm_start_demos = 3\n[budget]\nbatch_tasks = 6\nbase_tries = 2\nprobe_tasks = 3\n[eval]\ntrain_tasks = 6\n",
    )
    .unwrap();
    let store = harness_s::store::BlockingStore::open(&db).unwrap();
    let run = harness_s::experiment::run_experiment(&cfg, &store, &harness_s::events::NullSink, &AtomicBool::new(false)).unwrap();
    drop(store);
    let wb = harness_s::workbench::Workbench::open(&db, dir.path()).unwrap();
    let r = run.run_id;
    let seeds: Vec<Vec<u8>> = [
        json!({"command": "tasks", "args": {"suite": "dbbench", "family": "DELETE"}}),
        json!({"command": "task", "args": {"suite": "dbbench", "id": "db-lookup-0001"}}),
        json!({"command": "config_check", "args": {"toml": "name = \"x\"\niterations = 3\n"}}),
        json!({"command": "config_render", "args": {"config": serde_json::to_value(&cfg).unwrap()}}),
        json!({"command": "import_dataset", "args": {"suite": "dbbench", "name": "mine.jsonl", "text": String::from_utf8(lines("datasets/dbbench/bundled.jsonl", 1).remove(0)).unwrap()}}),
        json!({"command": "episodes", "args": {"run_id": r, "arm": "harness-s", "limit": 5, "offset": 0, "success": false}}),
        json!({"command": "episode", "args": {"id": 1}}),
        json!({"command": "rescue", "args": {"episode_id": 3}}),
        json!({"command": "results", "args": {"id": r}}),
        json!({"command": "compare", "args": {"id": r, "other": r}}),
        json!({"command": "experiment", "args": {"id": r}}),
        json!({"command": "report_file", "args": {"id": r, "format": "json"}}),
        json!({"command": "harnesses", "args": {"suite": "dbbench"}}),
    ]
    .iter()
    .map(|v| v.to_string().into_bytes())
    .collect();
    let dict: Vec<&str> = COMMANDS.to_vec();
    fuzz::fuzz("serve_bodies", &seeds, &dict, |data| {
        // as `serve` does: the body must be JSON, then the command runs on it
        let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
        // a mangled command name would only meet "unknown command": aim it at a real one
        let named = v.get("command").and_then(Value::as_str).unwrap_or("");
        let command = if COMMANDS.contains(&named) { named } else { COMMANDS[data.len() % COMMANDS.len()] };
        let _ = wb.call(command, v.get("args").cloned().unwrap_or(Value::Null));
    });
    wb.shutdown();
}

#[test]
fn the_suites_own_bundled_sets_still_load() {
    // the seeds above come from these files; make sure they are what the fuzzers think
    for s in harness_s::suite::registry() {
        assert!(!s.bundled_tasks().unwrap().is_empty(), "{}", s.name());
    }
}
