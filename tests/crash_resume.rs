//! Crash-resume to identical numbers. `harness-s experiment run` is killed with SIGKILL at
//! several points of a short experiment — during rollouts, right after a policy update, during
//! evaluation, inside a store transaction, before a checkpoint — and resumed each time; the final
//! JSON summary equals an uninterrupted run's, and every episode is there exactly once (the
//! multiset of episode keys equals the uninterrupted run's). The same through the command set
//! `serve` and the app use: an experiment cancelled at several points and resumed.
//!
//! The kills are armed with `HARNESS_S_FAULT=<point>:<n>` ([`harness_s::fault`]), which makes the
//! process SIGKILL itself at the n-th time it reaches the point: a real kill, at a known place.
//! The n are drawn from a fixed-seed generator (printed), so a failure can be replayed.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use harness_s::workbench::Workbench;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

const EXPERIMENT: &str = r#"
name = "crash"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG", "DELETE"]
arms = ["policy-only", "harness-s", "base-resample"]
seeds = [1, 2]
iterations = 4
eval_every = 2
reanchor_every = 2
workers = 2

[policy]
warm_start_demos = 8
learning_rate = 2.0
temperature = 0.6

[budget]
batch_tasks = 8
base_tries = 3
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 6

[eval]
train_tasks = 16
"#;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_harness-s"))
}

/// Run the experiment; `None` when the process was killed (by an armed fault).
fn run(config: &Path, db: &Path, fault: Option<&str>) -> Option<Value> {
    let mut c = Command::new(bin());
    c.args(["experiment", "run"]).arg(config).arg("--db").arg(db).arg("--json");
    match fault {
        Some(f) => c.env(harness_s::fault::ENV_FAULT, f),
        None => c.env_remove(harness_s::fault::ENV_FAULT),
    };
    let out = c.output().unwrap();
    if out.status.signal() == Some(libc::SIGKILL) {
        return None;
    }
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("run_id");
    Some(v)
}

/// Every episode of the store's (one) run by key, with its success and reward.
fn episode_keys(db: &Path) -> BTreeMap<String, usize> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT arm, seed_index, iteration, phase, split, task_id, harness, sample, success, reward FROM episodes").unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{}/{}/{}/{}/{}/{}/{}/{} -> {} {:?}",
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, i64>(7)?,
                r.get::<_, i64>(8)?,
                r.get::<_, Option<f64>>(9)?,
            ))
        })
        .unwrap();
    let mut keys = BTreeMap::new();
    for k in rows {
        *keys.entry(k.unwrap()).or_insert(0) += 1;
    }
    keys
}

#[test]
fn sigkill_at_every_kind_of_point_resumes_to_the_uninterrupted_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("crash.toml");
    std::fs::write(&config, EXPERIMENT).unwrap();
    let clean_db = dir.path().join("clean.db");
    let clean = run(&config, &clean_db, None).expect("the uninterrupted run finishes");
    assert_eq!(clean["finished"], true);
    let clean_keys = episode_keys(&clean_db);
    assert!(clean_keys.values().all(|n| *n == 1), "episode keys are unique in a clean run");

    let seed = 20261204u64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    // (point, the largest n that every resumed stretch still reaches)
    let plan: Vec<String> =
        [("rollout", 400), ("update", 3), ("evaluation", 4), ("store-write", 300), ("checkpoint", 6), ("rollout", 400), ("store-write", 50)]
            .iter()
            .map(|(p, max)| format!("{p}:{}", rng.gen_range(1..=*max)))
            .collect();
    println!("fault plan (seed {seed}): {plan:?}");
    let db = dir.path().join("killed.db");
    for fault in &plan {
        let t0 = Instant::now();
        assert!(run(&config, &db, Some(fault)).is_none(), "the fault {fault} was not reached: the run finished");
        println!("killed at {fault} after {:.1}s", t0.elapsed().as_secs_f64());
    }
    let resumed = run(&config, &db, None).expect("the resumed run finishes");
    assert_eq!(resumed, clean, "the resumed summary differs from the uninterrupted one");
    let keys = episode_keys(&db);
    let dup: Vec<_> = keys.iter().filter(|(_, n)| **n > 1).collect();
    assert!(dup.is_empty(), "duplicated episodes: {dup:?}");
    let lost: Vec<_> = clean_keys.keys().filter(|k| !keys.contains_key(*k)).collect();
    assert!(lost.is_empty(), "episodes lost or changed: {lost:?}");
    assert_eq!(keys, clean_keys);
}

fn wait_done(wb: &Workbench, run_id: i64) -> Value {
    let t = Instant::now();
    loop {
        let r = wb.call("experiment", json!({"id": run_id})).unwrap();
        if r["status"] != "running" {
            return r;
        }
        assert!(t.elapsed() < Duration::from_secs(600), "experiment {run_id} did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn comparable(summary: &Value) -> Value {
    let mut v = summary.clone();
    for k in ["run_id", "resumed", "wall_s"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn cancel_and_resume_through_the_command_set_gives_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let clean_wb = Workbench::open(&dir.path().join("clean.db").display().to_string(), dir.path()).unwrap();
    let clean_id = clean_wb.call("experiment_start", json!({"toml": EXPERIMENT})).unwrap()["run_id"].as_i64().unwrap();
    let clean = wait_done(&clean_wb, clean_id);
    assert_eq!(clean["status"], "finished");
    clean_wb.shutdown();

    let wb = Workbench::open(&dir.path().join("cancelled.db").display().to_string(), dir.path()).unwrap();
    let run_id = wb.call("experiment_start", json!({"toml": EXPERIMENT})).unwrap()["run_id"].as_i64().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut cancels = 0;
    loop {
        std::thread::sleep(Duration::from_millis(rng.gen_range(200..1500)));
        wb.call("experiment_cancel", json!({"run_id": run_id})).ok();
        let r = wait_done(&wb, run_id);
        if r["status"] == "finished" {
            break;
        }
        assert_eq!(r["status"], "cancelled", "{r}");
        cancels += 1;
        wb.call("experiment_resume", json!({"run_id": run_id})).unwrap();
    }
    assert!(cancels >= 2, "only {cancels} cancels landed before the end");
    let done = wb.call("experiment", json!({"id": run_id})).unwrap();
    assert_eq!(comparable(&done["summary"]), comparable(&clean["summary"]));
    wb.shutdown();
    let keys = episode_keys(&dir.path().join("cancelled.db"));
    assert_eq!(keys, episode_keys(&dir.path().join("clean.db")), "episodes differ after {cancels} cancels");
}
