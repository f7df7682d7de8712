//! Named predicates over the episode state, the conditions of every hook.
//!
//! A hook's `when` list holds names such as `no_sql_yet`, `unknown_column_error`,
//! `error_streak:2`, `!first_step`. Generic predicates live here; a suite may add its own action
//! predicates (e.g. DBBench's `unquoted_identifier`), looked up through [`crate::suite::Suite`].

use crate::suite::{Action, Environment, Signals, Suite};

/// What the engine knows about the episode so far, as predicates read it.
#[derive(Clone, Debug, Default)]
pub struct EpisodeState {
    /// Policy decisions made so far (rounds used).
    pub step: usize,
    pub max_steps: usize,
    /// Every call so far: the action executed (or proposed, if blocked) and its signals.
    pub calls: Vec<(Action, Signals, String)>,
    /// The turn before had no tool call.
    pub last_turn_without_call: bool,
}

impl EpisodeState {
    pub fn last(&self) -> Option<&(Action, Signals, String)> {
        self.calls.last()
    }
    pub fn last_error(&self) -> Option<&str> {
        self.last().and_then(|c| c.1.error_kind.as_deref())
    }
    pub fn executed_any(&self) -> bool {
        self.calls.iter().any(|c| c.1.executed)
    }
    pub fn error_streak(&self) -> usize {
        self.calls.iter().rev().take_while(|c| c.1.error_kind.is_some()).count()
    }
    pub fn steps_left(&self) -> usize {
        self.max_steps.saturating_sub(self.step)
    }
}

/// The names the engine itself understands, with what they mean (shown by `harness-s harnesses`).
pub const GENERIC_PREDICATES: &[(&str, &str)] = &[
    ("always", "always holds"),
    ("first_step", "no decision has been made yet"),
    ("no_sql_yet", "no query has been executed yet (alias: no_query_yet)"),
    ("no_query_yet", "no query/command has been executed yet"),
    ("last_error", "the last call failed"),
    ("unknown_column_error", "the last call failed with an unknown column"),
    ("unknown_table_error", "the last call failed with an unknown table"),
    ("syntax_error", "the last call failed with a syntax error"),
    ("timeout_error", "the last call timed out"),
    ("error_streak", "the last N calls (default 2) all failed"),
    ("empty_result", "the last call returned no rows"),
    ("repeated_action", "the action (proposed, or else the last one) repeats an earlier one"),
    ("loop", "the same action has been made N times (default 3)"),
    ("steps_left_low", "at most N rounds (default 3) are left"),
    ("no_tool_call", "the last turn had no tool call"),
    ("submitting", "the proposed action is the final answer"),
    ("commit_without_query", "the proposed action is the final answer and nothing was executed"),
    ("commit_after_error", "the proposed action is the final answer right after a failed call"),
    ("commit_after_empty", "the proposed action is the final answer right after an empty result"),
    ("answer_not_in_result", "the proposed final answer has a value absent from the last observation"),
];

/// A parsed predicate reference: name, optional numeric argument, negation.
#[derive(Clone, Debug, PartialEq)]
pub struct PredicateRef {
    pub negated: bool,
    pub name: String,
    pub arg: Option<usize>,
}

/// A `when` entry that is not `[!]name[(n)]`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PredicateSyntaxError(pub String);

/// Parse a `when` entry: `name`, `!name`, `name(3)`.
pub fn parse_predicate(s: &str) -> Result<PredicateRef, PredicateSyntaxError> {
    let s = s.trim();
    let (negated, rest) = match s.strip_prefix('!') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (name, arg) = match rest.split_once(':') {
        Some((n, a)) => {
            let v = a.parse::<usize>().map_err(|_| PredicateSyntaxError(format!("`{s}`: the argument after `:` must be a whole number")))?;
            (n, Some(v))
        }
        None => (rest, None),
    };
    if name.is_empty() {
        return Err(PredicateSyntaxError(format!("`{s}` is not a predicate name")));
    }
    Ok(PredicateRef { negated, name: name.to_string(), arg })
}

/// Does `name` exist for this suite?
pub fn known(name: &str, suite: &dyn Suite) -> bool {
    GENERIC_PREDICATES.iter().any(|(n, _)| *n == name) || suite.action_predicate(name).is_some()
}

fn action_key(a: &Action) -> String {
    format!("{}|{}", a.name, a.arguments)
}

/// Evaluate one predicate. `proposed` is the action about to run (for `before_action` and
/// `critique` hooks); otherwise suite action predicates read the last action.
pub fn eval(p: &PredicateRef, state: &EpisodeState, proposed: Option<&Action>, suite: &dyn Suite, env: &dyn Environment) -> bool {
    let submit = suite.submit_tool();
    let is_submit = proposed.map(|a| a.name == submit).unwrap_or(false);
    let v = match p.name.as_str() {
        "always" => true,
        "first_step" => state.step == 0,
        "no_sql_yet" | "no_query_yet" => !state.executed_any(),
        "last_error" => state.last_error().is_some(),
        "unknown_column_error" => state.last_error() == Some("unknown_column"),
        "unknown_table_error" => state.last_error() == Some("unknown_table"),
        "syntax_error" => state.last_error() == Some("syntax"),
        "timeout_error" => state.last_error() == Some("timeout"),
        "error_streak" => state.error_streak() >= p.arg.unwrap_or(2),
        "empty_result" => state.last().map(|c| c.1.empty_result).unwrap_or(false),
        "repeated_action" => match proposed {
            Some(a) => state.calls.iter().any(|c| action_key(&c.0) == action_key(a)),
            None => match state.calls.split_last() {
                Some((last, rest)) => rest.iter().any(|c| action_key(&c.0) == action_key(&last.0)),
                None => false,
            },
        },
        "loop" => {
            let n = p.arg.unwrap_or(3);
            let mut counts = std::collections::HashMap::new();
            for c in &state.calls {
                *counts.entry(action_key(&c.0)).or_insert(0usize) += 1;
            }
            if let Some(a) = proposed {
                *counts.entry(action_key(a)).or_insert(0) += 1;
            }
            counts.values().any(|&c| c >= n)
        }
        "steps_left_low" => state.steps_left() <= p.arg.unwrap_or(3),
        "no_tool_call" => state.last_turn_without_call,
        "submitting" => is_submit,
        "commit_without_query" => is_submit && !state.executed_any(),
        "commit_after_error" => is_submit && state.last_error().is_some(),
        "commit_after_empty" => is_submit && state.last().map(|c| c.1.empty_result).unwrap_or(false),
        "answer_not_in_result" => is_submit && answer_not_in_last(proposed.unwrap(), state),
        other => match suite.action_predicate(other) {
            Some(f) => match proposed.or(state.last().map(|c| &c.0)) {
                Some(a) => f(a, env),
                None => false,
            },
            None => false,
        },
    };
    v != p.negated
}

/// Some committed value does not occur in the last observation (a guess, not a read-off).
fn answer_not_in_last(action: &Action, state: &EpisodeState) -> bool {
    let last_obs = match state.calls.iter().rev().find(|c| c.1.executed) {
        Some(c) => c.2.to_lowercase(),
        None => return true,
    };
    let values: Vec<String> = match action.arguments.as_object().and_then(|o| o.values().next()) {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect(),
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(other) => vec![other.to_string()],
        None => vec![],
    };
    values.iter().any(|v| {
        let v = v.trim().to_lowercase();
        !v.is_empty() && !last_obs.contains(&v)
    })
}
