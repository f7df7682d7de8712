//! Reports of real (small) experiments on the bundled DBBench: numbers recomputed here from the
//! raw episodes, charts that parse and show what they claim, a self-contained HTML file, clear
//! errors, unfinished runs marked as such, side-by-side comparison, and a rendered screenshot.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::OnceLock;

use harness_s::events::NullSink;
use harness_s::experiment::{run_experiment, ExperimentConfig, ExperimentOutcome};
use harness_s::report::write_report;
use harness_s::store::{BlockingStore, EpisodeFilter, RunStatus};
use serde_json::Value;

#[path = "support/kill_after.rs"]
mod kill_after;
use kill_after::KillAfter;

const SMALL: &str = r#"
name = "small"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG", "DELETE"]
arms = ["policy-only", "harness-s"]
seeds = [1, 2]
iterations = 3
eval_every = 1
reanchor_every = 2
workers = 2

[policy]
warm_start_demos = 8
learning_rate = 0.3

[budget]
batch_tasks = 8
base_tries = 2
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 6

[eval]
train_tasks = 16
"#;

struct Fixture {
    _dir: tempfile::TempDir,
    db: String,
    /// The finished small experiment.
    run: ExperimentOutcome,
    /// Another finished experiment (other seeds) to compare with.
    other: ExperimentOutcome,
    /// An experiment stopped part-way whose status stayed `running`, as after a kill.
    unfinished: i64,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("runs.db").to_str().unwrap().to_string();
        let store = BlockingStore::open(&db).unwrap();
        let cfg = ExperimentConfig::parse("small.toml", SMALL).unwrap();
        let run = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).unwrap();
        assert!(run.finished);
        let mut other_cfg = cfg.clone();
        other_cfg.name = "small-other-seeds".into();
        other_cfg.seeds = vec![3, 4];
        let other = run_experiment(&other_cfg, &store, &NullSink, &AtomicBool::new(false)).unwrap();
        let mut killed = cfg.clone();
        killed.name = "killed".into();
        killed.workers = 1;
        let cancel = AtomicBool::new(false);
        let part = run_experiment(&killed, &store, &KillAfter { n: 4, seen: AtomicUsize::new(0), cancel: &cancel }, &cancel).unwrap();
        assert!(!part.finished);
        // a killed process never gets to mark its run: it stays `running`
        store.set_run_status(part.run_id, RunStatus::Running).unwrap();
        Fixture { _dir: dir, db, run, other, unfinished: part.run_id }
    })
}

fn store() -> BlockingStore {
    BlockingStore::open(&fixture().db).unwrap()
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-tests").join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn report(name: &str, experiment: &str, compare: Option<&str>) -> (harness_s::report::ReportPaths, Value, String) {
    let paths = write_report(&store(), experiment, compare, &out_dir(name)).expect("report written");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&paths.json).unwrap()).unwrap();
    let html = std::fs::read_to_string(&paths.html).unwrap();
    (paths, json, html)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn final_table_and_a_transfer_curve_match_the_raw_eval_episodes() {
    let f = fixture();
    let (_, json, _) = report("numbers", &f.run.run_id.to_string(), None);
    assert_eq!(json["status"], "finished");
    let rows = store().episode_rows(&EpisodeFilter { run_id: Some(f.run.run_id), phase: Some("eval".into()), ..Default::default() }).unwrap();
    assert!(!rows.is_empty());
    let last = rows.iter().filter_map(|r| r.context.iteration).max().unwrap();
    // (arm, split) -> task -> seed -> success, at the last iteration
    let mut at_last: BTreeMap<(String, String), BTreeMap<String, BTreeMap<u32, f64>>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.context.iteration == Some(last) && r.infra_error.is_none()) {
        let key = (r.context.arm.clone().unwrap(), r.context.split.clone().unwrap());
        at_last
            .entry(key)
            .or_default()
            .entry(r.task_id.clone())
            .or_default()
            .insert(r.context.seed_index.unwrap(), if r.success { 1.0 } else { 0.0 });
    }
    let table = json["final_table"]["rows"].as_array().unwrap();
    assert_eq!(table.len(), at_last.len(), "one row per arm and split");
    for ((arm, split), tasks) in &at_last {
        let row = table.iter().find(|r| r["arm"] == arm.as_str() && r["split"] == split.as_str()).unwrap_or_else(|| panic!("row {arm}/{split}"));
        let per_task: Vec<f64> = tasks.values().map(|s| mean(&s.values().copied().collect::<Vec<_>>())).collect();
        let expect = mean(&per_task);
        assert!((row["success"].as_f64().unwrap() - expect).abs() < 1e-9, "{arm}/{split}: {} vs {expect}", row["success"]);
        assert_eq!(row["iteration"].as_u64().unwrap(), u64::from(last));
        assert_eq!(row["tasks"].as_u64().unwrap() as usize, tasks.len());
        let ci = row["ci95"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() <= expect + 1e-12 && expect <= ci[1].as_f64().unwrap() + 1e-12);
        if arm == "harness-s" {
            let base = &at_last[&("policy-only".to_string(), split.clone())];
            let diffs: Vec<f64> = tasks
                .iter()
                .filter_map(|(t, s)| base.get(t).map(|b| mean(&s.iter().filter_map(|(seed, x)| b.get(seed).map(|y| x - y)).collect::<Vec<_>>())))
                .collect();
            let d = &row["delta"];
            assert!((d["mean"].as_f64().unwrap() - mean(&diffs)).abs() < 1e-9, "{split} delta");
            assert_eq!(d["tasks"].as_u64().unwrap() as usize, diffs.len());
        }
    }
    // the headline is the runner's own held-out delta (same pairing, same bootstrap)
    let h = &json["headline"][0];
    assert_eq!(h["split"], "heldout");
    let runner = f.run.heldout_delta.as_ref().unwrap();
    assert!((h["delta"]["mean"].as_f64().unwrap() - runner.mean).abs() < 1e-9);
    assert!((h["delta"]["ci95"][0].as_f64().unwrap() - runner.ci95[0]).abs() < 1e-9);
    assert!((h["delta"]["ci95"][1].as_f64().unwrap() - runner.ci95[1]).abs() < 1e-9);

    // one transfer curve: harness-s on held-out families, mean over seeds per iteration
    let mut per: BTreeMap<u32, BTreeMap<u32, (f64, f64)>> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.context.arm.as_deref() == Some("harness-s") && r.context.split.as_deref() == Some("heldout") && r.infra_error.is_none())
    {
        let e = per.entry(r.context.iteration.unwrap()).or_default().entry(r.context.seed_index.unwrap()).or_default();
        e.0 += if r.success { 1.0 } else { 0.0 };
        e.1 += 1.0;
    }
    let curve = json["transfer"].as_array().unwrap().iter().find(|c| c["arm"] == "harness-s" && c["split"] == "heldout").unwrap();
    let points = curve["points"].as_array().unwrap();
    assert_eq!(points.len(), per.len());
    for (p, (it, seeds)) in points.iter().zip(&per) {
        assert_eq!(p["iteration"].as_u64().unwrap(), u64::from(*it));
        let expect = mean(&seeds.values().map(|(s, n)| s / n).collect::<Vec<_>>());
        assert!((p["mean"].as_f64().unwrap() - expect).abs() < 1e-9, "iteration {it}");
        assert_eq!(p["seeds"].as_u64().unwrap(), 2);
    }
    // and the runner's training curve agrees with the report's
    for (it, v) in &f.run.curves["harness-s"] {
        let c = json["transfer"].as_array().unwrap().iter().find(|c| c["arm"] == "harness-s" && c["split"] == "train").unwrap();
        let p = c["points"].as_array().unwrap().iter().find(|p| p["iteration"].as_u64() == Some(*it as u64)).unwrap();
        assert!((p["mean"].as_f64().unwrap() - v).abs() < 1e-9);
    }
}

fn texts(doc: &roxmltree::Document) -> Vec<String> {
    doc.descendants().filter(|n| n.has_tag_name("text")).map(|n| n.text().unwrap_or("").trim().to_string()).collect()
}

#[test]
fn every_chart_parses_and_shows_its_series_and_both_axis_labels() {
    let f = fixture();
    let (paths, json, _) = report("charts", &f.run.run_id.to_string(), None);
    let index = json["charts"].as_array().unwrap();
    assert_eq!(index.len(), paths.charts.len());
    // expected series per chart, where the data fixes it
    let expected: BTreeMap<&str, Vec<&str>> = [
        ("transfer", vec!["policy-only", "harness-s"]),
        ("final-table", vec!["train", "heldout"]),
        ("final-deltas", vec!["train", "heldout"]),
        // no base-resample arm: extra base samples are "not measured", not drawn
        ("complementarity", vec!["sibling-union", "routed"]),
        ("router", vec!["routed", "random", "oracle"]),
        ("behaviour-dbbench", vec!["policy-only", "harness-s"]),
        ("rank-one", vec!["base-only", "rank-one"]),
        ("locality-dbbench", vec![]),
    ]
    .into_iter()
    .collect();
    let axes: BTreeMap<&str, (&str, &str)> = [
        ("transfer", ("Training iteration", "Base-harness success (% of tasks)")),
        ("final-table", ("Base-harness success (% of tasks)", "Arm")),
        ("final-deltas", ("Difference in success (percentage points)", "Arm")),
        ("locality-dbbench", ("Sibling harness", "Task family")),
        ("complementarity", ("Executor rollouts per failed task", "Failed tasks covered (%)")),
        ("router", ("k (siblings tried in order)", "Routed tasks rescued within k (%)")),
        ("sibling-utility", ("Anchor (profile re-measurement)", "Fix rate among base failures (%)")),
        ("rank-correlation", ("Anchor (compared with the one before)", "Spearman rank correlation ρ")),
        ("behaviour-dbbench", ("Training iteration", "Episodes showing the behaviour (%)")),
        ("rank-one", ("Success (% of tasks)", "Arm")),
    ]
    .into_iter()
    .collect();
    for c in index {
        let id = c["id"].as_str().unwrap();
        let svg = std::fs::read_to_string(paths.dir.join(c["file"].as_str().unwrap())).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{id}: {e}"));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert_eq!(root.attribute("data-chart"), Some(id));
        assert!(doc.descendants().any(|n| n.has_tag_name("title") && !n.text().unwrap_or("").is_empty()), "{id}: title");
        let series: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("series"))
            .filter_map(|n| n.attribute("data-series"))
            .collect();
        let distinct: BTreeSet<&str> = series.iter().copied().collect();
        let listed: BTreeSet<&str> = c["series"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        if let Some(want) = expected.get(id) {
            assert_eq!(distinct, want.iter().copied().collect::<BTreeSet<_>>(), "{id}: series");
        }
        assert!(distinct.is_subset(&listed), "{id}: drawn series are in the index");
        let legend: BTreeSet<&str> =
            doc.descendants().filter(|n| n.attribute("class") == Some("legend-entry")).filter_map(|n| n.attribute("data-series")).collect();
        assert_eq!(legend, listed, "{id}: one legend entry per series");
        let t = texts(&doc);
        let (x, y) = axes.get(id).unwrap_or_else(|| panic!("axis labels known for {id}"));
        assert!(t.iter().any(|s| s == x), "{id}: x label `{x}` in {t:?}");
        assert!(t.iter().any(|s| s == y), "{id}: y label `{y}`");
        // bands are translucent areas
        for band in doc.descendants().filter(|n| n.attribute("class") == Some("band")) {
            let poly = band.children().find(|n| n.has_tag_name("polygon")).expect("band polygon");
            assert!(poly.attribute("opacity").unwrap().parse::<f64>().unwrap() < 0.5, "{id}: band opacity");
        }
        // no placeholder survived
        assert!(!svg.contains("@@hs-group"), "{id}");
    }
    // dashed series keep their pattern as stroke-dasharray, not as hundreds of segments
    let transfer = std::fs::read_to_string(paths.dir.join("charts/transfer.svg")).unwrap();
    assert!(transfer.contains("stroke-dasharray"));
}

#[test]
fn the_html_is_one_self_contained_file() {
    let f = fixture();
    let (paths, json, html) = report("html", "latest", None);
    // `latest` is the newest experiment run: the unfinished one
    assert_eq!(paths.run_id, f.unfinished);
    let (_, _, html2) = report("html-finished", &f.run.run_id.to_string(), None);
    for h in [&html, &html2] {
        assert!(!h.contains("http://") && !h.contains("https://"), "no URL at all");
        assert!(!h.contains("src="), "no external source");
        assert!(!h.contains("<script") && !h.contains("<link") && !h.contains("@import") && !h.contains("url("));
        for (i, _) in h.match_indices("href=\"") {
            assert_eq!(&h[i + 6..i + 7], "#", "only in-page links");
        }
        assert!(h.contains("<style>"));
        let summary = h.find("id=\"summary\"").unwrap();
        let charts = h.find("id=\"charts\"").unwrap();
        let tables = h.find("id=\"tables\"").unwrap();
        let prov = h.find("id=\"provenance\"").unwrap();
        assert!(summary < charts && charts < tables && tables < prov, "summary, charts, tables, provenance in order");
    }
    assert_eq!(html2.matches("<svg").count(), json["charts"].as_array().unwrap().len());
    assert!(html2.contains(env!("CARGO_PKG_VERSION")));
    assert!(html2.contains("md5 <code>"), "dataset hash");
    assert!(html2.contains("harness-s against every other arm"));
    for file in [
        "routed_vs_arms.csv",
        "final_table.csv",
        "transfer_curves.csv",
        "locality.csv",
        "complementarity.csv",
        "router_quality.csv",
        "nonstationarity.csv",
        "behaviour.csv",
        "rank_one.csv",
    ] {
        let text = std::fs::read_to_string(paths.dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(text.lines().count() >= 1, "{file}");
    }
    let final_csv = std::fs::read_to_string(Path::new(&out_dir_path("html-finished")).join("final_table.csv")).unwrap();
    assert_eq!(final_csv.lines().count(), 1 + 4, "header and arm × split rows");
    // harness-s against each other arm (here policy-only), per split
    let routed_csv = std::fs::read_to_string(Path::new(&out_dir_path("html-finished")).join("routed_vs_arms.csv")).unwrap();
    assert_eq!(routed_csv.lines().count(), 1 + 2, "{routed_csv}");
    assert!(routed_csv.lines().skip(1).all(|l| l.contains(",harness-s,policy-only,")), "{routed_csv}");
}

fn out_dir_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-tests").join(name)
}

#[test]
fn a_missing_experiment_is_a_clear_error() {
    let f = fixture();
    let e = write_report(&store(), "4242", None, &out_dir("missing")).unwrap_err().to_string();
    assert!(e.starts_with(&format!("no experiment run 4242 in {}; runs: ", f.db)), "{e}");
    assert!(e.contains(&format!("{} (`small`, finished)", f.run.run_id)), "{e}");
    let e = write_report(&store(), &f.run.run_id.to_string(), Some("999"), &out_dir("missing2")).unwrap_err().to_string();
    assert!(e.contains("no experiment run 999"), "{e}");
    let e = write_report(&store(), "newest", None, &out_dir("missing3")).unwrap_err().to_string();
    assert!(e.contains("a run id or `latest`"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let s = BlockingStore::open(empty.path().join("e.db").to_str().unwrap()).unwrap();
    let e = write_report(&s, "latest", None, &out_dir("missing4")).unwrap_err().to_string();
    assert!(e.contains("no experiment run (latest)") && e.ends_with("runs: no experiment runs"), "{e}");
}

#[test]
fn an_unfinished_experiment_is_reported_and_marked() {
    let f = fixture();
    let (paths, json, html) = report("unfinished", &f.unfinished.to_string(), None);
    assert_eq!(paths.status, "running");
    assert_eq!(json["status"], "running");
    assert_eq!(json["finished"], false);
    let title = &html[html.find("<title>").unwrap()..html.find("</title>").unwrap()];
    assert!(title.contains("UNFINISHED") && title.contains("running"), "{title}");
    let summary = &html[html.find("id=\"summary\"").unwrap()..html.find("id=\"charts\"").unwrap()];
    assert!(summary.contains("has not finished") && summary.contains("provisional"), "summary marks it");
    // what it recorded is reported: some evaluation exists
    assert!(!json["transfer"].as_array().unwrap().is_empty());
    let done = store().count_episodes(&EpisodeFilter::run(f.unfinished)).unwrap();
    assert_eq!(json["provenance"]["episodes"].as_u64().unwrap(), done);
    for c in json["charts"].as_array().unwrap() {
        roxmltree::Document::parse(&std::fs::read_to_string(paths.dir.join(c["file"].as_str().unwrap())).unwrap()).unwrap();
    }
}

#[test]
fn two_experiments_side_by_side() {
    let f = fixture();
    let (paths, json, html) = report("compare", &f.run.run_id.to_string(), Some(&f.other.run_id.to_string()));
    assert_eq!(paths.compare_run_id, Some(f.other.run_id));
    let cmp = &json["comparison"];
    assert_eq!(cmp["other_run"]["id"].as_i64(), Some(f.other.run_id));
    let rows = cmp["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "arm × split");
    for r in rows {
        let (a, b) = (r["this"].as_f64().unwrap(), r["other"].as_f64().unwrap());
        assert!((r["difference"].as_f64().unwrap() - (a - b)).abs() < 1e-12);
        // the same bundled tasks: every evaluated task is common
        assert!(r["paired"]["tasks"].as_u64().unwrap() > 0);
        assert!((r["paired"]["mean"].as_f64().unwrap() - (a - b)).abs() < 1e-9, "same tasks: paired = difference");
        let other_row = f.other.arms[r["arm"].as_str().unwrap()][r["split"].as_str().unwrap()];
        assert!((b - other_row).abs() < 1e-9, "other's success is its runner's number");
    }
    assert!(html.contains("id=\"compare\"") && html.contains("class=\"side\""));
    assert!(html.contains("the same (equal dataset hashes)"));
    let csv = std::fs::read_to_string(paths.dir.join("compare.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5);
}

/// A synthetic run (made-up numbers) with every arm, so that every strategy has data.
fn synthetic() -> &'static (tempfile::TempDir, String, i64) {
    static S: OnceLock<(tempfile::TempDir, String, i64)> = OnceLock::new();
    S.get_or_init(|| {
        use harness_s::report::synthetic::{write_synthetic, Synthetic};
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("synthetic.db").to_str().unwrap().to_string();
        let store = BlockingStore::open(&db).unwrap();
        let spec = Synthetic {
            seeds: vec![1, 2, 3],
            iterations: 8,
            eval_every: 2,
            reanchor_every: 2,
            train_tasks: 120,
            eval_train_tasks: 60,
            heldout_tasks: 40,
            batch_tasks: 16,
            probe_tasks: 16,
            ..Synthetic::default()
        };
        let run = write_synthetic(&store, &spec).unwrap();
        (dir, db, run.run_id)
    })
}

#[test]
fn a_synthetic_run_with_every_arm_draws_every_strategy_and_says_it_is_synthetic() {
    let (_, db, run) = synthetic();
    let store = BlockingStore::open(db).unwrap();
    let paths = write_report(&store, &run.to_string(), None, &out_dir("synthetic")).unwrap();
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&paths.json).unwrap()).unwrap();
    let html = std::fs::read_to_string(&paths.html).unwrap();
    assert!(html.contains("Synthetic data") && json["notes"][0].as_str().unwrap().starts_with("Synthetic data"));
    let series = |id: &str| -> BTreeSet<String> {
        let svg = std::fs::read_to_string(paths.dir.join(format!("charts/{id}.svg"))).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        doc.descendants().filter(|n| n.attribute("class") == Some("series")).filter_map(|n| n.attribute("data-series").map(str::to_string)).collect()
    };
    let arms: BTreeSet<String> = json["arms"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
    assert_eq!(arms.len(), 6);
    assert_eq!(series("transfer"), arms);
    assert_eq!(series("complementarity"), ["base-resample", "sibling-union", "routed"].iter().map(|s| s.to_string()).collect());
    assert_eq!(series("router"), ["routed", "random", "oracle"].iter().map(|s| s.to_string()).collect());
    assert_eq!(series("sibling-utility").len(), 7);
    assert!(series("rank-correlation").contains("harness-s"));
    // anchors 0..3 of harness-s: three consecutive pairs
    let pairs = json["nonstationarity"]["mean"].as_array().unwrap().iter().filter(|r| r["arm"] == "harness-s").count();
    assert_eq!(pairs, 3);
    assert_eq!(json["router"].as_array().unwrap().len(), 4 + 1, "anchors 0..3 and all together");
    assert_eq!(json["rank_one"]["rows"].as_array().unwrap().len(), 12);
}

#[test]
fn the_report_renders_in_headless_chromium() {
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].into_iter().find(|p| Path::new(p).exists());
    let Some(chromium) = chromium else {
        eprintln!("skipped: no chromium at /usr/bin/chromium");
        return;
    };
    let f = fixture();
    let (paths, _, _) = report("screenshot", &f.run.run_id.to_string(), Some(&f.other.run_id.to_string()));
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let png = artifacts.join("report.png");
    let _ = std::fs::remove_file(&png);
    screenshot(chromium, &paths.html, &png, 4000);
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert_eq!(&bytes[1..4], b"PNG");
    assert!(bytes.len() > 50_000, "the page drew something ({} bytes)", bytes.len());
    let (_, db, run) = synthetic();
    let paths = write_report(&BlockingStore::open(db).unwrap(), &run.to_string(), None, &out_dir("screenshot-synthetic")).unwrap();
    for (name, height) in [("report-synthetic.png", 4000), ("report-synthetic-full.png", 14000)] {
        let png = artifacts.join(name);
        let _ = std::fs::remove_file(&png);
        screenshot(chromium, &paths.html, &png, height);
        assert!(std::fs::read(&png).map(|b| b.len() > 50_000).unwrap_or(false), "{name}");
    }
}

fn screenshot(chromium: &str, html: &Path, png: &Path, height: u32) {
    let profile = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("file://{}", html.canonicalize().unwrap().display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("chromium starts");
    assert!(status.success(), "chromium exited with {status}");
}
