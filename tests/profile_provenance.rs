//! Whose evidence a harness profile is: the Harnesses view takes its profiles from one experiment
//! run, by default the one with the most paired probe outcomes, so a small newer run does not
//! replace a large one; the user can pick another run.

use std::time::{Duration, Instant};

use harness_s::workbench::{CommandError, Workbench};
use serde_json::{json, Value};

/// A small experiment; `probe_tasks` sets how much probe evidence it measures.
fn experiment(name: &str, probe_tasks: usize) -> String {
    format!(
        r#"
name = "{name}"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG"]
arms = ["harness-s"]
seeds = [1]
iterations = 1
eval_every = 1
reanchor_every = 1
[policy]
warm_start_demos = 4
[budget]
batch_tasks = 8
base_tries = 2
rescue_siblings = 1
rescue_tries = 1
probe_tasks = {probe_tasks}
[eval]
train_tasks = 8
"#
    )
}

fn run(wb: &Workbench, toml: &str) -> i64 {
    let id = wb.call("experiment_start", json!({ "toml": toml })).unwrap()["run_id"].as_i64().unwrap();
    let t = Instant::now();
    while wb.call("experiment", json!({ "id": id })).unwrap()["status"] == "running" {
        assert!(t.elapsed() < Duration::from_secs(600), "experiment {id} did not finish");
        std::thread::sleep(Duration::from_millis(100));
    }
    id
}

fn pairs(h: &Value) -> u64 {
    let p = &h["profile"];
    ["fix", "regress", "both_pass", "both_fail"].iter().map(|k| p[k].as_u64().unwrap()).sum()
}

#[test]
fn profiles_come_from_the_run_with_the_most_evidence_unless_another_is_picked() {
    let dir = tempfile::tempdir().unwrap();
    let wb = Workbench::open(&dir.path().join("wb.db").display().to_string(), dir.path()).unwrap();
    assert_eq!(wb.call("profile_runs", json!({"suite": "dbbench"})).unwrap(), json!([]), "no run has measured profiles yet");

    let large = run(&wb, &experiment("large", 8));
    let small = run(&wb, &experiment("small", 2));
    assert!(small > large);

    let runs = wb.call("profile_runs", json!({"suite": "dbbench"})).unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0]["run_id"], small, "newest first");
    assert_eq!(runs[1]["run_id"], large);
    let (small_pairs, large_pairs) = (runs[0]["pairs"].as_u64().unwrap(), runs[1]["pairs"].as_u64().unwrap());
    assert!(large_pairs > small_pairs && small_pairs > 0, "{runs:?}");
    assert_eq!((runs[0]["default"].as_bool(), runs[1]["default"].as_bool()), (Some(false), Some(true)));
    assert_eq!(runs[1]["arm"], "harness-s");
    assert!(runs[1]["siblings"].as_u64().unwrap() > 0);

    // By default the newer, smaller run does not replace the larger run's profiles.
    let hs = wb.call("harnesses", json!({"suite": "dbbench"})).unwrap();
    let profiled: Vec<&Value> = hs.as_array().unwrap().iter().filter(|h| !h["profile"].is_null()).collect();
    assert!(!profiled.is_empty());
    assert!(profiled.iter().all(|h| h["profile"]["run_id"] == large), "{profiled:?}");
    assert_eq!(profiled.iter().map(|h| pairs(h)).sum::<u64>(), large_pairs);

    // Picking the small run shows its profiles.
    let hs = wb.call("harnesses", json!({"suite": "dbbench", "run": small})).unwrap();
    let picked: Vec<&Value> = hs.as_array().unwrap().iter().filter(|h| !h["profile"].is_null()).collect();
    assert!(picked.iter().all(|h| h["profile"]["run_id"] == small), "{picked:?}");
    assert_eq!(picked.iter().map(|h| pairs(h)).sum::<u64>(), small_pairs);

    // A run that measured nothing for the suite is a clear error.
    let e = wb.call("harnesses", json!({"suite": "dbbench", "run": 9999})).unwrap_err();
    assert!(matches!(&e, CommandError::NotFound(m) if m.contains("run 9999") && m.contains("profile_runs")), "{e:?}");
    let other = wb.call("profile_runs", json!({"suite": "swegym"})).unwrap();
    assert_eq!(other, json!([]));
}
