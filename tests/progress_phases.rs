//! Live progress of an experiment through the workbench command set, as the app sees it: each
//! job's phases arrive in the runner's order, the run's episode count only grows and ends at the
//! episodes the store holds, inside the planned range, and every evaluation is sent as a point of
//! the transfer curves.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness_s::store::EpisodeFilter;
use harness_s::workbench::Workbench;
use serde_json::{json, Value};

/// A tiny experiment: two arms, one seed, two iterations, profiles measured again after the first.
const TINY: &str = r#"
name = "tiny-progress"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG"]
arms = ["policy-only", "harness-s"]
seeds = [1]
iterations = 2
eval_every = 1
reanchor_every = 1
[policy]
warm_start_demos = 6
[budget]
batch_tasks = 12
base_tries = 2
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 4
[eval]
train_tasks = 12
heldout_tasks = 8
"#;

const ITERATIONS: usize = 2;

/// Whether one job's phases (`iteration:phase` tokens, consecutive repeats merged) come in the
/// runner's order: the warm start's search, profiles (routed arms), the first evaluation; per
/// iteration base tries and rescues task by task, the update, profiles again (not after the
/// last), an evaluation; after the last, profiles for an arm without any, the rank-one
/// inference, the end.
fn in_order(seq: &[String], n: usize) -> Result<(), String> {
    let mut it = seq
        .iter()
        .map(|t| {
            let (i, p) = t.split_once(':').unwrap();
            (i.parse::<usize>().unwrap(), p.to_string())
        })
        .peekable();
    let mut expect = |k: usize, p: &str, optional: bool| -> Result<(), String> {
        match it.peek() {
            Some((i, q)) if *i == k && q == p => {
                it.next();
                Ok(())
            }
            _ if optional => Ok(()),
            other => Err(format!("expected {k}:{p}, got {other:?}")),
        }
    };
    expect(0, "demonstrations", false)?;
    expect(0, "probing", true)?;
    expect(0, "evaluation", false)?;
    for k in 1..=n {
        expect(k, "rollouts", false)?;
        loop {
            let before = (expect(k, "rollouts", false).is_ok(), expect(k, "rescues", false).is_ok());
            if before == (false, false) {
                break;
            }
        }
        expect(k, "update", false)?;
        if k < n {
            expect(k, "probing", true)?;
            expect(k, "evaluation", false)?;
        } else {
            expect(k, "evaluation", false)?;
            expect(k, "probing", true)?;
            expect(k, "rank_one", false)?;
            expect(k, "finished", false)?;
        }
    }
    match it.next() {
        None => Ok(()),
        Some(extra) => Err(format!("after the end: {extra:?}")),
    }
}

#[test]
fn phases_arrive_in_order_and_episodes_count_up_to_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let wb = Workbench::open(&dir.path().join("wb.db").display().to_string(), dir.path()).unwrap();
    let events: Arc<Mutex<Vec<Value>>> = Arc::default();
    let ev = events.clone();
    let _sub = wb.subscribe(move |v| ev.lock().unwrap().push(v.clone()));

    let plan = wb.call("config_check", json!({"toml": TINY})).unwrap()["estimate"].clone();
    let run_id = wb.call("experiment_start", json!({"toml": TINY})).unwrap()["run_id"].as_i64().unwrap();
    let t = Instant::now();
    while wb.call("experiment", json!({"id": run_id})).unwrap()["status"] == "running" {
        assert!(t.elapsed() < Duration::from_secs(600), "the experiment did not finish");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(wb.call("experiment", json!({"id": run_id})).unwrap()["status"], "finished");
    let evs = events.lock().unwrap().clone();
    let phases: Vec<&Value> = evs.iter().filter(|e| e["event"] == "phase").collect();
    assert!(!phases.is_empty());

    // Each job's phases, in the order they came.
    let mut by_job: BTreeMap<(String, String, u64), Vec<String>> = BTreeMap::new();
    for e in &phases {
        assert_eq!(e["run_id"], run_id);
        assert_eq!(e["iterations"], ITERATIONS);
        let k = (e["suite"].as_str().unwrap().to_string(), e["arm"].as_str().unwrap().to_string(), e["seed"].as_u64().unwrap());
        let token = format!("{}:{}", e["iteration"], e["phase"].as_str().unwrap());
        let seq = by_job.entry(k).or_default();
        if seq.last() != Some(&token) {
            seq.push(token);
        }
        // the label names the phase in words
        let label = e["label"].as_str().unwrap();
        let it = e["iteration"].as_u64().unwrap();
        match e["phase"].as_str().unwrap() {
            "demonstrations" => assert_eq!(label, "warm-start demonstrations"),
            "finished" => assert_eq!(label, "finished"),
            "evaluation" if it == 0 => assert_eq!(label, "first evaluation"),
            "probing" if it == 0 => assert_eq!(label, "probing siblings"),
            p => {
                let what = match p {
                    "probing" => "probing siblings",
                    "rank_one" => "rank-one inference",
                    other => other,
                };
                assert_eq!(label, format!("iteration {it} of {ITERATIONS}: {what}"));
            }
        }
    }
    assert_eq!(by_job.len(), 2, "{by_job:?}");
    for (job, seq) in &by_job {
        if let Err(e) = in_order(seq, ITERATIONS) {
            panic!("{job:?}: phases out of order ({e}): {}", seq.join(" "));
        }
    }
    let routed = &by_job[&("dbbench".to_string(), "harness-s".to_string(), 1)];
    assert!(routed.contains(&"0:probing".to_string()) && routed.contains(&"1:probing".to_string()), "{routed:?}");
    let baseline = &by_job[&("dbbench".to_string(), "policy-only".to_string(), 1)];
    assert!(!baseline.iter().any(|t| t.ends_with(":rescues") || t.starts_with("0:probing") || t.starts_with("1:probing")), "{baseline:?}");
    // every iteration in which the routed arm rescued says so
    let rescues = wb.call("episodes", json!({"run_id": run_id, "arm": "harness-s", "phase": "rescue", "limit": 1000})).unwrap();
    let rescued_in: std::collections::BTreeSet<u64> = rescues["rows"].as_array().unwrap().iter().map(|r| r["iteration"].as_u64().unwrap()).collect();
    assert!(!rescued_in.is_empty(), "the tiny experiment needs a rescue somewhere");
    for it in rescued_in {
        assert!(routed.contains(&format!("{it}:rescues")), "iteration {it} rescued but no `rescues` phase: {routed:?}");
    }

    // Episodes: never backwards, and at the end the store's count, inside the plan.
    let stored = wb.store().count_episodes(&EpisodeFilter::run(run_id)).unwrap();
    let done: Vec<u64> = phases.iter().map(|e| e["episodes"]["done"].as_u64().unwrap()).collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "episode counts went backwards: {done:?}");
    assert_eq!(*done.last().unwrap(), stored, "the last count is the episodes stored");
    assert!(done.iter().any(|&d| d > 0 && d < stored), "the count moves during the run: {done:?}");
    let last = &phases.last().unwrap()["episodes"];
    assert_eq!(last["min"], plan["episodes_min"]);
    assert_eq!(last["max"], plan["episodes_max"]);
    let (min, max) = (last["min"].as_u64().unwrap(), last["max"].as_u64().unwrap());
    assert!(min <= stored && stored <= max, "{stored} episodes stored, planned {min}..{max}");
    let expected = last["expected"].as_u64().expect("expected, once tasks have run");
    assert!(expected >= stored && expected <= max, "{last}");
    // no ETA without measured episodes; the first phase comes before any
    assert!(phases[0]["eta_s"].is_null());
    for e in &phases {
        if let Some(eta) = e["eta_s"].as_f64() {
            assert!(e["episodes"]["done"].as_u64().unwrap() > 0 && eta.is_finite() && eta >= 0.0, "{e}");
        }
    }
    // progress events keep their fields
    let progress: Vec<&Value> = evs.iter().filter(|e| e["event"] == "progress").collect();
    assert_eq!(progress.len(), 2 * (ITERATIONS + 1));
    for p in &progress {
        for k in ["run_id", "label", "done", "total", "success_rate", "eta_s", "unit"] {
            assert!(p.get(k).is_some(), "progress without `{k}`: {p}");
        }
    }

    // Evaluations: one event per job, evaluation and split, as many tasks as stored.
    let evals: Vec<&Value> = evs.iter().filter(|e| e["event"] == "evaluation").collect();
    assert_eq!(evals.len(), 2 * (ITERATIONS + 1) * 2, "{evals:?}");
    for arm in ["policy-only", "harness-s"] {
        for split in ["train", "heldout"] {
            let sent: u64 = evals.iter().filter(|e| e["arm"] == arm && e["split"] == split).map(|e| e["tasks"].as_u64().unwrap()).sum();
            let f = EpisodeFilter { arm: Some(arm.into()), phase: Some("eval".into()), split: Some(split.into()), ..EpisodeFilter::run(run_id) };
            assert_eq!(sent, wb.store().count_episodes(&f).unwrap(), "{arm} {split}");
        }
    }
    // each evaluation event comes after the job's `evaluation` phase of its iteration
    let mut seen_phase: Vec<(String, u64)> = Vec::new();
    for e in &evs {
        match e["event"].as_str().unwrap() {
            "phase" if e["phase"] == "evaluation" => seen_phase.push((e["arm"].as_str().unwrap().into(), e["iteration"].as_u64().unwrap())),
            "evaluation" => {
                let k = (e["arm"].as_str().unwrap().to_string(), e["iteration"].as_u64().unwrap());
                assert!(seen_phase.contains(&k), "evaluation {e} before its phase");
            }
            _ => {}
        }
    }

    // `jobs` keeps the same for a page opened later.
    let jobs = wb.call("jobs", Value::Null).unwrap();
    let job = &jobs[0];
    assert_eq!(job["episodes"]["done"], stored);
    assert_eq!(job["evaluations"].as_array().unwrap().len(), evals.len());
    assert!(job["now"].as_str().unwrap().ends_with(": finished"), "{}", job["now"]);
    for u in job["units"].as_array().unwrap() {
        assert_eq!(u["phase"], "finished", "{u}");
        assert_eq!(u["iteration"], ITERATIONS, "{u}");
    }
}
