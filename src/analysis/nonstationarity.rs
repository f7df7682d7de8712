//! Nonstationarity: which sibling helps changes as the policy learns. A sibling's utility at an
//! anchor is its fix rate among base failures on the probe set (from its `profile` record); the
//! analysis gives Spearman's rank correlation of the utilities between consecutive anchors of
//! each (arm, seed), and their mean over seeds. A correlation needs at least three siblings with
//! a defined utility at both anchors and ranks that are not all tied; otherwise it is `None`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Data;
use crate::stats::{mean, spearman, t_interval};

/// Siblings needed for a rank correlation.
pub const MIN_SIBLINGS: usize = 3;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct SiblingUtility {
    pub suite: String,
    pub arm: String,
    pub seed_index: u32,
    pub anchor: usize,
    pub iteration: u32,
    pub sibling: String,
    /// Fix rate among base failures; `None` when the probe saw no base failure.
    pub utility: Option<f64>,
    pub base_failures: u32,
    pub policy_version: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct RankCorrelation {
    pub suite: String,
    pub arm: String,
    /// `None` in the means over seeds.
    pub seed_index: Option<u32>,
    pub from_anchor: usize,
    pub to_anchor: usize,
    /// Spearman's rho (per seed), or the mean over the seeds that have one.
    pub rho: Option<f64>,
    /// 95% t-interval over seeds (means only).
    pub ci95: Option<[f64; 2]>,
    /// Siblings compared (per seed), or seeds averaged (means).
    pub n: usize,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Nonstationarity {
    pub utilities: Vec<SiblingUtility>,
    pub per_seed: Vec<RankCorrelation>,
    /// Per (suite, arm, anchor pair), the mean over seeds.
    pub mean: Vec<RankCorrelation>,
    /// Per (suite, arm): the mean of every defined per-seed rho over all anchor pairs.
    pub overall: Vec<RankCorrelation>,
}

/// anchor -> sibling -> utility, for one job.
type Utilities = BTreeMap<usize, BTreeMap<String, Option<f64>>>;

pub(crate) fn nonstationarity(data: &Data) -> Nonstationarity {
    let mut out = Nonstationarity::default();
    // (suite, arm, seed) -> anchor -> sibling -> utility
    let mut by_job: BTreeMap<(String, String, u32), Utilities> = BTreeMap::new();
    for p in &data.profiles {
        let c = &p.profile.total;
        let f = c.base_failures();
        let utility = (f > 0).then(|| c.fix as f64 / f as f64);
        out.utilities.push(SiblingUtility {
            suite: p.suite.clone(),
            arm: p.arm.clone(),
            seed_index: p.seed_index,
            anchor: p.profile.anchor,
            iteration: p.iteration,
            sibling: p.profile.sibling.clone(),
            utility,
            base_failures: f,
            policy_version: p.profile.policy_version,
        });
        by_job
            .entry((p.suite.clone(), p.arm.clone(), p.seed_index))
            .or_default()
            .entry(p.profile.anchor)
            .or_default()
            .insert(p.profile.sibling.clone(), utility);
    }
    for ((suite, arm, seed), anchors) in &by_job {
        let list: Vec<(&usize, &BTreeMap<String, Option<f64>>)> = anchors.iter().collect();
        for w in list.windows(2) {
            let ((a, ua), (b, ub)) = (w[0], w[1]);
            let pairs: Vec<(f64, f64)> = ua.iter().filter_map(|(s, x)| Some(((*x)?, ub.get(s).copied().flatten()?))).collect();
            let rho = if pairs.len() >= MIN_SIBLINGS {
                let (xa, xb): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
                spearman(&xa, &xb)
            } else {
                None
            };
            out.per_seed.push(RankCorrelation {
                suite: suite.clone(),
                arm: arm.clone(),
                seed_index: Some(*seed),
                from_anchor: *a,
                to_anchor: *b,
                rho,
                ci95: None,
                n: pairs.len(),
            });
        }
    }
    let mut groups: BTreeMap<(String, String, usize, usize), Vec<f64>> = BTreeMap::new();
    let mut overall: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for r in &out.per_seed {
        let g = groups.entry((r.suite.clone(), r.arm.clone(), r.from_anchor, r.to_anchor)).or_default();
        let o = overall.entry((r.suite.clone(), r.arm.clone())).or_default();
        if let Some(x) = r.rho {
            g.push(x);
            o.push(x);
        }
    }
    for ((suite, arm, a, b), xs) in groups {
        let (rho, ci95) = if xs.is_empty() {
            (None, None)
        } else {
            let (m, ci) = t_interval(&xs, (-1.0, 1.0));
            (Some(m), Some(ci))
        };
        out.mean.push(RankCorrelation { suite, arm, seed_index: None, from_anchor: a, to_anchor: b, rho, ci95, n: xs.len() });
    }
    for ((suite, arm), xs) in overall {
        let rho = (!xs.is_empty()).then(|| mean(&xs));
        let ci95 = (!xs.is_empty()).then(|| t_interval(&xs, (-1.0, 1.0)).1);
        out.overall.push(RankCorrelation { suite, arm, seed_index: None, from_anchor: 0, to_anchor: 0, rho, ci95, n: xs.len() });
    }
    let arm_pos = |a: &str| data.arms.iter().position(|x| x == a).unwrap_or(usize::MAX);
    out.mean.sort_by_key(|r| (r.suite.clone(), arm_pos(&r.arm), r.from_anchor));
    out.overall.sort_by_key(|r| (r.suite.clone(), arm_pos(&r.arm)));
    out
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    #[test]
    fn rank_correlation_between_consecutive_anchors() {
        let t = TestRun::new();
        // anchor 0 utilities: s1 1/4, s2 2/4, s3 3/4; anchor 1 reversed
        let rec = |fix: usize| -> Vec<(&'static str, &'static str, bool, bool)> { (0..4).map(|i| ("f0", "x", false, i < fix)).collect() };
        for seed in 0..2 {
            for (s, f0, f1) in [("s1", 1, 3), ("s2", 2, 2), ("s3", 3, 1)] {
                t.profile("harness-s", seed, 0, 0, s, &rec(f0));
                t.profile("harness-s", seed, 1, 2, s, &rec(f1));
            }
        }
        let n = nonstationarity(&t.data());
        assert_eq!(n.per_seed.len(), 2);
        assert_eq!(n.per_seed[0].rho, Some(-1.0));
        assert_eq!(n.mean.len(), 1);
        assert_eq!(n.mean[0].rho, Some(-1.0));
        assert_eq!(n.mean[0].n, 2);
        assert_eq!(n.overall[0].rho, Some(-1.0));
        assert_eq!(n.utilities.len(), 12);
    }
}
