//! Experiments: the run list with each run's headline, one run's detail, and its results.

use super::*;

fn experiment_row(r: &RunRow, headlines: Headlines) -> api::ExperimentRow {
    api::ExperimentRow {
        headline: headlines.headline,
        pooled: headlines.pooled,
        id: r.id,
        name: r.name.clone(),
        status: r.status.as_str().to_string(),
        created_at: r.created_at.clone(),
        finished_at: r.finished_at.clone(),
        suites: r.suite.as_deref().map(|s| s.split(',').filter(|x| !x.is_empty()).map(String::from).collect()).unwrap_or_default(),
        policy: r.policy.clone().map(Value::String).unwrap_or(Value::Null),
        summary: r.summary.clone().unwrap_or(Value::Null),
    }
}

impl Workbench {
    pub(in crate::workbench) fn experiments(&self) -> Result<Vec<api::ExperimentRow>, CommandError> {
        let mut runs: Vec<RunRow> = self.store.runs()?.into_iter().filter(|r| r.kind == KIND_EXPERIMENT).collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.id));
        // the newest finished run's results page is the likeliest next: its report is made meanwhile
        if let Some(r) = runs.iter().find(|r| r.status == RunStatus::Finished) {
            self.reports.warm(r.id);
        }
        Ok(runs.iter().map(|r| experiment_row(r, self.run_headlines(r))).collect::<Vec<_>>())
    }

    /// A run's headline numbers from the analysis ([`crate::analysis::headlines`]); a finished
    /// run's cannot change, so they are kept. A run whose records cannot be analysed is listed
    /// without them (its results page says why) rather than hiding every other run.
    fn run_headlines(&self, r: &RunRow) -> Headlines {
        if let Some(h) = self.headlines.lock().unwrap_or_else(|p| p.into_inner()).get(&r.id) {
            return h.clone();
        }
        match crate::analysis::headlines(&self.store, r.id) {
            Ok(h) => {
                if r.status == RunStatus::Finished {
                    self.headlines.lock().unwrap_or_else(|p| p.into_inner()).insert(r.id, h.clone());
                }
                h
            }
            Err(e) => {
                tracing::warn!("run {}: no headline ({e})", r.id);
                Headlines::default()
            }
        }
    }

    fn experiment_run(&self, id: i64) -> Result<RunRow, CommandError> {
        match self.store.run(id)? {
            Some(r) if r.kind == KIND_EXPERIMENT => Ok(r),
            Some(r) => Err(CommandError::NotFound(format!("run {id} is a `{}` run, not an experiment", r.kind))),
            None => Err(CommandError::NotFound(format!("no experiment run {id}"))),
        }
    }

    pub(in crate::workbench) fn experiment(&self, id: i64) -> Result<api::ExperimentDetail, CommandError> {
        let r = self.experiment_run(id)?;
        let toml = crate::workbench::jobs::render_toml(&r.config).unwrap_or_default();
        Ok(api::ExperimentDetail { run: experiment_row(&r, self.run_headlines(&r)), config: r.config.clone(), config_toml: toml })
    }

    pub(super) fn bundle(&self, id: i64, other: Option<i64>) -> Result<ReportBundle, CommandError> {
        let other_s = other.map(|o| o.to_string());
        ReportBundle::build(&self.store, &id.to_string(), other_s.as_deref()).map_err(report_error)
    }

    pub(in crate::workbench) fn results(&self, id: i64, other: Option<i64>) -> Result<api::Report, CommandError> {
        self.reports.get(id, other)
    }

    /// What `cfg`'s design detects on `suite` (of `size`), planned from the newest finished run
    /// on that suite that evaluated the routed arm and the baseline
    /// ([`crate::analysis::power::plan`]).
    pub(in crate::workbench) fn plan(
        &self,
        cfg: &crate::experiment::ExperimentConfig,
        suite: &str,
        size: &crate::experiment::config::SuiteSize,
        effect: Option<f64>,
    ) -> crate::analysis::power::SuitePower {
        let (train, heldout) = cfg.evaluated_tasks(size);
        let (split, tasks) = if heldout > 0 { ("heldout", heldout) } else { ("train", train) };
        let pilot = self.pilot(suite);
        crate::analysis::power::plan(suite, split, tasks, cfg.seeds.len(), pilot.as_ref(), effect)
    }

    /// The newest finished run's pilot on `suite` (looking back over a few runs for one that
    /// evaluated both arms); a run that cannot be read is passed over.
    fn pilot(&self, suite: &str) -> Option<crate::analysis::power::Pilot> {
        const LOOK_BACK: usize = 5;
        let mut runs: Vec<RunRow> =
            self.store.runs().ok()?.into_iter().filter(|r| r.kind == KIND_EXPERIMENT && r.status == RunStatus::Finished).collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.id));
        let on_suite = |r: &RunRow| r.suite.as_deref().is_some_and(|s| s.split(',').any(|x| x == suite));
        for r in runs.iter().filter(|r| on_suite(r)).take(LOOK_BACK) {
            let key = (r.id, suite.to_string());
            let cached = self.pilots.lock().unwrap_or_else(|p| p.into_inner()).get(&key).cloned();
            let pilot = match cached {
                Some(p) => p,
                None => {
                    let p = crate::analysis::power::pilot(&self.store, r.id, suite).unwrap_or_else(|e| {
                        tracing::warn!("run {}: no pilot ({e})", r.id);
                        None
                    });
                    self.pilots.lock().unwrap_or_else(|p| p.into_inner()).insert(key, p.clone());
                    p
                }
            };
            if pilot.is_some() {
                return pilot;
            }
        }
        None
    }
}
