//! Complementarity: do siblings cover failures that more base samples would not? Among tasks the
//! base harness failed, the share covered (some rollout succeeded) as the executor-rollout budget
//! per task grows, for three strategies:
//!
//! - **sibling union** — the probe set: tasks whose probe base rollout failed; one probe rollout
//!   per sibling, taken in the pool's fixed order, so budget x means "the first x siblings";
//! - **routed top-k** — `harness-s` routing decisions on all-fail training tasks: the rescue
//!   rollouts in the order they were made (the router's order), from the `rescue` episodes, or
//!   from the record's chosen order and rescued flags when those are missing;
//! - **extra base samples** — further base-harness rollouts of the same failed task: on the probe
//!   set when the probe recorded more than one base rollout per task, else the `resample`
//!   episodes of the `base-resample` arm (its all-fail training tasks). When the data has neither
//!   the curve is marked not measured instead of being guessed.
//!
//! Each curve says which population it is measured on; a unit is one (arm, seed, iteration,
//! task) occasion. Intervals are Wilson 95% over those units.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Data, ROUTED_ARM};
use crate::stats::wilson;
use crate::store::EpisodeRow;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct CoveragePoint {
    /// Executor rollouts per failed task.
    pub budget: usize,
    pub covered: usize,
    pub share: f64,
    pub ci95: [f64; 2],
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct CoverageCurve {
    /// `base-resample`, `sibling-union` or `routed`.
    pub strategy: String,
    /// A legend label.
    pub label: String,
    /// Which failed tasks the curve is measured on.
    pub population: String,
    /// Failed task occasions in the population.
    pub units: usize,
    pub points: Vec<CoveragePoint>,
    /// Why the curve could not be measured from this run's data.
    pub not_measured: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Complementarity {
    pub suite: String,
    /// Probe occasions whose base rollout failed.
    pub base_failed_probe_tasks: usize,
    pub siblings: Vec<String>,
    pub curves: Vec<CoverageCurve>,
}

type Occasion = (String, u32, u32, String);

fn occasion(r: &EpisodeRow) -> Option<Occasion> {
    Some((r.context.arm.clone()?, r.context.seed_index?, r.context.iteration?, r.task_id.clone()))
}

/// Coverage after each budget from per-unit outcome sequences.
fn curve(seqs: &[Vec<bool>], max_budget: usize) -> Vec<CoveragePoint> {
    (1..=max_budget)
        .map(|x| {
            let covered = seqs.iter().filter(|s| s.iter().take(x).any(|b| *b)).count();
            let n = seqs.len();
            CoveragePoint { budget: x, covered, share: if n > 0 { covered as f64 / n as f64 } else { 0.0 }, ci95: wilson(covered, n) }
        })
        .collect()
}

fn measured(strategy: &str, label: &str, population: String, seqs: &[Vec<bool>], max_budget: usize) -> CoverageCurve {
    CoverageCurve {
        strategy: strategy.into(),
        label: label.into(),
        population,
        units: seqs.len(),
        points: curve(seqs, max_budget),
        not_measured: None,
    }
}

fn not_measured(strategy: &str, label: &str, why: &str) -> CoverageCurve {
    CoverageCurve {
        strategy: strategy.into(),
        label: label.into(),
        population: String::new(),
        units: 0,
        points: Vec::new(),
        not_measured: Some(why.into()),
    }
}

pub(crate) fn complementarity(data: &Data) -> Vec<Complementarity> {
    let mut out = Vec::new();
    for suite in &data.suites {
        let pool = data.sibling_pool(suite);
        // probe occasions: base rollouts and per-sibling rollouts
        let mut probe: BTreeMap<Occasion, (Vec<bool>, BTreeMap<String, bool>)> = BTreeMap::new();
        for r in data.phase("probe").filter(|r| &r.suite == suite) {
            let Some(o) = occasion(r) else { continue };
            let e = probe.entry(o).or_default();
            if r.harness == data.base_harness {
                e.0.push(r.success);
            } else {
                e.1.entry(r.harness.clone()).or_insert(r.success);
            }
        }
        let failed: Vec<&(Vec<bool>, BTreeMap<String, bool>)> = probe.values().filter(|(b, _)| b.first() == Some(&false)).collect();
        let mut curves = Vec::new();

        // extra base samples
        let probe_resampled: Vec<Vec<bool>> = failed.iter().filter(|(b, _)| b.len() > 1).map(|(b, _)| b[1..].to_vec()).collect();
        let base_curve = if !probe_resampled.is_empty() {
            let max = probe_resampled.iter().map(Vec::len).max().unwrap_or(0).max(pool.len());
            measured("base-resample", "extra base samples", "probe tasks whose first base rollout failed".into(), &probe_resampled, max)
        } else {
            let mut res: BTreeMap<Occasion, Vec<bool>> = BTreeMap::new();
            for r in data.phase("resample").filter(|r| &r.suite == suite && r.harness == data.base_harness) {
                if let Some(o) = occasion(r) {
                    res.entry(o).or_default().push(r.success);
                }
            }
            if res.is_empty() {
                not_measured(
                    "base-resample",
                    "extra base samples",
                    "the run recorded no extra base rollouts of failed tasks: no second base rollout on the probe set and no `resample` episodes (add the base-resample arm to measure it)",
                )
            } else {
                let seqs: Vec<Vec<bool>> = res.into_values().collect();
                let max = seqs.iter().map(Vec::len).max().unwrap_or(0);
                measured(
                    "base-resample",
                    "extra base samples",
                    "all-fail training tasks of the base-resample arm (extra base tries)".into(),
                    &seqs,
                    max,
                )
            }
        };
        curves.push(base_curve);

        // sibling union over the probe set, pool order
        if failed.is_empty() || pool.is_empty() {
            curves.push(not_measured("sibling-union", "union of siblings", "no probe task with a failed base rollout"));
        } else {
            let seqs: Vec<Vec<bool>> = failed.iter().map(|(_, s)| pool.iter().map(|name| s.get(name).copied().unwrap_or(false)).collect()).collect();
            curves.push(measured(
                "sibling-union",
                "union of siblings",
                format!("probe tasks whose base rollout failed (siblings in pool order: {})", pool.join(", ")),
                &seqs,
                pool.len(),
            ));
        }

        // routed top-k from harness-s routing decisions
        let mut rescue_rows: BTreeMap<Occasion, Vec<bool>> = BTreeMap::new();
        for r in data.phase("rescue").filter(|r| &r.suite == suite && r.context.arm.as_deref() == Some(ROUTED_ARM)) {
            if let Some(o) = occasion(r) {
                rescue_rows.entry(o).or_default().push(r.success);
            }
        }
        let m = data.config_usize(&["budget", "rescue_tries"]).unwrap_or(1).max(1);
        let seqs: Vec<Vec<bool>> = data
            .routes
            .iter()
            .filter(|r| &r.suite == suite && r.arm == ROUTED_ARM)
            .map(|r| {
                let key = (r.arm.clone(), r.seed_index, r.iteration, r.decision.query.task_id.clone());
                match rescue_rows.get(&key) {
                    Some(seq) => seq.clone(),
                    None => r
                        .decision
                        .chosen
                        .iter()
                        .flat_map(|s| {
                            let ok = r.decision.rescued.iter().any(|(n, b)| n == s && *b);
                            // which of the m tries succeeded is unknown: count it at the last
                            (0..m).map(move |i| ok && i + 1 == m)
                        })
                        .collect(),
                }
            })
            .collect();
        if seqs.is_empty() {
            curves.push(not_measured("routed", "routed top-k", "no harness-s routing decision recorded"));
        } else {
            let max = seqs.iter().map(Vec::len).max().unwrap_or(0);
            curves.push(measured("routed", "routed top-k", "all-fail training tasks of harness-s (router's order)".into(), &seqs, max));
        }
        out.push(Complementarity { suite: suite.clone(), base_failed_probe_tasks: failed.len(), siblings: pool, curves });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    #[test]
    fn union_routed_and_not_measured_base() {
        let t = TestRun::new();
        let mut eps = Vec::new();
        // probe: task a base fails, sibling s2 fixes; task b base fails, none fixes; task c base passes
        for (task, base, s1, s2) in [("a", false, false, true), ("b", false, false, false), ("c", true, true, true)] {
            eps.push((episode(task, "f0", "base", 0, base, vec![]), ctx("harness-s", 0, 0, "probe", "train")));
            eps.push((episode(task, "f0", "s1", 0, s1, vec![]), ctx("harness-s", 0, 0, "probe", "train")));
            eps.push((episode(task, "f0", "s2", 0, s2, vec![]), ctx("harness-s", 0, 0, "probe", "train")));
        }
        eps.push((episode("d", "f0", "s1", 100, true, vec![]), ctx("harness-s", 0, 1, "rescue", "train")));
        eps.push((episode("d", "f0", "s2", 101, false, vec![]), ctx("harness-s", 0, 1, "rescue", "train")));
        t.put(eps);
        t.profile("harness-s", 0, 0, 0, "s1", &[]);
        t.profile("harness-s", 0, 0, 0, "s2", &[]);
        t.route("harness-s", 0, 1, 0, "d", &["s1", "s2"], &["s1", "s2"], &[("s1", true), ("s2", false)]);
        t.route("harness-s", 0, 1, 0, "e", &["s2", "s1"], &["s2", "s1"], &[("s2", false), ("s1", true)]);
        let c = complementarity(&t.data());
        assert_eq!(c[0].base_failed_probe_tasks, 2);
        let base = &c[0].curves[0];
        assert!(base.not_measured.is_some());
        let union = &c[0].curves[1];
        assert_eq!(union.points.iter().map(|p| p.covered).collect::<Vec<_>>(), vec![0, 1]);
        let routed = &c[0].curves[2];
        // d from its rescue episodes: covered at 1; e from flags (m = 1): covered at 2
        assert_eq!(routed.points.iter().map(|p| p.covered).collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn base_resample_from_resample_episodes() {
        let t = TestRun::new();
        t.put(vec![
            (episode("a", "f0", "base", 2, false, vec![]), ctx("base-resample", 0, 1, "resample", "train")),
            (episode("a", "f0", "base", 3, true, vec![]), ctx("base-resample", 0, 1, "resample", "train")),
            (episode("b", "f0", "base", 2, false, vec![]), ctx("base-resample", 0, 1, "resample", "train")),
            (episode("b", "f0", "base", 3, false, vec![]), ctx("base-resample", 0, 1, "resample", "train")),
        ]);
        let c = complementarity(&t.data());
        let base = &c[0].curves[0];
        assert!(base.not_measured.is_none());
        assert_eq!(base.units, 2);
        assert_eq!(base.points.iter().map(|p| p.share).collect::<Vec<_>>(), vec![0.0, 0.5]);
    }
}
