//! The confirmatory AppWorld evaluation's split (`experiments/appworld-confirm.toml`): its task
//! file is exactly the design the experiment file states, its held-out tasks are new scenarios
//! of the bundled world's generator (none bundled, none trained on), and every one of them is a
//! real task: its reference solution passes and doing nothing fails.
//!
//! `HARNESS_S_WRITE_CONFIRM_TASKS=1 cargo test --test appworld_confirm` writes the task file
//! from the design below.

use std::collections::BTreeSet;
use std::path::Path;

use harness_s::experiment::ExperimentConfig;
use harness_s::suite::appworld::world::tasks::{scenario_tasks, FAMILIES, GENERATED_SCENARIOS_PER_FAMILY, SCENARIOS_PER_FAMILY};
use harness_s::suite::appworld::{load_ids, AppWorld};
use harness_s::suite::Suite;

/// The held-out families of the design, and the generated scenarios each gets (after the
/// bundled ones, which the pilot `experiments/appworld.toml` evaluated).
const HELDOUT: [&str; 3] = ["wallet_total", "music_count", "todo_complete"];
const HELDOUT_SCENARIOS: std::ops::Range<usize> = SCENARIOS_PER_FAMILY..SCENARIOS_PER_FAMILY + 36;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The design's task ids: every bundled task of the training families, then the held-out
/// families' new scenarios.
fn designed() -> (Vec<String>, Vec<String>) {
    let train: Vec<String> = FAMILIES
        .iter()
        .filter(|f| !HELDOUT.contains(f))
        .flat_map(|f| (0..SCENARIOS_PER_FAMILY).flat_map(move |k| scenario_tasks(f, k)))
        .map(|t| t.task_id)
        .collect();
    let heldout: Vec<String> = HELDOUT
        .iter()
        .flat_map(|f| HELDOUT_SCENARIOS.flat_map(move |k| scenario_tasks(FAMILIES.iter().find(|x| *x == f).unwrap(), k)))
        .map(|t| t.task_id)
        .collect();
    (train, heldout)
}

#[test]
fn the_confirmatory_split_is_the_one_designed() {
    let file = root().join("experiments/appworld-confirm-tasks.txt");
    let (train, heldout) = designed();
    if std::env::var_os("HARNESS_S_WRITE_CONFIRM_TASKS").is_some() {
        let mut text = String::from(
            "# The task split of experiments/appworld-confirm.toml (its comments give the design).\n\
             # Training families: every bundled task (scenarios 0-5). Held-out families (wallet_total,\n\
             # music_count, todo_complete): generated scenarios 6-41, never bundled, never trained on.\n\
             # Written by `HARNESS_S_WRITE_CONFIRM_TASKS=1 cargo test --test appworld_confirm`.\n",
        );
        for id in train.iter().chain(&heldout) {
            text.push_str(id);
            text.push('\n');
        }
        std::fs::write(&file, text).unwrap();
    }
    let ids = load_ids(&file).unwrap();
    assert_eq!(ids, train.iter().chain(&heldout).cloned().collect::<Vec<_>>(), "{} is not the design's split", file.display());

    let tasks = AppWorld::tasks_from_ids(&ids);
    let bundled: BTreeSet<String> = AppWorld::new().bundled_tasks().unwrap().into_iter().map(|t| t.id).collect();
    let cfg = ExperimentConfig::load(&root().join("experiments/appworld-confirm.toml")).unwrap();
    assert_eq!(cfg.heldout_families, HELDOUT.to_vec());
    assert_eq!(cfg.datasets.get("appworld").map(String::as_str), Some("experiments/appworld-confirm-tasks.txt"));
    for t in &tasks {
        assert!(!t.instruction.is_empty(), "{}: a task of the world, with its instruction", t.id);
        let held = HELDOUT.contains(&t.family.as_str());
        assert_eq!(held, heldout.contains(&t.id), "{} ({})", t.id, t.family);
        // held-out tasks are new: the pilot never evaluated them and no arm trains on them
        assert_eq!(bundled.contains(&t.id), !held, "{} ({})", t.id, t.family);
    }
    assert_eq!(heldout.len(), HELDOUT.len() * HELDOUT_SCENARIOS.len() * 3);
    // the method is appworld.toml's, unchanged: only the name, the split, its dataset and how
    // much is evaluated differ (the arms compared, when, and the rank-one inference)
    let mut pilot = ExperimentConfig::load(&root().join("experiments/appworld.toml")).unwrap();
    assert!(
        cfg.arms.iter().all(|a| pilot.arms.contains(a))
            && cfg.arms.contains(&"harness-s".to_string())
            && cfg.arms.contains(&"policy-only".to_string())
    );
    assert_eq!(cfg.eval_every, cfg.iterations, "evaluated at the start and at the end");
    pilot.name = cfg.name.clone();
    pilot.heldout_families = cfg.heldout_families.clone();
    pilot.datasets = cfg.datasets.clone();
    pilot.arms = cfg.arms.clone();
    pilot.eval_every = cfg.eval_every;
    pilot.eval.rank_one = cfg.eval.rank_one;
    assert_eq!(pilot, cfg, "appworld-confirm.toml changes only the split and the evaluation");
}

#[test]
fn the_generator_s_scenario_ids_are_distinct() {
    let mut seen = BTreeSet::new();
    for f in FAMILIES {
        for k in 0..GENERATED_SCENARIOS_PER_FAMILY {
            let id = scenario_tasks(f, k)[0].scenario.clone();
            assert!(seen.insert(id.clone()), "scenario {id} ({f} {k}) twice");
        }
    }
}

/// Every held-out task of the design is solved by its reference solution and failed by doing
/// nothing, through the bundled world's servers.
#[test]
fn every_held_out_task_of_the_design_is_a_real_task() {
    let (_, heldout) = designed();
    let tasks = AppWorld::tasks_from_ids(&heldout);
    let report = AppWorld::new().verify(&tasks);
    assert!(report.disagreements.is_empty(), "{:?}", report.disagreements);
    assert_eq!((report.total, report.agree), (heldout.len(), heldout.len()), "{:?}", report.groups);
}
