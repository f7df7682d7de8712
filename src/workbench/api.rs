//! The command set's response shapes, typed. The handlers build these; `ui/src/api.gen.ts` is
//! generated from them ([`response_decls`]) with the arguments types and the command registry
//! (`commands.rs`), and `tests/api_types.rs` fails when it is stale, so the UI's types cannot
//! drift from what the workbench sends.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

pub use crate::store::{QueueCounts, WorkerRow};

/// How one series is drawn: colour (`#rrggbb`), SVG dash pattern (`null`: solid) and marker
/// (`circle`, `square`, `triangle`, `diamond`, `cross`, `inverted-triangle`, `plus`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, TS)]
pub struct SeriesLook {
    pub color: String,
    pub dash: Option<String>,
    pub marker: String,
}

/// One known arm's look.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, TS)]
pub struct ArmLook {
    pub arm: String,
    pub look: SeriesLook,
}

/// The charts' look, as the reports draw them (`src/chart/style.rs`), so an arm looks the same in
/// the app and in every report: the known arms in display order with their looks, the look of
/// any other arm, and the dash of a compared run's lines.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, TS)]
pub struct ChartStyle {
    pub arms: Vec<ArmLook>,
    pub other_arm: SeriesLook,
    pub other_run_dash: String,
}

impl ChartStyle {
    pub fn of_the_reports() -> ChartStyle {
        use crate::chart::style;
        let look =
            |s: style::SeriesStyle| SeriesLook { color: style::hex(s.color), dash: s.dash.map(str::to_string), marker: s.marker.name().to_string() };
        ChartStyle {
            arms: style::ARM_ORDER.iter().map(|a| ArmLook { arm: a.to_string(), look: look(style::arm(a, 0)) }).collect(),
            other_arm: look(style::nth(style::ARM_ORDER.len())),
            other_run_dash: crate::chart::OTHER_RUN_DASH.to_string(),
        }
    }
}

/// One arm an experiment can run, in the order experiment files list them (`arms`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, TS)]
pub struct ArmInfo {
    pub arm: String,
    /// What it does with a task on which every base try failed.
    pub description: String,
    /// It consults the router (and measures behaviour profiles).
    pub routed: bool,
    /// It runs sibling harnesses at all.
    pub uses_siblings: bool,
}

impl ArmInfo {
    pub fn every_arm() -> Vec<ArmInfo> {
        crate::arm::Arm::ALL
            .into_iter()
            .map(|a| ArmInfo { arm: a.as_str().into(), description: a.description().into(), routed: a.routed(), uses_siblings: a.uses_siblings() })
            .collect()
    }
}

/// A running experiment: episodes stored so far and, on a Postgres store, its episode queue
/// (jobs by state; `null` for a run that queues nothing, or on SQLite).
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct RunningExperiment {
    pub run_id: i64,
    pub name: String,
    pub created_at: String,
    pub episodes: i64,
    pub queue: Option<QueueCounts>,
}

/// The running experiments and the workers of distributed runs (`harness-s experiment status`
/// and the app's Workers panel); no workers and no queues on an SQLite store (`backend` says
/// which).
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Workers {
    pub backend: String,
    pub running: Vec<RunningExperiment>,
    pub workers: Vec<WorkerRow>,
}

/// What a failed command returns (HTTP body, or the desktop app's rejection): the message and
/// its kind (`bad_arguments` → 400, `not_found` → 404, `conflict` → 409, `internal` → 500).
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ErrorBody {
    pub error: String,
    pub kind: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Workspace {
    pub db: String,
    pub workspace_dir: String,
    pub version: String,
    /// The newest demo run, whatever its state (a reopened window follows a running demo).
    pub demo_run_id: Option<i64>,
    pub demo_status: Option<String>,
    /// The newest demo run that finished.
    pub demo_finished_run_id: Option<i64>,
    pub running: Vec<i64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct FamilyCount {
    pub family: String,
    pub tasks: usize,
}

/// A dataset file imported into the workspace.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Dataset {
    pub name: String,
    /// `null` when the file no longer loads.
    pub tasks: Option<usize>,
    pub path: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Suite {
    pub name: String,
    pub description: String,
    pub tasks: usize,
    pub families: Vec<FamilyCount>,
    pub datasets: Vec<Dataset>,
    /// What the suite's importer reads, in the benchmark's own terms.
    pub import_format: String,
    /// Whether the built-in policy has a grammar for this suite (it can be trained here).
    pub builtin_policy: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct TaskRow {
    pub id: String,
    pub family: String,
    pub instruction: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct TaskDetail {
    pub id: String,
    pub family: String,
    pub instruction: String,
    /// The prompt exactly as an episode presents it.
    pub prompt: String,
    #[ts(type = "unknown")]
    pub payload: Value,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ImportProblem {
    pub line: usize,
    pub message: String,
}

/// The result of `import_dataset`: the dataset kept, or the loader's problems by line.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
#[serde(untagged)]
pub enum ImportResult {
    Imported {
        #[ts(type = "true")]
        ok: bool,
        name: String,
        path: String,
        tasks: usize,
        families: Vec<FamilyCount>,
    },
    Rejected {
        #[ts(type = "false")]
        ok: bool,
        errors: Vec<ImportProblem>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct DiffLine {
    /// `+`, `-` or ` `.
    #[ts(type = "\"+\" | \"-\" | \" \"")]
    pub op: String,
    pub line: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct HookRef {
    pub id: String,
    pub kind: String,
}

/// Paired counts of base and sibling tries on the same tasks: the router's own type.
pub use crate::route::Counts;

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ProfileBucket {
    pub family: String,
    pub signature: String,
    #[serde(flatten)]
    pub counts: Counts,
}

/// A sibling's measured behaviour profile and the run it comes from.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Profile {
    #[serde(flatten)]
    pub counts: Counts,
    pub run_id: i64,
    pub arm: String,
    pub anchor: usize,
    pub policy_version: u64,
    pub buckets: Vec<ProfileBucket>,
    pub evidence: Vec<String>,
}

/// An experiment run that measured behaviour profiles of a suite's siblings (`profile_runs`).
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ProfileRun {
    pub run_id: i64,
    pub name: String,
    pub status: String,
    /// The arm whose profiles are shown (harness-s when the run has it).
    pub arm: String,
    /// The last re-anchor measured.
    pub anchor: usize,
    pub siblings: usize,
    /// Paired probe outcomes (base against sibling) behind the profiles, all siblings together.
    pub pairs: u64,
    /// The run `harnesses` takes its profiles from when none is named: the most pairs.
    pub default: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Harness {
    pub name: String,
    pub description: String,
    pub specialty: Option<String>,
    pub base: bool,
    pub extends: Option<String>,
    pub file: String,
    /// The spec file's own text.
    pub spec: String,
    /// What the harness changes against the base (resolved specs, line by line).
    pub diff: Vec<DiffLine>,
    pub hooks: Vec<HookRef>,
    pub profile: Option<Profile>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ConfigText {
    pub toml: String,
}

/// How many rollouts an experiment runs and roughly how long it takes.
pub use crate::experiment::RolloutEstimate;

/// What a design can detect on one suite, and the sizes an effect needs.
pub use crate::analysis::power::SuitePower;

/// `config_check`: the configuration as JSON with its rollout estimate, or the first problem
/// with its key and line.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
#[serde(untagged)]
pub enum ConfigCheck {
    Valid {
        #[ts(type = "true")]
        ok: bool,
        #[ts(type = "ExperimentConfig")]
        config: Value,
        /// `null` when a suite cannot be set up (a dataset file that does not load).
        estimate: Option<RolloutEstimate>,
        /// Per suite, what the design can detect, planned from the newest finished run on that
        /// suite (`docs/power.md`); empty when a suite cannot be set up.
        power: Vec<SuitePower>,
    },
    Invalid {
        #[ts(type = "false")]
        ok: bool,
        error: String,
        /// The setting the error is about (`iterations`, `budget.batch_tasks`, `policy.base_url`,
        /// ...) as a TOML key path.
        key: String,
        /// The line of the checked `toml`; `null` for a `config` given as JSON.
        line: Option<u64>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct SavedFile {
    pub path: String,
}

/// `test_trainer`: the trainer command run once on a one-line batch.
pub use crate::experiment::external::TrainerCheck;

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ConnectionCheck {
    pub ok: bool,
    pub models: Vec<String>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct StartedRun {
    pub run_id: i64,
    /// Set when an unfinished run of the same configuration was resumed instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Acknowledged {
    pub ok: bool,
}

/// A deleted run: how many of its rows went with it.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct RunDeleted {
    pub run_id: i64,
    /// Episodes, each with its whole trajectory (steps, calls, interventions).
    pub episodes: u64,
    /// Records: routing decisions, profiles, distilled examples, batches, checkpoints.
    pub records: u64,
    /// Per-run state (resume checkpoints).
    pub states: u64,
}

/// One (suite, arm, seed) unit of a running experiment.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Unit {
    pub suite: String,
    pub arm: String,
    pub seed: usize,
    pub iteration: usize,
    pub iterations: usize,
    pub rollouts: u32,
    pub success: Option<f64>,
    /// What the job is doing now (the `phase` event's `phase`, `label`, `step` and `steps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub step: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub steps: Option<usize>,
}

/// Episodes of a running experiment against its plan: the `phase` event's `episodes`.
pub use crate::events::EpisodeCount;

pub use crate::experiment::snapshot::LiveEvaluation;

/// A running (or, when this process ran it, just ended) experiment with its live progress.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Job {
    pub run_id: i64,
    pub name: String,
    pub status: String,
    pub error: Option<String>,
    pub done: usize,
    pub total: usize,
    pub eta_s: Option<f64>,
    pub success_rate: f64,
    /// As the progress events carry them.
    #[ts(type = "Unit[]")]
    pub units: Vec<Value>,
    pub messages: Vec<String>,
    /// The run's episodes against the plan, once a phase event has counted them.
    pub episodes: Option<EpisodeCount>,
    /// The newest phase of any job, in words: `harness-s seed 2: iteration 3 of 8: rescues`.
    pub now: Option<String>,
    /// Evaluations recorded so far, in order (a long run's thinned to about 200 iterations).
    pub evaluations: Vec<LiveEvaluation>,
    /// The transfer curves of `evaluations`, as the analysis computes them.
    pub curves: Vec<crate::analysis::TransferCurve>,
    /// Who runs it when this process does not (another app, `harness-s experiment run`, a
    /// coordinator elsewhere): its progress is then read from the snapshot that process keeps
    /// in the store, and only that process can cancel it.
    pub elsewhere: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ExperimentRow {
    pub id: i64,
    pub name: String,
    pub status: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub suites: Vec<String>,
    #[ts(type = "unknown")]
    pub policy: Value,
    #[ts(type = "unknown")]
    pub summary: Value,
    /// The routed arm against policy-only, from the same analysis as the run's results (at
    /// the last evaluation every arm and seed reached, which each headline names).
    pub headline: Vec<crate::analysis::Headline>,
    pub pooled: Option<crate::analysis::Pooled>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ExperimentDetail {
    #[serde(flatten)]
    pub run: ExperimentRow,
    #[ts(type = "ExperimentConfig")]
    pub config: Value,
    pub config_toml: String,
}

/// One episode as the episode list shows it (no trajectory): the store's row and whether it is a
/// successful rescue.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct EpisodeRow {
    #[serde(flatten)]
    pub row: crate::store::EpisodeRow,
    /// A successful rescue episode.
    pub rescued: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct EpisodePage {
    pub total: u64,
    pub offset: u64,
    pub rows: Vec<EpisodeRow>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct EpisodeRecord {
    pub id: i64,
    pub run_id: i64,
    pub row: EpisodeRow,
    /// The stored trajectory (`StoredEpisode` in the UI's types).
    #[ts(type = "StoredEpisode")]
    pub episode: Value,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Attempt {
    pub id: i64,
    pub harness: String,
    pub success: bool,
}

/// A rescue: the failed base tries, the sibling tries, the distilled examples, the routing.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct Rescue {
    pub task_id: String,
    pub suite: String,
    pub family: String,
    pub arm: String,
    pub seed_index: u32,
    pub iteration: u32,
    /// The sibling harness whose try rescued the task.
    pub sibling: String,
    pub base_failures: Vec<i64>,
    /// The rescuing episode (`null` in a record that does not name it).
    pub rescue: Option<i64>,
    pub attempts: Vec<Attempt>,
    /// The distilled examples; the built-in policy's carry `producible`: can its grammar produce
    /// the target from this context (false: training skips the example).
    #[ts(type = "{ mode: string; examples: (TrainExample & { producible?: boolean })[] }")]
    pub distilled: Value,
    #[ts(type = "RouteDecision | null")]
    pub route: Option<Value>,
}

/// `export_training`: the files of a training-data export.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ExportedFiles {
    pub dir: String,
    pub files: Vec<String>,
    /// Conversations written, per source.
    pub conversations: std::collections::BTreeMap<String, usize>,
}

/// One update of an external trainer: the version it turned `trained_from` into.
#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct PolicyVersion {
    pub key: String,
    pub arm: String,
    /// The experiment's seed (its value, as in the experiment file).
    pub seed: u64,
    pub seed_index: u64,
    pub iteration: u64,
    pub trained_from: u64,
    pub ok: bool,
    pub loss: Option<f64>,
    pub sequences: Option<u64>,
    pub seconds: f64,
    pub checkpoint: Option<String>,
    pub error: Option<String>,
}

/// `results`/`compare`: the report's JSON (the analysis, the comparison, the charts with their SVG
/// inline) and, for `compare`, the other run.
#[derive(Clone, Debug, Serialize, TS)]
pub struct Report {
    #[serde(flatten)]
    pub report: crate::report::ReportJson,
    pub other: Option<crate::analysis::RunInfo>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ReportPaths {
    pub dir: String,
    pub html: String,
    pub json: String,
    pub csv: Vec<String>,
    pub charts: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, TS)]
pub struct ReportFile {
    pub file_name: String,
    pub mime: String,
    /// The file's text; for a binary file (`encoding: "base64"`), its bytes in base64.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub encoding: Option<String>,
    /// For a CSV of several tables: the tables it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tables: Option<Vec<String>>,
}

/// A typed response as the command set's JSON value.
pub fn reply<T: Serialize>(response: T) -> Result<Value, super::CommandError> {
    serde_json::to_value(response).map_err(|e| super::CommandError::Internal(format!("encoding the response: {e}")))
}

/// The TypeScript declarations of every response type and of the core's shapes they carry, in
/// the order `ui/src/api.gen.ts` holds them.
pub fn response_decls(cfg: &ts_rs::Config) -> Vec<String> {
    use crate::analysis::*;
    use crate::report::compare::CompareRow;
    use crate::report::{ChartRef, Comparison, ReportJson};
    vec![
        ErrorBody::decl(cfg),
        // the shapes the responses carry as the core stores them
        crate::message::HookKind::decl(cfg),
        crate::message::Role::decl(cfg),
        crate::message::Origin::decl(cfg),
        crate::message::ToolCall::decl(cfg),
        crate::message::Message::decl(cfg),
        crate::message::ToolSpec::decl(cfg),
        crate::message::Context::decl(cfg),
        crate::message::CallKind::decl(cfg),
        crate::message::AssistantTurn::decl(cfg),
        crate::step::Signals::decl(cfg),
        crate::step::Score::decl(cfg),
        crate::step::CallRecord::decl(cfg),
        crate::episode::Effect::decl(cfg),
        crate::episode::Intervention::decl(cfg),
        crate::episode::EpisodeStatus::decl(cfg),
        crate::episode::compact_steps::StoredStep::decl(cfg),
        crate::episode::Episode::decl(cfg),
        crate::policy::builtin::TrainExample::decl(cfg),
        crate::route::voter::RouteQuery::decl(cfg),
        crate::route::router::RoutingDecision::decl(cfg),
        crate::route::LlmVoterConfig::decl(cfg),
        crate::experiment::config::PolicyConfig::decl(cfg),
        crate::experiment::config::BudgetConfig::decl(cfg),
        crate::experiment::config::HarnessConfig::decl(cfg),
        crate::experiment::config::RouterConfig::decl(cfg),
        crate::experiment::config::SuiteDistill::decl(cfg),
        crate::experiment::config::DistillConfig::decl(cfg),
        crate::experiment::config::EvalSettings::decl(cfg),
        crate::experiment::config::TrainerConfig::decl(cfg),
        crate::experiment::config::ServingConfig::decl(cfg),
        crate::experiment::config::ExperimentConfig::decl(cfg),
        crate::events::ProgressUnit::decl(cfg),
        crate::events::Event::decl(cfg),
        Workspace::decl(cfg),
        FamilyCount::decl(cfg),
        Dataset::decl(cfg),
        Suite::decl(cfg),
        TaskRow::decl(cfg),
        TaskDetail::decl(cfg),
        ImportProblem::decl(cfg),
        ImportResult::decl(cfg),
        DiffLine::decl(cfg),
        HookRef::decl(cfg),
        Counts::decl(cfg),
        ProfileBucket::decl(cfg),
        Profile::decl(cfg),
        ProfileRun::decl(cfg),
        Harness::decl(cfg),
        ConfigText::decl(cfg),
        RolloutEstimate::decl(cfg),
        SuitePower::decl(cfg),
        ConfigCheck::decl(cfg),
        SavedFile::decl(cfg),
        ConnectionCheck::decl(cfg),
        ExportedFiles::decl(cfg),
        PolicyVersion::decl(cfg),
        TrainerCheck::decl(cfg),
        StartedRun::decl(cfg),
        Acknowledged::decl(cfg),
        RunDeleted::decl(cfg),
        WorkerRow::decl(cfg),
        QueueCounts::decl(cfg),
        RunningExperiment::decl(cfg),
        Workers::decl(cfg),
        Unit::decl(cfg),
        EpisodeCount::decl(cfg),
        LiveEvaluation::decl(cfg),
        SeriesLook::decl(cfg),
        ArmLook::decl(cfg),
        ArmInfo::decl(cfg),
        ChartStyle::decl(cfg),
        Job::decl(cfg),
        ExperimentRow::decl(cfg),
        ExperimentDetail::decl(cfg),
        EpisodeRow::decl(cfg),
        EpisodePage::decl(cfg),
        EpisodeRecord::decl(cfg),
        Attempt::decl(cfg),
        Rescue::decl(cfg),
        RunInfo::decl(cfg),
        DatasetHash::decl(cfg),
        Provenance::decl(cfg),
        PairedDelta::decl(cfg),
        Headline::decl(cfg),
        Pooled::decl(cfg),
        SeedValue::decl(cfg),
        CurvePoint::decl(cfg),
        TransferCurve::decl(cfg),
        FinalRow::decl(cfg),
        RoutedDelta::decl(cfg),
        FinalTable::decl(cfg),
        LocalityCell::decl(cfg),
        Locality::decl(cfg),
        crate::analysis::complementarity::CoveragePoint::decl(cfg),
        CoverageCurve::decl(cfg),
        Complementarity::decl(cfg),
        RouterSource::decl(cfg),
        RouterQuality::decl(cfg),
        SiblingUtility::decl(cfg),
        RankCorrelation::decl(cfg),
        Nonstationarity::decl(cfg),
        BehaviourRow::decl(cfg),
        BehaviourPersistence::decl(cfg),
        RankOneRow::decl(cfg),
        RankOneAnalysis::decl(cfg),
        Analysis::decl(cfg),
        crate::report::compare::ConfigDifference::decl(cfg),
        CompareRow::decl(cfg),
        Comparison::decl(cfg),
        ChartRef::decl(cfg),
        ReportJson::decl(cfg),
        Report::decl(cfg),
        ReportPaths::decl(cfg),
        ReportFile::decl(cfg),
    ]
}
