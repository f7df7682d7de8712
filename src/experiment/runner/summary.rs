//! The run's summary (`ExperimentOutcome`): final rates, paired deltas and curves from the jobs' states.

use super::*;

/// Final numbers over seeds, with the paired bootstrap on held-out tasks.
pub(super) fn summarise(cfg: &ExperimentConfig, run_id: i64, resumed: bool, finished: bool, states: &[JobState], wall_s: f64) -> ExperimentOutcome {
    let mut arms: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut executor_rollouts = BTreeMap::new();
    let mut detail: BTreeMap<String, Rollouts> = BTreeMap::new();
    let mut rank_one: BTreeMap<String, Vec<RankOne>> = BTreeMap::new();
    let mut all_fail = BTreeMap::new();
    let mut curves = BTreeMap::new();
    for arm in &cfg.arms {
        let of_arm: Vec<&JobState> = states.iter().filter(|s| &s.arm == arm).collect();
        let mut splits = BTreeMap::new();
        for split in ["train", "heldout"] {
            let vals: Vec<f64> = of_arm.iter().filter_map(|s| last_point(s, split).map(|p| p.success)).collect();
            if !vals.is_empty() {
                splits.insert(split.to_string(), mean(&vals));
            }
        }
        arms.insert(arm.clone(), splits);
        let mut r = Rollouts::default();
        for s in &of_arm {
            r.base += s.rollouts.base;
            r.rescue += s.rollouts.rescue;
            r.resample += s.rollouts.resample;
            r.probe += s.rollouts.probe;
            r.demo += s.rollouts.demo;
        }
        executor_rollouts.insert(arm.clone(), r.training());
        all_fail.insert(arm.clone(), of_arm.iter().map(|s| s.all_fail_tasks).sum());
        let mut by_it: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for s in &of_arm {
            for p in s.curve.iter().filter(|p| p.split == "train") {
                by_it.entry(p.iteration).or_default().push(p.success);
            }
        }
        curves.insert(arm.clone(), by_it.into_iter().map(|(i, v)| (i, mean(&v))).collect());
        detail.insert(arm.clone(), r);
        if let Some(s) = of_arm.first() {
            // mean over seeds, per split
            let mut acc: Vec<RankOne> = s.rank_one.iter().map(|r| RankOne { split: r.split.clone(), ..Default::default() }).collect();
            for s in &of_arm {
                for (a, r) in acc.iter_mut().zip(&s.rank_one) {
                    a.routed += r.routed / of_arm.len() as f64;
                    a.base_only += r.base_only / of_arm.len() as f64;
                    a.rollouts_routed += r.rollouts_routed;
                    a.rollouts_base_only += r.rollouts_base_only;
                }
            }
            rank_one.insert(arm.clone(), acc);
        }
    }
    let delta = |arm: &str, baseline: &str| -> Option<Delta> {
        let split = if cfg.heldout_families.is_empty() { "train" } else { "heldout" };
        // by (suite, seed): a run of several suites pools their tasks
        let per_seed = |a: &str| -> BTreeMap<(&str, usize), &EvalPoint> {
            states.iter().filter(|s| s.arm == a).filter_map(|s| last_point(s, split).map(|p| ((s.suite.as_str(), s.seed_index), p))).collect()
        };
        let (xa, xb) = (per_seed(arm), per_seed(baseline));
        if xa.is_empty() || xb.is_empty() {
            return None;
        }
        // per (suite, task) and seed: a run of several suites pools their tasks
        let outcomes = |x: &BTreeMap<(&str, usize), &EvalPoint>| -> BTreeMap<(String, String), BTreeMap<u32, f64>> {
            let mut m: BTreeMap<(String, String), BTreeMap<u32, f64>> = BTreeMap::new();
            for ((suite, seed), p) in x {
                for (t, ok) in &p.per_task {
                    m.entry((suite.to_string(), t.clone())).or_default().insert(*seed as u32, f64::from(u8::from(*ok)));
                }
            }
            m
        };
        crate::stats::paired(&outcomes(&xa), &outcomes(&xb)).map(|d| Delta {
            arm: arm.into(),
            baseline: baseline.into(),
            mean: d.mean,
            ci95: d.ci95,
            tasks: d.tasks,
        })
    };
    let routed = Arm::HarnessS.as_str();
    let heldout_delta = delta(routed, Arm::PolicyOnly.as_str());
    let deltas: Vec<Delta> = cfg.arms.iter().filter(|a| a.as_str() != routed).filter_map(|a| delta(routed, a)).collect();
    let _ = EpisodeFilter::default();
    ExperimentOutcome {
        run_id,
        resumed,
        finished,
        arms,
        heldout_delta,
        deltas,
        executor_rollouts,
        rollouts_detail: detail,
        rank_one,
        all_fail_tasks: all_fail,
        curves,
        wall_s,
    }
}
