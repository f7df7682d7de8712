//! Episodes: pages of rows, one trajectory, and a rescue beside the base failure it answered.

use super::*;

fn episode_row(r: &EpisodeRow) -> api::EpisodeRow {
    api::EpisodeRow { rescued: r.context.phase.as_deref() == Some("rescue") && r.success, row: r.clone() }
}

/// For the built-in policy, mark each distilled example with whether its grammar can produce the
/// target from the base context: the ones it cannot (they relied on what only the sibling
/// showed) are skipped in training, and the inspector says so.
fn mark_producible(policy: &str, suite: &str, mut distilled: Value) -> Value {
    let Some(grammar) = suite::by_name(suite).and_then(|s| s.grammar()).filter(|_| policy == crate::policy::Backend::Builtin.as_str()) else {
        return distilled;
    };
    if let Some(examples) = distilled.get_mut("examples").and_then(Value::as_array_mut) {
        for ex in examples.iter_mut() {
            let parsed: Option<crate::policy::builtin::TrainExample> = serde_json::from_value(ex.clone()).ok();
            if let (Some(t), Some(o)) = (parsed, ex.as_object_mut()) {
                o.insert("producible".into(), Value::Bool(crate::grammar::can_produce(grammar.as_ref(), &t.context, &t.target)));
            }
        }
    }
    distilled
}

impl Workbench {
    pub(in crate::workbench) fn episodes(&self, a: commands::EpisodesArgs) -> Result<api::EpisodePage, CommandError> {
        let mut f = EpisodeFilter::run(a.run_id);
        f.suite = a.suite;
        f.arm = a.arm;
        f.family = a.family;
        f.harness = a.harness;
        f.phase = a.phase;
        f.split = a.split;
        f.task_id = a.task_id;
        f.success = a.success;
        f.text = a.text;
        // Rescued: a successful sibling rollout; not rescued: a sibling rollout that failed.
        if let Some(rescued) = a.rescued {
            if f.phase.as_deref().is_some_and(|p| p != "rescue") {
                return Err(CommandError::BadArguments(format!(
                    "episodes: `rescued` selects rescue rollouts, but `phase` is `{}`",
                    f.phase.unwrap_or_default()
                )));
            }
            f.phase = Some("rescue".into());
            if f.success.is_some_and(|s| s != rescued) {
                return Err(CommandError::BadArguments("episodes: `rescued` and `success` contradict each other".into()));
            }
            f.success = Some(rescued);
        }
        let limit = a.limit.unwrap_or(100).clamp(1, 1000);
        let offset = a.offset.unwrap_or(0).max(0);
        f.limit = Some(limit as u32);
        f.offset = Some(offset as u32);
        let (total, rows) = self.store.episode_page(&f)?;
        Ok(api::EpisodePage { total, offset: offset as u64, rows: rows.iter().map(episode_row).collect() })
    }

    pub(in crate::workbench) fn episode(&self, id: i64) -> Result<api::EpisodeRecord, CommandError> {
        let row = self.store.episode_row(id)?.ok_or_else(|| CommandError::NotFound(format!("no episode {id}")))?;
        // A trajectory of the current schema is sent as stored: the same JSON as the episode
        // serialised, without building it (a long episode's contexts); an older one is upgraded.
        let episode = match self.store.episode_json(id)? {
            Some(v) if v["schema"].as_u64() == Some(u64::from(crate::episode::TRAJECTORY_SCHEMA)) => v,
            _ => {
                let ep = self.store.episode(id)?.ok_or_else(|| CommandError::NotFound(format!("no episode {id}")))?;
                serde_json::to_value(&ep).map_err(|e| CommandError::Internal(format!("encoding episode {id}: {e}")))?
            }
        };
        Ok(api::EpisodeRecord { id, run_id: row.run_id, row: episode_row(&row), episode })
    }

    /// The three sides of a rescue: the base failures, the sibling's success, the distilled
    /// base-context example.
    pub(in crate::workbench) fn rescue(&self, id: i64) -> Result<api::Rescue, CommandError> {
        let row = self.store.episode_row(id)?.ok_or_else(|| CommandError::NotFound(format!("no episode {id}")))?;
        let c = &row.context;
        let (Some(arm), Some(seed), Some(it)) = (c.arm.as_deref(), c.seed_index, c.iteration) else {
            return Err(CommandError::NotFound(format!("episode {id} is not part of an experiment's training")));
        };
        let key = crate::experiment::task_record_key(&row.suite, arm, seed, it, &row.task_id);
        let prefix = format!("{key}/");
        let records = self.store.records_with_prefix(row.run_id, "distilled", &prefix)?;
        let pick = records.iter().find(|(_, v)| v["rescue_episode"].as_i64() == Some(id)).or_else(|| records.first());
        let Some((_, rec)) = pick else {
            return Err(CommandError::NotFound(format!(
                "task `{}` was not rescued in iteration {it} of {arm} seed {seed} (episode {id})",
                row.task_id
            )));
        };
        let mut f = EpisodeFilter::run(row.run_id);
        f.task_id = Some(row.task_id.clone());
        f.arm = Some(arm.to_string());
        f.seed_index = Some(seed);
        f.iteration = Some(it);
        f.phase = Some("train".into());
        f.suite = Some(row.suite.clone());
        let base: Vec<i64> = self.store.episode_rows(&f)?.into_iter().filter(|r| !r.success).map(|r| r.id).collect();
        let mut rf = f.clone();
        rf.phase = Some("rescue".into());
        let attempts: Vec<api::Attempt> =
            self.store.episode_rows(&rf)?.iter().map(|r| api::Attempt { id: r.id, harness: r.harness.clone(), success: r.success }).collect();
        // the routing decision that chose the siblings (routed arms; null for random choices)
        let route = self.store.record(row.run_id, "route", &key)?.filter(|r| r["rankings"].as_array().is_some_and(|a| !a.is_empty()));
        Ok(api::Rescue {
            task_id: row.task_id.clone(),
            suite: row.suite.clone(),
            family: row.family.clone(),
            arm: arm.to_string(),
            seed_index: seed,
            iteration: it,
            sibling: rec["sibling"].as_str().unwrap_or_default().to_string(),
            base_failures: base,
            rescue: rec["rescue_episode"].as_i64(),
            attempts,
            distilled: mark_producible(&row.policy, &row.suite, rec["distilled"].clone()),
            route,
        })
    }
}
