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

/// A place the context points at.
#[derive(Clone, Debug, PartialEq)]
pub struct Pointer {
    pub path: String,
    pub line: Option<usize>,
    pub func: Option<String>,
    /// `traceback` (in the issue), `run` (in a command's output), `search`, `hint`, `module`.
    pub source: &'static str,
}

#[derive(Clone, Debug, Default)]
pub struct FileView {
    pub path: String,
    /// Line texts, 1-based (`lines[0]` is line 1).
    pub lines: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Past {
    pub kind: &'static str,
    pub path: Option<String>,
    pub label: String,
    pub ok: bool,
    /// For a `str_replace`: the last line it replaced and the line it wrote there (the line
    /// a repair operator changed; the lines before it only make the match unique).
    pub changed: Option<(String, String)>,
}

/// What the context says, parsed once per decision.
#[derive(Clone, Debug, Default)]
pub struct SweView {
    pub issue: String,
    pub issue_words: Vec<String>,
    pub names: Vec<String>,
    pub snippet: Vec<String>,
    pub exceptions: Vec<&'static str>,
    pub pointers: Vec<Pointer>,
    pub files: Vec<FileView>,
    pub history: Vec<Past>,
    pub feedback: Vec<String>,
    pub last_edit: Option<(String, String)>,
    pub edits: usize,
    pub tested_since_edit: bool,
    pub last_tests_ok: Option<bool>,
    /// What the issue says the example should give: a value as Python prints it, or the name of
    /// an exception (`expected_raises`).
    pub expected: Option<String>,
    pub expected_raises: bool,
    /// The issue's example since the last change of a file: `none` (not run), `expected` (it
    /// printed what the issue expects), `other`, or `unknown` (the issue says no expectation).
    pub example: &'static str,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

const NOT_NAMES: &[&str] = &[
    "print", "repr", "len", "list", "dict", "str", "int", "float", "set", "tuple", "range", "sorted", "import", "from", "self", "True", "False",
    "None",
];

/// Names the text mentions as calls (`name(`) or in backquotes (`` `a.b` `` gives `a.b`, `a`, `b`).
fn mentioned_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let add = |w: &str, out: &mut Vec<String>| {
        if w.len() > 2 && !NOT_NAMES.contains(&w) && !w.chars().all(|c| c.is_ascii_digit()) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    };
    let b: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < b.len() {
        // a code fence (```python) is not a name in backquotes
        if b[i..].starts_with(&['`', '`', '`']) {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if b[i] == '`' {
            if let Some(j) = b[i + 1..].iter().position(|&c| c == '`') {
                let inner: String = b[i + 1..i + 1 + j].iter().collect();
                let head: String = inner.chars().take_while(|&c| is_ident(c) || c == '.').collect();
                if !head.is_empty() && head.chars().next().map(|c| !c.is_ascii_digit()).unwrap_or(false) {
                    for part in head.split('.') {
                        add(part, &mut out);
                    }
                }
                i += j + 2;
                continue;
            }
        }
        if is_ident(b[i]) && (i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == '.')) {
            let s = i;
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
            if i < b.len() && b[i] == '(' {
                let w: String = b[s..i].iter().collect();
                add(&w, &mut out);
            }
            continue;
        }
        i += 1;
    }
    out
}

/// Traceback frames: `File "PATH", line N, in FUNC`.
fn frames(text: &str, source: &'static str) -> Vec<Pointer> {
    let mut out = Vec::new();
    for l in text.lines() {
        let t = l.trim_start();
        let Some(rest) = t.strip_prefix("File \"") else { continue };
        let Some((path, rest)) = rest.split_once("\", line ") else { continue };
        let num: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let func = rest.split_once(", in ").map(|(_, f)| f.trim().to_string());
        if path.starts_with(REPO) {
            out.push(Pointer { path: path.to_string(), line: num.parse().ok(), func, source });
        }
    }
    out
}

/// Search hits and listed locations: `/testbed/x.py:12:text` (or `/testbed/x.py:12: text`).
fn hits(text: &str, source: &'static str) -> Vec<Pointer> {
    let mut out = Vec::new();
    for l in text.lines() {
        let t = l.trim();
        if !t.starts_with(REPO) {
            continue;
        }
        let mut parts = t.splitn(3, ':');
        let (Some(path), Some(num), rest) = (parts.next(), parts.next(), parts.next()) else { continue };
        let Ok(n) = num.trim().parse::<usize>() else { continue };
        let func = rest
            .and_then(|r| r.trim().strip_prefix("def ").or_else(|| r.trim().strip_prefix("class ")))
            .map(|r| r.chars().take_while(|&c| is_ident(c)).collect());
        out.push(Pointer { path: path.to_string(), line: Some(n), func, source });
    }
    out
}

/// Dotted module names (`pkg.mod` in backquotes or `from pkg.mod import`) as repository paths.
fn modules(text: &str) -> Vec<Pointer> {
    let mut out: Vec<Pointer> = Vec::new();
    let mut consider = |m: &str| {
        if m.contains('.') && m.split('.').all(|p| !p.is_empty() && p.chars().all(is_ident)) {
            let path = format!("{REPO}/{}.py", m.replace('.', "/"));
            if !out.iter().any(|p| p.path == path) {
                out.push(Pointer { path, line: None, func: None, source: "module" });
            }
        }
    };
    for l in text.lines() {
        let t = l.trim().trim_start_matches(">>> ");
        if let Some(rest) = t.strip_prefix("from ") {
            if let Some((m, _)) = rest.split_once(" import") {
                consider(m.trim());
            }
        }
    }
    let mut rest = text;
    while let Some(i) = rest.find('`') {
        let after = &rest[i + 1..];
        let Some(j) = after.find('`') else { break };
        consider(&after[..j]);
        rest = &after[j + 1..];
    }
    out
}

/// The expectation an issue states: "I expected `3`." / "Expected: `3`" / "I expected a `ValueError`".
fn expectation(issue: &str) -> Option<(String, bool)> {
    for cue in ["I expected ", "Expected: "] {
        let Some(i) = issue.find(cue) else { continue };
        let rest = &issue[i + cue.len()..];
        let (rest, raises) = match rest.strip_prefix("a `").or_else(|| rest.strip_prefix("an `")) {
            Some(r) => (r, true),
            None => match rest.strip_prefix('`') {
                Some(r) => (r, false),
                None => continue,
            },
        };
        let Some(j) = rest.find('`') else { continue };
        return Some((rest[..j].trim().to_string(), raises));
    }
    None
}

/// Did a run of the issue's example give what the issue expects?
fn example_outcome(obs: &str, expected: Option<&str>, raises: bool) -> &'static str {
    let Some(want) = expected else { return "unknown" };
    let body = obs.split("\n[The command").next().unwrap_or(obs);
    // An issue writes a value as its author would (`"a"`, `[1,2]`); Python prints its repr.
    let norm = |s: &str| s.chars().filter(|c| !c.is_whitespace()).map(|c| if c == '"' { '\'' } else { c }).collect::<String>();
    let matched = if raises {
        body.lines().any(|l| l.trim_start().starts_with(want))
    } else {
        body.lines().rev().map(str::trim).find(|l| !l.is_empty()).is_some_and(|l| norm(l) == norm(want))
    };
    if matched {
        "expected"
    } else {
        "other"
    }
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase()).collect()
}

/// The file shown by an editor observation: (path, first line number, lines, whole file?).
fn shown_file(obs: &str) -> Option<(String, usize, Vec<String>, bool)> {
    const CAT: &str = "Here's the result of running `cat -n` on ";
    let i = obs.find(CAT)?;
    let rest = &obs[i + CAT.len()..];
    let (desc, body) = rest.split_once(":\n")?;
    let (path, whole) = match desc.strip_prefix("a snippet of ") {
        Some(p) => (p.to_string(), false),
        None => (desc.to_string(), true),
    };
    if !path.starts_with(REPO) {
        return None;
    }
    let mut first = None;
    let mut lines = Vec::new();
    for l in body.lines() {
        let Some((num, text)) = l.split_once('\t') else { break };
        let Ok(n) = num.trim().parse::<usize>() else { break };
        first.get_or_insert(n);
        lines.push(text.to_string());
    }
    Some((path, first?, lines, whole))
}

fn classify(call: &ToolCall) -> (&'static str, Option<String>, String) {
    let arg = |k: &str| call.arguments.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    match call.name.as_str() {
        "execute_bash" => {
            let c = arg("command");
            let kind = if c.contains("grep") {
                "search"
            } else if c.contains("unittest") || c.contains("pytest") {
                "test"
            } else if c.contains("python") {
                "reproduce"
            } else {
                "other"
            };
            (kind, None, c)
        }
        "str_replace_editor" => {
            let kind = match arg("command").as_str() {
                "view" => "open",
                "str_replace" | "insert" | "create" => "edit",
                "undo_edit" => "undo",
                _ => "other",
            };
            (kind, Some(arg("path")), format!("{}|{}", arg("old_str"), arg("new_str")))
        }
        "finish" => ("finish", None, String::new()),
        _ => ("other", None, String::new()),
    }
}

/// The last line a `str_replace` replaces and the line it writes in its place.
fn changed_line(call: &ToolCall) -> Option<(String, String)> {
    let arg = |k: &str| call.arguments.get(k).and_then(|v| v.as_str());
    if arg("command")? != "str_replace" {
        return None;
    }
    let last = |s: &str| s.lines().last().unwrap_or("").to_string();
    Some((last(arg("old_str")?), last(arg("new_str").unwrap_or(""))))
}

impl SweView {
    /// Has an earlier edit of `path` replaced `line` (with `after`, when given)?
    fn edited_before(&self, path: &str, line: &str, after: Option<&str>) -> bool {
        self.history.iter().any(|h| {
            h.kind == "edit"
                && h.path.as_deref() == Some(path)
                && h.changed.as_ref().is_some_and(|(old, new)| old == line && after.is_none_or(|a| a == new))
        })
    }

    pub fn parse(ctx: &Context) -> SweView {
        let mut v = SweView { example: "none", ..SweView::default() };
        let mut first_user = true;
        for m in &ctx.messages {
            match m.role {
                Role::System => {}
                Role::User if first_user => {
                    first_user = false;
                    let text = &m.content;
                    v.issue = match (text.find("<issue_description>"), text.find("</issue_description>")) {
                        (Some(a), Some(b)) if b > a => text[a + "<issue_description>".len()..b].trim().to_string(),
                        _ => text.trim().to_string(),
                    };
                    v.issue_words = words(&v.issue);
                    v.names = mentioned_names(&v.issue);
                    v.snippet =
                        v.issue.lines().filter_map(|l| l.strip_prefix(">>> ").or_else(|| l.strip_prefix("... ")).map(str::to_string)).collect();
                    v.exceptions = EXCEPTIONS.iter().filter(|e| v.issue.contains(*e)).copied().collect();
                    if let Some((want, raises)) = expectation(&v.issue) {
                        v.expected = Some(want);
                        v.expected_raises = raises;
                    }
                    v.pointers.extend(frames(&v.issue, "traceback"));
                    v.pointers.extend(modules(&v.issue));
                }
                Role::User => {
                    v.pointers.extend(hits(&m.content, "hint"));
                    v.feedback.push(m.content.to_lowercase());
                }
                Role::Assistant => {
                    for c in &m.tool_calls {
                        let (kind, path, label) = classify(c);
                        let changed = (c.name == "str_replace_editor").then(|| changed_line(c)).flatten();
                        v.history.push(Past { kind, path, label, ok: false, changed });
                    }
                }
                Role::Tool => v.observe(&m.content),
            }
        }
        v
    }

    fn observe(&mut self, obs: &str) {
        let Some(kind) = self.history.last().map(|h| h.kind) else { return };
        let ok = !obs.starts_with("ERROR:") && !obs.contains("[The command completed with exit code 1") && !obs.contains("timed out after");
        if let Some(h) = self.history.last_mut() {
            h.ok = ok;
        }
        match kind {
            "search" => self.pointers.extend(hits(obs, "search")),
            "test" | "reproduce" => {
                self.pointers.extend(frames(obs, "run"));
                if kind == "reproduce" {
                    self.example = example_outcome(obs, self.expected.as_deref(), self.expected_raises);
                }
                if kind == "test" {
                    self.tested_since_edit = true;
                    self.last_tests_ok = Some(obs.contains("[The command completed with exit code 0.]"));
                }
            }
            "edit" if ok => {
                self.edits += 1;
                self.tested_since_edit = false;
                self.example = "none";
                let last = self.history.last().cloned();
                if let Some(Past { path: Some(p), label, .. }) = last {
                    self.last_edit = Some((p, label));
                }
            }
            "undo" if ok => {
                self.last_edit = None;
                self.tested_since_edit = false;
                self.example = "none";
            }
            _ => {}
        }
        if let Some((path, first, lines, whole)) = shown_file(obs) {
            let idx = match self.files.iter().position(|f| f.path == path) {
                Some(i) => i,
                None if whole => {
                    self.files.push(FileView { path: path.clone(), lines: Vec::new() });
                    self.files.len() - 1
                }
                None => return,
            };
            let fv = &mut self.files[idx];
            if whole {
                fv.lines = lines;
            } else {
                for (k, l) in lines.into_iter().enumerate() {
                    if let Some(slot) = fv.lines.get_mut(first - 1 + k) {
                        *slot = l;
                    }
                }
            }
            // the last file shown is the one being worked on
            let f = self.files.remove(idx);
            self.files.push(f);
        }
    }

    pub fn viewed(&self, path: &str) -> bool {
        self.files.iter().any(|f| f.path == path)
    }

    fn feedback_mentions(&self, w: &str) -> bool {
        self.feedback.iter().any(|f| f.contains(w))
    }

    /// Files the context points at and the editor has not shown yet, best sources first.
    pub fn open_candidates(&self) -> Vec<&Pointer> {
        let rank = |s: &str| match s {
            "traceback" => 0,
            "run" => 1,
            "hint" => 2,
            "search" => 3,
            _ => 4,
        };
        let mut out: Vec<&Pointer> = Vec::new();
        let mut ps: Vec<&Pointer> = self.pointers.iter().filter(|p| !self.viewed(&p.path) && !p.path.contains("/tests/")).collect();
        ps.sort_by_key(|p| rank(p.source));
        for p in ps {
            if !out.iter().any(|o| o.path == p.path) {
                out.push(p);
            }
        }
        out
    }

    /// The file being worked on: the last one shown.
    pub fn focus(&self) -> Option<&FileView> {
        self.files.iter().rev().find(|f| !f.path.contains("/tests/"))
    }

    /// Line numbers of the focus file inside the functions the context names, or near a pointed
    /// line; all editable lines when nothing is pointed at.
    fn region(&self, fv: &FileView) -> Vec<(usize, &'static str)> {
        let mut named: Vec<String> = self.names.clone();
        for p in &self.pointers {
            if p.path == fv.path {
                if let Some(fname) = &p.func {
                    if !named.contains(fname) {
                        named.push(fname.clone());
                    }
                }
            }
        }
        let mut tag: Vec<Option<&'static str>> = vec![None; fv.lines.len() + 1];
        for (i, l) in fv.lines.iter().enumerate() {
            let t = l.trim_start();
            let Some(rest) = t.strip_prefix("def ") else { continue };
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            if !named.contains(&name) {
                continue;
            }
            let indent = l.len() - t.len();
            let mut j = i + 1;
            while j < fv.lines.len() {
                let lj = &fv.lines[j];
                let tj = lj.trim_start();
                if !tj.is_empty() && lj.len() - tj.len() <= indent {
                    break;
                }
                tag[j + 1] = Some("named_func");
                j += 1;
            }
        }
        for p in self.pointers.iter().filter(|p| p.path == fv.path) {
            if let Some(n) = p.line {
                for k in n.saturating_sub(2)..=n + 2 {
                    if k >= 1 && k < tag.len() && tag[k].is_none() {
                        tag[k] = Some("near_pointer");
                    }
                }
                if n < tag.len() && matches!(p.source, "traceback" | "run") {
                    tag[n] = Some("trace_line");
                }
            }
        }
        let with_edits = |n: usize| !edits(&fv.lines[n - 1]).is_empty();
        let region: Vec<(usize, &'static str)> = (1..tag.len()).filter_map(|n| tag[n].map(|t| (n, t))).filter(|(n, _)| with_edits(*n)).collect();
        if !region.is_empty() {
            return region;
        }
        (1..=fv.lines.len()).filter(|&n| editable(&fv.lines[n - 1]) && with_edits(n)).map(|n| (n, "unpointed")).collect()
    }
}

fn step_bucket(n: usize) -> &'static str {
    match n {
        0 => "0",
        1 => "1",
        2..=3 => "2-3",
        4..=6 => "4-6",
        _ => "7+",
    }
}

fn yn(b: bool) -> &'static str {
    if b {
        "y"
    } else {
        "n"
    }
}

struct Builder<'a> {
    view: &'a SweView,
    decisions: Vec<(Decision, usize)>,
}

impl Builder<'_> {
    fn decide(&mut self, d: Decision, ch: &mut dyn Chooser) -> Option<usize> {
        decide_into(&mut self.decisions, d, ch)
    }

    fn state_feats(&self, slot: &str, label: &str, out: &mut Vec<Feature>) {
        let v = self.view;
        out.push(f(&[slot, label, "bias"]));
        out.push(f(&[slot, label, "step", step_bucket(v.history.len())]));
        out.push(f(&[slot, label, "viewed", yn(v.focus().is_some())]));
        out.push(f(&[slot, label, "edited", yn(v.last_edit.is_some())]));
        out.push(f(&[slot, label, "tested_since_edit", yn(v.tested_since_edit)]));
        let tests = match v.last_tests_ok {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "none",
        };
        out.push(f(&[slot, label, "tests", tests]));
        out.push(f(&[slot, label, "tests", tests, "edited", yn(v.last_edit.is_some())]));
        let last = v.history.last().map(|h| h.kind).unwrap_or("none");
        out.push(f(&[slot, label, "last", last]));
        out.push(f(&[slot, label, "last_ok", yn(v.history.last().map(|h| h.ok).unwrap_or(true))]));
        out.push(f(&[slot, label, "traceback", yn(v.pointers.iter().any(|p| p.source == "traceback"))]));
        out.push(f(&[slot, label, "reproduced", yn(v.history.iter().any(|h| h.kind == "reproduce"))]));
        out.push(f(&[slot, label, "example", v.example, "edited", yn(v.last_edit.is_some())]));
        out.push(f(&[slot, label, "example", v.example, "last", last]));
    }

    fn kind(&mut self, ch: &mut dyn Chooser) -> Option<&'static str> {
        let v = self.view;
        let mut d = Decision { slot: "kind", labels: vec![], options: vec![], prior: vec![] };
        let mut kinds = Vec::new();
        for k in KINDS {
            let available = match k {
                "search" => !v.names.is_empty() && v.history.iter().filter(|h| h.kind == "search").count() < 2,
                "open" => !v.open_candidates().is_empty(),
                "reproduce" => !v.snippet.is_empty(),
                "edit" => v.focus().map(|fv| !v.region(fv).is_empty()).unwrap_or(false),
                "undo" => v.last_edit.is_some(),
                _ => true,
            };
            if !available {
                continue;
            }
            let mut fs = Vec::new();
            self.state_feats("kind", k, &mut fs);
            // what the context visibly asks for (a harness message, a test result)
            let mut prior = 0.0;
            if k == "reproduce" && v.feedback_mentions("reproduce the issue") && !v.history.iter().any(|h| h.kind == "reproduce") {
                prior += innate::FOLLOW_HINT;
            }
            if k == "test" && v.feedback_mentions("have not run the tests") && !v.tested_since_edit {
                prior += innate::FOLLOW_HINT;
            }
            if k == "undo" && v.feedback_mentions("no longer parses") {
                prior += innate::FOLLOW_HINT;
            }
            if (k == "open" || k == "edit") && v.feedback_mentions("no file has been changed") && v.last_edit.is_none() {
                prior += innate::FOLLOW_HINT * 0.5;
            }
            if k == "undo" && v.feedback_mentions("undo it") && v.last_tests_ok == Some(false) {
                prior += innate::FOLLOW_HINT * 0.5;
            }
            // a harness that asks for the issue's example after every change, and says what to
            // do with what it prints
            let last = v.history.last().map(|h| h.kind);
            if v.feedback_mentions("run the issue's example again") {
                if k == "reproduce" && last == Some("edit") {
                    prior += innate::FOLLOW_HINT;
                }
                if k == "undo" && last == Some("reproduce") && v.example == "other" && v.last_edit.is_some() {
                    prior += innate::FOLLOW_HINT;
                }
                if k == "finish" && last == Some("reproduce") && v.example == "expected" && v.last_edit.is_some() {
                    prior += innate::FOLLOW_HINT * 0.5;
                }
            }
            d.push(k, fs, prior);
            kinds.push(k);
        }
        let i = self.decide(d, ch)?;
        Some(kinds[i])
    }

    fn search(&mut self, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.view;
        let mut d = Decision { slot: "search", labels: vec![], options: vec![], prior: vec![] };
        for (i, n) in v.names.iter().enumerate().take(6) {
            let in_snippet = v.snippet.iter().any(|s| s.contains(&format!("{n}(")));
            let fs = vec![
                f(&["search", "order", &i.min(3).to_string()]),
                f(&["search", "in_snippet", yn(in_snippet)]),
                f(&["search", "capital", yn(n.chars().next().map(|c| c.is_uppercase()).unwrap_or(false))]),
                f(&["search", "searched", yn(v.history.iter().any(|h| h.kind == "search" && h.label.contains(&format!(" {n}\\b"))))]),
            ];
            d.push(n.clone(), fs, 0.0);
        }
        let i = self.decide(d, ch)?;
        Some(v.names[i].clone())
    }

    fn open(&mut self, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.view;
        let cands = v.open_candidates();
        let mut d = Decision { slot: "open", labels: vec![], options: vec![], prior: vec![] };
        for (i, p) in cands.iter().enumerate() {
            let fs = vec![
                f(&["open", "source", p.source]),
                f(&["open", "has_line", yn(p.line.is_some())]),
                f(&["open", "order", &i.min(3).to_string()]),
                f(&["open", "names_func", yn(p.func.as_ref().map(|fname| v.names.contains(fname)).unwrap_or(false))]),
            ];
            d.push(p.path.clone(), fs, 0.0);
        }
        let i = self.decide(d, ch)?;
        Some(cands[i].path.clone())
    }

    fn line(&mut self, fv: &FileView, ch: &mut dyn Chooser) -> Option<usize> {
        let v = self.view;
        let region = v.region(fv);
        let mut d = Decision { slot: "line", labels: vec![], options: vec![], prior: vec![] };
        for (k, (n, tag)) in region.iter().enumerate() {
            let text = &fv.lines[n - 1];
            let t = text.trim_start();
            let stmt = ["return", "if", "elif", "while", "for", "raise"]
                .iter()
                .find(|s| t.starts_with(&format!("{s} ")))
                .copied()
                .unwrap_or(if t.contains(" = ") { "assign" } else { "other" });
            let pos = if k == 0 {
                "first"
            } else if k + 1 == region.len() {
                "last"
            } else {
                "mid"
            };
            let mut fs = vec![
                f(&["line", "tag", tag]),
                f(&["line", "stmt", stmt]),
                f(&["line", "tag", tag, "stmt", stmt]),
                f(&["line", "pos", pos]),
                f(&["line", "tried", yn(v.edited_before(&fv.path, text, None))]),
            ];
            let mut classes: Vec<&str> = edits(text).iter().map(|e| e.class).collect();
            classes.dedup();
            for c in &classes {
                fs.push(f(&["line", "has", c]));
                for e in &v.exceptions {
                    fs.push(f(&["line", "has", c, "exc", e]));
                }
            }
            d.push(n.to_string(), fs, 0.0);
        }
        let i = self.decide(d, ch)?;
        Some(region[i].0)
    }

    fn op(&mut self, path: &str, text: &str, ch: &mut dyn Chooser) -> Option<LineEdit> {
        let v = self.view;
        let options = edits(text);
        let mut d = Decision { slot: "op", labels: vec![], options: vec![], prior: vec![] };
        for e in &options {
            let mut fs = vec![f(&["op", e.op]), f(&["op", "class", e.class]), f(&["op", "occ", &e.occurrence.min(2).to_string()])];
            for w in &v.issue_words {
                if CUES.contains(&w.as_str()) {
                    fs.push(f(&["op", "class", e.class, "cue", w]));
                    fs.push(f(&["op", e.op, "cue", w]));
                }
            }
            for x in &v.exceptions {
                fs.push(f(&["op", "class", e.class, "exc", x]));
            }
            // The line reads as it did before an edit that wrote `e.after`: that edit was undone,
            // and no one redoes a change they have just taken back.
            let tried = v.edited_before(path, text, Some(&e.after));
            fs.push(f(&["op", "tried", yn(tried)]));
            d.push(format!("{}@{}", e.op, e.occurrence), fs, if tried { -innate::FOLLOW_HINT } else { 0.0 });
        }
        let i = self.decide(d, ch)?;
        Some(options[i].clone())
    }
}

/// `old_str` for a line: its text, with as many lines before it as make it unique in the file.
fn unique_context(fv: &FileView, n: usize) -> (String, usize) {
    let content = fv.lines.join("\n");
    let mut start = n;
    loop {
        let old = fv.lines[start - 1..n].join("\n");
        if content.matches(&old).count() <= 1 || start == 1 {
            return (old, start);
        }
        start -= 1;
    }
}

fn call(tool: &str, arguments: serde_json::Value, decisions: Vec<(Decision, usize)>) -> Built {
    Built { tool: tool.into(), arguments, decisions }
}

/// Build one SWE action from the view.
pub fn build(view: &SweView, ch: &mut dyn Chooser) -> Option<Built> {
    let mut b = Builder { view, decisions: Vec::new() };
    let kind = b.kind(ch)?;
    let bash = |cmd: String, b: Builder| call("execute_bash", serde_json::json!({ "command": cmd }), b.decisions);
    match kind {
        "search" => {
            let name = b.search(ch)?;
            Some(bash(format!("grep -rn -E \"(def|class) {name}\\b\" {REPO} --include=*.py"), b))
        }
        "open" => {
            let path = b.open(ch)?;
            Some(call("str_replace_editor", serde_json::json!({"command": "view", "path": path}), b.decisions))
        }
        "reproduce" => {
            let mut lines = view.snippet.clone();
            if let Some(last) = lines.pop() {
                let t = last.trim();
                let is_expr = !(t.contains(" = ") || t.starts_with("import ") || t.starts_with("from ") || t.ends_with(':'));
                lines.push(if is_expr { format!("print(repr({t}))") } else { last });
            }
            Some(bash(format!("cd {REPO} && python3 - <<'EOF'\n{}\nEOF", lines.join("\n")), b))
        }
        "edit" => {
            let fv = view.focus()?;
            let n = b.line(fv, ch)?;
            let e = b.op(&fv.path, &fv.lines[n - 1], ch)?;
            let (old, start) = unique_context(fv, n);
            let mut new_lines: Vec<String> = fv.lines[start - 1..n].to_vec();
            if let Some(last) = new_lines.last_mut() {
                *last = e.after.clone();
            }
            Some(call(
                "str_replace_editor",
                serde_json::json!({"command": "str_replace", "path": fv.path, "old_str": old, "new_str": new_lines.join("\n")}),
                b.decisions,
            ))
        }
        "test" => Some(bash(TEST_COMMAND.to_string(), b)),
        "undo" => {
            let (path, _) = view.last_edit.clone()?;
            Some(call("str_replace_editor", serde_json::json!({"command": "undo_edit", "path": path}), b.decisions))
        }
        "finish" => Some(call("finish", serde_json::json!({"message": "The issue is fixed."}), b.decisions)),
        _ => None,
    }
}

/// The text of a plan / reflection / critique call.
pub fn extra_call(view: &SweView, kind: CallKind) -> String {
    match kind {
        CallKind::Plan => match (view.names.first(), view.pointers.first()) {
            (Some(n), Some(p)) => format!("Look at `{n}` in {} and check the line the issue points at.", p.path),
            (Some(n), None) => format!("Find where `{n}` is defined, then fix it."),
            _ => "Find the code the issue describes, then fix it.".into(),
        },
        CallKind::Reflect => {
            if view.last_tests_ok == Some(false) && view.last_edit.is_some() {
                "The tests still fail after my edit, so the edit was probably wrong: undo it and try another line.".into()
            } else {
                "The tests fail: find the function the failure comes from.".into()
            }
        }
        _ => "OK".into(),
    }
}

// ------------------------------------------------------------------------------------------------
// Grammar search: the coverage ceiling and the warm-start demonstrations.
// ------------------------------------------------------------------------------------------------

/// Every action of one kind the grammar can build from `ctx`, up to `max` of them.
fn all_of(ctx: &Context, kind: &'static str, max: usize) -> Vec<Built> {
    let view = SweView::parse(ctx);
    let mut dfs = Dfs::of_kind(kind);
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..max {
        if let Some(b) = build(&view, &mut dfs) {
            if seen.insert(b.arguments.to_string()) {
                out.push(b);
            }
        }
        if !dfs.advance() {
            break;
        }
    }
    out
}

fn ids(ctx: &Context) -> String {
    format!("call_{}", ctx.messages.iter().filter(|m| m.role == Role::Assistant).count())
}

/// Search the grammar for a sequence that solves `task` under the base harness's frame: open a
/// pointed-at file (after one search if the issue points at none), apply one repair operator,
/// run the tests, finish. Returns the first solution and whether `max_paths` cut the search.
pub fn solve(suite: &dyn Suite, task: &Task, frame: &SearchFrame<'_>, max_paths: usize, _inspect: bool) -> (Option<Solution>, bool) {
    let Ok(mut env) = suite.make_env(task) else { return (None, false) };
    let frame = frame.context(&env.task_prompt());
    let mut starts: Vec<(Context, Solution)> = vec![(frame.clone(), Vec::new())];
    for b in all_of(&frame, "search", 4) {
        let t = turn(&b, &ids(&frame));
        let Ok(out) = env.step(&t.tool_calls[0]) else { continue };
        let mut c = frame.clone();
        push_call(&mut c, t.tool_calls[0].clone(), out.observation);
        starts.push((c, vec![(frame.clone(), t)]));
    }
    let mut truncated = false;
    let mut tried = 0usize;
    for (ctx, prefix) in &starts {
        for open in all_of(ctx, "open", 6) {
            let t_open = turn(&open, &ids(ctx));
            let Ok(out) = env.step(&t_open.tool_calls[0]) else { continue };
            if out.observation.starts_with("ERROR:") {
                continue;
            }
            let mut viewed = ctx.clone();
            push_call(&mut viewed, t_open.tool_calls[0].clone(), out.observation);
            for edit in all_of(&viewed, "edit", max_paths) {
                if tried >= max_paths {
                    truncated = true;
                    return (None, truncated);
                }
                tried += 1;
                let t_edit = turn(&edit, &ids(&viewed));
                let Ok(out) = env.step(&t_edit.tool_calls[0]) else { continue };
                if out.signals.error_kind.is_some() {
                    continue;
                }
                let mut edited = viewed.clone();
                push_call(&mut edited, t_edit.tool_calls[0].clone(), out.observation);
                let solved = env.score(None).map(|s| s.success).unwrap_or(false);
                if solved {
                    let mut sol = prefix.clone();
                    sol.push((ctx.clone(), t_open));
                    sol.push((viewed.clone(), t_edit));
                    let mut cur = edited;
                    for kind in ["test", "finish"] {
                        let Some(b) = all_of(&cur, kind, 1).into_iter().next() else { return (None, truncated) };
                        let t = turn(&b, &ids(&cur));
                        let Ok(out) = env.step(&t.tool_calls[0]) else { return (None, truncated) };
                        let next = {
                            let mut c = cur.clone();
                            push_call(&mut c, t.tool_calls[0].clone(), out.observation);
                            c
                        };
                        sol.push((cur, t));
                        cur = next;
                    }
                    return (Some(sol), truncated);
                }
                let undo = ToolCall {
                    id: "undo".into(),
                    name: "str_replace_editor".into(),
                    arguments: serde_json::json!({"command": "undo_edit", "path": edit.arguments["path"]}),
                };
                if env.step(&undo).is_err() {
                    return (None, truncated);
                }
            }
        }
    }
    (None, truncated)
}

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
