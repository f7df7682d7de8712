//! One training iteration: the batch's base tries, GRPO groups, and for each all-fail task the
//! arm's rescue (routed, random or every sibling, or more base tries), distilled into the batch.

use super::*;
use crate::arm::Rescue;

impl Job<'_> {
    /// One training iteration; `Ok(false)` if it was cancelled part-way.
    pub(super) fn iteration(&self, it: usize, st: &mut JobState) -> Result<bool, JobError> {
        let cfg = self.sh.cfg;
        let b = &cfg.budget;
        let mut order = self.su.train.clone();
        // the same batch for every arm of this seed
        shuffle(&mut order, mix(&[self.seed, it as u64, 0xba7c4]));
        let batch: Vec<usize> = order.into_iter().take(b.batch_tasks.min(self.su.train.len())).collect();
        let tasks: Vec<&Task> = batch.iter().map(|&t| &self.su.tasks[t]).collect();
        let mut examples: Vec<TrainSequence> = Vec::new();
        let mut to_save: Vec<(Episode, EpisodeContext)> = Vec::new();
        let mut successes = 0usize;
        let mut tries = 0usize;
        let temp = cfg.policy.temperature;
        // Every task's base tries at once (they depend on the policy alone), then every all-fail
        // task's extra tries at once (they depend on the base tries), then the groups in batch
        // order: the episodes are the ones a task-by-task loop would run, and so are the results.
        self.progress.enter("rollouts", it, batch.len());
        let n = b.base_tries.max(1);
        let wants: Vec<Want> = tasks
            .iter()
            .flat_map(|&task| {
                let tseed = hash_str(&task.id);
                (0..b.base_tries as u32).map(move |k| Want::kept(task, &self.su.base, k, mix(&[self.seed, it as u64, tseed, k as u64]), temp))
            })
            .collect();
        let mut any_ok = false;
        let done_base = |i: usize, ep: &Episode| {
            any_ok |= ep.success();
            if (i + 1).is_multiple_of(n) {
                self.progress.task(!any_ok);
                any_ok = false;
                self.progress.step((i + 1) / n);
            }
        };
        let Some(base) = self.rollouts(&wants, true, done_base)? else { return Ok(false) };
        let mut base = base.into_iter();
        let groups: Vec<Vec<Episode>> = tasks.iter().map(|_| base.by_ref().take(b.base_tries).collect()).collect();
        // what each all-fail task gets: extra base tries or a rescue plan, and its share of `extra`
        let resample = (b.rescue_siblings * b.rescue_tries) as u32;
        let mut plans: Vec<Option<RescuePlan>> = Vec::new();
        let mut extra_wants: Vec<Want> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        for (i, (&task, group)) in tasks.iter().zip(&groups).enumerate() {
            let before = extra_wants.len();
            let mut plan = None;
            if !group.iter().any(|e| e.success()) {
                let tseed = hash_str(&task.id);
                match self.kind.rescue() {
                    Rescue::Nothing => {}
                    Rescue::BaseTries => extra_wants.extend((0..resample).map(|k| {
                        Want::kept(task, &self.su.base, b.base_tries as u32 + k, mix(&[self.seed, it as u64, tseed, 0x7e5a, k as u64]), temp)
                    })),
                    _ => {
                        let p = self.plan_rescue(it, task, group, st);
                        extra_wants.extend(p.wants(self, it, task));
                        plan = Some(p);
                    }
                }
            }
            owner.extend(std::iter::repeat_n(i, extra_wants.len() - before));
            plans.push(plan);
        }
        let mut extra = Vec::new().into_iter();
        if !extra_wants.is_empty() {
            self.progress.enter("rescues", it, batch.len());
            let Some(eps) = self.rollouts(&extra_wants, true, |i, _| self.progress.step(owner[i]))? else { return Ok(false) };
            extra = eps.into_iter();
        }
        for (i, (&task, mut group)) in tasks.iter().zip(groups).enumerate() {
            st.rollouts.base += group.len() as u64;
            successes += group.iter().filter(|e| e.success()).count();
            tries += group.len();
            let any = group.iter().any(|e| e.success());
            let group_id = task_record_key(&self.suite_name, self.arm(), self.seed_index, it, &task.id);
            if any {
                grpo(&group, task, &group_id, to_save.len(), &mut examples);
                for e in group {
                    to_save.push((e, self.ctx(it, Phase::Train, TRAIN_SPLIT)));
                }
                continue;
            }
            st.all_fail_tasks += 1;
            let mine: Vec<Episode> = extra.by_ref().take(owner.iter().filter(|&&o| o == i).count()).collect();
            match self.kind.rescue() {
                Rescue::Nothing => {}
                Rescue::BaseTries => {
                    st.rollouts.resample += mine.len() as u64;
                    if mine.iter().any(|e| e.success()) {
                        st.rescued_tasks += 1;
                    }
                    let mut all = std::mem::take(&mut group);
                    let first_extra = all.len();
                    all.extend(mine);
                    grpo(&all, task, &group_id, to_save.len(), &mut examples);
                    for (i, e) in all.into_iter().enumerate() {
                        to_save.push((e, self.ctx(it, if i < first_extra { Phase::Train } else { Phase::Resample }, TRAIN_SPLIT)));
                    }
                    continue;
                }
                _ => {
                    let plan = plans[i].take().ok_or_else(|| JobError::Setup(format!("no rescue plan for task `{}`", task.id)))?;
                    if self.rescue(it, task, &group_id, (&group, to_save.len()), plan, mine, st, &mut examples)? {
                        st.rescued_tasks += 1;
                    }
                }
            }
            for e in group {
                to_save.push((e, self.ctx(it, Phase::Train, TRAIN_SPLIT)));
            }
        }
        self.progress.enter("update", it, 0);
        let ids = self.save(&to_save)?;
        for seq in &mut examples {
            if let Some(StepsRef::Unsaved { index }) = seq.steps_ref {
                seq.steps_ref = ids.get(index).map(|&id| StepsRef::Episode { id });
            }
        }
        if !examples.is_empty() {
            self.record_batch(it, &examples)?;
            self.learner.update(&examples, &self.meta(it)).map_err(JobError::Learner)?;
            crate::fault::point("update");
        }
        st.train_success.push(if tries > 0 { successes as f64 / tries as f64 } else { 0.0 });
        Ok(true)
    }

    /// Which siblings an all-fail task tries, and how often, by the arm's [`Rescue`]: the
    /// router's choice, k random siblings, or every sibling in turn.
    fn plan_rescue(&self, it: usize, task: &Task, failed: &[Episode], st: &JobState) -> RescuePlan {
        let b = &self.sh.cfg.budget;
        let tseed = hash_str(&task.id);
        let mut rng = SplitMix(mix(&[self.seed, it as u64, tseed, 0x20e7e]));
        let signature = failure_signature(&failed[0]);
        let query =
            RouteQuery { task_id: task.id.clone(), family: task.family.clone(), signature: signature.clone(), summary: failure_summary(&failed[0]) };
        let sib_names: Vec<String> = self.su.siblings.iter().map(|s| s.name.clone()).collect();
        let mut decision = None;
        // (sibling, tries)
        let tries = self.kind.rescue().siblings(&sib_names, b.rescue_siblings, b.rescue_tries, &mut rng, |rng| {
            let d = self.sh.router.route(&query, &st.profiles, b.rescue_siblings, rng);
            let chosen = d.chosen.clone();
            decision = Some(d);
            chosen
        });
        RescuePlan { query, tries, decision }
    }

    /// Distil the successes among an all-fail task's sibling tries (`episodes`, in the plan's
    /// order) and record the routing decision. Returns whether any sibling rescued the task.
    #[allow(clippy::too_many_arguments)]
    fn rescue(
        &self,
        it: usize,
        task: &Task,
        group_id: &str,
        // the failed base tries, and where the first of them will be in the iteration's save list
        (failed, first): (&[Episode], usize),
        plan: RescuePlan,
        episodes: Vec<Episode>,
        st: &mut JobState,
        examples: &mut Vec<TrainSequence>,
    ) -> Result<bool, JobError> {
        let distill = self.sh.cfg.distill.for_suite(&self.suite_name);
        let RescuePlan { query, tries: plan, decision } = plan;
        let mode =
            if self.kind.spec().keeps_scaffold { DistillMode::KeepScaffold } else { DistillMode::parse(&distill.mode).unwrap_or(DistillMode::Strip) };
        let mut any = false;
        let mut rescued_by: Vec<(String, bool)> = Vec::new();
        // each successful try's distilled steps, in the context of the harness they were distilled to
        let mut rescues: Vec<(crate::suite::Solution, String, StepsRef)> = Vec::new();
        let mut k = 0u64;
        let mut episodes = episodes.into_iter();
        for (sib, tries) in &plan {
            if !self.su.siblings.iter().any(|s| &s.name == sib) {
                continue;
            }
            let mut ok = false;
            for _ in 0..*tries {
                let Some(ep) = episodes.next() else { break };
                k += 1;
                st.rollouts.rescue += 1;
                let success = ep.success();
                let mut distilled = None;
                if success {
                    ok = true;
                    let d = distil(mode, &ep, &self.su.base, self.su.suite.as_ref(), task, distill.weight)
                        .map_err(|source| JobError::Distil { task: task.id.clone(), source })?;
                    let key = format!("{}/{k}", task_record_key(&self.suite_name, self.arm(), self.seed_index, it, &task.id));
                    let steps = d.examples.iter().map(|x| (x.context.clone(), x.target.clone())).collect();
                    rescues.push((steps, d.to_harness.clone(), StepsRef::Distilled { key: key.clone() }));
                    distilled = Some((d, key));
                }
                let ids = self.save(&[(ep, self.ctx(it, Phase::Rescue, TRAIN_SPLIT))])?;
                if let (Some((d, key)), Some(id)) = (distilled, ids.first()) {
                    let body = serde_json::json!({"rescue_episode": id, "task_id": task.id, "arm": self.arm(), "seed_index": self.seed_index, "iteration": it, "sibling": sib, "distilled": d});
                    self.sh.store.put_record(self.sh.run_id, "distilled", &key, &body)?;
                }
            }
            any |= ok;
            rescued_by.push((sib.clone(), ok));
        }
        let w = distill.weight;
        let distilled = |steps, harness: &str, adv, at| {
            TrainSequence::new(&task.id, &task.family, group_id, 1.0, adv, w, Source::RescueDistilled, harness, steps).stored_at(at)
        };
        if distill.objective == "sft" {
            examples.extend(rescues.into_iter().map(|(steps, harness, at)| distilled(steps, &harness, 1.0, at)));
        } else if !rescues.is_empty() {
            // LUFFY-style: the rescues join the failed group as off-policy successes
            let failed: Vec<(usize, &Episode)> = failed.iter().enumerate().filter(|(_, e)| e.counts()).collect();
            let rewards: Vec<f64> = failed.iter().map(|_| 0.0).chain(rescues.iter().map(|_| 1.0)).collect();
            let adv = group_advantages(&rewards);
            for ((i, e), a) in failed.iter().zip(&adv) {
                push_episode(e, task, group_id, *a, first + i, examples);
            }
            for ((steps, harness, at), a) in rescues.into_iter().zip(&adv[failed.len()..]) {
                examples.push(distilled(steps, &harness, *a, at));
            }
        }
        let decision = match decision {
            Some(mut d) => {
                d.rescued = rescued_by;
                d
            }
            // arms without a router: which siblings were tried, and whether they rescued
            None => RoutingDecision {
                query,
                anchor: st.anchor,
                policy_version: self.learner.version(),
                rankings: Vec::new(),
                aggregate: Vec::new(),
                chosen: plan.iter().map(|p| p.0.clone()).collect(),
                rescued: rescued_by,
                abstained: Vec::new(),
            },
        };
        let key = task_record_key(&self.suite_name, self.arm(), self.seed_index, it, &task.id);
        let body = RouteRecord::body(&decision, self.arm(), self.seed_index, it)
            .map_err(|source| JobError::Encode { what: "a routing decision", source })?;
        self.sh.store.put_record(self.sh.run_id, "route", &key, &body)?;
        Ok(any)
    }
}

/// An all-fail task's rescue: the query the router saw, the siblings with their tries, and the
/// router's decision (arms with a router).
struct RescuePlan {
    query: RouteQuery,
    tries: Vec<(String, usize)>,
    decision: Option<RoutingDecision>,
}

impl RescuePlan {
    /// The sibling tries, in the plan's order (a sibling the suite does not have is skipped).
    pub(super) fn wants<'t>(&self, job: &'t Job<'_>, it: usize, task: &'t Task) -> Vec<Want<'t>> {
        let tseed = hash_str(&task.id);
        let mut k = 0u64;
        let mut out = Vec::new();
        for (sib, tries) in &self.tries {
            let Some(spec) = job.su.siblings.iter().find(|s| &s.name == sib) else { continue };
            for _ in 0..*tries {
                out.push(Want::kept(task, spec, 100 + k as u32, mix(&[job.seed, it as u64, tseed, 0x5e5c, k]), job.sh.cfg.policy.temperature));
                k += 1;
            }
        }
        out
    }
}

/// Group-relative advantages `(r - mean) / std`; all zero when the group has no spread.
fn group_advantages(r: &[f64]) -> Vec<f32> {
    let m = mean(r);
    let var = r.iter().map(|x| (x - m).powi(2)).sum::<f64>() / r.len().max(1) as f64;
    let sd = var.sqrt();
    if sd < 1e-9 {
        return vec![0.0; r.len()];
    }
    r.iter().map(|x| ((x - m) / sd) as f32).collect()
}

/// The steps of `e` the update trains on: those that made a call.
pub(crate) fn episode_steps(e: &Episode) -> Vec<(Context, AssistantTurn)> {
    e.steps.iter().filter(|s| !s.output.tool_calls.is_empty()).map(|s| (s.context.clone(), s.output.clone())).collect()
}

/// The steps of `e` that made a call, as a rollout sequence of advantage `adv` (none when the
/// advantage is zero: it would teach nothing); `index` is the episode's place in the iteration's
/// save list.
fn push_episode(e: &Episode, task: &Task, group_id: &str, adv: f32, index: usize, out: &mut Vec<TrainSequence>) {
    if adv == 0.0 {
        return;
    }
    let seq = TrainSequence::new(&task.id, &task.family, group_id, e.reward(), adv, 1.0, Source::Rollout, &e.harness, episode_steps(e));
    out.push(seq.stored_at(StepsRef::Unsaved { index }));
}

/// GRPO: group-relative advantages for every step of every episode (infrastructure failures
/// excluded); the group is saved from position `first` of the iteration's save list.
fn grpo(group: &[Episode], task: &Task, group_id: &str, first: usize, out: &mut Vec<TrainSequence>) {
    for (i, a) in group_members(group) {
        push_episode(&group[i], task, group_id, a, first + i, out);
    }
}

/// A GRPO group's members — the tries that count ([`Episode::counts`]: all but infrastructure
/// errors and cancelled tries) — by their index in `group`, with their group-relative advantages.
pub fn group_members(group: &[Episode]) -> Vec<(usize, f32)> {
    let members: Vec<usize> = (0..group.len()).filter(|&i| group[i].counts()).collect();
    let rewards: Vec<f64> = members.iter().map(|&i| group[i].reward()).collect();
    members.into_iter().zip(group_advantages(&rewards)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::batch::{flatten, lines, BatchLine};
    use crate::harness::HarnessLibrary;
    use crate::message::{Origin, Role};
    use crate::suite::Suite;

    struct Bench {
        suite: Box<dyn Suite>,
        tasks: Vec<Task>,
        lib: HarnessLibrary,
        policy: BuiltinPolicy,
    }

    fn bench() -> Bench {
        let suite = crate::suite::by_name("dbbench").unwrap();
        let tasks = suite.bundled_tasks().unwrap();
        let policy = BuiltinPolicy::new(suite.grammar().unwrap());
        let lib = HarnessLibrary::builtin().unwrap();
        // warm-started as the runner does, so that groups have spread
        let base = lib.get("dbbench", "base").unwrap().spec.clone();
        let demos: Vec<crate::policy::builtin::TrainExample> = tasks
            .iter()
            .step_by(7)
            .take(30)
            .filter_map(|t| crate::search::solve_with(suite.as_ref(), &base, t, 1500, false).0)
            .flatten()
            .map(|(context, target)| crate::policy::builtin::TrainExample { context, target, weight: 1.0 })
            .collect();
        for _ in 0..20 {
            policy.train_decayed(&demos, 2.0, crate::policy::builtin::WEIGHT_DECAY);
        }
        Bench { suite, tasks, lib, policy }
    }

    fn episode(b: &Bench, task: &Task, harness: &HarnessSpec, seed: u64) -> Episode {
        run_episode(&EpisodeRequest { suite: b.suite.as_ref(), harness, task, policy: &b.policy, sample: 0, seed, temperature: 1.0, cancel: None })
    }

    fn meta() -> BatchMeta {
        BatchMeta { arm: "harness-s".into(), seed: 1, iteration: 3, policy_version: 2 }
    }

    #[test]
    fn batch_lines_carry_the_advantages_the_built_in_learner_trains_with() {
        let b = bench();
        let base = b.lib.get("dbbench", "base").unwrap().spec.clone();
        // groups of real rollouts, some with spread
        let mut checked = 0;
        for task in b.tasks.iter().take(40) {
            let group: Vec<Episode> = (0..4).map(|k| episode(&b, task, &base, 100 + k)).collect();
            let mut batch = Vec::new();
            grpo(&group, task, "g", 0, &mut batch);
            let rewards: Vec<f64> = group.iter().map(|e| e.reward()).collect();
            let adv = group_advantages(&rewards);
            // one sequence per episode with a non-zero advantage, in the group's order
            let expected: Vec<f32> = adv
                .iter()
                .zip(&group)
                .filter(|(a, e)| **a != 0.0 && e.steps.iter().any(|s| !s.output.tool_calls.is_empty()))
                .map(|(a, _)| *a)
                .collect();
            let got: Vec<f32> = batch.iter().map(|s| s.info.advantage).collect();
            assert_eq!(got, expected, "{}", task.id);
            // the built-in learner's example weights are the lines' weight × advantage
            let examples = flatten(&batch);
            let ls: Vec<BatchLine> = lines(&batch, &meta());
            let mut k = 0;
            for l in &ls {
                let targets = l.messages.iter().filter(|m| m["role"] == "assistant" && m["weight"] == 1).count();
                for _ in 0..targets {
                    assert_eq!(examples[k].weight, l.info.weight * l.info.advantage);
                    k += 1;
                }
                assert_eq!(l.messages.last().unwrap()["weight"], 1, "a line ends with a target");
                assert_eq!(l.info.source, Source::Rollout);
                assert_eq!((l.meta.arm.as_str(), l.meta.seed, l.meta.iteration, l.meta.policy_version), ("harness-s", 1, 3, 2));
            }
            assert_eq!(k, examples.len(), "every trained step is a target in exactly one line");
            checked += ls.len();
        }
        assert!(checked > 0, "some groups had spread");
    }

    #[test]
    fn a_strip_mode_sequence_holds_no_text_only_the_sibling_added() {
        let b = bench();
        let base = b.lib.get("dbbench", "base").unwrap().spec.clone();
        let mut compared = 0;
        for sib in b.lib.siblings("dbbench", "base") {
            for task in b.tasks.iter().take(12) {
                let rescue = episode(&b, task, &sib.spec, 7);
                let under_base = episode(&b, task, &base, 7);
                // text a sibling hook put into the policy's context, and that the base harness never shows
                let base_text: String = under_base.steps.iter().flat_map(|s| s.context.messages.iter().map(|m| m.content.clone())).collect();
                let sibling_only: Vec<String> = rescue
                    .steps
                    .iter()
                    .flat_map(|s| s.context.messages.iter())
                    .filter(|m| matches!(m.origin, Origin::Hook { .. }) && m.role != Role::Assistant && m.content.len() > 12)
                    .map(|m| m.content.clone())
                    .filter(|c| !base_text.contains(c.as_str()))
                    .collect();
                if sibling_only.is_empty() {
                    continue;
                }
                let d = crate::distil::distil(DistillMode::Strip, &rescue, &base, b.suite.as_ref(), task, 1.0).unwrap();
                assert_eq!(d.to_harness, "base");
                let seq = TrainSequence::new(
                    &task.id,
                    &task.family,
                    "g",
                    1.0,
                    1.0,
                    1.0,
                    Source::RescueDistilled,
                    &d.to_harness,
                    d.examples.iter().map(|x| (x.context.clone(), x.target.clone())),
                );
                for l in lines(&[seq], &meta()) {
                    assert_eq!(l.info.harness, "base");
                    let text = serde_json::to_string(&l.messages).unwrap();
                    for s in &sibling_only {
                        let s_json = serde_json::to_string(s).unwrap();
                        assert!(!text.contains(s_json.trim_matches('"')), "{} under {}: the line keeps sibling text {s:?}", task.id, sib.spec.name);
                    }
                    compared += 1;
                }
            }
        }
        assert!(compared > 0, "some sibling added text of its own");
    }

    #[test]
    fn a_rescue_joined_to_a_failed_group_is_pushed_up_and_the_failures_down() {
        // four failed base tries and one rescue: the group objective's rewards
        let a = group_advantages(&[0.0, 0.0, 0.0, 0.0, 1.0]);
        assert!(a[4] > 0.0 && a[..4].iter().all(|&x| x < 0.0), "{a:?}");
        assert!(a.iter().sum::<f32>().abs() < 1e-5, "advantages are centred: {a:?}");
        // steps a failure shares with the rescue cancel: 4 failures at -0.5 against one rescue at 2
        assert!((a[4] + 4.0 * a[0]).abs() < 1e-5);
        // a group without spread teaches nothing
        assert_eq!(group_advantages(&[0.0, 0.0, 0.0]), vec![0.0; 3]);
        assert_eq!(group_advantages(&[1.0, 1.0]), vec![0.0; 2]);
    }
}
