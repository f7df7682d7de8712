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
    let mut out: Vec<TransferCurve> = acc
        .into_iter()
        .map(|((suite, arm, split), its)| {
            let points = its
                .into_iter()
                .map(|(iteration, seeds)| {
                    let per_seed: Vec<SeedValue> = seeds
                        .into_iter()
                        .filter(|(_, (_, n))| *n > 0)
                        .map(|(seed_index, (s, n))| SeedValue { seed_index, success: s as f64 / n as f64, tasks: n })
                        .collect();
                    let vals: Vec<f64> = per_seed.iter().map(|s| s.success).collect();
                    let (mean, ci95) = t_interval(&vals, (0.0, 1.0));
                    CurvePoint { iteration, mean, ci95, seeds: per_seed.len(), per_seed }
                })
                .collect();
            TransferCurve { suite, arm, split, points }
        })
        .collect();
    let arms = data.arms.clone();
    out.sort_by_key(|c| {
        (
            data.suites.iter().position(|s| s == &c.suite).unwrap_or(usize::MAX),
            split_rank(&c.split),
            arms.iter().position(|x| x == &c.arm).unwrap_or(usize::MAX),
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
}
