//! Suites, their tasks and datasets: the bundled sets and those imported into the workspace.

use super::*;

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

impl Workbench {
    pub(in crate::workbench) fn dataset_path(&self, suite: &str, name: &str) -> Result<PathBuf, CommandError> {
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
            let path = dir.join(&name);
            // what import_dataset could have saved: a file under a dataset name that the suite's
            // loader reads (not a scratch file of an import under way, nor another file that
            // shares the folder, such as a README beside the bundled set)
            if dataset_name(&name).is_err() || !path.is_file() {
                continue;
            }
            let Some(tasks) = s.as_ref().and_then(|s| s.load_file(&path).ok()).map(|t| t.len()) else { continue };
            out.push(api::Dataset { path: path.display().to_string(), name, tasks: Some(tasks) });
        }
        out
    }

    pub(in crate::workbench) fn suites(&self) -> Result<Vec<api::Suite>, CommandError> {
        let mut out = Vec::new();
        for s in suite::registry() {
            out.push(suite_row(s.as_ref(), self.imported(s.name()))?);
        }
        Ok(out)
    }

    pub(in crate::workbench) fn tasks(&self, a: commands::TasksArgs) -> Result<Vec<api::TaskRow>, CommandError> {
        let s = suite_named(a.suite.as_str())?;
        let family = a.family.as_deref();
        let tasks = self.load_tasks(s.as_ref(), a.dataset.as_deref())?;
        Ok(tasks.iter().filter(|t| family.is_none_or(|f| t.family == f)).map(task_row).collect::<Vec<_>>())
    }

    pub(in crate::workbench) fn task(&self, a: commands::TaskArgs) -> Result<api::TaskDetail, CommandError> {
        let s = suite_named(a.suite.as_str())?;
        let id = a.id.as_str();
        let tasks = self.load_tasks(s.as_ref(), a.dataset.as_deref())?;
        let t = tasks.iter().find(|t| t.id == id).ok_or_else(|| CommandError::NotFound(format!("suite `{}` has no task `{id}`", s.name())))?;
        // The prompt exactly as an episode presents it (the environment renders it).
        let prompt = s.make_env(t).map(|e| e.task_prompt()).unwrap_or_else(|e| format!("(the environment could not start: {e})"));
        Ok(api::TaskDetail { id: t.id.clone(), family: t.family.clone(), instruction: t.instruction.clone(), prompt, payload: t.payload.clone() })
    }

    /// Check an uploaded dataset with the suite's official loader and keep it in the workspace.
    pub(in crate::workbench) fn import_dataset(&self, a: commands::ImportArgs) -> Result<api::ImportResult, CommandError> {
        let s = suite_named(a.suite.as_str())?;
        let name = dataset_name(a.name.as_str())?;
        let text = a.text.as_str();
        let path = crate::workbench::confined_path(&self.workspace, &format!("datasets/{}", s.name()), "import_dataset", "name", name)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_else(|| self.workspace.clone());
        std::fs::create_dir_all(&dir).map_err(|e| CommandError::Internal(format!("creating {}: {e}", dir.display())))?;
        // Parse from a scratch file first, so a bad upload never replaces a good dataset.
        let scratch = dir.join(format!(".{name}.importing"));
        crate::files::write(&scratch, text).map_err(|e| CommandError::Internal(format!("writing {}: {e}", scratch.display())))?;
        let loaded = s.load_file(&scratch);
        match loaded {
            Err(e) => {
                let _ = std::fs::remove_file(&scratch);
                Ok(api::ImportResult::Rejected { ok: false, errors: vec![api::ImportProblem { line: e.line, message: e.message }] })
            }
            Ok(tasks) if tasks.is_empty() => {
                let _ = std::fs::remove_file(&scratch);
                Ok(api::ImportResult::Rejected { ok: false, errors: vec![api::ImportProblem { line: 0, message: "the file holds no tasks".into() }] })
            }
            Ok(tasks) => {
                std::fs::rename(&scratch, &path).map_err(|e| CommandError::Internal(format!("saving {}: {e}", path.display())))?;
                Ok(api::ImportResult::Imported {
                    ok: true,
                    name: name.to_string(),
                    path: path.display().to_string(),
                    tasks: tasks.len(),
                    families: families(&tasks),
                })
            }
        }
    }
}
