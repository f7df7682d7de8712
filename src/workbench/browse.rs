//! Read-side commands: suites and tasks, harnesses with their profiles, experiments, results,
//! episodes and rescues, report export.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::reports::report_error;
use super::{api, line_diff, Args, CommandError, CommandResult, Workbench};
use crate::analysis::{Headlines, ProfileRecord};
use crate::harness::HarnessLibrary;
use crate::report::ReportBundle;
use crate::route::BehaviorProfile;
use crate::store::{EpisodeFilter, EpisodeRow, RunRow, RunStatus, KIND_EXPERIMENT};
use crate::suite::{self, Suite};
use crate::task::Task;

fn suite_named(name: &str) -> Result<Box<dyn Suite>, CommandError> {
    suite::by_name(name).ok_or_else(|| {
        let known = suite::names();
        CommandError::NotFound(format!("no suite `{name}` (suites: {})", known.join(", ")))
    })
}

fn families(tasks: &[Task]) -> Vec<api::FamilyCount> {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for t in tasks {
        *by.entry(t.family.as_str()).or_default() += 1;
    }
    by.into_iter().map(|(f, n)| api::FamilyCount { family: f.to_string(), tasks: n }).collect()
}

/// A dataset name is a plain file name: it becomes a file in the workspace.
fn dataset_name(name: &str) -> Result<&str, CommandError> {
    let ok = !name.is_empty() && name.len() <= 120 && !name.starts_with('.') && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(name)
    } else {
        Err(CommandError::BadArguments(format!("dataset name `{name}`: use letters, digits, `.`, `_` and `-` only (a file name such as dev.jsonl)")))
    }
}

fn episode_row(r: &EpisodeRow) -> api::EpisodeRow {
    api::EpisodeRow { rescued: r.context.phase.as_deref() == Some("rescue") && r.success, row: r.clone() }
}

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

/// A suite as the `suites` command (and `harness-s suites --json`) lists it.
pub fn suite_row(s: &dyn Suite, datasets: Vec<api::Dataset>) -> Result<api::Suite, CommandError> {
    let tasks = s.bundled_tasks().map_err(|e| CommandError::Internal(e.to_string()))?;
    Ok(api::Suite {
        name: s.name().to_string(),
        description: s.description().to_string(),
        tasks: tasks.len(),
        families: families(&tasks),
        datasets,
        import_format: s.import_format().to_string(),
        builtin_policy: s.grammar().is_some(),
    })
}

/// A task as the `tasks` command (and `harness-s tasks --json`) lists it.
pub fn task_row(t: &Task) -> api::TaskRow {
    api::TaskRow { id: t.id.clone(), family: t.family.clone(), instruction: t.instruction.clone() }
}

/// The harnesses of `suite` in `lib` as the `harnesses` command (and `harness-s harnesses --json`)
/// lists them, each with its measured profile when `profiles` has one.
pub fn harness_rows(lib: &HarnessLibrary, suite: &str, profiles: &BTreeMap<String, api::Profile>) -> Vec<api::Harness> {
    let entries = lib.for_suite(suite);
    let render = |spec: &crate::harness::HarnessSpec| {
        // Compare resolved specs without their names and lineage, so the diff shows behaviour.
        let mut v = serde_json::to_value(spec).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            for k in ["name", "lineage", "description", "specialty"] {
                o.remove(k);
            }
        }
        toml::to_string_pretty(&v).unwrap_or_default()
    };
    let base = entries.iter().find(|e| e.spec.lineage.len() <= 1);
    let base_text = base.map(|b| render(&b.spec)).unwrap_or_default();
    let mut out = Vec::new();
    for e in &entries {
        let is_base = e.spec.lineage.len() <= 1;
        let diff: Vec<api::DiffLine> = if is_base {
            Vec::new()
        } else {
            line_diff(&base_text, &render(&e.spec)).into_iter().map(|l| api::DiffLine { op: l.op.to_string(), line: l.line }).collect()
        };
        out.push(api::Harness {
            name: e.spec.name.clone(),
            description: e.spec.description.clone(),
            specialty: e.spec.specialty.clone(),
            base: is_base,
            extends: if e.spec.lineage.len() >= 2 { Some(e.spec.lineage[e.spec.lineage.len() - 2].clone()) } else { None },
            file: e.file.clone(),
            spec: e.source.clone(),
            diff,
            hooks: e.spec.hooks.iter().map(|h| api::HookRef { id: h.id.clone(), kind: h.kind.as_str().to_string() }).collect(),
            profile: profiles.get(&e.spec.name).cloned(),
        });
    }
    out
}

impl Workbench {
    pub(super) fn dataset_path(&self, suite: &str, name: &str) -> Result<PathBuf, CommandError> {
        Ok(self.workspace.join("datasets").join(suite).join(dataset_name(name)?))
    }

    fn load_tasks(&self, s: &dyn Suite, dataset: Option<&str>) -> Result<Vec<Task>, CommandError> {
        match dataset {
            None => s.bundled_tasks().map_err(|e| CommandError::Internal(e.to_string())),
            Some(name) => {
                let path = self.dataset_path(s.name(), name)?;
                if !path.exists() {
                    return Err(CommandError::NotFound(format!(
                        "no imported dataset `{name}` for suite `{}` (looked for {})",
                        s.name(),
                        path.display()
                    )));
                }
                s.load_file(&path).map_err(|e| CommandError::BadArguments(e.to_string()))
            }
        }
    }

    fn imported(&self, suite: &str) -> Vec<api::Dataset> {
        let dir = self.workspace.join("datasets").join(suite);
        let mut out = Vec::new();
        let Ok(rd) = std::fs::read_dir(&dir) else { return out };
        let mut names: Vec<String> = rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().to_string()).collect();
        names.sort();
        let s = suite::by_name(suite);
        for name in names {
            let tasks = s.as_ref().and_then(|s| s.load_file(&dir.join(&name)).ok()).map(|t| t.len());
            out.push(api::Dataset { path: dir.join(&name).display().to_string(), name, tasks });
        }
        out
    }

    pub(super) fn suites(&self) -> CommandResult {
        let mut out = Vec::new();
        for s in suite::registry() {
            out.push(suite_row(s.as_ref(), self.imported(s.name()))?);
        }
        api::reply(out)
    }

    pub(super) fn tasks(&self, a: &Args) -> CommandResult {
        let s = suite_named(a.str("suite")?)?;
        let family = a.opt_str("family")?;
        let tasks = self.load_tasks(s.as_ref(), a.opt_str("dataset")?)?;
        api::reply(tasks.iter().filter(|t| family.is_none_or(|f| t.family == f)).map(task_row).collect::<Vec<_>>())
    }

    pub(super) fn task(&self, a: &Args) -> CommandResult {
        let s = suite_named(a.str("suite")?)?;
        let id = a.str("id")?;
        let tasks = self.load_tasks(s.as_ref(), a.opt_str("dataset")?)?;
        let t = tasks.iter().find(|t| t.id == id).ok_or_else(|| CommandError::NotFound(format!("suite `{}` has no task `{id}`", s.name())))?;
        // The prompt exactly as an episode presents it (the environment renders it).
        let prompt = s.make_env(t).map(|e| e.task_prompt()).unwrap_or_else(|e| format!("(the environment could not start: {e})"));
        api::reply(api::TaskDetail {
            id: t.id.clone(),
            family: t.family.clone(),
            instruction: t.instruction.clone(),
            prompt,
            payload: t.payload.clone(),
        })
    }

    /// Check an uploaded dataset with the suite's official loader and keep it in the workspace.
    pub(super) fn import_dataset(&self, a: &Args) -> CommandResult {
        let s = suite_named(a.str("suite")?)?;
        let name = dataset_name(a.str("name")?)?;
        let text = a.str("text")?;
        let path = super::confined_path(&self.workspace, &format!("datasets/{}", s.name()), "import_dataset", "name", name)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_else(|| self.workspace.clone());
        std::fs::create_dir_all(&dir).map_err(|e| CommandError::Internal(format!("creating {}: {e}", dir.display())))?;
        // Parse from a scratch file first, so a bad upload never replaces a good dataset.
        let scratch = dir.join(format!(".{name}.importing"));
        crate::files::write(&scratch, text).map_err(|e| CommandError::Internal(format!("writing {}: {e}", scratch.display())))?;
        let loaded = s.load_file(&scratch);
        match loaded {
            Err(e) => {
                let _ = std::fs::remove_file(&scratch);
                api::reply(api::ImportResult::Rejected { ok: false, errors: vec![api::ImportProblem { line: e.line, message: e.message }] })
            }
            Ok(tasks) if tasks.is_empty() => {
                let _ = std::fs::remove_file(&scratch);
                api::reply(api::ImportResult::Rejected {
                    ok: false,
                    errors: vec![api::ImportProblem { line: 0, message: "the file holds no tasks".into() }],
                })
            }
            Ok(tasks) => {
                std::fs::rename(&scratch, &path).map_err(|e| CommandError::Internal(format!("saving {}: {e}", path.display())))?;
                api::reply(api::ImportResult::Imported {
                    ok: true,
                    name: name.to_string(),
                    path: path.display().to_string(),
                    tasks: tasks.len(),
                    families: families(&tasks),
                })
            }
        }
    }

    /// The suite's harnesses, each sibling with its behaviour profile from one experiment run:
    /// `run` when given, else the run with the most probe evidence ([`Workbench::profile_sources`]).
    pub(super) fn harnesses(&self, a: &Args) -> CommandResult {
        let s = suite_named(a.str("suite")?)?;
        let lib = HarnessLibrary::builtin().map_err(|e| CommandError::Internal(e.to_string()))?;
        let sources = self.profile_sources(s.name())?;
        let chosen =
            match a.opt_i64("run")? {
                Some(id) => Some(sources.iter().find(|src| src.run.id == id).ok_or_else(|| {
                    CommandError::NotFound(format!("run {id} measured no behaviour profiles for {} (see `profile_runs`)", s.name()))
                })?),
                None => default_source(&sources),
            };
        let profiles = chosen.map(ProfileSource::api_profiles).unwrap_or_default();
        api::reply(harness_rows(&lib, s.name(), &profiles))
    }

    /// Every experiment run that measured profiles of `suite`'s siblings, with how much probe
    /// evidence each holds; `default` marks the one `harnesses` shows when no run is named.
    pub(super) fn profile_runs(&self, a: &Args) -> CommandResult {
        let s = suite_named(a.str("suite")?)?;
        let sources = self.profile_sources(s.name())?;
        let default_id = default_source(&sources).map(|src| src.run.id);
        let rows: Vec<api::ProfileRun> = sources
            .iter()
            .map(|src| api::ProfileRun {
                run_id: src.run.id,
                name: src.run.name.clone(),
                status: src.run.status.as_str().to_string(),
                arm: src.arm.clone(),
                anchor: src.profiles.values().map(|p| p.anchor).max().unwrap_or(0),
                siblings: src.profiles.len(),
                pairs: src.pairs(),
                default: Some(src.run.id) == default_id,
            })
            .collect();
        api::reply(rows)
    }

    /// Every experiment run, newest first, that measured profiles of `suite`'s siblings: from
    /// each, the harness-s arm (else the first arm found), first seed, each sibling's last anchor.
    fn profile_sources(&self, suite: &str) -> Result<Vec<ProfileSource>, CommandError> {
        let mut runs: Vec<RunRow> = self.store.runs()?.into_iter().filter(|r| r.kind == KIND_EXPERIMENT).collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.id));
        let mut out = Vec::new();
        for r in runs {
            let recs = self.store.records_with_prefix(r.id, "profile", &format!("{suite}/"))?;
            if recs.is_empty() {
                continue;
            }
            // Read with the same record type the analyses use.
            let recs: Vec<ProfileRecord> = recs.into_iter().filter_map(|(_, v)| serde_json::from_value(v).ok()).collect();
            let arm = if recs.iter().any(|p| p.arm == crate::analysis::ROUTED_ARM) {
                crate::analysis::ROUTED_ARM.to_string()
            } else {
                recs.first().map(|p| p.arm.clone()).unwrap_or_default()
            };
            let Some(seed) = recs.iter().filter(|p| p.arm == arm).map(|p| p.seed_index).min() else { continue };
            let mut best: BTreeMap<String, BehaviorProfile> = BTreeMap::new();
            for p in recs.into_iter().filter(|p| p.arm == arm && p.seed_index == seed).map(|p| p.profile) {
                match best.get(&p.sibling) {
                    Some(e) if p.anchor < e.anchor => {}
                    _ => {
                        best.insert(p.sibling.clone(), p);
                    }
                }
            }
            out.push(ProfileSource { run: r, arm, profiles: best });
        }
        Ok(out)
    }

    pub(super) fn experiments(&self) -> CommandResult {
        let mut runs: Vec<RunRow> = self.store.runs()?.into_iter().filter(|r| r.kind == KIND_EXPERIMENT).collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.id));
        // the newest finished run's results page is the likeliest next: its report is made meanwhile
        if let Some(r) = runs.iter().find(|r| r.status == RunStatus::Finished) {
            self.reports.warm(r.id);
        }
        api::reply(runs.iter().map(|r| experiment_row(r, self.run_headlines(r))).collect::<Vec<_>>())
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

    pub(super) fn experiment(&self, a: &Args) -> CommandResult {
        let r = self.experiment_run(a.i64("id")?)?;
        let toml = super::jobs::render_toml(&r.config).unwrap_or_default();
        api::reply(api::ExperimentDetail { run: experiment_row(&r, self.run_headlines(&r)), config: r.config.clone(), config_toml: toml })
    }

    fn bundle(&self, id: i64, other: Option<i64>) -> Result<ReportBundle, CommandError> {
        let other_s = other.map(|o| o.to_string());
        ReportBundle::build(&self.store, &id.to_string(), other_s.as_deref()).map_err(report_error)
    }

    pub(super) fn results(&self, id: i64, other: Option<i64>) -> CommandResult {
        self.reports.get(id, other)
    }

    pub(super) fn episodes(&self, a: &Args) -> CommandResult {
        let mut f = EpisodeFilter::run(a.i64("run_id")?);
        f.suite = a.opt_str("suite")?.map(String::from);
        f.arm = a.opt_str("arm")?.map(String::from);
        f.family = a.opt_str("family")?.map(String::from);
        f.harness = a.opt_str("harness")?.map(String::from);
        f.phase = a.opt_str("phase")?.map(String::from);
        f.split = a.opt_str("split")?.map(String::from);
        f.task_id = a.opt_str("task_id")?.map(String::from);
        f.success = a.opt_bool("success")?;
        f.text = a.opt_str("text")?.map(String::from);
        // Rescued: a successful sibling rollout; not rescued: a sibling rollout that failed.
        if let Some(rescued) = a.opt_bool("rescued")? {
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
        let limit = a.opt_i64("limit")?.unwrap_or(100).clamp(1, 1000);
        let offset = a.opt_i64("offset")?.unwrap_or(0).max(0);
        f.limit = Some(limit as u32);
        f.offset = Some(offset as u32);
        let (total, rows) = self.store.episode_page(&f)?;
        api::reply(api::EpisodePage { total, offset: offset as u64, rows: rows.iter().map(episode_row).collect() })
    }

    pub(super) fn episode(&self, a: &Args) -> CommandResult {
        let id = a.i64("id")?;
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
        api::reply(api::EpisodeRecord { id, run_id: row.run_id, row: episode_row(&row), episode })
    }

    /// The three sides of a rescue: the base failures, the sibling's success, the distilled
    /// base-context example.
    pub(super) fn rescue(&self, a: &Args) -> CommandResult {
        let id = a.i64("episode_id")?;
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
        api::reply(api::Rescue {
            task_id: row.task_id.clone(),
            suite: row.suite.clone(),
            family: row.family.clone(),
            arm: arm.to_string(),
            seed_index: seed,
            iteration: it,
            sibling: rec["sibling"].clone(),
            base_failures: base,
            rescue: rec["rescue_episode"].clone(),
            attempts,
            distilled: mark_producible(&row.policy, &row.suite, rec["distilled"].clone()),
            route,
        })
    }

    /// A run's training batches and evaluation trajectories in a trainer's format, written to
    /// `exports/run-<id>-<format>/` in the workspace (`harness-s export` from the app).
    pub(super) fn export_training(&self, a: &Args) -> CommandResult {
        use crate::experiment::export::{export, ExportError, ExportFormat, ExportRequest};
        let id = a.i64("id")?;
        let name = a.str("format")?;
        let format = ExportFormat::parse(name)
            .ok_or_else(|| CommandError::BadArguments(format!("format: `{name}` (allowed: {})", ExportFormat::NAMES.join(", "))))?;
        let out = super::confined_path(&self.workspace, "exports", "export_training", "output folder", &format!("run-{id}-{name}"))?;
        let req = ExportRequest { run_id: id, format, out: out.clone(), arm: None, seed: None, split: None, sources: None };
        match export(&self.store, &req) {
            Ok(s) => api::reply(api::ExportedFiles { dir: out.display().to_string(), files: s.files, conversations: s.conversations }),
            Err(ExportError::Store(e)) => Err(e.into()),
            Err(ExportError::Input(m)) => Err(CommandError::BadArguments(m)),
            Err(ref e @ ExportError::Io { ref source, .. }) if source.kind() == std::io::ErrorKind::InvalidInput => {
                Err(CommandError::Conflict(e.to_string()))
            }
            Err(e @ ExportError::Io { .. }) => Err(CommandError::Internal(e.to_string())),
        }
    }

    /// The policy versions an external trainer made, per arm, seed and update (`trainer` records).
    pub(super) fn policy_versions(&self, a: &Args) -> CommandResult {
        let id = a.i64("id")?;
        let mut rows: Vec<api::PolicyVersion> = Vec::new();
        for (key, r) in self.store.records(id, "trainer")? {
            let num = |k: &str| r[k].as_u64().unwrap_or_default();
            rows.push(api::PolicyVersion {
                key,
                arm: r["arm"].as_str().unwrap_or_default().to_string(),
                seed: r["seed"].as_u64().unwrap_or_else(|| num("seed_index")),
                seed_index: num("seed_index"),
                iteration: num("iteration"),
                trained_from: num("policy_version"),
                ok: r["error"].is_null() && r["exit"] == 0,
                loss: r["metrics"]["loss"].as_f64(),
                sequences: r["lines"].as_u64(),
                seconds: r["seconds"].as_f64().unwrap_or_default(),
                checkpoint: r["checkpoint"].as_str().map(String::from),
                error: r["error"].as_str().map(String::from),
            });
        }
        rows.sort_by(|x, y| (&x.arm, x.seed_index, x.iteration).cmp(&(&y.arm, y.seed_index, y.iteration)));
        api::reply(rows)
    }

    /// The report's files written into `out_dir`, a folder inside the workspace's `reports`.
    pub(super) fn export_report(&self, a: &Args) -> CommandResult {
        let b = self.bundle(a.i64("id")?, a.opt_i64("compare")?)?;
        let out = super::confined_path(&self.workspace, "reports", "export_report", "out_dir", a.str("out_dir")?)?;
        let p = b.write(&out).map_err(report_error)?;
        let s = |p: &Path| p.display().to_string();
        api::reply(api::ReportPaths {
            dir: s(&p.dir),
            html: s(&p.html),
            json: s(&p.json),
            csv: p.csv.iter().map(|x| s(x)).collect(),
            charts: p.charts.iter().map(|x| s(x)).collect(),
        })
    }

    /// One report file's text, for a browser download.
    pub(super) fn report_file(&self, a: &Args) -> CommandResult {
        let id = a.i64("id")?;
        let b = self.bundle(id, a.opt_i64("compare")?)?;
        let stem = match &b.other {
            Some(o) => format!("report-{id}-vs-{}", o.id),
            None => format!("report-{id}"),
        };
        match a.str("format")? {
            "html" => api::reply(api::ReportFile {
                file_name: format!("{stem}.html"),
                mime: "text/html".into(),
                text: b.html(),
                tables: None,
                encoding: None,
            }),
            "json" => api::reply(api::ReportFile {
                file_name: format!("{stem}.json"),
                mime: "application/json".into(),
                text: serde_json::to_string_pretty(&b.json(false)).unwrap_or_default(),
                tables: None,
                encoding: None,
            }),
            "csv" => {
                let tables = b.csv();
                let wanted = a.opt_str("table")?;
                match wanted {
                    Some(t) => {
                        let c = tables.iter().find(|c| c.file == t).ok_or_else(|| {
                            CommandError::NotFound(format!(
                                "no CSV table `{t}` (tables: {})",
                                tables.iter().map(|c| c.file).collect::<Vec<_>>().join(", ")
                            ))
                        })?;
                        api::reply(api::ReportFile {
                            file_name: c.file.to_string(),
                            mime: "text/csv".into(),
                            text: c.render(),
                            tables: None,
                            encoding: None,
                        })
                    }
                    // All tables in one file, each under a `# file` line.
                    None => {
                        let text: String = tables.iter().map(|c| format!("# {}\n{}\n", c.file, c.render())).collect();
                        api::reply(api::ReportFile {
                            file_name: format!("{stem}.csv"),
                            mime: "text/csv".into(),
                            text,
                            tables: Some(tables.iter().map(|c| c.file.to_string()).collect()),
                            encoding: None,
                        })
                    }
                }
            }
            // One CSV file per table in a zip: the joined file above is for reading, this for tools.
            "csv-zip" => {
                use base64::Engine;
                let tables = b.csv();
                let bytes = crate::report::csv::zip(&tables).map_err(|e| CommandError::Internal(format!("writing the CSV zip: {e}")))?;
                api::reply(api::ReportFile {
                    file_name: format!("{stem}-csv.zip"),
                    mime: "application/zip".into(),
                    text: base64::engine::general_purpose::STANDARD.encode(bytes),
                    tables: Some(tables.iter().map(|c| c.file.to_string()).collect()),
                    encoding: Some("base64".into()),
                })
            }
            other => Err(CommandError::BadArguments(format!("report_file: `format` must be html, json, csv or csv-zip, not `{other}`"))),
        }
    }
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

/// One run's measured profiles of a suite's siblings.
struct ProfileSource {
    run: RunRow,
    arm: String,
    profiles: BTreeMap<String, BehaviorProfile>,
}

impl ProfileSource {
    /// Paired probe outcomes behind the profiles (base against sibling, every sibling).
    fn pairs(&self) -> u64 {
        self.profiles.values().map(|p| u64::from(p.total.total())).sum()
    }

    fn api_profiles(&self) -> BTreeMap<String, api::Profile> {
        self.profiles
            .iter()
            .map(|(sib, p)| {
                let buckets = p
                    .by_bucket
                    .iter()
                    .map(|(k, c)| {
                        let (family, signature) = k.split_once('|').unwrap_or((k.as_str(), ""));
                        api::ProfileBucket { family: family.to_string(), signature: signature.to_string(), counts: *c }
                    })
                    .collect();
                let profile = api::Profile {
                    counts: p.total,
                    run_id: self.run.id,
                    arm: self.arm.clone(),
                    anchor: p.anchor,
                    policy_version: p.policy_version,
                    buckets,
                    evidence: p.evidence.clone(),
                };
                (sib.clone(), profile)
            })
            .collect()
    }
}

/// The run whose profiles stand by default: the most probe evidence (a small or cancelled run
/// does not replace a large one), the newest among equals.
fn default_source(sources: &[ProfileSource]) -> Option<&ProfileSource> {
    sources.iter().max_by_key(|src| (src.pairs(), src.run.id))
}
