//! `cargo bench --bench workbench`: what the trajectory inspector asks of the command set at
//! scale. In a synthetic experiment of about 100,000 episodes: the first page, a deep page, a
//! filtered page and a text search of the episode list (`episodes`); and opening a 500-step
//! trajectory (`episode`: read, decode, and encode the JSON the UI receives). Prints each figure
//! with its target; `HARNESS_S_BENCH_SEEDS` scales the experiment (default 4).

use std::time::Instant;

use harness_s::episode::Episode;
use harness_s::policy::{Message, Origin, Role};
use harness_s::report::synthetic::{write_synthetic, Synthetic};
use harness_s::store::{EpisodeContext, EpisodeFilter};
use harness_s::workbench::Workbench;
use serde_json::json;

/// Median of `n` timed calls, in milliseconds.
fn time_ms(n: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[n / 2]
}

/// A trajectory of `steps` steps grown from a real one: each step adds the policy's turn and the
/// environment's observation to the context, as a long episode does.
fn long_episode(mut e: Episode, steps: usize) -> Episode {
    let first = e.steps[0].clone();
    let mut ctx = first.context.clone();
    e.steps = (0..steps)
        .map(|i| {
            let mut s = first.clone();
            s.index = i;
            s.context = ctx.clone();
            ctx.messages.push(Message::new(
                Role::Assistant,
                format!("step {i}: SELECT `name`, COUNT(*) FROM `t` WHERE `id` > {i} GROUP BY `name`"),
                Origin::Policy,
            ));
            ctx.messages.push(Message::new(Role::Tool, format!("[('row {i}', {i}), ('another row', {})]", i * 7), Origin::Environment));
            s
        })
        .collect();
    e
}

fn main() {
    let seeds: u64 = std::env::var("HARNESS_S_BENCH_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("bench.db");
    let wb = Workbench::open(db.to_str().expect("utf-8 path"), dir.path()).expect("workbench");
    let store = wb.store();
    let spec = Synthetic { name: "bench".into(), seeds: (1..=seeds).collect(), eval_train_tasks: 170, heldout_tasks: 125, ..Synthetic::default() };
    let t = Instant::now();
    let run = write_synthetic(store, &spec).expect("synthetic experiment");
    let run_id = run.run_id;
    let total = store.count_episodes(&EpisodeFilter::run(run_id)).expect("count");
    println!("setup: {total} episodes written in {:.1}s", t.elapsed().as_secs_f64());

    let page = |args: serde_json::Value| {
        let v = wb.call("episodes", args).expect("episodes");
        assert!(v["total"].as_u64().is_some());
    };
    let first = time_ms(9, || page(json!({"run_id": run_id, "limit": 200})));
    let deep = time_ms(9, || page(json!({"run_id": run_id, "limit": 200, "offset": total.saturating_sub(300)})));
    let filtered = time_ms(9, || page(json!({"run_id": run_id, "arm": "harness-s", "success": false, "family": "counting", "limit": 200})));
    let rescued = time_ms(9, || page(json!({"run_id": run_id, "rescued": true, "limit": 200})));
    let search = time_ms(3, || page(json!({"run_id": run_id, "text": "aggregation", "limit": 200})));
    println!("episodes (list of {total}): first page {first:.1} ms, deep page {deep:.1} ms, filtered {filtered:.1} ms, rescued {rescued:.1} ms (target < 100 ms each)");
    println!("episodes text search over {total} trajectories: {search:.0} ms");

    let (_, sample) = store.episodes(&EpisodeFilter { limit: Some(1), ..EpisodeFilter::run(run_id) }).expect("an episode").remove(0);
    let long = long_episode(sample, 500);
    let ids = store.insert_episodes(run_id, &[(long, EpisodeContext::default())]).expect("insert");
    let id = ids[0];
    let mut bytes = 0;
    let open = time_ms(9, || {
        let v = wb.call("episode", json!({"id": id})).expect("episode");
        bytes = serde_json::to_string(&v).expect("json").len();
    });
    println!(
        "episode of 500 steps: {open:.1} ms to read, decode and encode ({:.0} KB of JSON, contexts delta-encoded) (target < 300 ms with rendering)",
        bytes as f64 / 1024.0
    );
}
