//! The warm start: demonstrations found by the grammar search on training tasks under the base
//! harness's frame, searched once per seed and shared by every arm, and the first update on them.

use super::*;

impl Job<'_> {
    /// Demonstrations: solving action sequences found by searching the policy's grammar on
    /// training tasks under the base harness's frame, at most `warm_start_demos` of them. They
    /// depend only on the seed, so they are searched once per seed and shared by every arm.
    pub(super) fn warm_start(&self, st: &mut JobState) -> Result<(), JobError> {
        let cfg = self.sh.cfg;
        let want = cfg.policy.warm_start_demos;
        if want == 0 {
            return Ok(());
        }
        self.progress.enter("demonstrations", 0, want);
        let clock = self.progress.demonstrations_start();
        let found = self.demonstrations(want);
        self.progress.demonstrations_end(clock, &self.demos_key(), found.as_ref().is_ok_and(|f| f.1));
        let (demos, _) = found?;
        let base = &self.su.base.name;
        // a search may leave the tool specs out of its contexts (a grammar reads messages only);
        // a trained model sees them, as it does in its rollouts
        let tools = self.su.base.offered_tools(self.su.suite.tools());
        let traces = self.learner.reads_decision_traces();
        let key = self.demos_key();
        let sequences: Vec<TrainSequence> = demos
            .iter()
            .enumerate()
            .map(|(index, d)| {
                let (id, family) = (&d.task_id, self.family_of(&d.task_id));
                let steps = demonstration_steps(d, &tools, traces);
                TrainSequence::new(id, family, &format!("warm-start/{id}"), 1.0, 1.0, 1.0, Source::WarmStart, base, steps)
                    .stored_at(StepsRef::Demonstration { key: key.clone(), index })
            })
            .collect();
        st.rollouts.demo += demos.len() as u64;
        self.record_batch(0, &sequences)?;
        self.learner.warm_start(&sequences, &self.meta(0)).map_err(JobError::Learner)?;
        Ok(())
    }

    fn demos_key(&self) -> String {
        format!("demos/{}/{}", self.suite_name, self.seed)
    }

    /// Store which sequences the update of iteration `it` learns from (a `batch` record), so
    /// that `harness-s export` can write the batch again.
    pub(super) fn record_batch(&self, it: usize, batch: &[TrainSequence]) -> Result<(), JobError> {
        let manifest = BatchManifest {
            suite: self.suite_name.clone(),
            seed_index: self.seed_index,
            meta: self.meta(it),
            sequences: batch.iter().filter_map(TrainSequence::reference).collect(),
            base_tools: if batch.iter().any(|s| s.info.source == Source::WarmStart) {
                self.su.base.offered_tools(self.su.suite.tools())
            } else {
                Vec::new()
            },
        };
        let body = encode("a batch manifest", &manifest)?;
        let key = format!("{}/{}/{}/{it}", self.suite_name, self.arm(), self.seed_index);
        Ok(self.sh.store.put_record(self.sh.run_id, "batch", &key, &body)?)
    }

    /// The seed's demonstrations, and whether this job searched them (rather than found them stored).
    fn demonstrations(&self, want: usize) -> Result<(Vec<Demonstration>, bool), JobError> {
        let key = self.demos_key();
        // one search per seed, whichever arm gets there first
        let _guard = self.sh.demo_locks[self.seed_index].lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = self.sh.store.state(self.sh.run_id, &key)? {
            // runs of earlier versions stored the bare solutions
            if let Ok(bare) = serde_json::from_value::<Vec<crate::suite::Solution>>(v.clone()) {
                return Ok((bare.into_iter().map(|steps| Demonstration { task_id: String::new(), steps }).collect(), false));
            }
            return Ok((crate::records::parse("demonstrations", &key, v)?, false));
        }
        let mut order = self.su.train.clone();
        shuffle(&mut order, mix(&[self.seed, 0xde305]));
        let mut demos = Vec::new();
        for &t in order.iter().take(want * 3) {
            if demos.len() >= want {
                break;
            }
            let task = &self.su.tasks[t];
            if let (Some(steps), _) = crate::search::solve_with(self.su.suite.as_ref(), &self.su.base, task, 1500, false) {
                demos.push(Demonstration { task_id: task.id.clone(), steps });
                self.progress.step_now(demos.len());
            }
        }
        let v = encode("demonstrations", &demos)?;
        self.sh.store.set_state(self.sh.run_id, &key, &v)?;
        Ok((demos, true))
    }
}

/// A demonstration's steps as a learner sees them: with the base harness's tool specs where the
/// search left them out (a grammar reads messages only; a model sees the tools, as in its
/// rollouts), and without the grammar's decision trace unless the learner reads it (the next
/// step's context shows the call without it).
pub(crate) fn demonstration_steps(d: &Demonstration, tools: &[ToolSpec], traces: bool) -> Vec<(Context, AssistantTurn)> {
    d.steps
        .iter()
        .cloned()
        .map(|(mut c, mut t)| {
            if c.tools.is_empty() {
                c.tools = tools.to_vec();
            }
            if !traces {
                t.content.clear();
                t.raw.clear();
            }
            (c, t)
        })
        .collect()
}
