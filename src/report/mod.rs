//! Experiment reports: one self-contained `report.html` (summary first, then the charts inline
//! as SVG, the tables, the configuration and provenance), `report.json` with every number in
//! the report (the [`Analysis`], plus the comparison when there is one), one CSV per table, and
//! each chart as its own SVG file under `charts/`.
//!
//! ```no_run
//! # fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let store = harness_s::store::BlockingStore::open("harness-s.db")?;
//! let paths = harness_s::report::write_report(&store, "latest", None, std::path::Path::new("report"))?;
//! println!("{}", paths.html.display());
//! # Ok(()) }
//! ```

pub mod compare;
pub mod csv;
pub mod html;
pub mod section;
pub mod synthetic;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::analysis::{Analysis, AnalysisError, Data};
use crate::chart::{Chart, ChartError};
use crate::store::{BlockingStore, RunRow, StoreError, KIND_EXPERIMENT};
use section::charts;

pub use compare::Comparison;

/// What [`write_report`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportPaths {
    pub dir: PathBuf,
    pub html: PathBuf,
    pub json: PathBuf,
    pub csv: Vec<PathBuf>,
    pub charts: Vec<PathBuf>,
    /// The run reported (and the one compared with).
    pub run_id: i64,
    pub compare_run_id: Option<i64>,
    /// The run's status (`running`, `finished`, ...).
    pub status: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// No experiment run matches what was asked for.
    #[error("no experiment run {wanted} in {db}; runs: {runs}")]
    NoExperiment { wanted: String, db: String, runs: String },
    #[error("run {id} in {db} is a `{kind}` run, not an experiment; experiment runs: {runs}")]
    NotAnExperiment { id: i64, db: String, kind: String, runs: String },
    #[error("EXPERIMENT must be a run id or `latest`, not `{0}`")]
    BadSelector(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error("writing {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// The report's JSON (`report.json`, and the `results`/`compare` commands' answer): the analysis
/// with the comparison beside it and the index of the charts drawn.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ReportJson {
    #[serde(flatten)]
    pub analysis: Analysis,
    pub comparison: Option<Comparison>,
    /// The charts drawn: id, title and the series they show.
    pub charts: Vec<ChartRef>,
}

/// One chart of a report: its file under the report folder and, for the app, its SVG inline.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
pub struct ChartRef {
    pub id: String,
    pub title: String,
    pub file: String,
    pub series: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub svg: Option<String>,
}

fn describe(runs: &[RunRow]) -> String {
    let exp: Vec<String> = runs.iter().filter(|r| r.kind == KIND_EXPERIMENT).map(|r| format!("{} (`{}`, {})", r.id, r.name, r.status)).collect();
    let others = runs.len() - exp.len();
    let mut s = if exp.is_empty() { "no experiment runs".to_string() } else { exp.join(", ") };
    if others > 0 {
        s.push_str(&format!(" (and {others} other run{})", if others == 1 { "" } else { "s" }));
    }
    s
}

/// The experiment run `selector` names: a run id, or `latest` for the newest experiment run.
pub fn resolve_experiment(store: &BlockingStore, selector: &str) -> Result<RunRow, ReportError> {
    let db = store.location().to_string();
    let sel = selector.trim();
    if sel == "latest" {
        return store.latest_run(Some(KIND_EXPERIMENT))?.ok_or_else(|| ReportError::NoExperiment {
            wanted: "(latest)".into(),
            db: db.clone(),
            runs: describe(&store.runs().unwrap_or_default()),
        });
    }
    let id: i64 = sel.parse().map_err(|_| ReportError::BadSelector(selector.to_string()))?;
    match store.run(id)? {
        Some(r) if r.kind == KIND_EXPERIMENT => Ok(r),
        Some(r) => Err(ReportError::NotAnExperiment { id, db, kind: r.kind, runs: describe(&store.runs()?) }),
        None => Err(ReportError::NoExperiment { wanted: id.to_string(), db, runs: describe(&store.runs()?) }),
    }
}

fn write(path: PathBuf, bytes: &[u8]) -> Result<PathBuf, ReportError> {
    crate::files::write(&path, bytes).map_err(|source| ReportError::Io { path: path.clone(), source })?;
    Ok(path)
}

/// The analysis of experiment run `run_id`, with every report section's own numbers.
fn analyse(store: &BlockingStore, run_id: i64) -> Result<Analysis, AnalysisError> {
    let data = Data::load(store, run_id)?;
    let mut analysis = crate::analysis::analyse_data(&data)?;
    analysis.sections = section::numbers(&data)?;
    Ok(analysis)
}

/// One experiment's report, computed once and rendered as HTML, JSON, CSV or charts.
pub struct ReportBundle {
    pub run: RunRow,
    pub other: Option<RunRow>,
    pub analysis: Analysis,
    pub comparison: Option<Comparison>,
    pub charts: Vec<Chart>,
}

impl ReportBundle {
    /// Analyse experiment `experiment` (a run id or `latest`), side by side with `compare` when given.
    pub fn build(store: &BlockingStore, experiment: &str, compare: Option<&str>) -> Result<ReportBundle, ReportError> {
        let run = resolve_experiment(store, experiment)?;
        let other = compare.map(|c| resolve_experiment(store, c)).transpose()?;
        let analysis = analyse(store, run.id)?;
        let comparison = match &other {
            Some(o) => Some(compare::compare(&analysis, &analyse(store, o.id)?)),
            None => None,
        };
        let charts = charts(&analysis)?;
        Ok(ReportBundle { run, other, analysis, comparison, charts })
    }

    /// `report.json`: the analysis, the comparison and the chart index; with `inline_svg` each
    /// chart also carries its SVG (the app shows them without touching files).
    pub fn json(&self, inline_svg: bool) -> ReportJson {
        ReportJson {
            analysis: self.analysis.clone(),
            comparison: self.comparison.clone(),
            charts: self
                .charts
                .iter()
                .map(|c| ChartRef {
                    id: c.id.clone(),
                    title: c.title.clone(),
                    file: format!("charts/{}.svg", c.id),
                    series: c.series.clone(),
                    svg: inline_svg.then(|| c.svg.clone()),
                })
                .collect(),
        }
    }

    pub fn html(&self) -> String {
        html::render(&self.analysis, &self.charts, self.comparison.as_ref())
    }

    pub fn csv(&self) -> Vec<csv::Csv> {
        csv::tables(&self.analysis, self.comparison.as_ref())
    }

    /// Write every file of the report into `out_dir` (created if missing).
    pub fn write(&self, out_dir: &Path) -> Result<ReportPaths, ReportError> {
        crate::files::create_dir(&out_dir.join("charts")).map_err(|source| ReportError::Io { path: out_dir.join("charts"), source })?;
        let mut chart_paths = Vec::new();
        for c in &self.charts {
            chart_paths.push(write(out_dir.join("charts").join(format!("{}.svg", c.id)), c.svg.as_bytes())?);
        }
        let mut csv_paths = Vec::new();
        for t in self.csv() {
            csv_paths.push(write(out_dir.join(t.file), t.render().as_bytes())?);
        }
        let json_text = serde_json::to_string_pretty(&self.json(false))
            .map_err(|e| ReportError::Io { path: out_dir.join("report.json"), source: std::io::Error::other(e) })?;
        let json_path = write(out_dir.join("report.json"), json_text.as_bytes())?;
        let html_path = write(out_dir.join("report.html"), self.html().as_bytes())?;
        Ok(ReportPaths {
            dir: out_dir.to_path_buf(),
            html: html_path,
            json: json_path,
            csv: csv_paths,
            charts: chart_paths,
            run_id: self.run.id,
            compare_run_id: self.other.as_ref().map(|o| o.id),
            status: self.analysis.status.clone(),
        })
    }
}

/// Write the report of experiment `experiment` (a run id or `latest`) into `out_dir` (created
/// if missing), side by side with `compare` when given. An unfinished run is reported as far as
/// it got and marked as such in the HTML title, the summary and the JSON (`"status"`).
pub fn write_report(store: &BlockingStore, experiment: &str, compare: Option<&str>, out_dir: &Path) -> Result<ReportPaths, ReportError> {
    ReportBundle::build(store, experiment, compare)?.write(out_dir)
}
