//! Every command, registered once: its name, its arguments type, its response type and the
//! handler that turns one into the other. That one list ([`commands!`]) makes the dispatch
//! ([`dispatch`]), the command list ([`COMMANDS`]), the response table `docs/api.md` is checked
//! against ([`responses`]) and the TypeScript map `Commands` that types the UI's
//! `call("episode", {id})` end to end ([`typescript`]). Arguments are read leniently by name
//! ([`Args`]: a number may arrive as text from a query string, an empty string is no value), so
//! each arguments type says only which names a command reads and as what.

use serde_json::Value;
use ts_rs::TS;

use super::api::{self, *};
use super::{Args, CommandError, CommandResult, Workbench};

/// One argument, read by name from a command's arguments object.
pub trait Arg: Sized {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError>;
}

impl Arg for String {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError> {
        a.str(name).map(str::to_string)
    }
}
impl Arg for Option<String> {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError> {
        Ok(a.opt_str(name)?.map(str::to_string))
    }
}
impl Arg for i64 {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError> {
        a.i64(name)
    }
}
impl Arg for Option<i64> {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError> {
        a.opt_i64(name)
    }
}
impl Arg for Option<f64> {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError> {
        a.opt_f64(name)
    }
}
impl Arg for Option<bool> {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError> {
        a.opt_bool(name)
    }
}
impl Arg for Value {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError> {
        a.value(name).cloned()
    }
}
impl Arg for Option<Value> {
    fn read(a: &Args, name: &str) -> Result<Self, CommandError> {
        Ok(a.value(name).ok().cloned())
    }
}

/// A command's arguments, read from its JSON object.
pub trait FromArgs: Sized {
    fn from_args(a: &Args) -> Result<Self, CommandError>;
}

/// Declares an arguments type: the struct (with its TypeScript shape; `Option` fields are
/// optional there) and how it is read.
macro_rules! arguments {
    ($( $(#[$doc:meta])* $name:ident { $( $(#[$fdoc:meta])* $field:ident : $ty:ty ),* $(,)? } )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, TS)]
        #[ts(optional_fields)]
        pub struct $name { $( $(#[$fdoc])* pub $field: $ty, )* }

        impl FromArgs for $name {
            #[allow(unused_variables)]
            fn from_args(a: &Args) -> Result<Self, CommandError> {
                Ok($name { $( $field: <$ty as Arg>::read(a, stringify!($field))?, )* })
            }
        }
    )*

        /// Every arguments type's TypeScript declaration.
        fn argument_decls(cfg: &ts_rs::Config) -> Vec<String> {
            vec![$($name::decl(cfg)),*]
        }
    };
}

arguments! {
    /// No arguments.
    NoArgs {}
    /// A suite by name.
    SuiteArgs { suite: String }
    /// A run, an episode or an experiment by id.
    IdArgs { id: i64 }
    /// An experiment run of this session by id.
    RunArgs { run_id: i64 }
    TasksArgs {
        suite: String,
        family: Option<String>,
        /// An imported dataset's name instead of the bundled tasks.
        dataset: Option<String>,
    }
    TaskArgs { suite: String, id: String, dataset: Option<String> }
    ImportArgs {
        suite: String,
        name: String,
        /// The file's text, in the benchmark's own format.
        text: String,
    }
    HarnessesArgs {
        suite: String,
        /// Profiles from this run's behaviour measurements.
        run: Option<i64>,
    }
    /// An experiment file as text or as JSON (one of them).
    ConfigCheckArgs {
        toml: Option<String>,
        #[ts(optional, type = "ExperimentConfig")]
        config: Option<Value>,
        /// An effect to size for, as a share (0.05 = 5 points): the plan then gives the tasks
        /// and seeds it needs.
        #[ts(optional)]
        effect: Option<f64>,
    }
    ConfigRenderArgs {
        #[ts(type = "ExperimentConfig")]
        config: Value,
        /// The file being edited, whose comments the rendering keeps.
        original: Option<String>,
    }
    ConfigSaveArgs { toml: String, path: String, overwrite: Option<bool> }
    ConnectionArgs { base_url: String, model: Option<String>, api_key_env: Option<String> }
    TrainerArgs {
        #[ts(type = "TrainerConfig")]
        trainer: Value,
        base_model: Option<String>,
    }
    StartArgs {
        /// The experiment file's text.
        toml: String,
    }
    CompareArgs { id: i64, other: i64 }
    EpisodesArgs {
        run_id: i64,
        suite: Option<String>,
        arm: Option<String>,
        family: Option<String>,
        harness: Option<String>,
        phase: Option<String>,
        split: Option<String>,
        task_id: Option<String>,
        success: Option<bool>,
        /// Words every listed episode's trajectory contains.
        text: Option<String>,
        /// Only successful rescues (true) or everything else (false).
        rescued: Option<bool>,
        limit: Option<i64>,
        offset: Option<i64>,
    }
    RescueArgs { episode_id: i64 }
    ExportReportArgs { id: i64, compare: Option<i64>, out_dir: String }
    ReportFileArgs {
        id: i64,
        compare: Option<i64>,
        /// `html`, `json`, `csv` (with `table`) or `csv-zip`.
        format: String,
        table: Option<String>,
    }
    ExportTrainingArgs {
        id: i64,
        /// `openai-chat`, `trl-sft` or `trl-dpo`.
        format: String,
    }
}

/// The registration: `name(Arguments) -> Response => handler;` per command, in the order the
/// command list and `docs/api.md` give them.
macro_rules! commands {
    ($( $name:ident ( $args:ty ) -> $resp:ty => $handler:expr ; )*) => {
        /// Every command's name.
        pub const COMMANDS: &[&str] = &[$(stringify!($name)),*];

        /// Run `command` with its JSON arguments.
        pub(super) fn dispatch(wb: &Workbench, command: &str, args: Value) -> CommandResult {
            let a = Args::new(command, args)?;
            match command {
                $(stringify!($name) => {
                    let handler: fn(&Workbench, $args) -> Result<$resp, CommandError> = $handler;
                    api::reply(handler(wb, <$args as FromArgs>::from_args(&a)?)?)
                })*
                other => Err(CommandError::NotFound(format!("no command `{other}` (commands: {})", COMMANDS.join(", ")))),
            }
        }

        /// Each command with the TypeScript names of its arguments and response types.
        fn signatures(cfg: &ts_rs::Config) -> Vec<(&'static str, String, String)> {
            vec![$((stringify!($name), <$args as TS>::name(cfg), <$resp as TS>::name(cfg))),*]
        }
    };
}

commands! {
    workspace(NoArgs) -> Workspace => |wb, _| wb.workspace_info();
    suites(NoArgs) -> Vec<Suite> => |wb, _| wb.suites();
    tasks(TasksArgs) -> Vec<TaskRow> => |wb, a| wb.tasks(a);
    task(TaskArgs) -> TaskDetail => |wb, a| wb.task(a);
    import_dataset(ImportArgs) -> ImportResult => |wb, a| wb.import_dataset(a);
    harnesses(HarnessesArgs) -> Vec<Harness> => |wb, a| wb.harnesses(a);
    profile_runs(SuiteArgs) -> Vec<ProfileRun> => |wb, a| wb.profile_runs(a);
    config_template(NoArgs) -> ConfigText => |_, _| Ok(ConfigText { toml: super::DEMO_CONFIG.to_string() });
    config_check(ConfigCheckArgs) -> ConfigCheck => |wb, a| super::jobs::config_check(wb, a);
    config_render(ConfigRenderArgs) -> ConfigText => |_, a| super::jobs::config_render(a);
    config_save(ConfigSaveArgs) -> SavedFile => |wb, a| super::jobs::config_save(a, &wb.workspace);
    test_connection(ConnectionArgs) -> ConnectionCheck => |_, a| super::jobs::test_connection(a);
    test_trainer(TrainerArgs) -> TrainerCheck => |_, a| super::jobs::test_trainer(a);
    experiment_start(StartArgs) -> StartedRun => |wb, a| wb.jobs.start_toml(&a.toml);
    experiment_cancel(RunArgs) -> Acknowledged => |wb, a| wb.jobs.cancel(a.run_id);
    experiment_resume(RunArgs) -> StartedRun => |wb, a| wb.jobs.resume(a.run_id);
    run_demo(NoArgs) -> StartedRun => |wb, _| wb.jobs.start_toml(super::DEMO_CONFIG);
    jobs(NoArgs) -> Vec<Job> => |wb, _| wb.jobs.list();
    experiments(NoArgs) -> Vec<ExperimentRow> => |wb, _| wb.experiments();
    experiment(IdArgs) -> ExperimentDetail => |wb, a| wb.experiment(a.id);
    run_delete(IdArgs) -> RunDeleted => |wb, a| wb.run_delete(a.id);
    workers(NoArgs) -> Workers => |wb, _| wb.workers();
    results(IdArgs) -> Report => |wb, a| wb.results(a.id, None);
    compare(CompareArgs) -> Report => |wb, a| wb.results(a.id, Some(a.other));
    episodes(EpisodesArgs) -> EpisodePage => |wb, a| wb.episodes(a);
    episode(IdArgs) -> EpisodeRecord => |wb, a| wb.episode(a.id);
    rescue(RescueArgs) -> Rescue => |wb, a| wb.rescue(a.episode_id);
    export_report(ExportReportArgs) -> ReportPaths => |wb, a| wb.export_report(a);
    report_file(ReportFileArgs) -> ReportFile => |wb, a| wb.report_file(a);
    export_training(ExportTrainingArgs) -> ExportedFiles => |wb, a| wb.export_training(a);
    policy_versions(IdArgs) -> Vec<PolicyVersion> => |wb, a| wb.policy_versions(a.id);
    chart_style(NoArgs) -> ChartStyle => |_, _| Ok(ChartStyle::of_the_reports());
    arms(NoArgs) -> Vec<ArmInfo> => |_, _| Ok(ArmInfo::every_arm());
}

/// Every command and its response type as `docs/api.md` names it (`Suite[]` for a list).
pub fn responses() -> Vec<(&'static str, String)> {
    let cfg = ts_rs::Config::new().with_large_int("number");
    signatures(&cfg).into_iter().map(|(name, _, resp)| (name, list_as_brackets(&resp))).collect()
}

fn list_as_brackets(ts: &str) -> String {
    match ts.strip_prefix("Array<").and_then(|s| s.strip_suffix('>')) {
        Some(inner) => format!("{inner}[]"),
        None => ts.to_string(),
    }
}

/// `ui/src/api.gen.ts`: every response type with the core's shapes it carries, every arguments
/// type, and the `Commands` map.
pub fn typescript() -> String {
    let cfg = &ts_rs::Config::new().with_large_int("number");
    let mut out = String::from(
        "// Generated from src/workbench/api.rs and src/workbench/commands.rs by `HARNESS_S_WRITE_API_TYPES=1 cargo test --test api_types`; do not edit.\n\
         // The shapes every workbench command takes and returns, and every event it sends (docs/api.md).\n\n",
    );
    for d in api::response_decls(cfg) {
        out.push_str("export ");
        out.push_str(&d);
        out.push_str("\n\n");
    }
    for d in argument_decls(cfg) {
        out.push_str("export ");
        out.push_str(&d);
        out.push_str("\n\n");
    }
    out.push_str("/** Every command: its arguments and its response (`call` in client.ts is typed by it). */\nexport type Commands = {\n");
    for (name, args, resp) in signatures(cfg) {
        out.push_str(&format!("  {name}: {{ args: {args}; response: {resp} }};\n"));
    }
    out.push_str("};\n");
    out
}
