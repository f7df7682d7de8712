//! Transfer curves: base-harness success per evaluation iteration, per arm and split, as the
//! mean over seeds with a 95% t-band over seeds.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Data;
use crate::stats::t_interval;

/// One seed's success at one evaluation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct SeedValue {
    pub seed_index: u32,
    pub success: f64,
    /// Evaluated tasks (episodes that count).
    pub tasks: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct CurvePoint {
    pub iteration: u32,
    /// Mean over seeds of each seed's success rate.
    pub mean: f64,
    /// 95% t-interval over seeds, clipped to [0, 1]; the point itself with one seed.
    pub ci95: [f64; 2],
    pub seeds: usize,
    pub per_seed: Vec<SeedValue>,
}

/// Success under the base harness over training, for one arm on one split.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct TransferCurve {
    pub suite: String,
    pub arm: String,
    /// `train` (training families) or `heldout` (families never trained on).
    pub split: String,
    pub points: Vec<CurvePoint>,
}

/// Split order for display: training families first.
pub(crate) fn split_rank(split: &str) -> usize {
    match split {
        "train" => 0,
        "heldout" => 1,
        _ => 2,
    }
}

pub(crate) fn curves(data: &Data) -> Vec<TransferCurve> {
    // (suite, arm, split) -> iteration -> seed -> (successes, n)
    type Cell = BTreeMap<u32, BTreeMap<u32, (usize, usize)>>;
    let mut acc: BTreeMap<(String, String, String), Cell> = BTreeMap::new();
    for r in data.phase("eval") {
        let (Some(arm), Some(it), Some(seed)) = (r.context.arm.clone(), r.context.iteration, r.context.seed_index) else { continue };
        let split = r.context.split.clone().unwrap_or_else(|| "train".into());
        let c = acc.entry((r.suite.clone(), arm, split)).or_default().entry(it).or_default().entry(seed).or_default();
        c.0 += usize::from(r.success);
        c.1 += 1;
    }
    let cells = acc
        .into_iter()
        .map(|(key, its)| {
            let its = its
                .into_iter()
                .map(|(it, seeds)| {
                    let per_seed = seeds
                        .into_iter()
                        .filter(|(_, (_, n))| *n > 0)
                        .map(|(seed_index, (s, n))| SeedValue { seed_index, success: s as f64 / n as f64, tasks: n })
                        .collect();
                    (it, per_seed)
                })
                .collect();
            (key, its)
        })
        .collect();
    let arms: Vec<&str> = data.arms.iter().map(String::as_str).collect();
    build(cells, &data.suites, &arms)
}

/// One seed's evaluation as a running job reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct LivePoint<'a> {
    pub suite: &'a str,
    pub arm: &'a str,
    pub split: &'a str,
    pub iteration: u32,
    pub seed_index: u32,
    pub success: f64,
    pub tasks: usize,
}

/// The transfer curves of a running job's evaluations so far, computed as [`curves`] computes
/// them from the store (per iteration, the seeds evaluated there so far), in suite-name order
/// and `arm_order` (unknown arms after, by name).
pub fn live_curves(points: &[LivePoint<'_>], arm_order: &[&str]) -> Vec<TransferCurve> {
    let mut cells: Cells = BTreeMap::new();
    for p in points {
        let seeds = cells.entry((p.suite.to_string(), p.arm.to_string(), p.split.to_string())).or_default().entry(p.iteration).or_default();
        // a later report of the same evaluation replaces the earlier one
        seeds.retain(|s| s.seed_index != p.seed_index);
        seeds.push(SeedValue { seed_index: p.seed_index, success: p.success, tasks: p.tasks });
        seeds.sort_by_key(|s| s.seed_index);
    }
    let suites: std::collections::BTreeSet<String> = cells.keys().map(|(s, _, _)| s.clone()).collect();
    build(cells, &suites.into_iter().collect::<Vec<_>>(), arm_order)
}

/// (suite, arm, split) -> iteration -> each seed's value.
type Cells = BTreeMap<(String, String, String), BTreeMap<u32, Vec<SeedValue>>>;

/// Curves from per-seed values: the mean over seeds and its t-interval at each iteration, in
/// `suites` order, training before held-out, then `arms` order.
fn build(cells: Cells, suites: &[String], arms: &[&str]) -> Vec<TransferCurve> {
    let mut out: Vec<TransferCurve> = cells
        .into_iter()
        .map(|((suite, arm, split), its)| {
            let points = its
                .into_iter()
                .map(|(iteration, per_seed)| {
                    let vals: Vec<f64> = per_seed.iter().map(|s| s.success).collect();
                    let (mean, ci95) = t_interval(&vals, (0.0, 1.0));
                    CurvePoint { iteration, mean, ci95, seeds: per_seed.len(), per_seed }
                })
                .collect();
            TransferCurve { suite, arm, split, points }
        })
        .collect();
    out.sort_by_key(|c| {
        (
            suites.iter().position(|s| s == &c.suite).unwrap_or(usize::MAX),
            split_rank(&c.split),
            arms.iter().position(|x| *x == c.arm).unwrap_or(usize::MAX),
            c.arm.clone(),
        )
    });
    out
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    #[test]
    fn curve_is_the_mean_over_seeds_with_a_band() {
        let t = TestRun::new();
        // seed 0: 2 of 4 at it 0, seed 1: 4 of 4
        t.eval("policy-only", 0, 0, "train", &[true, true, false, false]);
        t.eval("policy-only", 1, 0, "train", &[true, true, true, true]);
        t.eval("policy-only", 0, 2, "train", &[true, true, true, false]);
        let data = t.data();
        let c = curves(&data);
        assert_eq!(c.len(), 1);
        let p0 = &c[0].points[0];
        assert_eq!((p0.iteration, p0.seeds), (0, 2));
        assert!((p0.mean - 0.75).abs() < 1e-12);
        assert!(p0.ci95[0] <= 0.5 && p0.ci95[1] >= 1.0 - 1e-12);
        let p2 = &c[0].points[1];
        assert_eq!((p2.iteration, p2.seeds), (2, 1));
        assert_eq!(p2.ci95, [0.75, 0.75]);
    }

    #[test]
    fn live_curves_are_the_stored_curves_of_the_same_evaluations() {
        let t = TestRun::new();
        t.eval("policy-only", 0, 0, "train", &[true, true, false, false]);
        t.eval("policy-only", 1, 0, "train", &[true, true, true, true]);
        t.eval("harness-s", 0, 0, "heldout", &[true, false]);
        let stored = curves(&t.data());
        let point = |arm, split, seed_index, success, tasks| LivePoint { suite: "dbbench", arm, split, iteration: 0, seed_index, success, tasks };
        let live = live_curves(
            &[point("harness-s", "heldout", 0, 0.5, 2), point("policy-only", "train", 1, 1.0, 4), point("policy-only", "train", 0, 0.5, 4)],
            &["policy-only", "harness-s"],
        );
        assert_eq!(live, stored);
    }
}
