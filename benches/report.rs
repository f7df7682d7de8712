//! `cargo bench --bench report`: the report of a large experiment. Builds a synthetic experiment
//! of about 100,000 episodes (every phase, with routing and profile records and checkpoints) in
//! a temporary SQLite store, then times `write_report` and prints its wall time and the peak
//! resident memory while it ran (VmHWM, reset before the report through /proc/self/clear_refs).
//!
//! `HARNESS_S_BENCH_SEEDS` changes the number of seeds (the run's size scales with it);
//! `HARNESS_S_BENCH_DB=FILE` keeps the store in FILE and reuses the experiment already there.

use std::time::Instant;

use harness_s::report::synthetic::{write_synthetic, Synthetic};
use harness_s::report::write_report;
use harness_s::store::{BlockingStore, EpisodeFilter};

fn status_kb(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok())
}

fn main() {
    let seeds: u64 = std::env::var("HARNESS_S_BENCH_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = std::env::var("HARNESS_S_BENCH_DB").map(std::path::PathBuf::from).unwrap_or_else(|_| dir.path().join("bench.db"));
    let store = BlockingStore::open(db.to_str().expect("utf-8 path")).expect("store");
    let run_id = match store.latest_run(Some("experiment")).expect("runs") {
        Some(r) => r.id,
        None => {
            let spec =
                Synthetic { name: "bench".into(), seeds: (1..=seeds).collect(), eval_train_tasks: 170, heldout_tasks: 125, ..Synthetic::default() };
            let t = Instant::now();
            let run = write_synthetic(&store, &spec).expect("synthetic experiment");
            println!("setup: written in {:.1}s", t.elapsed().as_secs_f64());
            run.run_id
        }
    };
    let episodes = store.count_episodes(&EpisodeFilter::run(run_id)).expect("count");
    let db_mb = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    println!("store: {episodes} episodes in run {run_id} ({db_mb:.0} MB)");

    let before = status_kb("VmRSS:").unwrap_or(0);
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let out = dir.path().join("report");
    let t = Instant::now();
    let paths = write_report(&store, &run_id.to_string(), None, &out).expect("report");
    let wall = t.elapsed().as_secs_f64();
    let peak = status_kb("VmHWM:").unwrap_or(0);
    let html_kb = std::fs::metadata(&paths.html).map(|m| m.len()).unwrap_or(0) / 1024;
    let json_kb = std::fs::metadata(&paths.json).map(|m| m.len()).unwrap_or(0) / 1024;
    println!("write_report: {wall:.2}s wall for {episodes} episodes (target < 5 s){}", if wall < 5.0 { "" } else { "  <-- over target" });
    println!(
        "peak memory (VmHWM): {:.0} MB{} (RSS before the report {:.0} MB)",
        peak as f64 / 1024.0,
        if reset { ", reset before the report" } else { " since process start (could not reset)" },
        before as f64 / 1024.0
    );
    println!("wrote report.html {html_kb} KB, report.json {json_kb} KB, {} CSV files, {} charts", paths.csv.len(), paths.charts.len());
}
