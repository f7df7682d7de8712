//! The bundled DBBench set: at least 400 tasks over at least 10 families, every record verifies,
//! every select record's gold SQL really produces its label through the executor and scorer, and
//! the generator reproduces the committed file.

use std::collections::BTreeMap;

use harness_s::policy::ToolCall;
use harness_s::suite::dbbench::DbBench;
use harness_s::suite::Suite;
use serde_json::json;

#[test]
fn bundled_set_is_large_varied_and_verifies() {
    let suite = DbBench::new();
    let tasks = suite.bundled_tasks().expect("bundled set loads");
    assert!(tasks.len() >= 400, "{}", tasks.len());
    let mut fams: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &tasks {
        *fams.entry(t.family.as_str()).or_default() += 1;
    }
    assert!(fams.len() >= 10, "{fams:?}");
    for want in ["INSERT", "UPDATE", "DELETE", "counting", "ranking", "comparison", "aggregation-SUM", "aggregation-AVG"] {
        assert!(fams.contains_key(want), "family {want}");
    }
    let report = suite.verify(&tasks);
    assert_eq!(report.agree, report.total, "{:?}", report.disagreements);
}

#[test]
fn select_gold_sql_produces_the_label() {
    let suite = DbBench::new();
    let tasks = suite.bundled_tasks().unwrap();
    let mut checked = 0;
    for t in tasks.iter().filter(|t| !matches!(t.family.as_str(), "INSERT" | "UPDATE" | "DELETE")) {
        let sql = t.payload["sql"]["query"].as_str().expect("gold sql").to_string();
        let mut env = suite.make_env(t).unwrap();
        let out = env.step(&ToolCall { id: "q".into(), name: "execute_sql".into(), arguments: json!({"query": sql}) }).unwrap();
        assert!(out.signals.error_kind.is_none(), "{}: {} -> {}", t.id, sql, out.observation);
        // commit the first column of the result, as an agent reading it would
        let rows = harness_s::suite::dbbench::grammar::parse_rows(&out.observation).expect("rows");
        let answers: Vec<String> = rows.iter().filter_map(|r| r.first().cloned()).collect();
        let commit = ToolCall { id: "c".into(), name: "commit_final_answer".into(), arguments: json!({"answers": answers}) };
        let score = env.score(Some(&commit)).unwrap();
        assert!(score.success, "{}: gold {} gave {} but the label is {}", t.id, sql, out.observation, t.payload["label"]);
        checked += 1;
    }
    assert!(checked >= 280, "{checked}");
}

#[test]
fn generator_reproduces_the_committed_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundled.jsonl");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_gen-dbbench")).arg(&out).status().expect("generator runs");
    assert!(status.success());
    let committed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/dbbench/bundled.jsonl")).unwrap();
    let fresh = std::fs::read(&out).unwrap_or_default();
    assert!(fresh == committed, "regenerating datasets/dbbench/bundled.jsonl changed it");
}
