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

/// Arguments a listing takes that choose no items: the token and the page.
const NOT_FILTERS: [&str; 3] = ["access_token", "page_index", "page_limit"];

/// The keyword names of a call's arguments, from the text right after its `(` up to the
/// parenthesis that closes it (`a=1, b=f(c=2))` -> `a`, `b`); `None` when it never closes.
/// Brackets and commas inside strings count for nothing.
fn call_keywords(after_open: &str) -> Option<Vec<String>> {
    let (mut depth, mut quote, mut escaped, mut start) = (0i32, None::<char>, false, 0usize);
    let mut names = Vec::new();
    let mut piece = |p: &str| {
        if let Some((name, _)) = p.split_once('=') {
            let name = name.trim();
            if super::is_name(name) {
                names.push(name.to_string());
            }
        }
    };
    for (i, c) in after_open.char_indices() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')') if depth == 0 => {
                piece(&after_open[start..i]);
                return Some(names);
            }
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                piece(&after_open[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// The filters an API documents: its parameters other than the token and the page, read from
/// its documentation (`None` when the environment cannot show it).
fn filters_of(env: &dyn Environment, app: &str, api: &str) -> Option<Vec<String>> {
    let (_, _, params) = super::grammar::api_doc(&env.resource(&format!("api_doc/{app}/{api}"))?)?;
    Some(params.into_iter().map(|p| p.name).filter(|n| !NOT_FILTERS.contains(&n.as_str())).collect())
}

/// The executed cell called an app's API that documents filters (a search query, a field to
/// match) without passing any of them: with `full_page`, a listing read whole and unnarrowed.
fn unfiltered_listing(a: &Action, env: &dyn Environment) -> bool {
    let code = code_of(a);
    let mut rest = code.as_str();
    while let Some(i) = rest.find("apis.") {
        rest = &rest[i + 5..];
        let Some(open) = rest.find('(') else { break };
        let target = &rest[..open];
        let Some((app, api)) = target.split_once('.') else { continue };
        if matches!(app, "api_docs" | "supervisor") || api == "login" || !super::is_name(app) || !super::is_name(api) {
            continue;
        }
        let Some(passed) = call_keywords(&rest[open + 1..]) else { break };
        if filters_of(env, app, api).is_some_and(|fs| !fs.is_empty() && !fs.iter().any(|f| passed.contains(f))) {
            return true;
        }
    }
    false
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
        "unfiltered_listing" => unfiltered_listing,
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

#[cfg(test)]
mod tests {
    use super::call_keywords;

    #[test]
    fn a_calls_keywords_are_read_up_to_its_closing_parenthesis_and_strings_hide_nothing() {
        assert_eq!(call_keywords("access_token=t, page_index=0)\nprint(x)"), Some(vec!["access_token".into(), "page_index".into()]));
        assert_eq!(call_keywords("access_token=f(a=1), query=\"a, b=(\")"), Some(vec!["access_token".into(), "query".into()]));
        assert_eq!(call_keywords("query='it\\'s), email=x')"), Some(vec!["query".into()]));
        assert_eq!(call_keywords(")"), Some(vec![]));
        assert_eq!(call_keywords("access_token=t"), None);
    }
}
