//! AppWorld: the agent writes Python that calls `apis.<app>.<api>(...)`; tasks are graded by
//! state-based tests; results are TGC and SGC.
//!
//! Code map:
//! - [`client`]: the environment-server protocol client and the pool of server URLs;
//! - [`world`]: the bundled offline world, served through the same protocol;
//! - [`metrics`]: TGC / SGC; [`hooks`]: AppWorld's action predicates for harnesses.
//!
//! Servers: `HARNESS_S_APPWORLD_URLS` (comma-separated base URLs of `appworld serve environment`
//! processes, one task at a time each); when unset, the bundled world is started in-process on
//! 127.0.0.1, on [`BUNDLED_SERVERS`] ports.
//!
//! Architecture invariant: [`AppWorldEnv`] sees only actions (code cells); it never reads hints
//! or injected context, and its score is the server's state-based evaluation.

pub mod behaviour;
pub mod client;
pub mod grammar;
pub mod hooks;
pub mod metrics;
pub mod world;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};

use crate::message::ToolSpec;
use crate::suite::{
    Action, ActionPredicateFn, EnvError, Environment, LoadError, Mismatch, OutcomeForMetrics, Score, Signals, StepOutcome, Suite, VerifyReport,
};
use crate::task::Task;
use client::{Client, Lease, ServerPool};

/// Comma-separated base URLs of AppWorld environment servers.
pub const ENV_URLS: &str = "HARNESS_S_APPWORLD_URLS";
/// Client timeout per request, in seconds (default 180: above AppWorld's 100 s execution limit).
pub const ENV_TIMEOUT: &str = "HARNESS_S_APPWORLD_TIMEOUT";
/// The Python interpreter of the bundled world (default `python3`).
pub const ENV_PYTHON: &str = "HARNESS_S_APPWORLD_PYTHON";
/// The bundled world's per-cell time limit, in seconds (default 10).
pub const ENV_TIME_LIMIT: &str = "HARNESS_S_APPWORLD_TIME_LIMIT";
/// Servers of the bundled world started in-process.
pub const BUNDLED_SERVERS: usize = 4;
/// The one tool: run a Python cell.
pub const TOOL: &str = "execute_python";

/// A name as apps, APIs and their parameters are named (letters, digits, underscores).
pub(crate) fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Suite configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct AppWorldConfig {
    /// Server base URLs; empty = the bundled world.
    pub urls: Vec<String>,
    pub client_timeout: Duration,
    /// Sent as `timeout_seconds` on `/initialize`: the server's per-execution limit.
    pub execution_timeout_seconds: u64,
    pub world: world::WorldOptions,
    pub bundled_servers: usize,
}

impl Default for AppWorldConfig {
    fn default() -> Self {
        AppWorldConfig {
            urls: vec![],
            client_timeout: Duration::from_secs(180),
            execution_timeout_seconds: 100,
            world: world::WorldOptions::default(),
            bundled_servers: BUNDLED_SERVERS,
        }
    }
}

impl AppWorldConfig {
    /// The default configuration adjusted by [`ENV_URLS`], [`ENV_TIMEOUT`], [`ENV_PYTHON`] and
    /// [`ENV_TIME_LIMIT`].
    pub fn from_env() -> AppWorldConfig {
        let mut c = AppWorldConfig::default();
        if let Ok(v) = std::env::var(ENV_URLS) {
            c.urls = v.split(',').map(|u| u.trim().trim_end_matches('/').to_string()).filter(|u| !u.is_empty()).collect();
        }
        let secs = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<f64>().ok()).filter(|s| s.is_finite() && *s > 0.0);
        if let Some(s) = secs(ENV_TIMEOUT) {
            c.client_timeout = Duration::from_secs_f64(s.min(86_400.0));
        }
        if let Some(s) = secs(ENV_TIME_LIMIT) {
            c.world.time_limit = Duration::from_secs_f64(s.min(3600.0));
        }
        if let Ok(p) = std::env::var(ENV_PYTHON) {
            if !p.trim().is_empty() {
                c.world.python = p.trim().to_string();
            }
        }
        c
    }
}

/// Owns the runtime the client and the bundled servers run on; shut down without blocking.
struct RuntimeHolder(Option<tokio::runtime::Runtime>);

impl Drop for RuntimeHolder {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

struct Backend {
    _rt: RuntimeHolder,
    client: Client,
    pool: Arc<ServerPool>,
}

/// The AppWorld suite.
pub struct AppWorld {
    config: AppWorldConfig,
    experiment_name: String,
    backend: OnceLock<Result<Backend, EnvError>>,
}

fn unique_experiment_name() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    format!("harness-s-{ms}-{}-{}", std::process::id(), COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

impl AppWorld {
    /// The suite as configured by the environment. Servers start (or are contacted) on first use.
    pub fn new() -> Self {
        Self::with_config(AppWorldConfig::from_env())
    }

    pub fn with_config(config: AppWorldConfig) -> Self {
        AppWorld { config, experiment_name: unique_experiment_name(), backend: OnceLock::new() }
    }

    pub fn config(&self) -> &AppWorldConfig {
        &self.config
    }

    /// The `experiment_name` this suite instance sends on every `/initialize`.
    pub fn experiment_name(&self) -> &str {
        &self.experiment_name
    }

    fn backend(&self) -> Result<&Backend, EnvError> {
        self.backend
            .get_or_init(|| {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_name("appworld")
                    .enable_all()
                    .build()
                    .map_err(|e| EnvError::Infra(format!("cannot start the AppWorld runtime: {e}")))?;
                let client = Client::new(rt.handle().clone(), self.config.client_timeout).map_err(|e| EnvError::Infra(e.to_string()))?;
                let (urls, client) = if self.config.urls.is_empty() {
                    let started = world::server::start(rt.handle(), self.config.bundled_servers, &self.config.world)
                        .map_err(|e| EnvError::Infra(e.to_string()))?;
                    (started.urls, client.with_bearer(started.token))
                } else {
                    (self.config.urls.clone(), client)
                };
                Ok(Backend { _rt: RuntimeHolder(Some(rt)), client, pool: ServerPool::new(urls) })
            })
            .as_ref()
            .map_err(EnvError::clone)
    }

    /// The client episodes use: with the bundled world's access token when the servers are
    /// the bundled world's.
    pub fn client(&self) -> Result<Client, EnvError> {
        Ok(self.backend()?.client.clone())
    }

    /// The server URLs episodes run on.
    pub fn server_urls(&self) -> Result<Vec<String>, EnvError> {
        Ok(self.backend()?.pool.urls().to_vec())
    }

    /// Start an episode of `task_id` on a free server.
    pub fn open(&self, task_id: &str) -> Result<AppWorldEnv, EnvError> {
        let b = self.backend()?;
        let lease = b.pool.lease();
        let body = json!({
            "task_id": task_id,
            "experiment_name": self.experiment_name,
            "timeout_seconds": self.config.execution_timeout_seconds,
            "raise_on_unsafe_syntax": true,
        });
        let out = b.client.post(lease.url(), "initialize", &body).map_err(|e| EnvError::Infra(e.to_string()))?;
        let mut env =
            AppWorldEnv { client: b.client.clone(), lease, task_id: task_id.to_string(), info: out, log: Mutex::new(EnvLog::default()), open: true };
        if env.instruction().is_none() {
            let id = task_id.to_string();
            if let Ok(info) = env.client.get(env.lease.url(), &format!("tasks/{id}")) {
                env.info = info;
            }
        }
        Ok(env)
    }

    /// Tasks for a list of task ids: bundled tasks where the bundled world has them, otherwise
    /// tasks whose instruction the server gives at `/initialize` (family = scenario).
    pub fn tasks_from_ids(ids: &[String]) -> Vec<Task> {
        let bundled: BTreeMap<String, Task> = bundled().into_iter().map(|t| (t.id.clone(), t)).collect();
        ids.iter()
            .map(|id| {
                // a bundled task, a task of a scenario the bundled world generates beyond those,
                // or one only AppWorld's servers know
                bundled.get(id).cloned().or_else(|| world::tasks::find(id).map(world_task)).unwrap_or_else(|| Task {
                    id: id.clone(),
                    suite: "appworld".into(),
                    family: metrics::scenario_of(id).to_string(),
                    instruction: String::new(),
                    payload: json!({"task_id": id}),
                })
            })
            .collect()
    }

    /// Run one task's reference solution (or nothing) through the protocol: did it pass?
    fn run_check(&self, task_id: &str, code: Option<&str>) -> Result<Score, EnvError> {
        let mut env = self.open(task_id)?;
        if let Some(code) = code {
            env.step(&Action { id: "reference".into(), name: TOOL.into(), arguments: json!({"code": code}) })?;
        }
        env.score(None)
    }
}

impl Default for AppWorld {
    fn default() -> Self {
        Self::new()
    }
}

fn bundled() -> Vec<Task> {
    world::all_tasks().into_iter().map(world_task).collect()
}

fn world_task(t: world::tasks::WorldTask) -> Task {
    Task {
        id: t.task_id.clone(),
        suite: "appworld".into(),
        family: t.family.to_string(),
        instruction: t.instruction.clone(),
        payload: json!({"task_id": t.task_id, "scenario": t.scenario}),
    }
}

/// Task ids from a file: one per line (`#` comments and blank lines skipped), or a JSON array
/// of strings. Each id must look like `<scenario>_<n>`.
pub fn load_ids(path: &Path) -> Result<Vec<String>, LoadError> {
    let file = path.display().to_string();
    let text = crate::files::read_text_limited(path, crate::files::MAX_DATASET_BYTES).map_err(|e| LoadError {
        file: file.clone(),
        line: 0,
        message: e.to_string(),
    })?;
    parse_ids(&file, &text)
}

/// [`load_ids`] on a file's text.
pub fn parse_ids(file: &str, text: &str) -> Result<Vec<String>, LoadError> {
    let file = file.to_string();
    let mut ids = Vec::new();
    if text.trim_start().starts_with('[') {
        let v: Vec<Value> = serde_json::from_str(text).map_err(|e| LoadError {
            file: file.clone(),
            line: e.line(),
            message: format!("not a JSON array of task ids: {e}"),
        })?;
        for (i, x) in v.iter().enumerate() {
            let id = x.as_str().ok_or_else(|| LoadError { file: file.clone(), line: 1, message: format!("element {i} is not a string: {x}") })?;
            ids.push((1, id.to_string()));
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if !l.is_empty() && !l.starts_with('#') {
                ids.push((i + 1, l.to_string()));
            }
        }
    }
    let mut out = Vec::new();
    for (line, id) in ids {
        let valid = id.split_once('_').is_some_and(|(s, n)| {
            !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()) && !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())
        });
        if !valid {
            return Err(LoadError {
                file: file.clone(),
                line,
                message: format!("`{id}` is not an AppWorld task id (`<scenario>_<n>`, e.g. `82e2fac_1`)"),
            });
        }
        out.push(id);
    }
    if out.is_empty() {
        return Err(LoadError { file, line: 0, message: "no task ids".into() });
    }
    Ok(out)
}

#[derive(Default)]
struct EnvLog {
    code: Vec<String>,
    last_output: String,
    last_error_kind: Option<&'static str>,
    printed_any: bool,
    completed: bool,
    resources: BTreeMap<String, String>,
}

/// One AppWorld episode on a leased server. Dropping it closes the task on the server.
pub struct AppWorldEnv {
    client: Client,
    lease: Lease,
    task_id: String,
    /// What `/initialize` (or `GET /tasks/{id}`) said about the task.
    info: Value,
    log: Mutex<EnvLog>,
    open: bool,
}

impl AppWorldEnv {
    pub fn server_url(&self) -> &str {
        self.lease.url()
    }

    fn field(&self, name: &str) -> Option<&Value> {
        self.info.get(name).or_else(|| self.info.get("task").and_then(|t| t.get(name)))
    }

    pub fn instruction(&self) -> Option<String> {
        self.field("instruction").and_then(Value::as_str).map(str::to_string)
    }

    fn execute(&self, code: &str) -> Result<String, EnvError> {
        let out = self
            .client
            .post(self.lease.url(), "execute", &json!({"task_id": self.task_id, "code": code}))
            .map_err(|e| EnvError::Infra(e.to_string()))?;
        Ok(match out {
            Value::String(s) => s,
            other => other.to_string(),
        })
    }

    /// A resource computed by running a read-only cell once (docs lookups change no state).
    fn cached(&self, name: &str, code: impl FnOnce() -> Option<String>) -> Option<String> {
        if let Some(v) = self.log.lock().ok()?.resources.get(name) {
            return Some(v.clone());
        }
        let out = self.execute(&code()?).ok()?;
        self.log.lock().ok()?.resources.insert(name.into(), out.clone());
        Some(out)
    }
}

impl Drop for AppWorldEnv {
    fn drop(&mut self) {
        if self.open {
            let _ = self.client.post(self.lease.url(), "close", &json!({"task_id": self.task_id}));
        }
    }
}

fn outcome(observation: String, done: bool, signals: Signals) -> StepOutcome {
    StepOutcome { observation, done, signals }
}

impl Environment for AppWorldEnv {
    fn task_prompt(&self) -> String {
        let sup = self.field("supervisor").cloned().unwrap_or(Value::Null);
        let s = |k: &str| sup.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let mut p = String::new();
        if !s("email").is_empty() {
            p.push_str(&format!(
                "My name is: {} {}. My personal email is {} and phone number is {}.\n",
                s("first_name"),
                s("last_name"),
                s("email"),
                s("phone_number")
            ));
        }
        p.push_str(&format!("Task: {}", self.instruction().unwrap_or_default()));
        p
    }

    fn step(&mut self, action: &Action) -> Result<StepOutcome, EnvError> {
        if action.name != TOOL {
            return Ok(outcome(
                format!("Unknown tool `{}`. Write Python code in the `{TOOL}` tool.", action.name),
                false,
                Signals { error_kind: Some("unknown_tool".into()), ..Default::default() },
            ));
        }
        let code = hooks::code_of(action);
        if code.trim().is_empty() {
            return Ok(outcome(
                format!("The `{TOOL}` call has no `code`."),
                false,
                Signals { error_kind: Some("bad_arguments".into()), ..Default::default() },
            ));
        }
        let observation = self.execute(&code)?;
        let kind = hooks::error_kind(&observation);
        let mut done = false;
        if code.contains("complete_task") {
            let v = self
                .client
                .post(self.lease.url(), "task_completed", &json!({"task_id": self.task_id}))
                .map_err(|e| EnvError::Infra(e.to_string()))?;
            done = v.as_bool().unwrap_or(false);
        }
        if let Ok(mut log) = self.log.lock() {
            log.code.push(code);
            log.last_output = observation.clone();
            log.last_error_kind = kind;
            log.printed_any |= kind.is_none() && observation != "Execution successful.";
            log.completed = done;
        }
        let signals = Signals { error_kind: kind.map(str::to_string), executed: true, empty_result: observation.trim() == "[]", submitted: done };
        Ok(outcome(observation, done, signals))
    }

    fn score(&mut self, _submitted: Option<&Action>) -> Result<Score, EnvError> {
        let out = self
            .client
            .post(self.lease.url(), "evaluate", &json!({"task_id": self.task_id, "suppress_errors": true, "report": false}))
            .map_err(|e| EnvError::Infra(e.to_string()))?;
        let success = out
            .get("success")
            .and_then(Value::as_bool)
            .ok_or_else(|| EnvError::Infra(format!("AppWorld server {}: /evaluate gave no `success`: {out}", self.lease.url())))?;
        let details = json!({
            "task_id": self.task_id,
            "scenario": metrics::scenario_of(&self.task_id),
            "success": success,
            "num_tests": out.get("num_tests").cloned().unwrap_or(Value::Null),
            "passes": out.get("passes").cloned().unwrap_or(json!([])),
            "failures": out.get("failures").cloned().unwrap_or(json!([])),
        });
        Ok(Score { reward: if success { 1.0 } else { 0.0 }, success, details })
    }

    fn resource(&self, name: &str) -> Option<String> {
        let log = || self.log.lock().ok();
        match name {
            "executed_code" => Some(log()?.code.join("\n")),
            "last_output" => Some(log()?.last_output.clone()),
            "last_error_kind" => Some(log()?.last_error_kind.unwrap_or("").to_string()),
            "printed_any" => Some(log()?.printed_any.to_string()),
            "supervisor" => self.field("supervisor").map(|v| v.to_string()),
            // one API's documentation, `api_doc/<app>/<api>` (names as the model's code gave
            // them, so only identifiers are looked up)
            _ if name.starts_with("api_doc/") => {
                let (app, api) = name["api_doc/".len()..].split_once('/')?;
                if !is_name(app) || !is_name(api) {
                    return None;
                }
                self.cached(name, || Some(format!("print(apis.api_docs.show_api_doc(app_name='{app}', api_name='{api}'))")))
            }
            "app_descriptions" => self.cached(name, || Some("print(apis.api_docs.show_app_descriptions())".into())),
            // the API lists of the apps the instruction names
            "task_api_descriptions" => {
                let apps = self.cached("app_descriptions", || Some("print(apis.api_docs.show_app_descriptions())".into()))?;
                let instruction = self.instruction().unwrap_or_default().to_lowercase();
                let names: Vec<String> = apps
                    .split("'name': '")
                    .skip(1)
                    .filter_map(|s| s.split('\'').next())
                    .filter(|n| instruction.contains(&format!("my {n}")) || instruction.contains(&format!("{n} app")))
                    .map(str::to_string)
                    .collect();
                self.cached(name, || {
                    let lines: Vec<String> =
                        names.iter().map(|n| format!("print('{n}:', apis.api_docs.show_api_descriptions(app_name='{n}'))")).collect();
                    Some(if lines.is_empty() { "print('(no app named in the task)')".into() } else { lines.join("\n") })
                })
            }
            _ => None,
        }
    }
}

/// What `load_file` reads.
const FORMAT: &str = "AppWorld: task ids, one per line or a JSON list";

impl Suite for AppWorld {
    fn name(&self) -> &'static str {
        "appworld"
    }
    fn description(&self) -> &'static str {
        "AppWorld: write Python against app APIs to do a supervisor's task; state-based tests, TGC and SGC"
    }
    fn bundled_tasks(&self) -> Result<Vec<Task>, LoadError> {
        Ok(bundled())
    }
    fn load_file(&self, path: &Path) -> Result<Vec<Task>, LoadError> {
        Ok(Self::tasks_from_ids(&load_ids(path)?))
    }
    fn tools(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: TOOL.into(),
            description: "Run a Python code cell. Call APIs as `apis.<app>.<api>(name=value, ...)`; variables persist between \
                          cells; print what you want to see. Finish with `apis.supervisor.complete_task(answer=..., status='success')` \
                          (`answer` only when the task asks a question)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"code": {"type": "string", "description": "The Python code to run."}},
                "required": ["code"]
            }),
        }]
    }
    fn max_rounds(&self) -> usize {
        30
    }
    fn submit_tool(&self) -> &'static str {
        TOOL
    }
    fn make_env(&self, task: &Task) -> Result<Box<dyn Environment>, EnvError> {
        let id = task.payload.get("task_id").and_then(Value::as_str).unwrap_or(&task.id);
        Ok(Box::new(self.open(id)?))
    }
    fn metrics(&self, outcomes: &[OutcomeForMetrics<'_>]) -> Value {
        metrics::metrics(outcomes)
    }
    fn verify(&self, tasks: &[Task]) -> VerifyReport {
        let mut report = VerifyReport { suite: "appworld".into(), ..VerifyReport::default() };
        let workers = self.server_urls().map(|u| u.len()).unwrap_or(1).max(1);
        let mismatch = |m: &str| Mismatch(m.to_string());
        let check = |task: &Task| -> Result<(), Mismatch> {
            let wt = world::tasks::find(&task.id).ok_or_else(|| mismatch("no reference solution: not a task of the bundled world"))?;
            let reference = wt.requirement().1.reference;
            let with = self.run_check(&task.id, Some(&reference)).map_err(|e| mismatch(e.message()))?;
            if !with.success {
                return Err(Mismatch(format!("the reference solution fails: {}", with.details["failures"])));
            }
            let without = self.run_check(&task.id, None).map_err(|e| mismatch(e.message()))?;
            if without.success {
                return Err(mismatch("doing nothing passes"));
            }
            Ok(())
        };
        let results: Vec<Result<(), Mismatch>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let check = &check;
                    scope.spawn(move || tasks.iter().enumerate().filter(|(i, _)| i % workers == w).map(|(i, t)| (i, check(t))).collect::<Vec<_>>())
                })
                .collect();
            // A worker that panicked still accounts for its tasks, as disagreements.
            let mut all: Vec<(usize, Result<(), Mismatch>)> = handles
                .into_iter()
                .enumerate()
                .flat_map(|(w, h)| {
                    h.join().unwrap_or_else(|_| {
                        (0..tasks.len()).filter(|i| i % workers == w).map(|i| (i, Err(mismatch("verification panicked")))).collect()
                    })
                })
                .collect();
            all.sort_by_key(|(i, _)| *i);
            all.into_iter().map(|(_, r)| r).collect()
        });
        for (task, result) in tasks.iter().zip(results) {
            report.record(&task.id, &task.family, result);
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
        "No code found. Write Python code in the `execute_python` tool; finish with apis.supervisor.complete_task()."
    }
    fn runs_agent_code(&self) -> bool {
        // the bundled world runs cells here; a real AppWorld server runs them itself
        self.config.urls.is_empty()
    }
}
