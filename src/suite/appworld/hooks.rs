//! AppWorld's action predicates for harness hooks. They read the proposed code cell and the
//! facts the environment offers as resources (`executed_code`, `last_output`,
//! `last_error_kind`), never harness text.

use crate::suite::{Action, ActionPredicateFn, Environment};

/// The code of an `execute_python` call.
pub fn code_of(a: &Action) -> String {
    match &a.arguments {
        serde_json::Value::Object(o) => o.get("code").and_then(|c| c.as_str()).unwrap_or("").to_string(),
        serde_json::Value::String(s) => serde_json::from_str::<serde_json::Value>(s)
            .ok()
            .and_then(|v| v.get("code").and_then(|c| c.as_str()).map(str::to_string))
            .unwrap_or_else(|| s.clone()),
        _ => String::new(),
    }
}

fn completes(code: &str) -> bool {
    code.contains("complete_task(")
}

/// The proposed cell calls `apis.supervisor.complete_task`.
fn completing(a: &Action, _: &dyn Environment) -> bool {
    completes(&code_of(a))
}

/// The proposed cell completes the task although no earlier cell printed anything to check.
fn complete_unverified(a: &Action, env: &dyn Environment) -> bool {
    completing(a, env) && env.resource("printed_any").as_deref() != Some("true")
}

/// The proposed cell completes the task right after a failed cell.
fn complete_after_error(a: &Action, env: &dyn Environment) -> bool {
    completing(a, env) && env.resource("last_error_kind").is_some_and(|k| !k.is_empty())
}

/// Nothing executed so far has read `api_docs`, and the proposed cell calls an app API.
fn docs_unread(a: &Action, env: &dyn Environment) -> bool {
    let code = code_of(a);
    let before = env.resource("executed_code").unwrap_or_default();
    !before.contains("api_docs") && !code.contains("api_docs") && code.contains("apis.")
}

/// The last output is a full page of a listing (5 or 20 items): there may be more pages.
fn full_page(_: &Action, env: &dyn Environment) -> bool {
    let out = env.resource("last_output").unwrap_or_default();
    let t = out.trim();
    if !(t.starts_with('[') && t.ends_with(']')) {
        return false;
    }
    // count top-level items of a printed list of dicts
    let mut depth = 0i32;
    let mut items = 0usize;
    for c in t.chars() {
        match c {
            '{' => {
                if depth == 1 {
                    items += 1;
                }
                depth += 1;
            }
            '[' => depth += 1,
            '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    items == 5 || items == 20
}

fn error_is(env: &dyn Environment, kind: &str) -> bool {
    env.resource("last_error_kind").as_deref() == Some(kind)
}

fn unauthorized_error(_: &Action, env: &dyn Environment) -> bool {
    error_is(env, "unauthorized")
}

fn bad_arguments_error(_: &Action, env: &dyn Environment) -> bool {
    error_is(env, "bad_arguments") || error_is(env, "not_found")
}

fn unsafe_code_error(_: &Action, env: &dyn Environment) -> bool {
    error_is(env, "unsafe")
}

/// AppWorld's predicates by name.
pub fn predicate(name: &str) -> Option<ActionPredicateFn> {
    Some(match name {
        "completing" => completing,
        "complete_unverified" => complete_unverified,
        "complete_after_error" => complete_after_error,
        "docs_unread" => docs_unread,
        "full_page" => full_page,
        "unauthorized_error" => unauthorized_error,
        "bad_arguments_error" => bad_arguments_error,
        "unsafe_code_error" => unsafe_code_error,
        _ => return None,
    })
}

/// The error class of an observation (`None` when the cell succeeded).
pub fn error_kind(output: &str) -> Option<&'static str> {
    let i = output.find("Execution failed. Traceback:")?;
    let tb = &output[i..];
    Some(if tb.contains("is not allowed") {
        "unsafe"
    } else if tb.contains("TimeoutError") {
        "timeout"
    } else if tb.contains("status code is 401") {
        "unauthorized"
    } else if tb.contains("status code is 404") {
        "not_found"
    } else if tb.contains("status code is 422") || tb.contains("TypeError") {
        "bad_arguments"
    } else if tb.contains("SyntaxError") || tb.contains("IndentationError") {
        "syntax"
    } else if tb.contains("NameError") {
        "name_error"
    } else if tb.contains("KeyError") || tb.contains("IndexError") {
        "lookup_error"
    } else {
        "exception"
    })
}
