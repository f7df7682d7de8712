//! Building one action as slot decisions (kind, what to search or open, which line to change
//! and with which repair operator), and the text of the non-acting calls.

use super::*;

pub(super) fn step_bucket(n: usize) -> &'static str {
    match n {
        0 => "0",
        1 => "1",
        2..=3 => "2-3",
        4..=6 => "4-6",
        _ => "7+",
    }
}

pub(super) fn yn(b: bool) -> &'static str {
    if b {
        "y"
    } else {
        "n"
    }
}

pub(super) struct Builder<'a> {
    view: &'a SweView,
    decisions: Vec<(Decision, usize)>,
}

impl Builder<'_> {
    pub(super) fn decide(&mut self, d: Decision, ch: &mut dyn Chooser) -> Option<usize> {
        decide_into(&mut self.decisions, d, ch)
    }

    pub(super) fn state_feats(&self, slot: &str, label: &str, out: &mut Vec<Feature>) {
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

    pub(super) fn kind(&mut self, ch: &mut dyn Chooser) -> Option<&'static str> {
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

    pub(super) fn search(&mut self, ch: &mut dyn Chooser) -> Option<String> {
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

    pub(super) fn open(&mut self, ch: &mut dyn Chooser) -> Option<String> {
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

    pub(super) fn line(&mut self, fv: &FileView, ch: &mut dyn Chooser) -> Option<usize> {
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

    pub(super) fn op(&mut self, path: &str, text: &str, ch: &mut dyn Chooser) -> Option<LineEdit> {
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
pub(super) fn unique_context(fv: &FileView, n: usize) -> (String, usize) {
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

pub(super) fn call(tool: &str, arguments: serde_json::Value, decisions: Vec<(Decision, usize)>) -> Built {
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
