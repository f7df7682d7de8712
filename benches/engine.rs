//! Per-step overhead of the harness engine: episodes with a scripted policy on DBBench under the
//! base harness and every sibling. Prints wall time per step, the part spent in the environment
//! (SQLite), and the rest (rendering, hooks, predicates, recording) per step.
//!
//! Run: `cargo bench --bench engine`

use std::time::Instant;

use harness_s::harness::{run_episode, EpisodeRequest, HarnessLibrary};
use harness_s::policy::scripted::ScriptedPolicy;
use harness_s::suite::dbbench::DbBench;
use harness_s::suite::Suite;

fn main() {
    let suite = DbBench::new();
    let tasks = suite.bundled_tasks().expect("bundled DBBench tasks");
    let lib = HarnessLibrary::builtin().expect("harness specs");
    let episodes_per_harness = 400usize;
    println!("{:<16} {:>9} {:>12} {:>12} {:>12}", "harness", "steps", "wall/step", "env/step", "engine/step");
    for entry in lib.for_suite("dbbench") {
        let spec = &entry.spec;
        let mut steps = 0usize;
        let mut env_ms = 0.0;
        let mut policy_ms = 0.0;
        let t0 = Instant::now();
        for i in 0..episodes_per_harness {
            let task = &tasks[i % tasks.len()];
            let table = task.payload["table"]["table_name"].as_str().unwrap_or("t").to_string();
            let turns = vec![
                ScriptedPolicy::call("execute_sql", serde_json::json!({"query": format!("SELECT * FROM `{table}` LIMIT 5")})),
                ScriptedPolicy::call("execute_sql", serde_json::json!({"query": format!("SELECT COUNT(*) FROM `{table}`")})),
                ScriptedPolicy::call("execute_sql", serde_json::json!({"query": format!("SELECT nope FROM `{table}`")})),
                ScriptedPolicy::call("commit_final_answer", serde_json::json!({"answers": ["1"]})),
            ];
            let policy = ScriptedPolicy::new("bench", turns);
            let req =
                EpisodeRequest { suite: &suite, harness: spec, task, policy: &policy, sample: 0, seed: i as u64, temperature: 0.0, cancel: None };
            let ep = run_episode(&req);
            steps += ep.steps.len();
            for s in &ep.steps {
                env_ms += s.env_ms;
                policy_ms += s.policy_ms;
            }
        }
        let wall = t0.elapsed().as_secs_f64() * 1000.0;
        let per = |x: f64| x / steps.max(1) as f64 * 1000.0;
        println!("{:<16} {:>9} {:>10.1}µs {:>10.1}µs {:>10.1}µs", spec.name, steps, per(wall), per(env_ms), per(wall - env_ms - policy_ms));
    }
    println!("(engine/step includes environment creation and scoring, amortised over the steps)");
}
