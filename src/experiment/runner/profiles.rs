//! Behaviour profiles: each sibling's tries on the probe set's base failures, measured at the
//! start and every `reanchor_every` iterations, and stored for the router.

use super::*;

impl Job<'_> {
    /// Paired base-vs-sibling rollouts of the current policy on the probe set.
    pub(super) fn measure_profiles(&self, it: usize, anchor: usize, rollouts: &mut Rollouts) -> Result<Vec<BehaviorProfile>, JobError> {
        let cfg = self.sh.cfg;
        let mut probe = self.su.train.clone();
        shuffle(&mut probe, mix(&[self.seed, 0x970be]));
        probe.truncate(cfg.budget.probe_tasks.min(probe.len()));
        let version = self.learner.version();
        let mut profiles: Vec<BehaviorProfile> = self
            .su
            .siblings
            .iter()
            .map(|s| BehaviorProfile {
                sibling: s.name.clone(),
                specialty: s.specialty.clone().unwrap_or_default(),
                policy_version: version,
                anchor,
                ..Default::default()
            })
            .collect();
        self.progress.enter("probing", it, probe.len());
        // per probe task: the base try, then each sibling's, all with the same seed
        let per = 1 + self.su.siblings.len();
        let wants: Vec<Want> = probe
            .iter()
            .flat_map(|&t| {
                let task = &self.su.tasks[t];
                let sd = mix(&[self.seed, anchor as u64, hash_str(&task.id), 0x9b0]);
                std::iter::once(&self.su.base).chain(&self.su.siblings).map(move |h| Want::kept(task, h, 0, sd, cfg.policy.temperature))
            })
            .collect();
        let episodes = self.rollouts(&wants, false, |i, _| self.progress.step(i / per))?.unwrap_or_default();
        let mut episodes = episodes.into_iter();
        let mut to_save = Vec::new();
        for &t in &probe {
            let task = &self.su.tasks[t];
            let Some(base) = episodes.next() else { break };
            rollouts.probe += 1;
            let sig = failure_signature(&base);
            for profile in profiles.iter_mut() {
                let Some(ep) = episodes.next() else { break };
                rollouts.probe += 1;
                profile.record(&task.family, &sig, base.success(), ep.success());
                to_save.push((ep, self.ctx(it, Phase::Probe, TRAIN_SPLIT)));
            }
            to_save.push((base, self.ctx(it, Phase::Probe, TRAIN_SPLIT)));
        }
        self.save(&to_save)?;
        for p in &mut profiles {
            p.summarise();
            let key = profile_key(&self.suite_name, self.arm(), self.seed_index, anchor, &p.sibling);
            let body =
                ProfileRecord::body(p, self.arm(), self.seed_index, it).map_err(|source| JobError::Encode { what: "a behaviour profile", source })?;
            self.sh.store.put_record(self.sh.run_id, "profile", &key, &body)?;
        }
        Ok(profiles)
    }
}
