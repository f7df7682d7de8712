//! The recipe end to end on the bundled DBBench with the built-in policy: every arm, resume after
//! a kill, determinism per seed, distillation, stored routing decisions, budget accounting.

use std::sync::atomic::{AtomicBool, AtomicUsize};

use harness_s::events::NullSink;
use harness_s::experiment::config::SuiteSize;
use harness_s::experiment::{run_experiment, ExperimentConfig};
use harness_s::store::{BlockingStore, EpisodeFilter};

#[path = "support/kill_after.rs"]
mod kill_after;
use kill_after::KillAfter;
#[path = "support/postgres.rs"]
mod postgres;

const SMALL: &str = r#"
name = "small"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG", "DELETE"]
arms = ["policy-only", "harness-s", "random-rescue", "base-resample", "keep-scaffold", "all-siblings"]
seeds = [1, 2]
iterations = 3
eval_every = 1
reanchor_every = 2
workers = 2

[policy]
warm_start_demos = 16
learning_rate = 2.0
temperature = 0.6

[budget]
batch_tasks = 12
base_tries = 2
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 8

[eval]
train_tasks = 16
"#;

fn cfg() -> ExperimentConfig {
    ExperimentConfig::parse("small.toml", SMALL).expect("valid config")
}

fn store(dir: &tempfile::TempDir, name: &str) -> BlockingStore {
    BlockingStore::open(dir.path().join(name).to_str().unwrap()).unwrap()
}

#[test]
fn every_arm_runs_and_accounts_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let st = store(&dir, "a.db");
    let cancel = AtomicBool::new(false);
    let out = run_experiment(&cfg(), &st, &NullSink, &cancel).expect("runs");
    assert!(out.finished);
    for arm in &cfg().arms {
        let a = &out.arms[arm];
        assert!(a.contains_key("train") && a.contains_key("heldout"), "{arm}: {a:?}");
        assert!((0.0..=1.0).contains(&a["heldout"]));
    }
    let d = &out.rollouts_detail;
    let k_m = 2u64;
    assert_eq!(d["policy-only"].rescue + d["policy-only"].resample, 0);
    for arm in ["harness-s", "random-rescue", "keep-scaffold", "all-siblings"] {
        assert_eq!(d[arm].rescue, k_m * out.all_fail_tasks[arm], "{arm} spends k*m per all-fail task");
        assert_eq!(d[arm].resample, 0);
    }
    assert_eq!(d["base-resample"].resample, k_m * out.all_fail_tasks["base-resample"]);
    assert_eq!(d["base-resample"].rescue, 0);
    // base tries are the same for every arm: n per batch task per iteration per seed
    for arm in &cfg().arms {
        assert_eq!(d[arm].base, 2 * 12 * 3 * 2, "{arm}");
    }
    let delta = out.heldout_delta.as_ref().expect("paired delta");
    assert!(delta.ci95[0] <= delta.mean && delta.mean <= delta.ci95[1]);

    // routing decisions are stored with every voter's ranking and the outcome
    let routes = st.records(out.run_id, "route").unwrap();
    let routed: Vec<_> = routes.iter().filter(|(_, v)| v["arm"] == "harness-s").collect();
    assert!(!routed.is_empty(), "harness-s routed some all-fail tasks");
    for (_, r) in &routed {
        assert_eq!(r["rankings"].as_array().unwrap().len(), 3);
        assert_eq!(r["chosen"].as_array().unwrap().len(), 2);
        assert_eq!(r["rescued"].as_array().unwrap().len(), 2);
        assert!(r["query"]["signature"].is_string());
    }
    // profiles are stamped with the policy version
    let profiles = st.records(out.run_id, "profile").unwrap();
    assert!(profiles.iter().any(|(_, p)| p["arm"] == "harness-s" && p["policy_version"].as_u64().is_some()));

    // a stripped distilled example contains none of the sibling's text
    let distilled = st.records(out.run_id, "distilled").unwrap();
    let mut checked = 0;
    for (_, rec) in distilled.iter().filter(|(_, r)| r["arm"] == "harness-s") {
        let d: harness_s::distil::DistilledExample = serde_json::from_value(rec["distilled"].clone()).unwrap();
        assert_eq!(d.to_harness, "base");
        assert!(harness_s::distil::foreign_messages(&d).is_empty());
        let rescue = st.episode(rec["rescue_episode"].as_i64().unwrap()).unwrap().unwrap();
        let sibling_texts: Vec<String> = rescue
            .steps
            .iter()
            .flat_map(|s| s.context.messages.iter())
            .filter(|m| matches!(m.origin, harness_s::policy::Origin::Hook { .. }))
            .map(|m| m.content.clone())
            .collect();
        for ex in &d.examples {
            for m in &ex.context.messages {
                for t in &sibling_texts {
                    assert!(!m.content.contains(t.as_str()), "sibling text leaked into a stripped example");
                }
            }
            assert_eq!(ex.context.messages[0].role, harness_s::policy::Role::System);
        }
        checked += 1;
    }
    assert!(checked > 0, "some rescue was distilled");
    // keep-scaffold keeps the sibling's context
    let kept: Vec<_> = distilled.iter().filter(|(_, r)| r["arm"] == "keep-scaffold").collect();
    if let Some((_, rec)) = kept.first() {
        let d: harness_s::distil::DistilledExample = serde_json::from_value(rec["distilled"].clone()).unwrap();
        assert_ne!(d.to_harness, "base");
    }
    // evaluation is under the base harness only
    let evals = st.episode_rows(&EpisodeFilter { run_id: Some(out.run_id), phase: Some("eval".into()), ..Default::default() }).unwrap();
    assert!(!evals.is_empty());
    assert!(evals.iter().all(|e| e.harness == "base"));
}

#[test]
fn same_seeds_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = AtomicBool::new(false);
    let mut c = cfg();
    c.arms = vec!["policy-only".into(), "harness-s".into()];
    let a = run_experiment(&c, &store(&dir, "a.db"), &NullSink, &cancel).unwrap();
    let b = run_experiment(&c, &store(&dir, "b.db"), &NullSink, &cancel).unwrap();
    assert_eq!(a.arms, b.arms);
    assert_eq!(a.rollouts_detail, b.rollouts_detail);
    assert_eq!(a.heldout_delta, b.heldout_delta);
}

#[test]
fn a_killed_run_resumes_to_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = cfg();
    c.arms = vec!["policy-only".into(), "harness-s".into()];
    let clean = run_experiment(&c, &store(&dir, "clean.db"), &NullSink, &AtomicBool::new(false)).unwrap();

    let st = store(&dir, "killed.db");
    let cancel = AtomicBool::new(false);
    let first = run_experiment(&c, &st, &KillAfter { n: 5, seen: AtomicUsize::new(0), cancel: &cancel }, &cancel).unwrap();
    assert!(!first.finished, "the kill stopped it early");
    let before = st.count_episodes(&EpisodeFilter::run(first.run_id)).unwrap();
    assert!(before > 0, "finished episodes were kept");
    let resumed = run_experiment(&c, &st, &NullSink, &AtomicBool::new(false)).unwrap();
    assert!(resumed.resumed && resumed.finished);
    assert_eq!(resumed.run_id, first.run_id);
    assert_eq!(resumed.arms, clean.arms);
    assert_eq!(resumed.rollouts_detail, clean.rollouts_detail);
    let total_clean = store(&dir, "clean.db").count_episodes(&EpisodeFilter::run(clean.run_id)).unwrap();
    assert_eq!(st.count_episodes(&EpisodeFilter::run(first.run_id)).unwrap(), total_clean, "no duplicated episodes");
}

#[test]
fn budgets_are_bounded_with_a_cost_estimate() {
    // the number that once aborted the process on allocation is a clear error now
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[budget]\nbase_tries = 1000000000000\n").unwrap_err().to_string();
    assert_eq!(e, "x.toml: budget.base_tries: at most 1024, got 1000000000000");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\niterations = 1000000000000\n").unwrap_err().to_string();
    assert!(e.contains("iterations: at most 100000"), "{e}");
    // each number in bounds, the product not: the estimate says how much and why
    let big = "name = \"x\"\nseeds = [1,2,3,4,5,6,7,8,9,10]\niterations = 100000\n[budget]\nbatch_tasks = 1000\n";
    let e = ExperimentConfig::parse("x.toml", big).unwrap_err().to_string();
    assert!(
        e.starts_with("x.toml: budget: this experiment could spend up to ")
            && e.contains("executor rollouts")
            && e.contains("over the limit of 1000000000"),
        "{e}"
    );
    // negative and fractional numbers name the key and its line
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n\n[budget]\nbatch_tasks = -1\n").unwrap_err();
    assert_eq!(e.key, "budget.batch_tasks");
    assert!(e.message.starts_with("line 4:"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\niterations = 2.5\n").unwrap_err();
    assert_eq!(e.key, "iterations", "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[policy]\nlearning_rate = nan\n").unwrap_err().to_string();
    assert!(e.contains("policy.learning_rate: must be a number between 0 and 100"), "{e}");
    // the shipped experiment files stay well inside
    for f in ["demo.toml", "appworld.toml", "swegym-demo.toml", "all-suites.toml"] {
        let c = ExperimentConfig::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments").join(f)).unwrap();
        assert!(c.cost_estimate().total < 10_000_000, "{f}");
    }
}

#[test]
fn rank_one_false_skips_the_rank_one_inference_and_its_cost() {
    let dir = tempfile::tempdir().unwrap();
    let st = store(&dir, "r.db");
    let text =
        SMALL.replace("seeds = [1, 2]", "seeds = [1]").replace("iterations = 3", "iterations = 1").replace("[eval]\n", "[eval]\nrank_one = false\n");
    let off = ExperimentConfig::parse("small.toml", &text).expect("valid config");
    assert!(!off.eval.rank_one);
    // the estimate counts the episodes it skips: fewer than with the rank-one inference
    let on = ExperimentConfig::parse("small.toml", &text.replace("rank_one = false\n", "")).unwrap();
    assert!(on.eval.rank_one, "on by default");
    let size = [SuiteSize { train_tasks: 300, heldout_tasks: 80, siblings: 8, runs_agent_code: false }];
    let (e_off, e_on) = (off.estimate(&size, 2), on.estimate(&size, 2));
    assert!(e_off.eval < e_on.eval && e_off.max < e_on.max, "{e_off:?} vs {e_on:?}");
    assert_eq!(e_off.train, e_on.train);
    let out = run_experiment(&off, &st, &NullSink, &AtomicBool::new(false)).expect("runs");
    assert!(out.finished);
    assert!(out.rank_one.values().all(|r| r.is_empty()), "{:?}", out.rank_one);
    let rank1 = st.episode_rows(&EpisodeFilter { run_id: Some(out.run_id), phase: Some("rank1".into()), ..Default::default() }).unwrap();
    assert!(rank1.is_empty());
}

/// How many (suite, arm, seed) jobs run at once: one per core, one more where a suite's agent code
/// runs in a sandboxed process (its jobs wait on it between steps), `workers` when set.
#[test]
fn jobs_run_one_per_core_and_one_more_where_agent_code_runs_in_a_sandbox() {
    let shipped = |f: &str| ExperimentConfig::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments").join(f)).unwrap();
    let dbbench = shipped("demo.toml");
    assert_eq!(harness_s::experiment::estimate(&dbbench, 2).unwrap().parallel, 2, "SQL runs in-process");
    for f in ["appworld.toml", "all-suites.toml"] {
        let c = shipped(f);
        assert_eq!(harness_s::experiment::estimate(&c, 2).unwrap().parallel, 3, "{f}");
        let sandboxed = SuiteSize { train_tasks: 1, heldout_tasks: 1, siblings: 1, runs_agent_code: true };
        assert_eq!(c.parallel_jobs(8, &[sandboxed]), 9);
    }
    // the extra job fills waits and adds no core: the time estimate is that of one job per core
    let mut two = shipped("appworld.toml");
    two.workers = 2;
    let (e3, e2) = (harness_s::experiment::estimate(&shipped("appworld.toml"), 2).unwrap(), harness_s::experiment::estimate(&two, 2).unwrap());
    assert_eq!((e3.seconds_min, e3.seconds_max), (e2.seconds_min, e2.seconds_max));
    let mut one = shipped("appworld.toml");
    one.workers = 1;
    assert_eq!(harness_s::experiment::estimate(&one, 2).unwrap().parallel, 1, "workers, when set, is the number");
}

#[test]
fn bad_configs_name_the_key() {
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\narms = [\"magic\"]\n").unwrap_err().to_string();
    assert!(e.contains("x.toml: arms: unknown arm `magic` (allowed: policy-only, harness-s"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\niterationz = 3\n").unwrap_err().to_string();
    assert!(e.starts_with("x.toml: iterationz: line 2"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[budget]\nbase_tries = 0\n").unwrap_err().to_string();
    assert!(e.contains("budget.base_tries"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[router]\nvoters = [\"oracle\"]\n").unwrap_err().to_string();
    assert!(e.contains("router.voters: unknown voter `oracle` (allowed: posterior, thompson, ucb"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[distill]\nmode = \"magic\"\n").unwrap_err().to_string();
    assert!(e.contains("distill.mode"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[policy]\nwarm_start_demos = 2001\n").unwrap_err().to_string();
    assert!(e.contains("policy.warm_start_demos: at most 2000"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[policy]\nweight_decay = 0.9\n").unwrap_err().to_string();
    assert!(e.contains("policy.weight_decay: must be between 0 and 0.5"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[distill]\nobjective = \"rl\"\n").unwrap_err().to_string();
    assert!(e.contains("distill.objective: `rl` (allowed: group, sft)"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[distill.suites.swegym]\nweight = 2.0\n").unwrap_err().to_string();
    assert!(e.contains("distill.suites.swegym: `swegym` is not one of this experiment's suites (dbbench)"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[distill.suites.dbbench]\nweight = -1.0\n").unwrap_err().to_string();
    assert!(e.contains("distill.suites.dbbench.weight: must be a number between 0 and 100, got -1"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[distill.suites.dbbench]\nwieght = 2.0\n").unwrap_err().to_string();
    assert!(e.contains("wieght") && e.contains("line 3"), "{e}");
}

#[test]
fn a_suite_s_own_distill_settings_replace_the_experiment_s() {
    let shipped = |f: &str| ExperimentConfig::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments").join(f)).unwrap();
    let c = shipped("all-suites.toml");
    let own = |s: &str| c.distill.for_suite(s);
    assert_eq!((own("appworld").weight, own("appworld").mode.as_str()), (8.0, "strip"), "as appworld.toml distils");
    assert_eq!(own("appworld").weight, shipped("appworld.toml").distill.weight);
    for s in ["dbbench", "swegym"] {
        assert_eq!(own(s), shipped(if s == "dbbench" { "demo.toml" } else { "swegym-demo.toml" }).distill.for_suite(s), "{s}");
    }
    // written back out, the table survives, and a file without it writes none
    let text = toml::to_string(&c).unwrap();
    assert!(text.contains("[distill.suites.appworld]"), "{text}");
    assert_eq!(ExperimentConfig::parse("again.toml", &text).unwrap(), c);
    assert!(!toml::to_string(&shipped("demo.toml")).unwrap().contains("suites.dbbench"));
}

#[test]
fn the_builtin_policy_learns_under_the_base_harness() {
    let dir = tempfile::tempdir().unwrap();
    let c = ExperimentConfig::parse(
        "learn.toml",
        r#"
name = "learn"
heldout_families = ["aggregation-AVG", "DELETE", "aggregation-MIN"]
arms = ["policy-only"]
seeds = [1]
iterations = 8
eval_every = 8
[policy]
warm_start_demos = 40
learning_rate = 2.0
temperature = 0.6
[budget]
batch_tasks = 32
base_tries = 4
[eval]
train_tasks = 120
"#,
    )
    .unwrap();
    let out = run_experiment(&c, &store(&dir, "l.db"), &NullSink, &AtomicBool::new(false)).unwrap();
    let st = store(&dir, "l.db");
    let curve = out.curves["policy-only"].clone();
    let first = curve.iter().find(|p| p.0 == 0).unwrap().1;
    let last = curve.iter().next_back().unwrap().1;
    assert!(last > first + 0.03, "train success rose from {first} to {last}");
    let _ = st;
}

/// The demo experiment at reduced size on a real Postgres server: the same numbers as on SQLite,
/// and the same episodes.
#[test]
fn the_demo_on_postgres_gives_the_sqlite_numbers() {
    let Some(url) = postgres::fresh_database("demo") else { return };
    let demo = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/demo.toml")).unwrap();
    let mut c = ExperimentConfig::parse("demo.toml", &demo).unwrap();
    c.seeds = vec![1, 2];
    c.iterations = 2;
    c.budget.batch_tasks = 8;
    c.budget.probe_tasks = 6;
    c.eval.train_tasks = 16;
    c.policy.warm_start_demos = 10;
    let dir = tempfile::tempdir().unwrap();
    let lite = store(&dir, "demo.db");
    let pg = BlockingStore::open(&url).unwrap();
    let a = run_experiment(&c, &lite, &NullSink, &AtomicBool::new(false)).unwrap();
    let b = run_experiment(&c, &pg, &NullSink, &AtomicBool::new(false)).unwrap();
    assert!(a.finished && b.finished);
    assert_eq!(a.arms, b.arms);
    assert_eq!(a.heldout_delta, b.heldout_delta);
    assert_eq!(a.deltas, b.deltas);
    assert_eq!(a.rollouts_detail, b.rollouts_detail);
    assert_eq!(a.rank_one, b.rank_one);
    assert_eq!(a.curves, b.curves);
    let count = |s: &BlockingStore, id| s.count_episodes(&EpisodeFilter::run(id)).unwrap();
    assert_eq!(count(&lite, a.run_id), count(&pg, b.run_id));
    // the analyses read the same evidence from both
    let ra = harness_s::analysis::analyse(&lite, a.run_id).unwrap();
    let rb = harness_s::analysis::analyse(&pg, b.run_id).unwrap();
    // (what differs by nature: the run's own id, times and store)
    let strip = |v: &mut serde_json::Value| {
        if let Some(o) = v.as_object_mut() {
            o.remove("provenance");
            o.remove("run");
        }
    };
    let (mut ja, mut jb) = (serde_json::to_value(&ra).unwrap(), serde_json::to_value(&rb).unwrap());
    strip(&mut ja);
    strip(&mut jb);
    let differing: Vec<&String> = ja.as_object().unwrap().iter().filter(|(k, v)| jb.get(k.as_str()) != Some(v)).map(|(k, _)| k).collect();
    assert!(differing.is_empty(), "the analyses differ in {differing:?}");
}

/// `budget.train_pool` cuts the training set to a fixed subset: every batch, probe,
/// demonstration and training evaluation draws from the same tasks, whatever the seed and arm,
/// and the held-out split is untouched.
#[test]
fn a_training_pool_bounds_the_tasks_every_phase_draws_from() {
    let dir = tempfile::tempdir().unwrap();
    let st = store(&dir, "p.db");
    let text = SMALL.replace("iterations = 3", "iterations = 2").replace("probe_tasks = 8\n", "probe_tasks = 8\ntrain_pool = 10\n");
    let c = ExperimentConfig::parse("small.toml", &text).expect("valid config");
    assert_eq!(c.budget.train_pool, 10);
    let all = ExperimentConfig::parse("small.toml", SMALL).unwrap();
    assert_eq!(all.budget.train_pool, 0, "every training task by default");
    // the estimate sees the pool as the suite's training set
    let (pooled, full) = (harness_s::experiment::estimate(&c, 2).unwrap(), harness_s::experiment::estimate(&all, 2).unwrap());
    assert!(pooled.train < full.train, "{pooled:?} vs {full:?}");
    let out = run_experiment(&c, &st, &NullSink, &AtomicBool::new(false)).expect("runs");
    assert!(out.finished);
    let rows = st.episode_rows(&EpisodeFilter { run_id: Some(out.run_id), ..Default::default() }).unwrap();
    let phase = |r: &harness_s::store::EpisodeRow| r.context.phase.clone().unwrap_or_default();
    let split = |r: &harness_s::store::EpisodeRow| r.context.split.clone().unwrap_or_default();
    let heldout = |r: &&harness_s::store::EpisodeRow| split(r) == "heldout";
    let pool: std::collections::BTreeSet<&str> = rows.iter().filter(|r| !heldout(r)).map(|r| r.task_id.as_str()).collect();
    assert_eq!(pool.len(), 10, "{pool:?}");
    for p in ["train", "rescue", "probe", "eval"] {
        assert!(rows.iter().any(|r| phase(r) == p && !heldout(&r)), "no {p} episodes on training tasks");
    }
    assert!(rows.iter().filter(heldout).count() > 0, "the held-out evaluation runs as before");
    // a config written back keeps the key only when it is set
    assert!(!toml::to_string(&all).unwrap().contains("train_pool"));
    assert!(toml::to_string(&c).unwrap().contains("train_pool = 10"));
}
