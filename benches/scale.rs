//! `cargo bench --bench scale`: how the store and the analyses grow with a run's size. For
//! synthetic experiments of about 10,000, 100,000 and 1,000,000 episodes (each in a fresh SQLite
//! store), prints: the time to write them and episodes per second, bytes per episode on disk,
//! the time to write the whole report, and the median time of the rescue view and of opening one
//! episode, each for episodes spread over the run.
//!
//! `HARNESS_S_BENCH_SIZES=10000,100000` chooses the sizes (episodes, approximate: whole seeds of
//! the synthetic experiment); `HARNESS_S_BENCH_DIR=DIR` keeps the stores there.

use std::time::Instant;

use harness_s::records::task_record_key;
use harness_s::report::synthetic::{write_synthetic, Synthetic};
use harness_s::report::write_report;
use harness_s::store::{EpisodeFilter, StoreInfo};
use harness_s::workbench::Workbench;
use serde_json::json;

/// Median of timed calls, in milliseconds.
fn median_ms(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn timed_ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

fn spec(seeds: u64, iterations: u32) -> Synthetic {
    Synthetic { name: "scale".into(), seeds: (1..=seeds).collect(), iterations, eval_train_tasks: 170, heldout_tasks: 125, ..Synthetic::default() }
}

fn main() {
    let sizes: Vec<u64> = std::env::var("HARNESS_S_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000]);
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = std::env::var("HARNESS_S_BENCH_DIR").map(std::path::PathBuf::from).unwrap_or_else(|_| temp.path().to_path_buf());
    std::fs::create_dir_all(&dir).expect("bench dir");

    // one seed of the synthetic experiment, to size the others by
    let probe = dir.join("probe.db");
    let _ = std::fs::remove_file(&probe);
    let per_seed = {
        let wb = Workbench::open(probe.to_str().expect("utf-8"), &dir).expect("workbench");
        let run = write_synthetic(wb.store(), &spec(1, 10)).expect("synthetic");
        run.episodes as u64
    };
    let _ = std::fs::remove_file(&probe);
    println!("the synthetic experiment writes {per_seed} episodes per seed (6 arms, 10 iterations)");
    println!(
        "{:>10} {:>9} {:>11} {:>9} {:>10} {:>13} {:>13}",
        "episodes", "write s", "episodes/s", "B/episode", "report s", "rescue ms", "episode ms"
    );
    for target in sizes {
        // whole seeds; below one seed, fewer iterations
        let share = target as f64 / per_seed as f64;
        let (seeds, iterations) = if share >= 1.0 { (share.round() as u64, 10) } else { (1, (share * 10.0).round().max(2.0) as u32) };
        let db = dir.join(format!("scale-{target}.db"));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        let location = db.to_str().expect("utf-8").to_string();
        let wb = Workbench::open(&location, &dir).expect("workbench");
        let t = Instant::now();
        let run = write_synthetic(wb.store(), &spec(seeds, iterations)).expect("synthetic");
        let write_s = t.elapsed().as_secs_f64();
        let episodes = run.episodes as u64;
        let report_dir = dir.join(format!("report-{target}"));
        let report_s = timed_ms(|| {
            write_report(wb.store(), &run.run_id.to_string(), None, &report_dir).expect("report");
        }) / 1e3;
        // successful rescues spread over the run, each given the distillation record the runner
        // writes (the synthetic writer leaves them out), and plain episodes
        let rescued = wb
            .store()
            .episode_rows(&EpisodeFilter { phase: Some("rescue".into()), success: Some(true), ..EpisodeFilter::run(run.run_id) })
            .expect("rescue rows");
        let rescues: Vec<i64> = rescued
            .iter()
            .step_by((rescued.len() / 15).max(1))
            .map(|r| {
                let c = &r.context;
                let key = task_record_key(&r.suite, c.arm.as_deref().unwrap_or(""), c.seed_index.unwrap_or(0), c.iteration.unwrap_or(0), &r.task_id);
                let body = json!({"rescue_episode": r.id, "task_id": r.task_id, "sibling": r.harness, "distilled": {"examples": []}});
                wb.store().put_record(run.run_id, "distilled", &format!("{key}/{}", r.harness), &body).expect("record");
                r.id
            })
            .collect();
        let step = (rescues.len() / 15).max(1);
        let rescue_ms: Vec<f64> =
            rescues.iter().step_by(step).map(|id| timed_ms(|| drop(wb.call("rescue", json!({"episode_id": id})).expect("rescue view")))).collect();
        let episode_ms: Vec<f64> = (0..15)
            .map(|k| 1 + k * (episodes as i64 / 15))
            .map(|id| timed_ms(|| drop(wb.call("episode", json!({"id": id})).expect("episode"))))
            .collect();
        wb.shutdown();
        drop(wb);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let info = rt.block_on(StoreInfo::of(&location)).expect("store info");
        println!(
            "{episodes:>10} {write_s:>9.1} {:>11.0} {:>9.0} {report_s:>10.2} {:>13.1} {:>13.1}",
            episodes as f64 / write_s,
            info.bytes_per_episode.unwrap_or(0.0),
            median_ms(rescue_ms),
            median_ms(episode_ms),
        );
    }
}
