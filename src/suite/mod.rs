//! Suites: tasks, environments and scorers, one module per benchmark behind one trait.
//!
//! Architecture invariant: an environment and its scorer know nothing of harnesses. They receive
//! only actions (tool calls) and never read hints, injected context or any other harness text, so
//! a sibling can help only through what it shows the policy.

pub mod appworld;
pub mod dbbench;
pub mod swegym;

use std::path::Path;
use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};

pub use crate::grammar::kit::Solution;
use crate::grammar::Grammar;
use crate::message::{Context, Message, ToolSpec};
pub use crate::step::{Action, CallRecord, Score, Signals, StepOutcome};
use crate::task::Task;

/// Why an environment could not take a step or score an episode. The episode's status follows
/// the cause (`docs/security.md`, "An episode's status follows its cause"):
/// - [`EnvError::Infra`]: the machinery around the task failed (a database that could not
///   start, an unreachable server, a sandbox that would not come up). Nothing the agent did
///   caused it, so the episode is an infrastructure error, kept apart from task failures.
/// - [`EnvError::Action`]: the agent's own action broke its environment (bytes no command can
///   carry, an input past a limit, code that killed its own runner, a repository it made
///   unreadable). That is the agent's failure: the episode ends scored 0 with this reason, and
///   it counts in every metric and training group like any other failed try.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum EnvError {
    #[error("{0}")]
    Infra(String),
    #[error("{0}")]
    Action(String),
}

impl EnvError {
    /// The message, whatever the cause.
    pub fn message(&self) -> &str {
        match self {
            EnvError::Infra(m) | EnvError::Action(m) => m,
        }
    }

    /// Whether the agent's action caused it.
    pub fn by_action(&self) -> bool {
        matches!(self, EnvError::Action(_))
    }
}

/// One running task. Created per episode; dropped when the episode ends.
pub trait Environment: Send {
    /// The task prompt the benchmark itself presents (the question and the benchmark's own
    /// table/app/repo description), rendered into the first user message by the harness.
    fn task_prompt(&self) -> String;
    /// Execute one action and return the raw observation.
    fn step(&mut self, action: &Action) -> Result<StepOutcome, EnvError>;
    /// Score the episode. `submitted` is the final answer action if the agent gave one.
    fn score(&mut self, submitted: Option<&Action>) -> Result<Score, EnvError>;
    /// Read-only facts a harness may inject (`schema_card`, `columns`, `table_name`, `api_list`,
    /// `repo_map`, ...). These are what the benchmark makes discoverable anyway; `None` if the
    /// suite does not offer the resource.
    fn resource(&self, name: &str) -> Option<String>;
}

/// What kind of JSON value `v` is, as loader errors name it ("got a number").
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// An error from a loader, naming the file and line.
/// A task whose reference solution the suite's own checker does not accept: why. `verify`
/// counts these as disagreements.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct Mismatch(pub String);

impl From<String> for Mismatch {
    fn from(why: String) -> Self {
        Mismatch(why)
    }
}

impl From<&str> for Mismatch {
    fn from(why: &str) -> Self {
        Mismatch(why.to_string())
    }
}

/// A record (a dataset line, a task's payload) without the benchmark's shape: which field, and
/// what was expected there. Loaders add the file and line ([`LoadError`]).
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct ShapeError(pub String);

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{file}:{line}: {message}")]
pub struct LoadError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// Agreement of a dataset's gold answers with the executor and scorer (`verify-dataset`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifyReport {
    pub suite: String,
    pub total: usize,
    pub agree: usize,
    pub groups: std::collections::BTreeMap<String, GroupCount>,
    /// Records that disagree: id and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<Disagreement>,
    /// Records that could not be checked on this machine (an instance's image is not here), with
    /// why; not counted in `total`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Disagreement>,
}

impl VerifyReport {
    /// Count one record's verification in its group: agreeing, or a disagreement with its reason.
    pub fn record(&mut self, task_id: &str, group: &str, result: Result<(), Mismatch>) {
        self.total += 1;
        let g = self.groups.entry(group.to_string()).or_default();
        g.total += 1;
        match result {
            Ok(()) => {
                g.agree += 1;
                self.agree += 1;
            }
            Err(reason) => self.disagreements.push(Disagreement { task_id: task_id.to_string(), group: group.to_string(), reason: reason.0 }),
        }
    }

    /// Note a record that could not be checked here, and why.
    pub fn skip(&mut self, task_id: &str, group: &str, why: String) {
        self.skipped.push(Disagreement { task_id: task_id.to_string(), group: group.to_string(), reason: why });
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GroupCount {
    pub total: usize,
    pub agree: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Disagreement {
    pub task_id: String,
    pub group: String,
    pub reason: String,
}

/// A finished episode's outcome as a suite's metrics need it.
#[derive(Clone, Debug)]
pub struct OutcomeForMetrics<'a> {
    pub task: &'a Task,
    pub score: Option<&'a Score>,
}

/// Rewrites a `before_action` hook may apply, by name (e.g. `quote_identifiers`). Each suite
/// offers its own; the harness engine looks them up by name.
/// What a grammar search needs of the base harness: how it frames a task prompt, which tools
/// it offers, and how many steps it allows. (Suites know nothing else of harnesses.)
pub struct SearchFrame<'a> {
    pub frame: &'a dyn Fn(&str) -> Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_steps: usize,
}

impl SearchFrame<'_> {
    /// The first context of an episode of a task whose prompt is `task_prompt`.
    pub fn context(&self, task_prompt: &str) -> Context {
        Context { messages: (self.frame)(task_prompt), tools: self.tools.clone() }
    }
}

/// A suite's behaviour tags and the function that reads them off a trajectory's calls (the
/// behaviour-persistence analysis counts them under the base harness).
#[derive(Clone, Copy)]
pub struct BehaviourTagger {
    /// (tag, a short label for chart panels, what it means).
    pub tags: &'static [(&'static str, &'static str, &'static str)],
    /// One flag per tag, in the order of `tags`, from every call of a trajectory in order.
    pub tag: fn(&[&CallRecord]) -> Vec<bool>,
}

pub type RewriteFn = fn(&Action, &dyn Environment) -> Option<Action>;

/// Named predicates a suite adds to the engine's generic ones (e.g. DBBench's
/// `unquoted_identifier`), evaluated over the proposed action and the environment.
pub type ActionPredicateFn = fn(&Action, &dyn Environment) -> bool;

/// A benchmark.
pub trait Suite: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// The bundled tasks shipped in `datasets/`.
    fn bundled_tasks(&self) -> Result<Vec<Task>, LoadError>;
    /// Load tasks from a file in the benchmark's official release format.
    fn load_file(&self, path: &Path) -> Result<Vec<Task>, LoadError>;
    /// The tools the benchmark exposes.
    fn tools(&self) -> Vec<ToolSpec>;
    /// The benchmark's own round limit.
    fn max_rounds(&self) -> usize;
    /// The tool whose call ends the episode with an answer.
    fn submit_tool(&self) -> &'static str;
    fn make_env(&self, task: &Task) -> Result<Box<dyn Environment>, EnvError>;
    /// Metrics exactly as the benchmark reports them.
    fn metrics(&self, outcomes: &[OutcomeForMetrics<'_>]) -> serde_json::Value;
    /// Run every record's gold through the executor and scorer.
    fn verify(&self, tasks: &[Task]) -> VerifyReport;
    /// The named rewrites this suite offers to `before_action` hooks.
    fn rewrite(&self, _name: &str) -> Option<RewriteFn> {
        None
    }
    /// The named action predicates this suite offers.
    fn action_predicate(&self, _name: &str) -> Option<ActionPredicateFn> {
        None
    }
    /// The message the benchmark sends back when a turn has no tool call.
    fn no_tool_call_message(&self) -> &'static str;
    /// The agent's actions run as code on this machine (Python, bash), so a model's actions
    /// need the sandbox. False where they run in-process (SQL on the embedded engine) or on
    /// someone else's server or container.
    fn runs_agent_code(&self) -> bool {
        false
    }
    /// The built-in policy's grammar for this suite's tasks; a suite without one can be run
    /// with an endpoint policy only.
    fn grammar(&self) -> Option<Arc<dyn Grammar>> {
        None
    }
    /// Search the grammar for a sequence that solves `task` in `frame` (coverage, warm-start
    /// demonstrations), trying at most `max_paths` paths; `inspect` allows a first look at the
    /// data where the grammar has one. Returns the first solution and whether the limit cut the
    /// search.
    fn solve(&self, _task: &Task, _frame: &SearchFrame<'_>, _max_paths: usize, _inspect: bool) -> (Option<Solution>, bool) {
        (None, false)
    }
    /// The behaviour tags the analyses count for this suite.
    fn behaviour(&self) -> Option<BehaviourTagger> {
        None
    }
    /// The built-in harness spec files, as (path, text): the base harness and its siblings. By
    /// default, the files under `harnesses/<name>/` embedded at build time (none for a suite
    /// from outside the crate, which supplies its own).
    fn harness_specs(&self) -> Vec<(String, String)> {
        embedded_harnesses(self.name())
    }
    /// What `load_file` reads, in the benchmark's own terms (shown where a user imports a file).
    fn import_format(&self) -> &'static str {
        "its official release file"
    }
}

/// Before a model (not the built-in policy) acts on `suite`: Ok unless its code would run here
/// without a sandbox and the user did not allow that (`--unsafe-no-sandbox`).
pub fn require_containment(suite: &dyn Suite) -> Result<(), crate::sandbox::SandboxError> {
    if suite.runs_agent_code() {
        crate::sandbox::require_for_model_code()
    } else {
        Ok(())
    }
}

/// All suites the workbench knows, by name.
/// Makes a suite; what [`register`] takes.
pub type SuiteFactory = fn() -> Box<dyn Suite>;

/// The built-in suites: one line per suite.
const BUILT_IN: &[SuiteFactory] = &[|| Box::new(dbbench::DbBench::new()), || Box::new(appworld::AppWorld::new()), || Box::new(swegym::SweGym::new())];

static REGISTERED: RwLock<Vec<SuiteFactory>> = RwLock::new(Vec::new());

/// Add a suite from outside this crate (a plug-in linked into a custom build, or a test). It
/// is listed after the built-in ones; registering a name twice keeps the first.
pub fn register(factory: SuiteFactory) {
    let name = factory().name();
    // Check and add under one write lock, so two threads registering one name add it once.
    let mut registered = REGISTERED.write().unwrap_or_else(|p| p.into_inner());
    let taken = BUILT_IN.iter().chain(registered.iter()).any(|make| make().name() == name);
    if !taken {
        registered.push(factory);
    }
}

/// Every suite the workbench knows: the built-in ones, then the registered ones.
pub fn registry() -> Vec<Box<dyn Suite>> {
    let extra = REGISTERED.read().unwrap_or_else(|p| p.into_inner()).clone();
    BUILT_IN.iter().chain(extra.iter()).map(|make| make()).collect()
}

/// The built-in harness spec files (path, text) under `harnesses/`, embedded at build time.
pub fn embedded_harnesses(suite: &str) -> Vec<(String, String)> {
    let prefix = format!("harnesses/{suite}/");
    EMBEDDED_HARNESSES.iter().filter(|(p, _)| p.starts_with(&prefix)).map(|(p, t)| (p.to_string(), t.to_string())).collect()
}

include!(concat!(env!("OUT_DIR"), "/harnesses.rs"));

/// The names of every suite, in registry order (for messages that list what exists).
pub fn names() -> Vec<&'static str> {
    registry().iter().map(|s| s.name()).collect()
}

/// Look a suite up by name.
pub fn by_name(name: &str) -> Option<Box<dyn Suite>> {
    registry().into_iter().find(|s| s.name() == name)
}
