//! SWE-Gym: an agent edits a repository until the failing tests of an issue pass without breaking
//! the passing ones.
//!
//! Code map:
//! - [`instance`]: the official instance schema, JSON / JSONL loading, the bundled dataset;
//! - [`runtime`]: the [`Runtime`](runtime::Runtime) trait, the local runtime (temporary copy,
//!   process groups, time limits, network namespace) and the container runtime (docker / podman
//!   command template, SWE-bench images);
//! - [`tools`]: `execute_bash`, `str_replace_editor` and `finish` as OpenHands exposes them;
//! - [`score`]: the diff against `base_commit`, the test patch, FAIL_TO_PASS / PASS_TO_PASS, the
//!   result cache;
//! - [`operators`]: the line edit operators shared by the dataset generator and the built-in
//!   policy's repair grammar;
//! - [`hooks`]: SWE-Gym's action predicates for harnesses.
//!
//! Bundled instances (repository `harness-s/<name>`) run on the local runtime: the clean
//! repository in `datasets/swegym/repos/<name>/` is copied, the instance's test patch and fix are
//! reversed, and the result is committed with a fixed identity and date, which gives exactly the
//! instance's `base_commit` (checked). Official instances run on the container runtime.
//!
//! Architecture invariant: [`SweEnv`] sees only actions. Its scorer depends only on the instance
//! and the diff of the repository.

pub mod behaviour;
pub mod grammar;
pub mod hooks;
pub mod instance;
pub mod operators;
pub mod runtime;
pub mod score;
pub mod tools;
pub mod tree;

use std::cell::RefCell;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub use instance::{load_tasks, Instance};
use runtime::{ContainerConfig, ContainerRuntime, Limits, LocalRuntime, Runtime, REPO_ROOT};
use score::{Framework, TestReport};
use tools::{Editor, BASH, EDITOR, FINISH};

use crate::message::ToolSpec;
use crate::suite::{
    Action, ActionPredicateFn, EnvError, Environment, LoadError, Mismatch, OutcomeForMetrics, Score, Signals, StepOutcome, Suite, VerifyReport,
};
use crate::task::Task;

/// Which runtime an instance runs on.
#[derive(Clone, Debug, PartialEq)]
pub enum RuntimeChoice {
    /// Bundled repositories locally, everything else in a container of the default engine.
    Auto,
    Local,
    Container(ContainerConfig),
}

#[derive(Clone, Debug, PartialEq)]
pub struct SweGymConfig {
    pub runtime: RuntimeChoice,
    /// Limits of each `execute_bash` call.
    pub command: Limits,
    /// Time limit of one run of an instance's tests by the scorer.
    pub test_timeout: Duration,
    /// Time limit of commands and test runs on a bundled repository. Their whole test suites run
    /// in about 50 ms (well under a second on a loaded 2-core machine), so a command still
    /// running after this is a loop the agent wrote (`i += 0`), and waiting for it is time taken
    /// from every other episode: 3 s keeps a margin of 60 times.
    pub bundled_timeout: Duration,
}

impl Default for SweGymConfig {
    fn default() -> Self {
        SweGymConfig {
            runtime: RuntimeChoice::Auto,
            command: Limits { timeout: Duration::from_secs(120), max_output: 1024 * 1024 },
            test_timeout: Duration::from_secs(300),
            bundled_timeout: Duration::from_secs(3),
        }
    }
}

/// `local`, `docker`, `podman` (or a path to either), or `auto` (the default).
pub const ENV_RUNTIME: &str = "HARNESS_S_SWEGYM_RUNTIME";
/// A remote container engine: `tcp://host:2375`, `ssh://user@host`, ...
pub const ENV_CONTAINER_HOST: &str = "HARNESS_S_SWEGYM_CONTAINER_HOST";
/// Time limit of one `execute_bash` call, in seconds, bundled repositories included (a test run
/// by the scorer gets at least this too).
pub const ENV_TIMEOUT: &str = "HARNESS_S_SWEGYM_TIMEOUT";

impl SweGymConfig {
    pub fn from_env() -> SweGymConfig {
        let mut c = SweGymConfig::default();
        let host = std::env::var(ENV_CONTAINER_HOST).ok().filter(|h| !h.trim().is_empty());
        match std::env::var(ENV_RUNTIME).ok().map(|v| v.trim().to_string()).as_deref() {
            Some("local") => c.runtime = RuntimeChoice::Local,
            Some("") | Some("auto") | None => {
                if let Some(h) = host {
                    c.runtime = RuntimeChoice::Container(ContainerConfig { host: Some(h), ..Default::default() });
                }
            }
            Some(engine) => c.runtime = RuntimeChoice::Container(ContainerConfig { engine: engine.to_string(), host, ..Default::default() }),
        }
        if let Some(s) = std::env::var(ENV_TIMEOUT).ok().and_then(|v| v.trim().parse::<f64>().ok()) {
            if s.is_finite() && s > 0.0 {
                let t = Duration::from_secs_f64(s.min(3600.0));
                (c.command.timeout, c.test_timeout, c.bundled_timeout) = (t, t.max(c.test_timeout), t);
            }
        }
        c
    }

    /// The runtime an instance runs on: [`RuntimeChoice::Local`] or a container engine (`auto`
    /// resolved: a bundled repository runs locally, any other on the default engine).
    pub fn runtime_for(&self, inst: &Instance) -> RuntimeChoice {
        match &self.runtime {
            RuntimeChoice::Auto if instance::bundled_repo_dir(&inst.repo).is_some() => RuntimeChoice::Local,
            RuntimeChoice::Auto => RuntimeChoice::Container(ContainerConfig::default()),
            other => other.clone(),
        }
    }

    /// The configuration one instance runs under: a bundled repository's commands and test runs
    /// get [`bundled_timeout`](Self::bundled_timeout) where it is shorter.
    pub fn for_instance(&self, inst: &Instance) -> SweGymConfig {
        let mut c = self.clone();
        if instance::bundled_repo_dir(&inst.repo).is_some() {
            c.command.timeout = c.command.timeout.min(c.bundled_timeout);
            c.test_timeout = c.test_timeout.min(c.bundled_timeout);
        }
        c
    }
}

/// The fixed identity and date of the commit that makes a bundled instance's `base_commit`.
const BASE_COMMIT_ENV: &str = "GIT_AUTHOR_NAME=harness-s GIT_AUTHOR_EMAIL=bundled@harness-s.invalid GIT_AUTHOR_DATE='2024-01-01T00:00:00+0000' \
                               GIT_COMMITTER_NAME=harness-s GIT_COMMITTER_EMAIL=bundled@harness-s.invalid GIT_COMMITTER_DATE='2024-01-01T00:00:00+0000'";

fn setup_limits() -> Limits {
    Limits { timeout: Duration::from_secs(60), max_output: 64 * 1024 }
}

/// A local copy of a bundled instance's repository at its base: the clean repository with the
/// test patch and the fix reversed, committed. Returns the runtime and the commit's hash. The
/// patches reach `git apply` on its standard input, so no copy of them is left in the folder.
pub fn prepare_bundled(inst: &Instance) -> Result<(LocalRuntime, String), EnvError> {
    let dir = instance::bundled_repo_dir(&inst.repo).ok_or_else(|| {
        EnvError::Infra(format!(
            "repository `{}` is not bundled (datasets/swegym/repos/); run official instances on the container runtime ({ENV_RUNTIME}=docker or podman)",
            inst.repo
        ))
    })?;
    let mut rt = LocalRuntime::from_dir(&dir)?;
    let step = |rt: &mut LocalRuntime, what: &str, script: &str, stdin: Option<&str>| -> Result<String, EnvError> {
        let out = rt.exec(script, stdin.map(str::as_bytes), &setup_limits())?;
        if !out.ok() {
            return Err(EnvError::Infra(format!("preparing {} at its base ({what}) failed: {}", inst.instance_id, out.output.trim())));
        }
        Ok(out.output)
    };
    step(
        &mut rt,
        "git init",
        "set -e\ngit init -q --template= -b main .\nmkdir -p .git/info\nprintf '__pycache__/\\n*.pyc\\n' > .git/info/exclude",
        None,
    )?;
    step(&mut rt, "reversing the test patch", "git apply -R --whitespace=nowarn -", Some(&inst.test_patch))?;
    step(&mut rt, "reversing the fix", "git apply -R --whitespace=nowarn -", Some(&inst.patch))?;
    let out = step(&mut rt, "commit", &format!("set -e\ngit add -A\n{BASE_COMMIT_ENV} git commit -q --no-verify -m base\ngit rev-parse HEAD"), None)?;
    let sha = out.trim().lines().last().unwrap_or("").to_string();
    Ok((rt, sha))
}

/// The prepared base of a bundled instance, made once per process and copied for every
/// workspace (and checked against the instance's `base_commit`). It is sealed: owned by the
/// workbench, closed to everyone else, and never shown inside a sandbox, so an agent can neither
/// read nor change the source its grading copy is made from.
fn base_template(inst: &Instance) -> Result<std::sync::Arc<LocalRuntime>, EnvError> {
    type Templates = std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<LocalRuntime>>>;
    static TEMPLATES: std::sync::OnceLock<Templates> = std::sync::OnceLock::new();
    let key = format!("{}\u{1f}{}", inst.instance_id, score::diff_key(&format!("{}{}{}", inst.base_commit, inst.patch, inst.test_patch)));
    let templates = TEMPLATES.get_or_init(Default::default);
    if let Some(t) = templates.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(t.clone());
    }
    let (rt, sha) = prepare_bundled(inst)?;
    if sha != inst.base_commit {
        return Err(EnvError::Infra(format!(
            "{}: the bundled repository at its base is commit {sha}, but the instance says base_commit {}; the instance and datasets/swegym/repos/ disagree (regenerate with gen-swegym)",
            inst.instance_id, inst.base_commit
        )));
    }
    rt.seal()?;
    let t = std::sync::Arc::new(rt);
    templates.lock().unwrap_or_else(|p| p.into_inner()).insert(key, t.clone());
    Ok(t)
}

/// A repository at the instance's base on the configured runtime.
pub fn workspace(config: &SweGymConfig, inst: &Instance) -> Result<Box<dyn Runtime>, EnvError> {
    match config.runtime_for(inst) {
        RuntimeChoice::Container(c) => Ok(Box::new(ContainerRuntime::start(c, &inst.instance_id)?)),
        _ => Ok(Box::new(LocalRuntime::copy_of(&*base_template(inst)?)?)),
    }
}

/// The agent's work as a diff against `base` (new files included, Python caches excluded).
///
/// The diff is taken through an index of its own, started from `base`'s tree and removed after:
/// the workspace's index is the agent's to change (a file marked `--skip-worktree` or
/// `--assume-unchanged` would otherwise hide or forge a change), and the command leaves the
/// workspace as it found it.
pub fn workspace_diff(rt: &mut dyn Runtime, base: &str) -> Result<String, EnvError> {
    let base = runtime::shell_quote(base);
    let cmd = format!(
        "set -e\nidx=\"$(mktemp -d)\"\ntrap 'rm -rf \"$idx\"' EXIT\nexport GIT_INDEX_FILE=\"$idx/index\"\n\
         git read-tree {base}\ngit add -A\ngit diff --cached --no-color --binary {base}"
    );
    // the diff is the base commit's (named in the command) against the files, through a private
    // index: pure (the cache's key covers `.git`)
    let out = rt.exec_pure(&cmd, &Limits { timeout: Duration::from_secs(60), max_output: 16 * 1024 * 1024 })?;
    if !out.ok() {
        // the workspace's repository came from an intact template: a diff that cannot be taken
        // means the agent broke its `.git` (or filled it past the time limit)
        return Err(EnvError::Action(format!("computing the diff failed: {}", out.output.trim())));
    }
    Ok(out.output)
}

/// The prompt OpenHands gives for a SWE-bench-style instance.
pub fn task_prompt(problem_statement: &str) -> String {
    format!(
        "<uploaded_files>\n{REPO_ROOT}\n</uploaded_files>\nI've uploaded a python code repository in the directory {REPO_ROOT}. Consider the following issue description:\n\n\
         <issue_description>\n{}\n</issue_description>\n\n\
         Can you help me implement the necessary changes to the repository so that the requirements specified in the <issue_description> are met?\n\
         I've already taken care of all changes to any of the test files described in the <issue_description>. This means you DON'T have to modify the testing logic or any of the tests in any way!\n\
         Your task is to make the minimal changes to non-test files in the {REPO_ROOT} directory to ensure the <issue_description> is satisfied.",
        problem_statement.trim_end()
    )
}

/// The workbench's syntax check of one Python file (its path follows).
const SYNTAX_CHECK: &str = "python3 -c \"import ast, sys\ntry:\n    ast.parse(open(sys.argv[1]).read(), sys.argv[1])\nexcept SyntaxError as e:\n    print(f'{e.filename}, line {e.lineno}: {e.msg}')\"";

/// The test command the `test_command` resource names for an instance.
fn test_command_hint(inst: &Instance) -> &'static str {
    match Framework::of(inst) {
        Framework::Unittest => "python3 -m unittest",
        Framework::Django => "./tests/runtests.py",
        Framework::Pytest => "pytest",
        Framework::Sympy => "bin/test",
    }
}

/// What the environment has seen the agent do; harness predicates read it through the `facts`
/// resource.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Facts {
    /// Successful editor changes (create, str_replace, insert, undo_edit).
    pub edits: usize,
    pub commands: usize,
    /// Commands that ran Python before the first edit (an attempt to reproduce).
    pub python_before_edit: usize,
    pub test_runs: usize,
    /// A test run happened after the last edit.
    pub tested_since_edit: bool,
    /// The last test run failed (non-zero exit).
    pub last_tests_failed: bool,
    pub last_edited: Option<String>,
}

/// Does a command run the tests?
pub fn runs_tests(command: &str) -> bool {
    command.contains("unittest") || command.contains("pytest") || command.contains("runtests")
}

/// One SWE-Gym episode.
pub struct SweEnv {
    inst: Instance,
    config: SweGymConfig,
    rt: RefCell<Box<dyn Runtime>>,
    editor: Editor,
    facts: Facts,
    done: bool,
    /// (edits when checked, result) of the syntax check of the last edited file.
    syntax: RefCell<Option<(usize, String)>>,
    repo_map: RefCell<Option<String>>,
    /// Why the workspace is past its quota ([`Runtime::over_quota`]): the episode ended and is
    /// not resolved.
    over_quota: Option<String>,
}

/// Tool arguments: a JSON object, or a string holding one.
fn arguments_object(args: &Value) -> Option<Map<String, Value>> {
    match args {
        Value::Object(o) => Some(o.clone()),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

fn outcome(observation: impl Into<String>, done: bool, signals: Signals) -> StepOutcome {
    StepOutcome { observation: observation.into(), done, signals }
}

fn failed(observation: impl Into<String>, kind: &str) -> StepOutcome {
    outcome(observation, false, Signals { error_kind: Some(kind.into()), ..Signals::default() })
}

impl SweEnv {
    pub fn new(inst: Instance, config: SweGymConfig) -> Result<SweEnv, EnvError> {
        let config = config.for_instance(&inst);
        let rt = workspace(&config, &inst)?;
        Ok(SweEnv {
            inst,
            config,
            rt: RefCell::new(rt),
            editor: Editor::default(),
            facts: Facts::default(),
            done: false,
            syntax: RefCell::new(None),
            repo_map: RefCell::new(None),
            over_quota: None,
        })
    }

    pub fn instance(&self) -> &Instance {
        &self.inst
    }

    pub fn facts(&self) -> &Facts {
        &self.facts
    }

    /// The agent's work so far as a diff against the base.
    pub fn diff(&self) -> Result<String, EnvError> {
        workspace_diff(self.rt.borrow_mut().as_mut(), &self.inst.base_commit)
    }

    /// Run a command in the episode's repository (for tests and tools outside the agent's turn).
    pub fn exec(&self, command: &str) -> Result<runtime::ExecOutput, EnvError> {
        self.rt.borrow_mut().exec(command, None, &self.config.command)
    }

    /// Whether an agent's `command` is exactly a bundled repository's test command, whose output
    /// depends only on the workspace's content (its tests are hermetic: no clock, network or
    /// randomness). Anything longer could have side effects, so it always runs.
    fn runs_bundled_tests(&self, command: &str) -> bool {
        command.trim() == test_command_hint(&self.inst) && instance::bundled_repo_dir(&self.inst.repo).is_some()
    }

    /// Run `command`; a `pure` one through [`Runtime::exec_pure`], so an agent's repeated test
    /// run after the same edit (a loop it wrote included, which costs the whole time limit)
    /// costs a digest of the workspace instead of a sandbox and an interpreter.
    fn exec_cached(&self, command: &str, pure: bool, limits: &Limits) -> Result<runtime::ExecOutput, EnvError> {
        if pure {
            self.rt.borrow_mut().exec_pure(command, limits)
        } else {
            self.rt.borrow_mut().exec(command, None, limits)
        }
    }

    fn bash(&mut self, args: &Map<String, Value>) -> Result<StepOutcome, EnvError> {
        let Some(command) = args.get("command").and_then(Value::as_str) else {
            return Ok(failed("ERROR:\nParameter `command` is required for execute_bash.", "bad_arguments"));
        };
        let out = match self.exec_cached(command, self.runs_bundled_tests(command), &self.config.command) {
            Ok(out) => out,
            // a command that cannot run as written (a NUL byte, past the command-line limit):
            // the agent's error, which it sees, and which counts against it
            Err(EnvError::Action(why)) => {
                self.facts.commands += 1;
                return Ok(failed(format!("ERROR:\n{why}"), "bad_command"));
            }
            Err(e) => return Err(e),
        };
        self.facts.commands += 1;
        let tests = runs_tests(command);
        if command.contains("python") && self.facts.edits == 0 {
            self.facts.python_before_edit += 1;
        }
        if tests {
            self.facts.test_runs += 1;
            self.facts.tested_since_edit = true;
            self.facts.last_tests_failed = !out.ok();
        }
        let error_kind = if out.timed_out {
            Some("timeout")
        } else if out.ok() {
            None
        } else if tests {
            Some("tests_failed")
        } else {
            Some("command_failed")
        };
        let signals =
            Signals { error_kind: error_kind.map(str::to_string), executed: true, empty_result: out.output.trim().is_empty(), submitted: false };
        Ok(outcome(tools::bash_observation(&out, self.config.command.timeout), false, signals))
    }

    fn edit(&mut self, args: &Map<String, Value>) -> Result<StepOutcome, EnvError> {
        let r = self.editor.call(self.rt.get_mut().as_mut(), args)?;
        if let Some(path) = &r.edited {
            self.facts.edits += 1;
            self.facts.tested_since_edit = false;
            self.facts.last_edited = Some(path.clone());
        }
        let error_kind = r.error.then(|| if r.observation.contains("No replacement was performed") { "no_match" } else { "bad_arguments" });
        Ok(outcome(r.observation, false, Signals { error_kind: error_kind.map(str::to_string), executed: r.edited.is_some(), ..Signals::default() }))
    }

    /// `""` if the last edited Python file parses, else Python's complaint.
    fn syntax_check(&self) -> String {
        let Some(path) = self.facts.last_edited.clone().filter(|p| p.ends_with(".py")) else { return String::new() };
        if let Some((n, r)) = self.syntax.borrow().as_ref() {
            if *n == self.facts.edits {
                return r.clone();
            }
        }
        let cmd = format!("{SYNTAX_CHECK} {}", runtime::shell_quote(&path));
        // the workbench's own read-only check: pure
        let r = self.exec_cached(&cmd, true, &setup_limits()).map(|o| o.output.trim().to_string()).unwrap_or_default();
        *self.syntax.borrow_mut() = Some((self.facts.edits, r.clone()));
        r
    }

    /// Definitions of the names the issue mentions (`name(` or `` `name` ``), as `path:line: text`.
    fn issue_locations(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        let text = &self.inst.problem_statement;
        let b: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_alphabetic() || b[i] == '_' {
                let s = i;
                while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                    i += 1;
                }
                let w: String = b[s..i].iter().collect();
                let called = i < b.len() && b[i] == '(';
                let quoted = s > 0 && b[s - 1] == '`';
                if (called || quoted) && w.len() > 2 && w.contains(|c: char| c == '_' || c.is_lowercase()) && !names.contains(&w) {
                    names.push(w);
                }
            } else {
                i += 1;
            }
        }
        if names.is_empty() {
            return String::new();
        }
        let pattern = format!("^\\s*(def|class) ({})\\b", names.join("|"));
        let cmd = format!("git grep -n -E {} -- '*.py' ':!tests' | head -20", runtime::shell_quote(&pattern));
        let out = self.rt.borrow_mut().exec(&cmd, None, &setup_limits()).map(|o| o.output).unwrap_or_default();
        out.lines().map(|l| format!("{REPO_ROOT}/{}", l.trim_end())).collect::<Vec<_>>().join("\n")
    }

    fn report_score(&self, report: &TestReport, diff: &str, cached: bool) -> Score {
        Score {
            reward: if report.resolved { 1.0 } else { 0.0 },
            success: report.resolved,
            details: json!({
                "instance_id": self.inst.instance_id,
                "resolved": report.resolved,
                "reason": report.reason,
                "diff": diff,
                "FAIL_TO_PASS": report.fail_to_pass,
                "PASS_TO_PASS": report.pass_to_pass,
                "cached": cached,
                "log_tail": report.log_tail,
            }),
        }
    }
}

impl Environment for SweEnv {
    fn task_prompt(&self) -> String {
        task_prompt(&self.inst.problem_statement)
    }

    fn step(&mut self, action: &Action) -> Result<StepOutcome, EnvError> {
        if self.done {
            return Ok(outcome("The task is finished.", true, Signals::default()));
        }
        let Some(args) = arguments_object(&action.arguments) else {
            return Ok(failed("ERROR:\nThe tool arguments must be a JSON object.", "bad_arguments"));
        };
        let result = match action.name.as_str() {
            BASH => self.bash(&args),
            EDITOR => self.edit(&args),
            _ => return self.control(action),
        }?;
        Ok(self.within_quota(result))
    }

    fn score(&mut self, _submitted: Option<&Action>) -> Result<Score, EnvError> {
        if let Some(why) = &self.over_quota {
            let report = TestReport { reason: why.clone(), ..TestReport::default() };
            return Ok(self.report_score(&report, "", false));
        }
        // as in SWE-Gym, what counts is the state of the repository, finished or not
        let diff = self.diff()?;
        let config = self.config.clone();
        let inst = self.inst.clone();
        let (report, cached) = score::evaluate(&self.inst, &diff, config.test_timeout, &|| workspace(&config, &inst))?;
        Ok(self.report_score(&report, &diff, cached))
    }

    fn resource(&self, name: &str) -> Option<String> {
        self.resource_text(name)
    }
}

impl SweEnv {
    /// End the episode when the workspace has outgrown its disk quota (a command that filled the
    /// disk is contained, not scored).
    fn within_quota(&mut self, outcome: StepOutcome) -> StepOutcome {
        let Some(why) = self.rt.borrow().over_quota() else { return outcome };
        self.over_quota = Some(why.clone());
        self.done = true;
        StepOutcome {
            observation: format!("{}\n\nERROR: {why}. The episode ends here.", outcome.observation),
            done: true,
            signals: Signals { error_kind: Some("disk_quota".into()), ..outcome.signals },
        }
    }

    fn control(&mut self, action: &Action) -> Result<StepOutcome, EnvError> {
        match action.name.as_str() {
            FINISH => {
                self.done = true;
                Ok(outcome("The task is finished.", true, Signals { submitted: true, ..Signals::default() }))
            }
            other => Ok(failed(format!("ERROR:\nUnknown tool `{other}`. The tools are: {BASH}, {EDITOR}, {FINISH}."), "unknown_tool")),
        }
    }

    fn resource_text(&self, name: &str) -> Option<String> {
        match name {
            "repo_map" => {
                if self.repo_map.borrow().is_none() {
                    let out = self.rt.borrow_mut().exec("git ls-files", None, &setup_limits()).map(|o| o.output).unwrap_or_default();
                    *self.repo_map.borrow_mut() = Some(out.lines().map(|l| format!("{REPO_ROOT}/{l}")).collect::<Vec<_>>().join("\n"));
                }
                self.repo_map.borrow().clone()
            }
            "test_command" => Some(test_command_hint(&self.inst).to_string()),
            "issue_locations" => Some(self.issue_locations()),
            "syntax_check" => Some(self.syntax_check()),
            "facts" => serde_json::to_string(&self.facts).ok(),
            _ => None,
        }
    }
}

/// The SWE-Gym suite.
pub struct SweGym {
    config: SweGymConfig,
}

impl SweGym {
    pub fn new() -> Self {
        SweGym { config: SweGymConfig::from_env() }
    }
    pub fn with_config(config: SweGymConfig) -> Self {
        SweGym { config }
    }
    pub fn env_for(&self, inst: Instance) -> Result<SweEnv, EnvError> {
        SweEnv::new(inst, self.config.clone())
    }
    /// Why an instance cannot run here: it runs on a container engine that does not hold its
    /// image (`verify-dataset` skips it rather than pull gigabytes unasked). `None` when it can.
    pub fn missing_image(&self, inst: &Instance) -> Option<String> {
        let RuntimeChoice::Container(c) = &self.config.for_instance(inst).runtime_for(inst) else { return None };
        let image = runtime::image_name(&inst.instance_id);
        match c.image_present(&image) {
            Ok(true) => None,
            Ok(false) => Some(format!("image {image} is not on this machine (pull it first: `{} pull {image}`)", c.engine)),
            Err(e) => Some(format!("the container engine cannot be asked for image {image}: {e}")),
        }
    }

    /// Run an instance's tests over `diff` in a fresh workspace (no cache).
    pub fn run_tests(&self, inst: &Instance, diff: &str) -> Result<TestReport, EnvError> {
        let config = self.config.for_instance(inst);
        let mut rt = workspace(&config, inst)?;
        score::run_tests(rt.as_mut(), inst, diff, config.test_timeout)
    }
}

impl Default for SweGym {
    fn default() -> Self {
        Self::new()
    }
}

/// Check one instance: the reference patch resolves it, and without a patch its tests do not all
/// pass.
pub fn verify_instance(suite: &SweGym, inst: &Instance) -> Result<(), Mismatch> {
    let reference = suite.run_tests(inst, &inst.patch).map_err(|e| format!("reference patch: {e}"))?;
    if !reference.resolved {
        return Err(format!("the reference patch does not resolve it: {}", reference.reason).into());
    }
    let untouched = suite.run_tests(inst, "").map_err(|e| format!("no patch: {e}"))?;
    if untouched.all_pass() {
        return Err("every test already passes without a patch".into());
    }
    Ok(())
}

/// What `load_file` reads.
const FORMAT: &str = "SWE-Gym: instances as JSON or JSONL";

impl Suite for SweGym {
    fn name(&self) -> &'static str {
        "swegym"
    }
    fn description(&self) -> &'static str {
        "SWE-Gym: edit a Python repository until the issue's failing tests pass without breaking the passing ones"
    }
    fn bundled_tasks(&self) -> Result<Vec<Task>, LoadError> {
        instance::bundled_tasks()
    }
    fn load_file(&self, path: &Path) -> Result<Vec<Task>, LoadError> {
        instance::load_tasks(path)
    }
    fn tools(&self) -> Vec<ToolSpec> {
        tools::specs()
    }
    fn max_rounds(&self) -> usize {
        30
    }
    fn submit_tool(&self) -> &'static str {
        FINISH
    }
    fn make_env(&self, task: &Task) -> Result<Box<dyn Environment>, EnvError> {
        let inst = instance::instance_of(task).map_err(|e| EnvError::Infra(format!("task {}: {e}", task.id)))?;
        Ok(Box::new(self.env_for(inst)?))
    }
    fn metrics(&self, outcomes: &[OutcomeForMetrics<'_>]) -> Value {
        let mut per_repo: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
        let mut excluded = 0;
        for o in outcomes {
            let Some(s) = o.score else {
                excluded += 1;
                continue;
            };
            let e = per_repo.entry(o.task.family.as_str()).or_default();
            e.0 += 1;
            e.1 += s.success as usize;
        }
        let (n, k) = per_repo.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        json!({
            "resolve_rate": if n > 0 { json!(k as f64 / n as f64) } else { Value::Null },
            "resolved": k,
            "scored": n,
            "excluded": excluded,
            "per_repo": per_repo.iter().map(|(r, (n, k))| (r.to_string(), json!({"total": n, "resolved": k}))).collect::<Map<String, Value>>(),
        })
    }
    fn verify(&self, tasks: &[Task]) -> VerifyReport {
        let mut report = VerifyReport { suite: "swegym".into(), ..VerifyReport::default() };
        for task in tasks {
            let (group, result) = match instance::instance_of(task) {
                Ok(inst) => match self.missing_image(&inst) {
                    Some(why) => {
                        report.skip(&task.id, &inst.repo, why);
                        continue;
                    }
                    None => (inst.repo.clone(), verify_instance(self, &inst)),
                },
                Err(e) => ("invalid".to_string(), Err(format!("invalid instance: {e}").into())),
            };
            report.record(&task.id, &group, result);
        }
        report
    }
    fn action_predicate(&self, name: &str) -> Option<ActionPredicateFn> {
        hooks::predicate(name)
    }
    fn behaviour(&self) -> Option<crate::suite::BehaviourTagger> {
        Some(behaviour::TAGGER)
    }

    fn grammar(&self) -> Option<std::sync::Arc<dyn crate::grammar::Grammar>> {
        Some(std::sync::Arc::new(grammar::GRAMMAR))
    }

    fn solve(&self, task: &Task, frame: &crate::suite::SearchFrame<'_>, max_paths: usize, inspect: bool) -> (Option<crate::suite::Solution>, bool) {
        grammar::solve(self, task, frame, max_paths, inspect)
    }

    fn import_format(&self) -> &'static str {
        FORMAT
    }

    fn no_tool_call_message(&self) -> &'static str {
        "Please continue working on the task using the tools provided. If you think you have solved the task, call `finish`."
    }
    fn runs_agent_code(&self) -> bool {
        !matches!(self.config.runtime, RuntimeChoice::Container(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_repositories_get_the_short_time_limit() {
        let tasks = instance::bundled_tasks().unwrap();
        let bundled = instance::instance_of(&tasks[0]).unwrap();
        let official = Instance { repo: "django/django".into(), ..bundled.clone() };
        let c = SweGymConfig::default();
        let b = c.for_instance(&bundled);
        assert_eq!((b.command.timeout, b.test_timeout), (Duration::from_secs(3), Duration::from_secs(3)));
        let o = c.for_instance(&official);
        assert_eq!((o.command.timeout, o.test_timeout), (Duration::from_secs(120), Duration::from_secs(300)));
        // a limit shorter than the bundled one is kept
        let short = SweGymConfig { command: Limits { timeout: Duration::from_secs(3), ..c.command.clone() }, ..c };
        assert_eq!(short.for_instance(&bundled).command.timeout, Duration::from_secs(3));
    }
}
