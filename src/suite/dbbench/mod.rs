//! DBBench (AgentBench, function-calling form): SQL tasks over one or more tables per record.
//!
//! Code map:
//! - [`record`]: the official JSONL format, validation, tasks, the bundled dataset's location;
//! - [`sqltext`]: the MySQL tokenizer and identifier facts every other part shares;
//! - [`translate`]: MySQL statements to SQLite (or to meta statements like `SHOW TABLES`);
//! - [`functions`]: the `mysql_ci` collation and MySQL functions registered in SQLite, with
//!   [`regex`] for REGEXP;
//! - [`groupby`]: MySQL's `ONLY_FULL_GROUP_BY` check;
//! - [`executor`]: the [`SqlExecutor`] trait, the embedded [`SqliteExecutor`], MySQL-form errors,
//!   the table hash; [`mysql`]: the optional [`MySqlExecutor`](mysql::MySqlExecutor);
//! - [`render`]: observations as Python's `str()` of mysql-connector rows;
//! - [`pyval`] + [`score`]: AgentBench's result processor;
//! - [`metrics`]: per-type and per-category accuracy;
//! - [`hooks`]: the `quote_identifiers` rewrite and DBBench's action predicates.
//!
//! Architecture invariant: [`DbEnv`] sees only actions. It never reads hints or injected context,
//! and its scorer depends only on the record and the database state.

pub mod behaviour;
pub mod collation;
pub mod convert;
pub mod executor;
pub mod functions;
pub mod grammar;
pub mod groupby;
pub mod hooks;
pub mod metrics;
pub mod mysql;
pub mod pyval;
pub mod record;
pub mod regex;
pub mod render;
pub mod score;
pub mod sqltext;
pub mod translate;
pub mod value;
pub mod words;

use std::path::Path;

use serde_json::{json, Value};

pub use executor::{SqlExecutor, SqliteExecutor};
pub use record::{load_jsonl, ColumnSpec, DbRecord, QueryType, TableSpec};
pub use value::{ErrorKind, ExecOptions, ExecResult, RowSet, SqlError, SqlValue};

use crate::message::ToolSpec;
use crate::suite::{
    Action, ActionPredicateFn, EnvError, Environment, LoadError, Mismatch, OutcomeForMetrics, RewriteFn, Score, Signals, StepOutcome, Suite,
    VerifyReport,
};
use crate::task::Task;
use pyval::Py;

/// AgentBench's reply to tool arguments that are not a JSON object.
pub const PARSE_ERROR: &str = "Error: Failed to parse tool call. Tool call format is incorrect.";
/// AgentBench's reply to an unknown tool.
pub const INVALID_CALL: &str = "Invalid function call. Please call a tool instead.";
/// The observation after `commit_final_answer`.
pub const COMMITTED: &str = "Answer committed.";

/// Which database runs the episodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Backend {
    /// The embedded in-memory SQLite executor (default).
    #[default]
    Sqlite,
    /// A MySQL or MariaDB server, e.g. `mysql://root:password@127.0.0.1:3306/`.
    MySql { url: String },
}

/// Suite configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DbBenchConfig {
    pub backend: Backend,
    pub exec: ExecOptions,
}

/// Environment variable selecting a MySQL/MariaDB server instead of the embedded executor.
pub const ENV_MYSQL_URL: &str = "HARNESS_S_DBBENCH_MYSQL_URL";
/// Environment variable overriding the per-statement time limit, in seconds.
pub const ENV_TIME_LIMIT: &str = "HARNESS_S_DBBENCH_TIME_LIMIT";

impl DbBenchConfig {
    /// The default configuration, adjusted by [`ENV_MYSQL_URL`] and [`ENV_TIME_LIMIT`].
    pub fn from_env() -> DbBenchConfig {
        let mut c = DbBenchConfig::default();
        if let Ok(url) = std::env::var(ENV_MYSQL_URL) {
            if !url.trim().is_empty() {
                c.backend = Backend::MySql { url: url.trim().to_string() };
            }
        }
        if let Some(secs) = std::env::var(ENV_TIME_LIMIT).ok().and_then(|v| v.trim().parse::<f64>().ok()) {
            if secs.is_finite() && secs > 0.0 {
                c.exec.time_limit = std::time::Duration::from_secs_f64(secs.min(3600.0));
            }
        }
        c
    }
}

/// The DBBench suite.
pub struct DbBench {
    config: DbBenchConfig,
}

impl DbBench {
    /// The suite as configured by the environment: the embedded SQLite executor and a 5 s
    /// statement limit unless [`ENV_MYSQL_URL`] / [`ENV_TIME_LIMIT`] say otherwise.
    pub fn new() -> Self {
        DbBench { config: DbBenchConfig::from_env() }
    }

    pub fn with_config(config: DbBenchConfig) -> Self {
        DbBench { config }
    }

    pub fn config(&self) -> &DbBenchConfig {
        &self.config
    }

    /// A fresh episode database holding `tables`.
    pub fn executor(&self, tables: &[TableSpec]) -> Result<Box<dyn SqlExecutor>, EnvError> {
        new_executor(&self.config, tables)
    }

    /// The environment for one record.
    pub fn env_for(&self, record: DbRecord) -> Result<DbEnv, EnvError> {
        DbEnv::new(record, self.config.clone())
    }
}

impl Default for DbBench {
    fn default() -> Self {
        Self::new()
    }
}

fn new_executor(config: &DbBenchConfig, tables: &[TableSpec]) -> Result<Box<dyn SqlExecutor>, EnvError> {
    Ok(match &config.backend {
        Backend::Sqlite => Box::new(SqliteExecutor::with_options(tables, config.exec.clone())?),
        Backend::MySql { url } => Box::new(mysql::MySqlExecutor::connect(url, tables, config.exec.clone())?),
    })
}

/// The hash the record expects after its mutation: `answer_md5`, or (when it is missing) the hash
/// of a fresh database after running the gold SQL.
pub fn expected_hash(config: &DbBenchConfig, record: &DbRecord) -> Result<Py, EnvError> {
    if let Some(h) = record.expected_md5() {
        return Ok(Py::Str(h.to_string()));
    }
    let mut exec = new_executor(config, &record.tables)?;
    if let Some(sql) = record.gold_sql() {
        // As in AgentBench, a failing gold statement leaves the tables as they are.
        let _ = exec.execute(sql);
    }
    Ok(Py::Str(exec.tables_hash(&record.tables)))
}

/// One DBBench episode.
pub struct DbEnv {
    record: DbRecord,
    exec: Box<dyn SqlExecutor>,
    config: DbBenchConfig,
    done: bool,
    numeric_columns: Vec<(String, bool)>,
}

/// Tool arguments as AgentBench reads them: a JSON object, or a string holding one.
fn arguments_object(args: &Value) -> Option<serde_json::Map<String, Value>> {
    match args {
        Value::Object(o) => Some(o.clone()),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

impl DbEnv {
    pub fn new(record: DbRecord, config: DbBenchConfig) -> Result<DbEnv, EnvError> {
        let exec = new_executor(&config, &record.tables)?;
        Ok(Self::with_executor(record, exec, config))
    }

    /// An environment over an executor the caller built (which must hold the record's tables).
    pub fn with_executor(record: DbRecord, exec: Box<dyn SqlExecutor>, config: DbBenchConfig) -> DbEnv {
        let mut numeric_columns = Vec::new();
        for t in &record.tables {
            for (i, c) in t.columns.iter().enumerate() {
                let values: Vec<String> = t.rows.iter().filter_map(|r| r.get(i).cloned()).collect();
                let (numeric, misconverted) = hooks::profile_values(&values);
                if numeric {
                    numeric_columns.push((c.name.clone(), misconverted));
                }
            }
        }
        DbEnv { record, exec, config, done: false, numeric_columns }
    }

    pub fn record(&self) -> &DbRecord {
        &self.record
    }

    /// The episode database.
    pub fn executor(&mut self) -> &mut dyn SqlExecutor {
        self.exec.as_mut()
    }

    fn sample_rows(t: &TableSpec, n: usize) -> String {
        let rows: Vec<Vec<SqlValue>> = t.rows.iter().take(n).map(|r| r.iter().map(|v| SqlValue::Text(v.clone())).collect()).collect();
        render::cut(render::rows_repr(&rows))
    }

    fn schema_card(&self) -> String {
        let mut out = Vec::new();
        for t in &self.record.tables {
            let mut s = format!("Table {} ({} rows)\nColumns:\n", sqltext::backquote(&t.name), t.rows.len());
            for c in &t.columns {
                s.push_str(&format!("  - {} {}\n", sqltext::backquote(&c.name), c.decl_type));
            }
            s.push_str(&format!("Sample rows: {}", Self::sample_rows(t, 3)));
            out.push(s);
        }
        out.join("\n\n")
    }

    fn score_details(&self, answer: Value, ground_truth: Value, is_correct: bool) -> Value {
        json!({
            "type": self.record.query_type.as_str(),
            "answer": answer,
            "ground_truth": ground_truth,
            "is_correct": is_correct,
            "std_sql": self.record.sql_query,
        })
    }
}

fn outcome(observation: impl Into<String>, done: bool, signals: Signals) -> StepOutcome {
    StepOutcome { observation: observation.into(), done, signals }
}

fn bad_arguments(observation: &str) -> StepOutcome {
    outcome(observation, false, Signals { error_kind: Some("bad_arguments".into()), ..Signals::default() })
}

impl Environment for DbEnv {
    fn task_prompt(&self) -> String {
        self.record.prompt()
    }

    fn step(&mut self, action: &Action) -> Result<StepOutcome, EnvError> {
        if self.done {
            return Ok(outcome("The answer has already been committed; the task is over.", true, Signals::default()));
        }
        match action.name.as_str() {
            "execute_sql" => {
                let Some(args) = arguments_object(&action.arguments) else { return Ok(bad_arguments(PARSE_ERROR)) };
                let Some(value) = args.get("query").or_else(|| args.values().next()) else {
                    return Ok(bad_arguments("Error executing query: list index out of range"));
                };
                let Some(sql) = value.as_str() else {
                    return Ok(bad_arguments("Error executing query: the query must be a string"));
                };
                let result = self.exec.execute(sql);
                let signals = Signals {
                    error_kind: result.as_ref().err().map(|e| e.kind.as_str().to_string()),
                    executed: true,
                    empty_result: result.as_ref().is_ok_and(|r| r.result_set && r.rows.is_empty()),
                    submitted: false,
                };
                Ok(outcome(render::observation(&result), false, signals))
            }
            "commit_final_answer" => {
                if arguments_object(&action.arguments).is_none() {
                    return Ok(bad_arguments(PARSE_ERROR));
                }
                self.done = true;
                Ok(outcome(COMMITTED, true, Signals { submitted: true, ..Signals::default() }))
            }
            _ => Ok(outcome(INVALID_CALL, false, Signals { error_kind: Some("unknown_tool".into()), ..Signals::default() })),
        }
    }

    fn score(&mut self, submitted: Option<&Action>) -> Result<Score, EnvError> {
        let qt = self.record.query_type;
        let gt_json = if qt.is_mutation() {
            self.record.answer_md5.clone().map(Value::String).unwrap_or(Value::Null)
        } else {
            Value::Array(self.record.label.clone())
        };
        let fail = |this: &Self, answer: Value, reason: &str| {
            let mut d = this.score_details(answer, gt_json.clone(), false);
            d["reason"] = json!(reason);
            Score { reward: 0.0, success: false, details: d }
        };
        let Some(action) = submitted else { return Ok(fail(self, Value::Null, "no answer committed")) };
        let Some(args) = arguments_object(&action.arguments) else {
            return Ok(fail(self, action.arguments.clone(), "the commit's arguments are not a JSON object"));
        };
        let answer_json = args.get("answers").or_else(|| args.values().next()).cloned().unwrap_or(Value::Null);
        let Some(answer) = score::committed_answer(&Value::Object(args.clone())) else {
            return Ok(fail(self, Value::Null, "the commit has no answer value"));
        };
        let (is_correct, extra) = if qt.is_mutation() {
            let hash = self.exec.tables_hash(&self.record.tables);
            let expected = expected_hash(&self.config, &self.record)?;
            let ok = score::compare_results(&Py::Str(hash.clone()), &expected, qt);
            (ok, json!({"answer_hash": hash, "expected_hash": score::clean_answer(&expected)}))
        } else {
            let gt = Py::List(self.record.label.iter().map(Py::from_json).collect());
            let ok = score::compare_results(&answer, &gt, qt);
            (ok, json!({"processed_answer": score::clean_answer(&answer), "processed_ground_truth": score::clean_answer(&gt)}))
        };
        let mut details = self.score_details(answer_json, gt_json, is_correct);
        if let (Some(d), Some(e)) = (details.as_object_mut(), extra.as_object()) {
            d.extend(e.clone());
        }
        Ok(Score { reward: if is_correct { 1.0 } else { 0.0 }, success: is_correct, details })
    }

    fn resource(&self, name: &str) -> Option<String> {
        let tables = &self.record.tables;
        match name {
            "table_name" => Some(tables.iter().map(|t| t.name.clone()).collect::<Vec<_>>().join(", ")),
            "columns" => {
                let cols: Vec<String> = tables.iter().flat_map(|t| t.column_names()).collect();
                Some(Value::from(cols).to_string())
            }
            "tables" => Some(
                Value::Array(
                    tables
                        .iter()
                        .map(|t| {
                            json!({
                                "name": t.name,
                                "columns": t.column_names(),
                                "types": t.columns.iter().map(|c| c.decl_type.clone()).collect::<Vec<_>>(),
                                "row_count": t.rows.len(),
                            })
                        })
                        .collect(),
                )
                .to_string(),
            ),
            "schema_card" => Some(self.schema_card()),
            "sample_rows" => Some(tables.iter().map(|t| Self::sample_rows(t, 3)).collect::<Vec<_>>().join("\n")),
            "row_count" => Some(if tables.len() == 1 {
                tables[0].rows.len().to_string()
            } else {
                Value::Object(tables.iter().map(|t| (t.name.clone(), json!(t.rows.len()))).collect()).to_string()
            }),
            "numeric_columns" => {
                Some(Value::Array(self.numeric_columns.iter().map(|(n, m)| json!({"name": n, "misconverted": m})).collect()).to_string())
            }
            _ => None,
        }
    }
}

/// Check one record's gold: `Ok(())` if it agrees, `Err(reason)` otherwise.
pub fn verify_record(config: &DbBenchConfig, record: &DbRecord) -> Result<(), Mismatch> {
    let qt = record.query_type;
    if !qt.is_mutation() {
        let label = Py::List(record.label.iter().map(Py::from_json).collect());
        return if score::compare_results(&label, &label, qt) {
            Ok(())
        } else {
            Err(format!("the label {} does not match itself after normalisation", label.repr()).into())
        };
    }
    let Some(sql) = record.gold_sql() else {
        return Err("no gold SQL (`label[0]` or `sql.query`) to run".into());
    };
    let mut exec = new_executor(config, &record.tables).map_err(|e| format!("executor: {e}"))?;
    if let Err(e) = exec.execute(sql) {
        return Err(format!("gold SQL failed: {}", render::error_text(&e)).into());
    }
    let got = exec.tables_hash(&record.tables);
    let Some(expected) = record.expected_md5() else { return Ok(()) };
    let expected_py = Py::Str(expected.to_string());
    if score::compare_results(&Py::Str(got.clone()), &expected_py, qt) {
        Ok(())
    } else {
        let exp = score::clean_answer(&expected_py).and_then(|v| v.into_iter().next()).unwrap_or_default();
        Err(format!("expected hash {exp}, got {got}").into())
    }
}

/// What `load_file` reads.
const FORMAT: &str = "DBBench: JSONL records";

impl Suite for DbBench {
    fn name(&self) -> &'static str {
        "dbbench"
    }
    fn description(&self) -> &'static str {
        "AgentBench DBBench: answer questions about a table, or modify it, with SQL"
    }
    fn bundled_tasks(&self) -> Result<Vec<Task>, LoadError> {
        record::bundled_tasks()
    }
    fn load_file(&self, path: &Path) -> Result<Vec<Task>, LoadError> {
        record::load_tasks(path)
    }
    fn tools(&self) -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "execute_sql".into(),
                description: "Execute one MySQL statement (SELECT, INSERT, UPDATE, DELETE, SHOW, DESCRIBE) against the \
                              task's database and return the raw result: the rows as a Python-style list of tuples, \
                              or the MySQL error. Only one statement per call; quote names with spaces or punctuation \
                              in backticks."
                    .into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "The SQL statement to execute, on one line."}
                    },
                    "required": ["query"]
                }),
            },
            ToolSpec {
                name: "commit_final_answer".into(),
                description: "Commit your final answer and end the task. For a question, give every answer value as a \
                              string (one list element per value). For a task that modifies the database, make the \
                              change with execute_sql first; the answers are then not checked."
                    .into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "answers": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "The answer values, e.g. [\"Giza\"] or [\"12\", \"15\"]."
                        }
                    },
                    "required": ["answers"]
                }),
            },
        ]
    }
    fn max_rounds(&self) -> usize {
        15
    }
    fn submit_tool(&self) -> &'static str {
        "commit_final_answer"
    }
    fn make_env(&self, task: &Task) -> Result<Box<dyn Environment>, EnvError> {
        let record = record::record_of(task).map_err(|e| EnvError::Infra(format!("task {}: {e}", task.id)))?;
        Ok(Box::new(self.env_for(record)?))
    }
    fn metrics(&self, outcomes: &[OutcomeForMetrics<'_>]) -> Value {
        metrics::metrics(outcomes)
    }
    fn verify(&self, tasks: &[Task]) -> VerifyReport {
        let mut report = VerifyReport { suite: "dbbench".into(), ..VerifyReport::default() };
        for task in tasks {
            let (group, result) = match record::record_of(task) {
                Ok(r) => (r.query_type.as_str().to_string(), verify_record(&self.config, &r)),
                Err(e) => ("invalid".to_string(), Err(format!("invalid record: {e}").into())),
            };
            report.record(&task.id, &group, result);
        }
        report
    }
    fn rewrite(&self, name: &str) -> Option<RewriteFn> {
        match name {
            "quote_identifiers" => Some(hooks::quote_identifiers),
            _ => None,
        }
    }
    fn action_predicate(&self, name: &str) -> Option<ActionPredicateFn> {
        match name {
            "unquoted_identifier" => Some(hooks::unquoted_identifier),
            "cast_needed" => Some(hooks::cast_needed),
            _ => None,
        }
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
        "Internal error: No tool calls found despite finish reason."
    }
}
