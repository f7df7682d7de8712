//! SWE-Gym's behaviour tags: what the behaviour-persistence analysis looks for in a
//! trajectory's calls under the base harness.

use crate::message::ToolCall;
use crate::suite::{BehaviourTagger, CallRecord};

/// This suite's tagger.
pub const TAGGER: BehaviourTagger = BehaviourTagger { tags: TAGS, tag: tags };

pub const TAGS: &[(&str, &str, &str)] = &[
    ("reproduces_first", "ran Python before editing", "a command ran Python (the issue's example or the tests) before the first edit"),
    ("runs_tests_before_finish", "tests after the last edit", "the tests ran after the last edit and before `finish`"),
    ("opens_before_edit", "viewed the file first", "the file of the first edit was viewed with the editor before it was edited"),
];

fn swegym_command(call: &ToolCall) -> Option<&str> {
    (call.name == "execute_bash").then(|| call.arguments.get("command").and_then(|c| c.as_str()).unwrap_or(""))
}

fn swegym_edit_path(call: &ToolCall) -> Option<&str> {
    let command = call.arguments.get("command").and_then(|c| c.as_str())?;
    (call.name == "str_replace_editor" && matches!(command, "create" | "str_replace" | "insert"))
        .then(|| call.arguments.get("path").and_then(|p| p.as_str()).unwrap_or(""))
}

/// SWE-Gym's tags, from the policy's proposed calls and whether they ran.
pub fn tags(calls: &[&CallRecord]) -> Vec<bool> {
    let first_edit = calls.iter().position(|c| c.executed.is_some() && swegym_edit_path(&c.proposed).is_some());
    let runs_python = |c: &&CallRecord| c.executed.is_some() && swegym_command(&c.proposed).is_some_and(|cmd| cmd.contains("python"));
    let reproduces = first_edit.is_some_and(|i| calls[..i].iter().any(runs_python));
    let runs_tests = |c: &&CallRecord| c.executed.is_some() && swegym_command(&c.proposed).is_some_and(super::runs_tests);
    let last_edit = calls.iter().rposition(|c| c.executed.is_some() && swegym_edit_path(&c.proposed).is_some());
    let finish = calls.iter().position(|c| c.executed.is_some() && c.proposed.name == "finish");
    let tests_before_finish = match (last_edit, finish) {
        (Some(e), Some(f)) if e < f => calls[e..f].iter().any(runs_tests),
        _ => false,
    };
    let opens = first_edit.is_some_and(|i| {
        let path = swegym_edit_path(&calls[i].proposed).unwrap_or("");
        calls[..i].iter().any(|c| {
            c.proposed.name == "str_replace_editor"
                && c.proposed.arguments.get("command").and_then(|x| x.as_str()) == Some("view")
                && c.proposed.arguments.get("path").and_then(|p| p.as_str()) == Some(path)
        })
    });
    vec![reproduces, tests_before_finish, opens]
}
