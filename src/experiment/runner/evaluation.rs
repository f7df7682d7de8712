//! Evaluation under the base harness on the training and held-out splits, and the rank-one
//! inference after the last iteration.

use super::*;

impl Job<'_> {
    pub(super) fn eval_tasks(&self) -> Vec<(&'static str, Vec<usize>)> {
        let cfg = self.sh.cfg;
        let mut train = self.su.train.clone();
        if cfg.eval.train_tasks > 0 && cfg.eval.train_tasks < train.len() {
            shuffle(&mut train, mix(&[0xe7a1]));
            train.truncate(cfg.eval.train_tasks);
            train.sort();
        }
        let mut v = vec![("train", train)];
        if !self.su.heldout.is_empty() {
            let mut heldout = self.su.heldout.clone();
            if cfg.eval.heldout_tasks > 0 && cfg.eval.heldout_tasks < heldout.len() {
                shuffle(&mut heldout, mix(&[0xe7a2]));
                heldout.truncate(cfg.eval.heldout_tasks);
                heldout.sort();
            }
            v.push(("heldout", heldout));
        }
        v
    }

    /// Base-harness evaluation on training and held-out families.
    pub(super) fn evaluate(&self, it: usize) -> Result<Vec<EvalPoint>, JobError> {
        let cfg = self.sh.cfg;
        let mut points = Vec::new();
        let mut to_save = Vec::new();
        let splits = self.eval_tasks();
        self.progress.enter("evaluation", it, splits.iter().map(|(_, idx)| idx.len()).sum());
        let wants: Vec<Want> = splits
            .iter()
            .flat_map(|(_, idx)| idx.iter())
            .map(|&t| {
                let task = &self.su.tasks[t];
                Want::kept(task, &self.su.base, 0, mix(&[self.seed, 0xe7a1, hash_str(&task.id)]), cfg.eval.temperature)
            })
            .collect();
        let episodes = self.rollouts(&wants, false, |i, _| self.progress.step(i + 1))?.unwrap_or_default();
        let mut episodes = episodes.into_iter();
        for (split, idx) in splits {
            let mut per_task = BTreeMap::new();
            for &t in &idx {
                let task = &self.su.tasks[t];
                let Some(ep) = episodes.next() else { break };
                per_task.insert(task.id.clone(), ep.success());
                to_save.push((ep, self.ctx(it, Phase::Eval, split)));
            }
            let n = per_task.len();
            let s = per_task.values().filter(|v| **v).count();
            points.push(EvalPoint { iteration: it, split: split.into(), success: if n > 0 { s as f64 / n as f64 } else { 0.0 }, tasks: n, per_task });
        }
        crate::fault::point("evaluation");
        self.save(&to_save)?;
        Ok(points)
    }

    /// Rank-one inference with this job's router (or, for arms without one, fresh profiles).
    pub(super) fn rank_one(&self, st: &JobState) -> Result<Vec<RankOne>, JobError> {
        let cfg = self.sh.cfg;
        if self.su.siblings.is_empty() {
            return Ok(Vec::new());
        }
        let mut rollouts = Rollouts::default();
        let profiles = if st.profiles.is_empty() { self.measure_profiles(cfg.iterations, 99, &mut rollouts)? } else { st.profiles.clone() };
        let router = &self.sh.router;
        let it = cfg.iterations;
        let temp = cfg.policy.temperature;
        let mut out = Vec::new();
        let mut to_save = Vec::new();
        let splits = self.eval_tasks();
        let all: Vec<&Task> = splits.iter().flat_map(|(_, idx)| idx.iter().map(|&t| &self.su.tasks[t])).collect();
        self.progress.enter("rank_one", it, all.len());
        // first every task's base try (not stored: a trial, not an episode of the progress
        // count), then for each failure the router's rank-one sibling and a second base try
        let firsts: Vec<Want> =
            all.iter().map(|&task| Want::trial(task, &self.su.base, 0, mix(&[self.seed, 0x4a1, hash_str(&task.id)]), temp)).collect();
        let firsts = self.rollouts(&firsts, false, |i, _| self.progress.step(i + 1))?.unwrap_or_default();
        let mut seconds: Vec<Want> = Vec::new();
        // per task: whether it was routed to a sibling
        let mut routed: Vec<bool> = Vec::new();
        for (&task, first) in all.iter().zip(&firsts) {
            if first.success() {
                routed.push(false);
                continue;
            }
            let tseed = hash_str(&task.id);
            let q = RouteQuery { task_id: task.id.clone(), family: task.family.clone(), signature: failure_signature(first), summary: String::new() };
            let mut rng = SplitMix(mix(&[self.seed, 0x4a2, tseed]));
            let d = router.route(&q, &profiles, 1, &mut rng);
            let spec = d.chosen.first().and_then(|n| self.su.siblings.iter().find(|s| &s.name == n));
            if let Some(spec) = spec {
                seconds.push(Want::kept(task, spec, 1, mix(&[self.seed, 0x4a3, tseed]), temp));
            }
            routed.push(spec.is_some());
            seconds.push(Want::trial(task, &self.su.base, 1, mix(&[self.seed, 0x4a3, tseed]), temp));
        }
        let seconds = self.rollouts(&seconds, false, |_, _| {})?.unwrap_or_default();
        let (mut firsts, mut seconds, mut routed) = (firsts.into_iter(), seconds.into_iter(), routed.into_iter());
        for (split, idx) in splits {
            let (mut routed_ok, mut base_ok, mut r_roll, mut b_roll) = (0usize, 0usize, 0u64, 0u64);
            for _ in &idx {
                let (Some(first), Some(was_routed)) = (firsts.next(), routed.next()) else { break };
                r_roll += 1;
                b_roll += 1;
                if first.success() {
                    routed_ok += 1;
                    base_ok += 1;
                    continue;
                }
                if was_routed {
                    let Some(ep) = seconds.next() else { break };
                    r_roll += 1;
                    if ep.success() {
                        routed_ok += 1;
                    }
                    to_save.push((ep, self.ctx(it, Phase::Rank1, split)));
                }
                let Some(again) = seconds.next() else { break };
                b_roll += 1;
                if again.success() {
                    base_ok += 1;
                }
            }
            let n = idx.len().max(1) as f64;
            out.push(RankOne {
                split: split.into(),
                routed: routed_ok as f64 / n,
                base_only: base_ok as f64 / n,
                rollouts_routed: r_roll,
                rollouts_base_only: b_roll,
            });
        }
        self.save(&to_save)?;
        Ok(out)
    }
}

pub(super) fn last_point<'a>(st: &'a JobState, split: &str) -> Option<&'a EvalPoint> {
    st.curve.iter().rev().find(|p| p.split == split)
}
