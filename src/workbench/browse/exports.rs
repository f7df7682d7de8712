//! Exports: a run's training batches, its policy versions, and its report files.

use super::*;

impl Workbench {
    /// A run's training batches and evaluation trajectories in a trainer's format, written to
    /// `exports/run-<id>-<format>/` in the workspace (`harness-s export` from the app).
    pub(in crate::workbench) fn export_training(&self, a: commands::ExportTrainingArgs) -> Result<api::ExportedFiles, CommandError> {
        use crate::experiment::export::{export, ExportError, ExportFormat, ExportRequest};
        let id = a.id;
        let name = a.format.as_str();
        let format = ExportFormat::parse(name)
            .ok_or_else(|| CommandError::BadArguments(format!("format: `{name}` (allowed: {})", ExportFormat::NAMES.join(", "))))?;
        let out = crate::workbench::confined_path(&self.workspace, "exports", "export_training", "output folder", &format!("run-{id}-{name}"))?;
        let req = ExportRequest { run_id: id, format, out: out.clone(), arm: None, seed: None, split: None, sources: None };
        match export(&self.store, &req) {
            Ok(s) => Ok(api::ExportedFiles { dir: out.display().to_string(), files: s.files, conversations: s.conversations }),
            Err(ExportError::Store(e)) => Err(e.into()),
            Err(ExportError::Input(m)) => Err(CommandError::BadArguments(m)),
            Err(ref e @ ExportError::Io { ref source, .. }) if source.kind() == std::io::ErrorKind::InvalidInput => {
                Err(CommandError::Conflict(e.to_string()))
            }
            Err(e @ ExportError::Io { .. }) => Err(CommandError::Internal(e.to_string())),
        }
    }

    /// The policy versions an external trainer made, per arm, seed and update (`trainer` records).
    pub(in crate::workbench) fn policy_versions(&self, id: i64) -> Result<Vec<api::PolicyVersion>, CommandError> {
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
        Ok(rows)
    }

    /// The report's files written into `out_dir`, a folder inside the workspace's `reports`.
    pub(in crate::workbench) fn export_report(&self, a: commands::ExportReportArgs) -> Result<api::ReportPaths, CommandError> {
        let b = self.bundle(a.id, a.compare)?;
        let out = crate::workbench::confined_path(&self.workspace, "reports", "export_report", "out_dir", a.out_dir.as_str())?;
        let p = b.write(&out).map_err(report_error)?;
        let s = |p: &Path| p.display().to_string();
        Ok(api::ReportPaths {
            dir: s(&p.dir),
            html: s(&p.html),
            json: s(&p.json),
            csv: p.csv.iter().map(|x| s(x)).collect(),
            charts: p.charts.iter().map(|x| s(x)).collect(),
        })
    }

    /// One report file's text, for a browser download.
    pub(in crate::workbench) fn report_file(&self, a: commands::ReportFileArgs) -> Result<api::ReportFile, CommandError> {
        let id = a.id;
        let b = self.bundle(id, a.compare)?;
        let stem = match &b.other {
            Some(o) => format!("report-{id}-vs-{}", o.id),
            None => format!("report-{id}"),
        };
        match a.format.as_str() {
            "html" => {
                Ok(api::ReportFile { file_name: format!("{stem}.html"), mime: "text/html".into(), text: b.html(), tables: None, encoding: None })
            }
            "json" => Ok(api::ReportFile {
                file_name: format!("{stem}.json"),
                mime: "application/json".into(),
                text: serde_json::to_string_pretty(&b.json(false)).unwrap_or_default(),
                tables: None,
                encoding: None,
            }),
            "csv" => {
                let tables = b.csv();
                let wanted = a.table.as_deref();
                match wanted {
                    Some(t) => {
                        let c = tables.iter().find(|c| c.file == t).ok_or_else(|| {
                            CommandError::NotFound(format!(
                                "no CSV table `{t}` (tables: {})",
                                tables.iter().map(|c| c.file).collect::<Vec<_>>().join(", ")
                            ))
                        })?;
                        Ok(api::ReportFile { file_name: c.file.to_string(), mime: "text/csv".into(), text: c.render(), tables: None, encoding: None })
                    }
                    // All tables in one file, each under a `# file` line.
                    None => {
                        let text: String = tables.iter().map(|c| format!("# {}\n{}\n", c.file, c.render())).collect();
                        Ok(api::ReportFile {
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
                Ok(api::ReportFile {
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
