//! Wall time of the demo experiment (`experiments/demo.toml`) on this machine, and executor
//! rollouts per second. Run: `cargo bench --bench demo` (add a path to bench another file).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use harness_s::events::NullSink;
use harness_s::experiment::{run_experiment, ExperimentConfig};
use harness_s::store::BlockingStore;

fn main() {
    let path = std::env::args()
        .skip(1)
        .find(|a| a.ends_with(".toml"))
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/demo.toml").to_string());
    let cfg = ExperimentConfig::load(std::path::Path::new(&path)).expect("experiment file");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("bench.db");
    let store = BlockingStore::open(db.to_str().unwrap()).expect("store");
    let t0 = Instant::now();
    let out = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("experiment");
    let wall = t0.elapsed().as_secs_f64();
    let rollouts: u64 = out.rollouts_detail.values().map(|r| r.total()).sum();
    let evals: u64 = store
        .count_episodes(&harness_s::store::EpisodeFilter { run_id: Some(out.run_id), phase: Some("eval".into()), ..Default::default() })
        .unwrap_or(0);
    let all = store.count_episodes(&harness_s::store::EpisodeFilter::run(out.run_id)).unwrap_or(0);
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    println!("experiment {} ({} arms x {} seeds x {} iterations)", cfg.name, cfg.arms.len(), cfg.seeds.len(), cfg.iterations);
    println!("wall time          {wall:.1} s on {} cores", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    println!("episodes stored    {all} ({evals} evaluation)");
    println!("executor rollouts  {rollouts} (+ evaluation) -> {:.0} episodes/s", all as f64 / wall);
    println!("store size         {:.1} MB", size as f64 / 1e6);
    for (arm, s) in &out.arms {
        println!("  {arm:<16} train {:.3}  heldout {:.3}", s.get("train").copied().unwrap_or(0.0), s.get("heldout").copied().unwrap_or(0.0));
    }
    if let Some(d) = &out.heldout_delta {
        println!("  {} - {} held-out: {:+.3} [{:+.3}, {:+.3}]", d.arm, d.baseline, d.mean, d.ci95[0], d.ci95[1]);
    }
}
