//! What the grammar reads from a SWE context: the issue, the names and places it points at,
//! the files the editor showed and what the last test run said ([`SweView`]).

use super::*;

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

pub(super) fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

pub(super) const NOT_NAMES: &[&str] = &[
    "print", "repr", "len", "list", "dict", "str", "int", "float", "set", "tuple", "range", "sorted", "import", "from", "self", "True", "False",
    "None",
];

/// Names the text mentions as calls (`name(`) or in backquotes (`` `a.b` `` gives `a.b`, `a`, `b`).
pub(super) fn mentioned_names(text: &str) -> Vec<String> {
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
pub(super) fn frames(text: &str, source: &'static str) -> Vec<Pointer> {
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
pub(super) fn hits(text: &str, source: &'static str) -> Vec<Pointer> {
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
pub(super) fn modules(text: &str) -> Vec<Pointer> {
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
pub(super) fn expectation(issue: &str) -> Option<(String, bool)> {
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
pub(super) fn example_outcome(obs: &str, expected: Option<&str>, raises: bool) -> &'static str {
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

pub(super) fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase()).collect()
}

/// The file shown by an editor observation: (path, first line number, lines, whole file?).
pub(super) fn shown_file(obs: &str) -> Option<(String, usize, Vec<String>, bool)> {
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

pub(super) fn classify(call: &ToolCall) -> (&'static str, Option<String>, String) {
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
pub(super) fn changed_line(call: &ToolCall) -> Option<(String, String)> {
    let arg = |k: &str| call.arguments.get(k).and_then(|v| v.as_str());
    if arg("command")? != "str_replace" {
        return None;
    }
    let last = |s: &str| s.lines().last().unwrap_or("").to_string();
    Some((last(arg("old_str")?), last(arg("new_str").unwrap_or(""))))
}

impl SweView {
    /// Has an earlier edit of `path` replaced `line` (with `after`, when given)?
    pub(super) fn edited_before(&self, path: &str, line: &str, after: Option<&str>) -> bool {
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

    pub(super) fn observe(&mut self, obs: &str) {
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

    pub(super) fn feedback_mentions(&self, w: &str) -> bool {
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
    pub(super) fn region(&self, fv: &FileView) -> Vec<(usize, &'static str)> {
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
