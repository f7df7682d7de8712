//! One truth per number: the list of runs (the Workspace view) and a run's results take the
//! headline from the same analysis, at the last evaluation every arm and seed reached, never
//! from the runner's summary, which a cancelled run writes with arms at different iterations;
//! and a finished run's summary states the analysis's numbers bit for bit.

use harness_s::report::synthetic::{write_synthetic, Synthetic};
use harness_s::store::{BlockingStore, RunStatus};
use harness_s::workbench::Workbench;
use serde_json::{json, Value};

#[test]
fn the_run_list_and_the_results_give_the_same_headline_at_the_iteration_every_arm_reached() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wb.db");
    let run = {
        let store = BlockingStore::open(db.to_str().unwrap()).unwrap();
        let spec = Synthetic {
            arms: vec!["policy-only".into(), "harness-s".into()],
            seeds: vec![1, 2],
            iterations: 4,
            eval_every: 1,
            reanchor_every: 2,
            train_tasks: 40,
            eval_train_tasks: 20,
            heldout_tasks: 20,
            batch_tasks: 8,
            probe_tasks: 8,
            ..Synthetic::default()
        };
        let run = write_synthetic(&store, &spec).unwrap().run_id;
        // As a run cancelled with harness-s at iteration 2 and policy-only at 4 leaves it, with
        // the runner's summary comparing the two arms at their own last iterations.
        store.finish_run(run, RunStatus::Cancelled, &json!({"heldout_delta": {"mean": -0.5, "ci95": [-0.6, -0.4]}})).unwrap();
        drop(store);
        let conn = rusqlite::Connection::open(&db).unwrap();
        let gone = conn.execute("DELETE FROM episodes WHERE run_id = ?1 AND arm = 'harness-s' AND iteration > 2", [run]).unwrap();
        assert!(gone > 0);
        run
    };

    let wb = Workbench::open(db.to_str().unwrap(), dir.path()).unwrap();
    let list = wb.call("experiments", Value::Null).unwrap();
    let row = list.as_array().unwrap().iter().find(|r| r["id"] == run).unwrap().clone();
    let results = wb.call("results", json!({"id": run})).unwrap();
    assert_eq!(row["status"], "cancelled");
    assert_eq!(row["headline"], results["headline"], "the list and the results say the same");
    assert_eq!(row["pooled"], results["pooled"]);
    let h = &row["headline"][0];
    assert_eq!(h["iteration"], 2, "the last iteration every arm reached: {h}");
    assert_eq!(h["split"], "heldout");
    assert_ne!(h["delta"]["mean"], json!(-0.5), "not the runner's summary");
    // the detail of one run carries the same
    let detail = wb.call("experiment", json!({"id": run})).unwrap();
    assert_eq!(detail["headline"], results["headline"]);
}

/// The UI draws the numbers and styles it is sent: no TypeScript file under `ui/src` keeps a
/// t-table, the charts' palette or the arm list (`jobs`, `results`, `chart_style` and `arms`
/// carry them).
#[test]
fn the_ui_keeps_no_statistics_palette_or_arm_list() {
    use harness_s::chart::style::{hex, PALETTE};
    use harness_s::records::Arm;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src");
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ts" || x == "tsx") && !p.ends_with("api.gen.ts") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.display();
        assert!(!text.contains("12.706") && !text.contains("1.96"), "{name} keeps a t-table or a normal quantile");
        for c in PALETTE {
            assert!(!text.to_ascii_uppercase().contains(&hex(c)), "{name} keeps the charts' colour {}", hex(c));
        }
        let named: Vec<&str> = Arm::ALL.iter().map(|a| a.as_str()).filter(|a| text.contains(&format!("\"{a}\""))).collect();
        assert!(named.len() <= 1, "{name} lists arms {named:?}: take them from `arms`");
    }
}

/// The run summary (`experiment run --json`, the stored summary) states the analysis's numbers:
/// each arm's final success is its transfer curve's last point, and every paired difference is
/// the final table's, bit for bit, on a real run. The summary keeps its own shape for the tools
/// that read it; its numbers have one source.
#[test]
fn the_run_summary_s_numbers_are_the_analysis_s() {
    let dir = tempfile::tempdir().unwrap();
    let store = BlockingStore::open(dir.path().join("runs.db").to_str().unwrap()).unwrap();
    let mut cfg = harness_s::experiment::ExperimentConfig::parse("demo", harness_s::workbench::DEMO_CONFIG).unwrap();
    cfg.name = "one-truth".into();
    cfg.seeds = vec![1, 2];
    cfg.iterations = 2;
    cfg.eval_every = 1;
    cfg.policy.warm_start_demos = 10;
    cfg.budget.batch_tasks = 8;
    cfg.budget.probe_tasks = 6;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let out = harness_s::experiment::run_experiment(&cfg, &store, &harness_s::events::NullSink, &cancel).unwrap();
    assert!(out.finished);
    let a = harness_s::analysis::analyse(&store, out.run_id).unwrap();
    let mut compared = 0;
    for c in &a.transfer {
        let last = c.points.last().unwrap();
        assert_eq!(out.arms[&c.arm][&c.split], last.mean, "{} {}: summary against the transfer curve's last point", c.arm, c.split);
        compared += 1;
    }
    assert_eq!(compared, cfg.arms.len() * 2);
    assert!(!out.deltas.is_empty());
    for d in &out.deltas {
        let r = a.final_table.routed_vs.iter().find(|r| r.split == "heldout" && r.delta.baseline == d.baseline).unwrap();
        assert_eq!((d.mean, d.ci95, d.tasks), (r.delta.mean, r.delta.ci95, r.delta.tasks), "harness-s against {}", d.baseline);
    }
    let h = out.heldout_delta.as_ref().unwrap();
    let head = &a.headline[0].delta;
    assert_eq!((h.mean, h.ci95, h.tasks), (head.mean, head.ci95, head.tasks));
}
