//! Router quality per anchor: hit@k (some sibling among the first k rescues the task) of the
//! router's order, of a uniformly random order (the exact expectation from how many siblings
//! rescue), and of the oracle (1 whenever any sibling rescues).
//!
//! Which siblings rescue a routed task comes from the probe rollouts of the same anchor for that
//! task when the task was in the probe set (every sibling is then known), else from the routing
//! record's own `rescued` flags — which cover only the siblings that were tried, so the untried
//! ones count as not rescuing there. That makes the oracle and random rows lower bounds on those
//! tasks; [`RouterSource`] says how many tasks each source gave. The router's order is the
//! record's full aggregate ranking (its `chosen` siblings when no aggregate was stored).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{Data, ROUTED_ARM};
use crate::stats::{random_hit_at, wilson};

/// How many routed tasks had their rescuing siblings from each source.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct RouterSource {
    /// From probe rollouts of every sibling at the same anchor.
    pub probe: usize,
    /// From the routing record's rescued flags (tried siblings only).
    pub record: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct RouterQuality {
    pub suite: String,
    pub arm: String,
    /// `None`: every anchor together.
    pub anchor: Option<usize>,
    /// Routed (all-fail) task occasions.
    pub tasks: usize,
    pub source: RouterSource,
    /// The sibling pool size (K: k runs 1..=K).
    pub pool: usize,
    /// hit@k for k = 1..=K.
    pub routed: Vec<f64>,
    /// Wilson 95% interval of each routed hit@k.
    pub routed_ci95: Vec<[f64; 2]>,
    pub random: Vec<f64>,
    pub oracle: Vec<f64>,
}

struct Judged {
    anchor: usize,
    probe: bool,
    routed: Vec<bool>,
    random: Vec<f64>,
    oracle: bool,
}

pub(crate) fn router_quality(data: &Data) -> Vec<RouterQuality> {
    let mut out = Vec::new();
    for suite in &data.suites {
        let pool = data.sibling_pool(suite);
        let k_max = pool.len();
        if k_max == 0 {
            continue;
        }
        // (arm, seed, anchor) -> probe iteration
        let anchor_iter: BTreeMap<(String, u32, usize), u32> =
            data.profiles.iter().filter(|p| &p.suite == suite).map(|p| ((p.arm.clone(), p.seed_index, p.profile.anchor), p.iteration)).collect();
        // (arm, seed, iteration, task) -> siblings that succeeded on the probe, and whether any was probed
        let mut probe: BTreeMap<(String, u32, u32, String), BTreeSet<String>> = BTreeMap::new();
        for r in data.phase("probe").filter(|r| &r.suite == suite && r.harness != data.base_harness) {
            let (Some(arm), Some(seed), Some(it)) = (r.context.arm.clone(), r.context.seed_index, r.context.iteration) else { continue };
            let e = probe.entry((arm, seed, it, r.task_id.clone())).or_default();
            if r.success {
                e.insert(r.harness.clone());
            }
        }
        let judged: Vec<Judged> = data
            .routes
            .iter()
            .filter(|r| &r.suite == suite && r.arm == ROUTED_ARM)
            .map(|r| {
                let probed = anchor_iter
                    .get(&(r.arm.clone(), r.seed_index, r.decision.anchor))
                    .and_then(|it| probe.get(&(r.arm.clone(), r.seed_index, *it, r.decision.query.task_id.clone())));
                let good: BTreeSet<String> = match probed {
                    Some(s) => s.clone(),
                    None => r.decision.rescued.iter().filter(|(_, b)| *b).map(|(s, _)| s.clone()).collect(),
                };
                let order = if r.decision.aggregate.is_empty() { &r.decision.chosen } else { &r.decision.aggregate };
                let routed = (1..=k_max).map(|k| order.iter().take(k).any(|s| good.contains(s))).collect();
                let random = (1..=k_max).map(|k| random_hit_at(k, good.len(), k_max)).collect();
                Judged { anchor: r.decision.anchor, probe: probed.is_some(), routed, random, oracle: !good.is_empty() }
            })
            .collect();
        let anchors: BTreeSet<usize> = judged.iter().map(|j| j.anchor).collect();
        let summarise = |anchor: Option<usize>| -> RouterQuality {
            let js: Vec<&Judged> = judged.iter().filter(|j| anchor.is_none_or(|a| j.anchor == a)).collect();
            let n = js.len();
            let share = |c: usize| if n > 0 { c as f64 / n as f64 } else { 0.0 };
            let hits: Vec<usize> = (0..k_max).map(|k| js.iter().filter(|j| j.routed[k]).count()).collect();
            let oracle = share(js.iter().filter(|j| j.oracle).count());
            RouterQuality {
                suite: suite.clone(),
                arm: ROUTED_ARM.into(),
                anchor,
                tasks: n,
                source: RouterSource { probe: js.iter().filter(|j| j.probe).count(), record: js.iter().filter(|j| !j.probe).count() },
                pool: k_max,
                routed: hits.iter().map(|&h| share(h)).collect(),
                routed_ci95: hits.iter().map(|&h| wilson(h, n)).collect(),
                random: (0..k_max).map(|k| if n > 0 { js.iter().map(|j| j.random[k]).sum::<f64>() / n as f64 } else { 0.0 }).collect(),
                oracle: vec![oracle; k_max],
            }
        };
        if judged.is_empty() {
            continue;
        }
        for a in &anchors {
            out.push(summarise(Some(*a)));
        }
        out.push(summarise(None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    #[test]
    fn hit_at_k_from_probe_outcomes_and_flags() {
        let t = TestRun::new();
        for s in ["s1", "s2", "s3", "s4"] {
            t.profile("harness-s", 0, 0, 0, s, &[]);
        }
        // task a was probed at anchor 0 (iteration 0): s3 and s4 rescue it
        let mut eps = vec![(episode("a", "f0", "base", 0, false, vec![]), ctx("harness-s", 0, 0, "probe", "train"))];
        for (s, ok) in [("s1", false), ("s2", false), ("s3", true), ("s4", true)] {
            eps.push((episode("a", "f0", s, 0, ok, vec![]), ctx("harness-s", 0, 0, "probe", "train")));
        }
        t.put(eps);
        t.route("harness-s", 0, 1, 0, "a", &["s1", "s3", "s2", "s4"], &["s1", "s3"], &[("s1", false), ("s3", false)]);
        // task b only from flags: s2 rescued
        t.route("harness-s", 0, 1, 0, "b", &["s2", "s1", "s3", "s4"], &["s2", "s1"], &[("s2", true), ("s1", false)]);
        let q = router_quality(&t.data());
        let a0 = q.iter().find(|q| q.anchor == Some(0)).unwrap();
        assert_eq!(a0.tasks, 2);
        assert_eq!(a0.source, RouterSource { probe: 1, record: 1 });
        assert_eq!(a0.routed, vec![0.5, 1.0, 1.0, 1.0]);
        assert_eq!(a0.oracle, vec![1.0; 4]);
        // random: a has 2 of 4 good: k=1 0.5, k=2 1-1/6; b has 1 of 4: 0.25, 0.5
        assert!((a0.random[0] - (0.5 + 0.25) / 2.0).abs() < 1e-12);
        assert!((a0.random[1] - ((1.0 - 1.0 / 6.0) + 0.5) / 2.0).abs() < 1e-12);
        assert!(q.iter().any(|q| q.anchor.is_none()));
    }
}
