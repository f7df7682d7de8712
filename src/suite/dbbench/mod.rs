//! DBBench (AgentBench, function-calling form): SQL tasks over one table per record.

use std::path::Path;

use crate::policy::ToolSpec;
use crate::suite::{
    Action, EnvError, Environment, LoadError, OutcomeForMetrics, Score, StepOutcome, Suite,
    VerifyReport,
};
use crate::task::Task;

pub struct DbBench;

impl DbBench {
    pub fn new() -> Self {
        DbBench
    }
}

impl Default for DbBench {
    fn default() -> Self {
        Self::new()
    }
}

impl Suite for DbBench {
    fn name(&self) -> &'static str {
        "dbbench"
    }
    fn description(&self) -> &'static str {
        "AgentBench DBBench: answer questions about a table, or modify it, with SQL"
    }
    fn bundled_tasks(&self) -> Result<Vec<Task>, LoadError> {
        Ok(Vec::new())
    }
    fn load_file(&self, _path: &Path) -> Result<Vec<Task>, LoadError> {
        Ok(Vec::new())
    }
    fn tools(&self) -> Vec<ToolSpec> {
        Vec::new()
    }
    fn max_rounds(&self) -> usize {
        15
    }
    fn submit_tool(&self) -> &'static str {
        "commit_final_answer"
    }
    fn make_env(&self, _task: &Task) -> Result<Box<dyn Environment>, EnvError> {
        Err(EnvError("not built yet".into()))
    }
    fn metrics(&self, _outcomes: &[OutcomeForMetrics<'_>]) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn verify(&self, _tasks: &[Task]) -> VerifyReport {
        VerifyReport::default()
    }
    fn no_tool_call_message(&self) -> &'static str {
        "Internal error: No tool calls found despite finish reason."
    }
}

#[allow(dead_code)]
fn _unused(_: &Action, _: &Score, _: &StepOutcome) {}
