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
        // per task: mean over seeds of the paired difference
        let mut diffs: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
        for (k, pa) in &xa {
            let Some(pb) = xb.get(k) else { continue };
            for (t, sa) in &pa.per_task {
                if let Some(sb) = pb.per_task.get(t) {
                    diffs.entry((k.0, t.as_str())).or_default().push(*sa as i32 as f64 - *sb as i32 as f64);
                }
            }
        }
        let d: Vec<f64> = diffs.values().map(|v| mean(v)).collect();
        let (lo, hi) = bootstrap_ci(&d, 2000, 0xb007);
        Some(Delta { arm: arm.into(), baseline: baseline.into(), mean: mean(&d), ci95: [lo, hi], tasks: d.len() })
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
