//! DBBench's behaviour tags: what the behaviour-persistence analysis looks for in a
//! trajectory's calls under the base harness.

use crate::message::ToolCall;
use crate::suite::{BehaviourTagger, CallRecord};

/// This suite's tagger.
pub const TAGGER: BehaviourTagger = BehaviourTagger { tags: TAGS, tag: tags };

pub const TAGS: &[(&str, &str, &str)] = &[
    ("inspects_first", "first call is SELECT *", "the first call is `SELECT * ...` (looks at the table before answering)"),
    ("quotes_identifiers", "backquoted identifiers", "some query quotes identifiers with backquotes"),
    ("casts_text_numbers", "CAST / REPLACE on text", "some query converts text to numbers (CAST(...) or REPLACE(...))"),
    ("checks_before_commit", "checked result before commit", "the call right before the commit is a query that returned rows without an error"),
];

fn query_of(call: &ToolCall) -> Option<String> {
    (call.name == "execute_sql").then(|| call.arguments.get("query").and_then(|q| q.as_str()).unwrap_or("").to_string())
}

fn normalise(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ").to_uppercase()
}

/// `NAME(` or `NAME (` as a function call, not part of a longer word.
fn has_call(upper: &str, name: &str) -> bool {
    let b = upper.as_bytes();
    let mut from = 0;
    while let Some(i) = upper[from..].find(name) {
        let at = from + i;
        let before_ok = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let rest = upper[at + name.len()..].trim_start();
        if before_ok && rest.starts_with('(') {
            return true;
        }
        from = at + name.len();
    }
    false
}

/// DBBench's tags, from the policy's proposed calls and the observations' signals.
pub fn tags(calls: &[&CallRecord]) -> Vec<bool> {
    let queries: Vec<String> = calls.iter().filter_map(|c| query_of(&c.proposed)).collect();
    let inspects_first = calls.first().and_then(|c| query_of(&c.proposed)).map(|q| normalise(&q).starts_with("SELECT *")).unwrap_or(false);
    let quotes = queries.iter().any(|q| q.contains('`'));
    let casts = queries.iter().any(|q| {
        let u = normalise(q);
        has_call(&u, "CAST") || has_call(&u, "REPLACE")
    });
    let checks = calls.iter().position(|c| c.proposed.name == "commit_final_answer").is_some_and(|i| {
        i > 0 && {
            let prev = calls[i - 1];
            prev.proposed.name == "execute_sql"
                && prev.signals.error_kind.is_none()
                && !prev.signals.empty_result
                && !prev.observation.trim().is_empty()
        }
    });
    vec![inspects_first, quotes, casts, checks]
}
