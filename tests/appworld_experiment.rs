//! The recipe on AppWorld's bundled world with the built-in policy: every arm runs through the
//! adapter and the bundled servers, evaluation stays under the base harness, and the grammar's
//! search finds solving sequences for some tasks.

use std::sync::atomic::AtomicBool;

use harness_s::events::NullSink;
use harness_s::experiment::{run_experiment, ExperimentConfig};
use harness_s::harness::HarnessLibrary;
use harness_s::policy::builtin::BuiltinPolicy;
use harness_s::search as coverage;
use harness_s::store::{BlockingStore, EpisodeFilter};
use harness_s::suite::appworld::AppWorld;
use harness_s::suite::Suite;

/// One scenario (three tasks) of each of four families.
fn task_file(dir: &tempfile::TempDir) -> String {
    let tasks = AppWorld::new().bundled_tasks().unwrap();
    let mut ids = Vec::new();
    for fam in ["notes_lookup", "contacts_phone", "music_count", "todo_complete"] {
        ids.extend(tasks.iter().filter(|t| t.family == fam).take(3).map(|t| t.id.clone()));
    }
    let p = dir.path().join("ids.txt");
    std::fs::write(&p, ids.join("\n")).unwrap();
    p.display().to_string()
}

#[test]
fn every_arm_runs_on_the_bundled_world() {
    let dir = tempfile::tempdir().unwrap();
    let file = task_file(&dir);
    let text = format!(
        r#"
name = "appworld-small"
suites = ["appworld"]
heldout_families = ["music_count"]
arms = ["policy-only", "harness-s", "random-rescue", "base-resample", "keep-scaffold", "all-siblings"]
seeds = [1]
iterations = 1
eval_every = 1
reanchor_every = 1
workers = 2
[datasets]
appworld = "{file}"
[harness]
siblings = ["api-docs-first", "pagination-helper", "verify-before-complete"]
[policy]
warm_start_demos = 2
learning_rate = 2.0
temperature = 0.6
[budget]
batch_tasks = 4
base_tries = 2
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 2
[eval]
train_tasks = 3
"#
    );
    let cfg = ExperimentConfig::parse("appworld-small.toml", &text).expect("valid config");
    let st = BlockingStore::open(dir.path().join("a.db").to_str().unwrap()).unwrap();
    let t0 = std::time::Instant::now();
    let out = run_experiment(&cfg, &st, &NullSink, &AtomicBool::new(false)).expect("runs");
    eprintln!("appworld experiment: {:.1} s, arms {:?}", t0.elapsed().as_secs_f64(), out.arms);
    assert!(out.finished);
    for arm in &cfg.arms {
        let a = &out.arms[arm];
        assert!(a.contains_key("train") && a.contains_key("heldout"), "{arm}: {a:?}");
        assert_eq!(out.rollouts_detail[arm].base, 2 * 4, "{arm}");
    }
    for arm in ["harness-s", "random-rescue", "keep-scaffold", "all-siblings"] {
        assert_eq!(out.rollouts_detail[arm].rescue, 2 * out.all_fail_tasks[arm], "{arm}");
    }
    let evals = st.episode_rows(&EpisodeFilter { run_id: Some(out.run_id), phase: Some("eval".into()), ..Default::default() }).unwrap();
    assert!(!evals.is_empty());
    assert!(evals.iter().all(|e| e.harness == "base" && e.suite == "appworld"));
    // no episode failed for infrastructure reasons: the adapter and the servers held up
    let all = st.episode_rows(&EpisodeFilter::run(out.run_id)).unwrap();
    assert!(all.iter().all(|e| e.infra_error.is_none()), "{:?}", all.iter().find_map(|e| e.infra_error.clone()));
}

#[test]
fn the_shipped_appworld_experiment_parses() {
    let cfg = ExperimentConfig::parse("experiments/appworld.toml", include_str!("../experiments/appworld.toml")).expect("valid");
    assert_eq!(cfg.suites, vec!["appworld".to_string()]);
}

#[test]
fn the_grammar_search_solves_bundled_tasks_and_replays_them() {
    let suite = AppWorld::new();
    let lib = HarnessLibrary::builtin().unwrap();
    let base = lib.get("appworld", "base").unwrap().spec.clone();
    let tasks = suite.bundled_tasks().unwrap();
    let sample: Vec<_> = tasks.iter().step_by(9).cloned().collect();
    let c = coverage::coverage(&suite, &base, &sample, 1500);
    eprintln!("appworld grammar coverage: {}/{} ({:?})", c.covered, c.total, c.families);
    assert!(c.covered > 0, "{c:?}");
    // a found solution reads back through the grammar from its own contexts
    let policy = BuiltinPolicy::new(suite.grammar().unwrap());
    let solved = sample.iter().find_map(|t| coverage::solve(&suite, &base, t, 1500).0).unwrap();
    for (ctx, turn) in &solved {
        assert!(policy.log_prob(ctx, turn).is_some(), "{}", turn.content);
    }
}

/// Policy-only training on the bundled world with the shipped experiment's policy and budget,
/// one seed: greedy train success after four iterations is above where it started (the
/// built-in policy learns AppWorld, not only runs it).
#[test]
fn the_builtin_policy_learns_on_the_bundled_world() {
    let shipped = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/appworld.toml")).unwrap();
    let mut cfg = ExperimentConfig::parse("appworld.toml", &shipped).unwrap();
    cfg.arms = vec!["policy-only".into()];
    cfg.seeds = vec![1];
    cfg.iterations = 4;
    cfg.eval_every = 4;
    let dir = tempfile::tempdir().unwrap();
    let st = BlockingStore::open(dir.path().join("learn.db").to_str().unwrap()).unwrap();
    let out = run_experiment(&cfg, &st, &NullSink, &AtomicBool::new(false)).expect("runs");
    let curve = out.curves["policy-only"].clone();
    let first = curve.iter().find(|p| p.0 == 0).unwrap().1;
    let last = curve.iter().next_back().unwrap().1;
    eprintln!("appworld policy-only train success {first} -> {last}");
    assert!(last > first + 0.1, "train success went from {first} to {last}");
}
