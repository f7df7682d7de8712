//! Analyses of one experiment run, computed from the run store only: its episodes (summary rows,
//! and trajectories where a behaviour has to be read off them), its `route` and `profile`
//! records, and — for rank-one inference only — the per-job checkpoints. Nothing is taken from
//! the run's summary, so an unfinished (running, cancelled or killed) run is analysed exactly
//! like a finished one, up to where it got.
//!
//! [`analyse`] returns one [`Analysis`]: every number the report shows, serialisable as the
//! report's `report.json`.
//!
//! Conventions:
//! - success is the benchmark's own success flag; episodes that ended in an infrastructure error
//!   are left out of every rate (they are not task failures);
//! - intervals are 95%: t-intervals over seeds for curves (one seed: the interval is the point),
//!   percentile bootstraps over tasks for final numbers ([`stats::BOOTSTRAP_RESAMPLES`] resamples,
//!   fixed seed), Wilson intervals for coverage shares;
//! - evaluation is under the base harness (the `eval` phase).

pub mod behaviour;
pub mod complementarity;
pub mod final_table;
pub mod locality;
pub mod nonstationarity;
pub mod power;
pub mod provenance;
pub mod rank_one;
pub mod read;
pub mod router;
pub mod transfer;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::EpisodeRow;
use crate::store::{BlockingStore, RunRow, RunStatus, StoreError};

pub use behaviour::{BehaviourPersistence, BehaviourRow};
pub use complementarity::{Complementarity, CoverageCurve};
pub use final_table::{FinalRow, FinalTable, Headline, PairedDelta, Pooled, RoutedDelta};
pub use locality::{Locality, LocalityCell};
pub use nonstationarity::{Nonstationarity, RankCorrelation, SiblingUtility};
pub use provenance::{DatasetHash, Provenance};
pub use rank_one::{RankOneAnalysis, RankOneRow};
pub use read::{StepView, TrajectoryView};
pub use router::{RouterQuality, RouterSource};
pub use transfer::{live_curves, CurvePoint, LivePoint, SeedValue, TransferCurve};

/// The arm every other arm is compared with.
pub const BASELINE_ARM: &str = crate::records::Arm::PolicyOnly.as_str();
/// The routed arm the headline and the router analyses are about.
pub const ROUTED_ARM: &str = crate::records::Arm::HarnessS.as_str();
/// The anchor number the runner gives the final profiles it measures for rank-one inference in
/// arms without a router of their own.
pub const RANK_ONE_ANCHOR: usize = 99;

/// A human label of an anchor.
pub fn anchor_label(anchor: usize) -> String {
    if anchor == RANK_ONE_ANCHOR {
        "final probe (arms without a router)".into()
    } else {
        format!("anchor {anchor}")
    }
}

/// The episode phases the analyses read summary rows of. `train` (base tries, most of a run) and
/// `demo` rows are read only where an analysis needs them.
pub const ANALYSIS_PHASES: &[&str] = &["eval", "probe", "rescue", "resample", "rank1"];

/// An analysis could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("run {id} in {db} is a `{kind}` run, not an experiment")]
    NotAnExperiment { id: i64, db: String, kind: String },
    #[error("no run {id} in {db}")]
    NoRun { id: i64, db: String },
    #[error(transparent)]
    Record(#[from] crate::records::RecordError),
}

/// The run an analysis is of.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct RunInfo {
    pub id: i64,
    pub name: String,
    pub kind: String,
    /// `running`, `finished`, `failed` or `cancelled`.
    pub status: String,
    pub created_at: String,
    pub finished_at: Option<String>,
}

/// Every number of one experiment's report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Analysis {
    /// The run's status, repeated at the top so a reader sees at once whether the run is done.
    pub status: String,
    /// Only a finished run's numbers are final.
    pub finished: bool,
    pub run: RunInfo,
    pub provenance: Provenance,
    pub suites: Vec<String>,
    pub arms: Vec<String>,
    pub base_harness: String,
    /// The held-out (or, without held-out families, training) paired difference of `harness-s`
    /// against `policy-only`, per suite.
    pub headline: Vec<Headline>,
    /// The same difference over every suite's tasks at once, for a run of several suites.
    pub pooled: Option<Pooled>,
    pub transfer: Vec<TransferCurve>,
    pub final_table: FinalTable,
    pub locality: Locality,
    pub complementarity: Vec<Complementarity>,
    pub router: Vec<RouterQuality>,
    pub nonstationarity: Nonstationarity,
    pub behaviour: Vec<BehaviourPersistence>,
    pub rank_one: RankOneAnalysis,
    /// Caveats about the data (missing phases, sampling, fallbacks), in plain language.
    pub notes: Vec<String>,
    /// The numbers report sections compute themselves, beyond the fields above, by section id
    /// (`crate::report::section`); left out when there are none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(type = "Record<string, unknown>", optional)]
    pub sections: BTreeMap<String, Value>,
}

pub(crate) use crate::records::{ProfileRecord, RouteRecord};

/// Everything read from the store once, shared by the analyses.
pub(crate) struct Data<'a> {
    pub store: &'a BlockingStore,
    pub run: RunRow,
    pub base_harness: String,
    pub suites: Vec<String>,
    pub arms: Vec<String>,
    /// The run's episodes of the phases the analyses read ([`ANALYSIS_PHASES`]), without
    /// trajectories, by suite, arm and seed, each job's in the order it wrote them.
    pub rows: Vec<EpisodeRow>,
    /// Every episode of the run, of any phase.
    pub episodes: u64,
    pub routes: Vec<RouteRecord>,
    pub profiles: Vec<ProfileRecord>,
}

impl Data<'_> {
    /// Rows of one phase (infrastructure errors excluded).
    pub fn phase<'s>(&'s self, phase: &'s str) -> impl Iterator<Item = &'s EpisodeRow> + 's {
        self.rows.iter().filter(move |r| r.context.phase.as_deref() == Some(phase) && counts(r))
    }

    /// The sibling pool of a suite in its fixed order: the order the runner measured profiles in
    /// (the pool order of the configuration), else alphabetical over what the data shows.
    pub fn sibling_pool(&self, suite: &str) -> Vec<String> {
        let mut seen = Vec::new();
        for p in self.profiles.iter().filter(|p| p.suite == suite) {
            if !seen.contains(&p.profile.sibling) {
                seen.push(p.profile.sibling.clone());
            }
        }
        if !seen.is_empty() {
            return seen;
        }
        let mut set: BTreeSet<String> = BTreeSet::new();
        for r in self.rows.iter().filter(|r| r.suite == suite && r.harness != self.base_harness) {
            if matches!(r.context.phase.as_deref(), Some("probe" | "rescue" | "rank1")) {
                set.insert(r.harness.clone());
            }
        }
        set.into_iter().collect()
    }

    pub fn config_usize(&self, path: &[&str]) -> Option<usize> {
        let mut v = &self.run.config;
        for p in path {
            v = v.get(p)?;
        }
        v.as_u64().map(|n| n as usize)
    }
}

/// Whether an episode counts in task metrics (infrastructure errors and cancelled episodes do
/// not).
pub(crate) fn counts(r: &EpisodeRow) -> bool {
    crate::episode::counts(r.status, r.infra_error.as_deref())
}

/// The suite a record belongs to: its `suite` field, else the first segment of its key
/// (`<suite>/<arm>/<seed>/...`, as the runner writes them).
fn record_suite(key: &str, body: &Value) -> String {
    body.get("suite").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| key.split('/').next().unwrap_or("").to_string())
}

fn order_like(preferred: Vec<String>, seen: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = preferred;
    for s in seen {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

impl<'a> Data<'a> {
    pub fn load(store: &'a BlockingStore, run_id: i64) -> Result<Data<'a>, AnalysisError> {
        Data::load_phases(store, run_id, ANALYSIS_PHASES, true)
    }

    /// As [`Data::load`], reading only the episodes of `phases`, and the routing and profile
    /// records only when `records` is set (without them `routes` and `profiles` are empty).
    fn load_phases(store: &'a BlockingStore, run_id: i64, phases: &[&str], records: bool) -> Result<Data<'a>, AnalysisError> {
        let run = store.run(run_id)?.ok_or_else(|| AnalysisError::NoRun { id: run_id, db: store.location().to_string() })?;
        if run.kind != crate::store::KIND_EXPERIMENT {
            return Err(AnalysisError::NotAnExperiment { id: run_id, db: store.location().to_string(), kind: run.kind.clone() });
        }
        let rows = read::rows(store, run_id, phases)?;
        let episodes = store.count_episodes(&crate::store::EpisodeFilter::run(run_id))?;
        let mut routes = Vec::new();
        let mut profiles = Vec::new();
        let kind = |k: &'static str| if records { store.records(run_id, k) } else { Ok(Vec::new()) };
        for (key, body) in kind("route")? {
            let suite = record_suite(&key, &body);
            let mut r: RouteRecord = crate::records::parse("route", &key, body)?;
            r.suite = suite;
            routes.push(r);
        }
        for (key, body) in kind("profile")? {
            let suite = record_suite(&key, &body);
            let mut p: ProfileRecord = crate::records::parse("profile", &key, body)?;
            p.suite = suite;
            profiles.push(p);
        }
        let base_harness = run.config.pointer("/harness/base").and_then(Value::as_str).unwrap_or("base").to_string();
        let suites = order_like(strings(run.config.get("suites")), rows.iter().map(|r| r.suite.clone()).collect::<BTreeSet<_>>());
        let arms = order_like(strings(run.config.get("arms")), rows.iter().filter_map(|r| r.context.arm.clone()).collect::<BTreeSet<_>>());
        // One canonical order whatever order parallel jobs wrote in: by suite, arm and seed,
        // then (stably) each job's own order, which its seed fixes.
        let pos = |list: &[String], x: &str| list.iter().position(|y| y == x).unwrap_or(usize::MAX);
        let mut rows = rows;
        rows.sort_by_key(|r| (pos(&suites, &r.suite), pos(&arms, r.context.arm.as_deref().unwrap_or("")), r.context.seed_index, r.id));
        routes.sort_by_key(|r| (pos(&suites, &r.suite), pos(&arms, &r.arm), r.seed_index, r.iteration));
        profiles.sort_by_key(|p| (pos(&suites, &p.suite), pos(&arms, &p.arm), p.seed_index, p.profile.anchor));
        Ok(Data { store, run, base_harness, suites, arms, rows, episodes, routes, profiles })
    }
}

/// A run's headline numbers: the routed arm against policy-only per suite (held-out families
/// when there are any) at the last evaluation every arm and seed reached, and pooled over suites.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Headlines {
    pub headline: Vec<Headline>,
    pub pooled: Option<Pooled>,
}

impl Headlines {
    fn of(table: &FinalTable) -> Headlines {
        Headlines { headline: final_table::headlines(table), pooled: final_table::pooled(table) }
    }
}

/// The headline numbers of run `run_id` alone, from its evaluation episodes: what [`analyse`]
/// gives as `headline` and `pooled`, for lists of runs that must not say otherwise.
pub fn headlines(store: &BlockingStore, run_id: i64) -> Result<Headlines, AnalysisError> {
    // the final table reads the evaluation rows only: no records
    let data = Data::load_phases(store, run_id, &["eval"], false)?;
    Ok(Headlines::of(&final_table::table(&data)))
}

/// Analyse experiment run `run_id` (the report adds its sections' own numbers: see
/// `crate::report::section`).
pub fn analyse(store: &BlockingStore, run_id: i64) -> Result<Analysis, AnalysisError> {
    analyse_data(&Data::load(store, run_id)?)
}

/// The analysis of the data read from a run.
pub(crate) fn analyse_data(data: &Data) -> Result<Analysis, AnalysisError> {
    let mut notes = Vec::new();
    let transfer = transfer::curves(data);
    let final_table = final_table::table(data);
    let Headlines { headline, pooled } = Headlines::of(&final_table);
    let locality = locality::locality(data);
    let complementarity = complementarity::complementarity(data);
    let router = router::router_quality(data);
    let nonstationarity = nonstationarity::nonstationarity(data);
    let behaviour = behaviour::persistence(data, &mut notes)?;
    let rank_one = rank_one::rank_one(data)?;
    let provenance = provenance::provenance(data);
    if data.run.config.get("synthetic").and_then(Value::as_bool) == Some(true) {
        notes.insert(0, "Synthetic data: this run was generated by the workbench's synthetic-experiment writer (for benchmarks and demonstrations); no policy was trained and no task was run.".into());
    }
    if data.episodes == 0 {
        notes.push("The run has no episodes yet.".into());
    }
    if transfer.is_empty() && data.episodes > 0 {
        notes.push("No base-harness evaluation (phase `eval`) has been recorded yet.".into());
    }
    for c in &complementarity {
        for s in &c.curves {
            if let Some(why) = &s.not_measured {
                notes.push(format!("{} complementarity, {}: not measured ({why}).", c.suite, s.strategy));
            }
        }
    }
    let status = data.run.status;
    let run = RunInfo {
        id: data.run.id,
        name: data.run.name.clone(),
        kind: data.run.kind.clone(),
        status: status.as_str().to_string(),
        created_at: data.run.created_at.clone(),
        finished_at: data.run.finished_at.clone(),
    };
    Ok(Analysis {
        status: status.as_str().to_string(),
        finished: status == RunStatus::Finished,
        run,
        provenance,
        suites: data.suites.clone(),
        arms: data.arms.clone(),
        base_harness: data.base_harness.clone(),
        headline,
        pooled,
        transfer,
        final_table,
        locality,
        complementarity,
        router,
        nonstationarity,
        behaviour,
        rank_one,
        notes,
        sections: BTreeMap::new(),
    })
}

#[cfg(test)]
pub(crate) mod testdata;
