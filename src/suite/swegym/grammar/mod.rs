//! The built-in policy's action grammar for SWE tasks (OpenHands-style tools).
//!
//! Reading only the rendered context, it finds the issue, the names it mentions (`name(` and
//! `` `name` ``), the code snippet it shows, every place the context points at (traceback frames
//! `File "/testbed/...", line N, in f`, search hits `path:line:text`, dotted module names), the
//! files the editor has shown (with their numbered lines), and what the last test run said. An
//! action is built by slot decisions:
//!
//! - `kind`: search / open / reproduce / edit / test / undo / finish;
//! - `search`: which mentioned name to look up (`grep -rn -E "(def|class) NAME\b"`);
//! - `open`: which pointed-at file to view;
//! - `line` and `op`: which line of the viewed file to change, and which repair operator
//!   ([`crate::suite::swegym::operators`]) to apply there; the `str_replace` is built from the
//!   line's own text (with the line before it when the text is not unique);
//! - a reproduction runs the issue's own snippet; the tests run `python3 -m unittest`.
//!
//! Every argument is a span of the context (a path, a name, a line as shown) or one of the
//! grammar's fixed commands. Features describe options generically (where a line stands relative
//! to what the context points at, which operator class, which generic cue words the issue uses),
//! never a particular file, function or task.
//!
//! By role: `view.rs` reads the context, `builder.rs` makes the slot decisions and `search.rs`
//! searches the grammar; this file holds the cue lists, the `Grammar` implementation and the tests.

mod builder;
mod search;
mod view;

pub use builder::*;
pub use search::*;
pub use view::*;

use crate::grammar::kit::{decide_into, f, id_by_tool_calls, innate, push_call, turn, Built, Chooser, Decision, Dfs, Solution};
use crate::grammar::model::Feature;
use crate::grammar::Grammar;
use crate::message::{CallKind, Context, Role, ToolCall};
use crate::suite::swegym::operators::{editable, edits, LineEdit};
use crate::suite::{SearchFrame, Suite};
use crate::task::Task;

pub const REPO: &str = "/testbed";
/// The grammar's test command.
pub const TEST_COMMAND: &str = "python3 -m unittest";
const KINDS: [&str; 7] = ["search", "open", "reproduce", "edit", "test", "undo", "finish"];
/// Generic words of bug reports, crossed with operator classes.
const CUES: &[&str] = &[
    "boundary",
    "inclusive",
    "exclusive",
    "exactly",
    "equal",
    "empty",
    "negative",
    "zero",
    "last",
    "first",
    "every",
    "never",
    "always",
    "more",
    "less",
    "missing",
    "extra",
    "instead",
    "upper",
    "lower",
    "case",
    "sorted",
    "order",
    "round",
    "raises",
    "none",
    "true",
    "false",
    "limit",
    "threshold",
    "end",
    "start",
    "one",
    "twice",
    "tie",
    "ties",
    "whitespace",
    "space",
    "prefix",
    "suffix",
];
const EXCEPTIONS: &[&str] = &["IndexError", "ZeroDivisionError", "ValueError", "KeyError", "TypeError", "AttributeError", "RecursionError"];

/// Is this context a SWE task (the editor is offered, or the task message holds an issue)?
pub fn is_swe(ctx: &Context) -> bool {
    ctx.tools.iter().any(|t| t.name == "str_replace_editor")
        || ctx.messages.iter().find(|m| m.role == Role::User).map(|m| m.content.contains("<issue_description>")).unwrap_or(false)
}

// ------------------------------------------------------------------------------------------------
// Grammar search: the coverage ceiling and the warm-start demonstrations.
// ------------------------------------------------------------------------------------------------

/// SWE-Gym's grammar as the built-in policy uses it.
pub struct SweGrammar;

impl Grammar for SweGrammar {
    fn build(&self, ctx: &Context, ch: &mut dyn Chooser) -> Option<Built> {
        build(&SweView::parse(ctx), ch)
    }

    fn note(&self, ctx: &Context, kind: CallKind) -> String {
        extra_call(&SweView::parse(ctx), kind)
    }

    /// One id per earlier tool call (the view's history).
    fn call_id(&self, ctx: &Context) -> String {
        id_by_tool_calls(ctx)
    }
}

/// The grammar, as the suite hands it to the built-in policy.
pub const GRAMMAR: SweGrammar = SweGrammar;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Origin};

    fn ctx(issue: &str) -> Context {
        Context { messages: vec![Message::system("s"), Message::user(crate::suite::swegym::task_prompt(issue), Origin::Frame)], tools: vec![] }
    }

    #[test]
    fn reads_what_the_issue_points_at() {
        let issue = "`slugify` drops digits\n\n```python\n>>> from textkit.core import slugify\n>>> slugify('a1 b')\n'a-b'\n```\n\nTraceback (most recent call last):\n  File \"/testbed/textkit/core.py\", line 12, in slugify\nValueError: x";
        let c = ctx(issue);
        assert!(is_swe(&c));
        let v = SweView::parse(&c);
        assert_eq!(v.names, vec!["slugify"]);
        assert_eq!(v.snippet, vec!["from textkit.core import slugify", "slugify('a1 b')"]);
        assert_eq!(v.exceptions, vec!["ValueError"]);
        let opens: Vec<&str> = v.open_candidates().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(opens, vec!["/testbed/textkit/core.py"]);
        assert_eq!(v.pointers[0].line, Some(12));
    }

    #[test]
    fn the_issue_s_example_is_compared_with_what_the_issue_expects() {
        assert_eq!(expectation("x\n\nI expected `True`.\n"), Some(("True".into(), false)));
        assert_eq!(expectation("Expected: `(3, 4)`\nActual: `(4, 3)`"), Some(("(3, 4)".into(), false)));
        assert_eq!(expectation("I expected a `ValueError`.\n"), Some(("ValueError".into(), true)));
        assert_eq!(expectation("no expectation here"), None);
        let done = "\n[The command completed with exit code 0.]";
        assert_eq!(example_outcome(&format!("True{done}"), Some("True"), false), "expected");
        assert_eq!(example_outcome(&format!("False{done}"), Some("True"), false), "other");
        assert_eq!(example_outcome(&format!("['Ada', 'alan']{done}"), Some("[\"Ada\", \"alan\"]"), false), "expected");
        let tb = "Traceback (most recent call last):\n  File \"<stdin>\", line 2\nValueError: bad\n[The command completed with exit code 1.]";
        assert_eq!(example_outcome(tb, Some("ValueError"), true), "expected");
        assert_eq!(example_outcome(tb, Some("3"), false), "other");
        assert_eq!(example_outcome("3", None, false), "unknown");

        // the view: before any run `none`; a run sets it; a change resets it
        let mut c = ctx("`f(1)` gives 0\n\n```python\n>>> from p.m import f\n>>> f(1)\n0\n```\n\nI expected `2`.");
        assert_eq!(SweView::parse(&c).example, "none");
        let run = ToolCall {
            id: "a".into(),
            name: "execute_bash".into(),
            arguments: serde_json::json!({"command": "cd /testbed && python3 - <<'EOF'\nf(1)\nEOF"}),
        };
        push_call(&mut c, run.clone(), format!("0{done}"));
        assert_eq!(SweView::parse(&c).example, "other");
        let view = ToolCall {
            id: "b".into(),
            name: "str_replace_editor".into(),
            arguments: serde_json::json!({"command": "view", "path": "/testbed/p/m.py"}),
        };
        push_call(&mut c, view, "Here's the result of running `cat -n` on /testbed/p/m.py:\n     1\tdef f(x):\n     2\t    return x - 1\n".into());
        let edit = ToolCall {
            id: "c".into(),
            name: "str_replace_editor".into(),
            arguments: serde_json::json!({"command": "str_replace", "path": "/testbed/p/m.py", "old_str": "    return x - 1", "new_str": "    return x + 1"}),
        };
        push_call(&mut c, edit, "The file /testbed/p/m.py has been edited.".into());
        assert_eq!(SweView::parse(&c).example, "none");
        push_call(&mut c, run, format!("2{done}"));
        assert_eq!(SweView::parse(&c).example, "expected");
    }

    #[test]
    fn an_edit_made_and_undone_is_not_made_again() {
        let mut c = ctx("`first` is wrong: `first(1)` gives 0");
        let file = "     1\tdef first(x):\n     2\t    return x - 1\n     3\t\n     4\tdef second(x):\n     5\t    return x - 1\n";
        let call = |id: &str, args: serde_json::Value| ToolCall { id: id.into(), name: "str_replace_editor".into(), arguments: args };
        push_call(
            &mut c,
            call("a", serde_json::json!({"command": "view", "path": "/testbed/p/m.py"})),
            format!("Here's the result of running `cat -n` on /testbed/p/m.py:\n{file}"),
        );
        let edit = serde_json::json!({"command": "str_replace", "path": "/testbed/p/m.py", "old_str": "def first(x):\n    return x - 1", "new_str": "def first(x):\n    return x + 1"});
        push_call(&mut c, call("b", edit), "The file /testbed/p/m.py has been edited.".into());
        push_call(
            &mut c,
            call("c", serde_json::json!({"command": "undo_edit", "path": "/testbed/p/m.py"})),
            format!("Last edit to /testbed/p/m.py undone successfully. Here's the result of running `cat -n` on /testbed/p/m.py:\n{file}"),
        );
        let all = all_of(&c, "edit", 50);
        let prior_of = |b: &Built| b.decisions.iter().find(|(d, _)| d.slot == "op").map(|(d, i)| d.prior[*i]).unwrap();
        let again = all.iter().find(|b| b.arguments["new_str"] == "def first(x):\n    return x + 1").expect("the grammar can still build it");
        assert!(prior_of(again) < 0.0, "the undone edit is disfavoured");
        assert!(all.iter().filter(|b| b.arguments["new_str"] != again.arguments["new_str"]).all(|b| prior_of(b) == 0.0));
    }

    #[test]
    fn edits_are_built_from_the_viewed_lines() {
        let mut c = ctx("`first` is wrong: `first(1)` gives 0");
        let view_call = ToolCall {
            id: "a".into(),
            name: "str_replace_editor".into(),
            arguments: serde_json::json!({"command": "view", "path": "/testbed/p/m.py"}),
        };
        let obs = "Here's the result of running `cat -n` on /testbed/p/m.py:\n     1\tdef first(x):\n     2\t    return x - 1\n     3\t\n     4\tdef second(x):\n     5\t    return x - 1\n     6\t\n";
        push_call(&mut c, view_call, obs.into());
        let v = SweView::parse(&c);
        assert_eq!(v.focus().unwrap().lines[1], "    return x - 1");
        let all = all_of(&c, "edit", 50);
        // only lines of `first`, the named function; `return x - 1` is not unique, so the def comes along
        assert!(!all.is_empty());
        for b in &all {
            assert_eq!(b.arguments["old_str"], "def first(x):\n    return x - 1");
            assert!(b.trace().starts_with("kind=edit; line=2; op="), "{}", b.trace());
        }
        assert!(all.iter().any(|b| b.arguments["new_str"] == "def first(x):\n    return x + 1"));
    }
}
