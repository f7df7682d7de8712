//! Rank-one inference at a matched rollout count: a base try first and, on failure, the router's
//! rank-one sibling, against base-only with the same number of executor rollouts (a second base
//! try).
//!
//! Source: the success rates come from the per-job checkpoints (`JobState.rank_one` in the
//! `job/<suite>/<arm>/<seed>` run state), because the runner does not store the base tries of
//! this phase as episodes — only the sibling tries (phase `rank1`). Those episodes are counted
//! here as a cross-check: `sibling_tries` and `sibling_rescues` come from the store's episodes,
//! not from the checkpoint. Means and 95% t-intervals are over seeds.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{AnalysisError, Data};
use crate::stats::t_interval;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct RankOneRow {
    pub suite: String,
    pub arm: String,
    pub split: String,
    pub seeds: usize,
    /// Base try, then the rank-one sibling on failure.
    pub routed: f64,
    pub routed_ci95: [f64; 2],
    /// Two base tries.
    pub base_only: f64,
    pub base_only_ci95: [f64; 2],
    /// routed − base_only, per seed, then averaged.
    pub gain: f64,
    pub gain_ci95: [f64; 2],
    /// Executor rollouts spent, summed over seeds.
    pub rollouts_routed: u64,
    pub rollouts_base_only: u64,
    /// From the `rank1` episodes: sibling tries after a failed base try, and their successes.
    pub sibling_tries: usize,
    pub sibling_rescues: usize,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct RankOneAnalysis {
    /// Where the rates come from.
    pub source: String,
    pub rows: Vec<RankOneRow>,
    /// Jobs that have not reached the end yet (rank-one inference runs after the last iteration).
    pub jobs_pending: usize,
}

/// One seed's (routed, base only, rollouts routed, rollouts base only).
type SeedRankOne = (f64, f64, u64, u64);

pub(crate) fn rank_one(data: &Data) -> Result<RankOneAnalysis, AnalysisError> {
    let mut out = RankOneAnalysis {
        source: "per-job checkpoints (JobState.rank_one); sibling tries counted from `rank1` episodes".into(),
        ..Default::default()
    };
    // (suite, arm, split) -> per seed (routed, base_only, rollouts)
    let mut acc: BTreeMap<(String, String, String), Vec<SeedRankOne>> = BTreeMap::new();
    for (key, value) in data.store.states(data.run.id)? {
        if !key.starts_with("job/") {
            continue;
        }
        let job: crate::records::JobState = crate::records::parse("job checkpoint", &key, value)?;
        if !job.finished {
            out.jobs_pending += 1;
        }
        for r in job.rank_one {
            acc.entry((job.suite.clone(), job.arm.clone(), r.split.clone())).or_default().push((
                r.routed,
                r.base_only,
                r.rollouts_routed,
                r.rollouts_base_only,
            ));
        }
    }
    let mut tries: BTreeMap<(String, String, String), (usize, usize)> = BTreeMap::new();
    for r in data.phase("rank1") {
        let e = tries
            .entry((r.suite.clone(), r.context.arm.clone().unwrap_or_default(), r.context.split.clone().unwrap_or_else(|| "train".into())))
            .or_default();
        e.0 += 1;
        e.1 += usize::from(r.success);
    }
    for ((suite, arm, split), seeds) in acc {
        let routed: Vec<f64> = seeds.iter().map(|s| s.0).collect();
        let base: Vec<f64> = seeds.iter().map(|s| s.1).collect();
        let gain: Vec<f64> = seeds.iter().map(|s| s.0 - s.1).collect();
        let (r, rci) = t_interval(&routed, (0.0, 1.0));
        let (b, bci) = t_interval(&base, (0.0, 1.0));
        let (g, gci) = t_interval(&gain, (-1.0, 1.0));
        let (st, sr) = tries.get(&(suite.clone(), arm.clone(), split.clone())).copied().unwrap_or((0, 0));
        out.rows.push(RankOneRow {
            suite,
            arm,
            split,
            seeds: seeds.len(),
            routed: r,
            routed_ci95: rci,
            base_only: b,
            base_only_ci95: bci,
            gain: g,
            gain_ci95: gci,
            rollouts_routed: seeds.iter().map(|s| s.2).sum(),
            rollouts_base_only: seeds.iter().map(|s| s.3).sum(),
            sibling_tries: st,
            sibling_rescues: sr,
        });
    }
    let arm_pos = |a: &str| data.arms.iter().position(|x| x == a).unwrap_or(usize::MAX);
    out.rows.sort_by_key(|r| (data.suites.iter().position(|s| s == &r.suite), super::transfer::split_rank(&r.split), arm_pos(&r.arm)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    #[test]
    fn reads_checkpoints_and_counts_sibling_tries() {
        let t = TestRun::new();
        for (seed, routed) in [(0, 0.5), (1, 0.7)] {
            t.store
                .set_state(
                    t.run_id,
                    &format!("job/dbbench/harness-s/{seed}"),
                    &serde_json::json!({
                        "suite": "dbbench", "arm": "harness-s", "seed_index": seed, "finished": true,
                        "rank_one": [{"split": "heldout", "routed": routed, "base_only": 0.4, "rollouts_routed": 15, "rollouts_base_only": 20}],
                    }),
                )
                .unwrap();
        }
        t.store
            .set_state(t.run_id, "job/dbbench/policy-only/0", &serde_json::json!({"suite": "dbbench", "arm": "policy-only", "finished": false}))
            .unwrap();
        t.put(vec![(episode("h0", "hf", "schema-first", 1, true, vec![]), ctx("harness-s", 0, 3, "rank1", "heldout"))]);
        let r = rank_one(&t.data()).unwrap();
        assert_eq!(r.jobs_pending, 1);
        assert_eq!(r.rows.len(), 1);
        let row = &r.rows[0];
        assert!((row.routed - 0.6).abs() < 1e-12 && (row.gain - 0.2).abs() < 1e-12);
        assert_eq!((row.rollouts_routed, row.sibling_tries, row.sibling_rescues), (30, 1, 1));
    }
}
