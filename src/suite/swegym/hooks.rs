//! What SWE-Gym offers harness hooks: action predicates over the proposed (or last) action and
//! the facts the environment makes discoverable (`facts`, `syntax_check`), never the instance.

use super::tools::{BASH, EDITOR, FINISH};
use super::{runs_tests, Facts};
use crate::suite::{Action, ActionPredicateFn, Environment};

/// The predicates, with what they mean (shown by `harness-s harnesses`).
pub const PREDICATES: &[(&str, &str)] = &[
    ("editing", "the action changes a file with the editor (create, str_replace, insert)"),
    ("edit_before_reproduce", "the action edits a file before any command has run Python"),
    ("running_tests", "the action runs the tests"),
    ("finish_without_edit", "the action is `finish` and no file was edited"),
    ("finish_untested", "the action is `finish` and the tests have not run since the last edit"),
    ("python_syntax_error", "the last edited Python file does not parse"),
    ("tests_failed", "the last test run failed"),
];

pub fn predicate(name: &str) -> Option<ActionPredicateFn> {
    Some(match name {
        "editing" => editing,
        "edit_before_reproduce" => edit_before_reproduce,
        "running_tests" => running_tests,
        "finish_without_edit" => finish_without_edit,
        "finish_untested" => finish_untested,
        "python_syntax_error" => python_syntax_error,
        "tests_failed" => tests_failed,
        _ => return None,
    })
}

fn facts(env: &dyn Environment) -> Facts {
    env.resource("facts").and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default()
}

fn arg<'a>(a: &'a Action, key: &str) -> Option<&'a str> {
    a.arguments.get(key).and_then(|v| v.as_str())
}

pub fn editing(a: &Action, _env: &dyn Environment) -> bool {
    a.name == EDITOR && matches!(arg(a, "command"), Some("create" | "str_replace" | "insert"))
}

pub fn edit_before_reproduce(a: &Action, env: &dyn Environment) -> bool {
    editing(a, env) && {
        let f = facts(env);
        f.edits == 0 && f.python_before_edit == 0
    }
}

pub fn running_tests(a: &Action, _env: &dyn Environment) -> bool {
    a.name == BASH && arg(a, "command").map(runs_tests).unwrap_or(false)
}

pub fn finish_without_edit(a: &Action, env: &dyn Environment) -> bool {
    a.name == FINISH && facts(env).edits == 0
}

pub fn finish_untested(a: &Action, env: &dyn Environment) -> bool {
    a.name == FINISH && {
        let f = facts(env);
        f.edits > 0 && !f.tested_since_edit
    }
}

pub fn python_syntax_error(_a: &Action, env: &dyn Environment) -> bool {
    env.resource("syntax_check").map(|s| !s.is_empty()).unwrap_or(false)
}

pub fn tests_failed(_a: &Action, env: &dyn Environment) -> bool {
    facts(env).last_tests_failed
}
