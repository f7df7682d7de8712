//! AppWorld's behaviour tags: what the behaviour-persistence analysis looks for in a
//! trajectory's calls under the base harness.

use crate::message::ToolCall;
use crate::suite::{BehaviourTagger, CallRecord};

/// This suite's tagger.
pub const TAGGER: BehaviourTagger = BehaviourTagger { tags: TAGS, tag: tags };

pub const TAGS: &[(&str, &str, &str)] = &[
    ("reads_docs_first", "first cell reads api_docs", "the first cell calls apis.api_docs (looks the APIs up before using them)"),
    ("logs_in_before_calling", "logs in before token calls", "a successful login comes before the first cell that passes an access token"),
    ("pages_through_results", "loops over pages", "some cell reads a listing page by page (page_index in a loop)"),
    ("verifies_before_completing", "checked output before complete", "the cell right before complete_task ran without error and printed something"),
];

fn code_of(call: &ToolCall) -> String {
    super::hooks::code_of(call)
}

/// AppWorld's tags, from the policy's proposed cells and what they printed.
pub fn tags(calls: &[&CallRecord]) -> Vec<bool> {
    let codes: Vec<String> = calls.iter().map(|c| code_of(&c.proposed)).collect();
    let ok = |c: &CallRecord| c.executed.is_some() && c.signals.error_kind.is_none();
    let reads_docs_first = codes.first().is_some_and(|c| c.contains("apis.api_docs."));
    let first_token = codes.iter().position(|c| c.contains("access_token="));
    let first_login = calls.iter().zip(&codes).position(|(c, code)| code.contains(".login(") && ok(c));
    let logs_in = matches!((first_login, first_token), (Some(l), Some(t)) if l <= t);
    let pages = codes.iter().any(|c| c.contains("page_index=") && (c.contains("while ") || c.contains("for ")));
    let verifies = codes.iter().position(|c| c.contains("complete_task(")).is_some_and(|i| {
        i > 0 && ok(calls[i - 1]) && {
            let out = calls[i - 1].observation.trim();
            !out.is_empty() && out != "Execution successful."
        }
    });
    vec![reads_docs_first, logs_in, pages, verifies]
}
