//! Grammar coverage: the share of tasks that some action sequence of the built-in policy's
//! grammar solves — the ceiling of what the policy can learn.
//!
//! For each task, every decision path of the grammar is enumerated for the first action from
//! the base context, and again after an inspection of the table (the grammar's `inspect` action,
//! whose real observation is appended); each query is executed for real and every answer the
//! grammar could then commit is scored by the suite's scorer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::dbbench::{build, Chooser, DbView, Decision};
use crate::harness::HarnessSpec;
use crate::policy::{Context, Message, Origin, Role, ToolCall};
use crate::suite::Suite;
use crate::task::Task;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Coverage {
    pub total: usize,
    pub covered: usize,
    /// family -> (covered, total)
    pub families: BTreeMap<String, (usize, usize)>,
    /// Tasks whose enumeration was cut at the path limit.
    pub truncated: usize,
}

impl Coverage {
    pub fn share(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.covered as f64 / self.total as f64
        }
    }
}

/// Depth-first enumeration of decision paths: each build follows `path`, extending it with
/// first options; `advance` moves to the next path.
#[derive(Default)]
struct Dfs {
    path: Vec<usize>,
    widths: Vec<usize>,
    pos: usize,
    /// Fix the first decision (the action kind) to this label.
    kind: Option<&'static str>,
}

impl Chooser for Dfs {
    fn choose(&mut self, d: &Decision) -> Option<usize> {
        if self.pos == 0 {
            if let Some(k) = self.kind {
                self.widths.truncate(0);
                self.widths.push(1);
                self.pos = 1;
                if self.path.is_empty() {
                    self.path.push(0);
                }
                return d.labels.iter().position(|l| l == k);
            }
        }
        if self.pos >= self.path.len() {
            self.path.push(0);
        }
        let i = self.path[self.pos];
        self.widths.truncate(self.pos);
        self.widths.push(d.options.len());
        self.pos += 1;
        Some(i.min(d.options.len().saturating_sub(1)))
    }
}

impl Dfs {
    fn advance(&mut self) -> bool {
        self.path.truncate(self.pos);
        self.widths.truncate(self.pos);
        self.pos = 0;
        while !self.path.is_empty() {
            let i = self.path.len() - 1;
            self.path[i] += 1;
            if self.path[i] < self.widths[i] {
                return true;
            }
            self.path.pop();
            self.widths.pop();
        }
        false
    }
}

fn base_context(base: &HarnessSpec, task_prompt: &str) -> Context {
    Context {
        messages: vec![Message::system(base.system_prompt.clone()), Message::user(base.render.task_template.replace("{task_prompt}", task_prompt), Origin::Frame)],
        tools: Vec::new(),
    }
}

fn push_call(ctx: &mut Context, call: ToolCall, observation: String) {
    let id = call.id.clone();
    let mut a = Message::new(Role::Assistant, String::new(), Origin::Policy);
    a.tool_calls = vec![call];
    ctx.messages.push(a);
    let mut t = Message::new(Role::Tool, observation, Origin::Environment);
    t.tool_call_id = Some(id);
    ctx.messages.push(t);
}

/// Does some grammar sequence solve `task`? Returns (solved, truncated).
pub fn task_covered(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize) -> (bool, bool) {
    let Ok(mut probe) = suite.make_env(task) else { return (false, false) };
    let task_prompt = probe.task_prompt();
    let mut contexts = vec![base_context(base, &task_prompt)];
    // after an inspection
    {
        let mut dfs = Dfs { kind: Some("inspect"), ..Default::default() };
        let view = DbView::parse(&contexts[0]);
        if let Some(b) = build(&view, &mut dfs) {
            let call = ToolCall { id: "inspect".into(), name: b.tool, arguments: b.arguments };
            if let Ok(out) = probe.step(&call) {
                let mut c = contexts[0].clone();
                push_call(&mut c, call, out.observation);
                contexts.push(c);
            }
        }
    }
    let mutation = DbView::parse(&contexts[0]).mutation.is_some();
    let kinds: &[&'static str] = if mutation { &["insert", "update", "delete"] } else { &["query"] };
    let mut truncated = false;
    for ctx in &contexts {
        let view = DbView::parse(ctx);
        for &kind in kinds {
            let mut dfs = Dfs { kind: Some(kind), ..Default::default() };
            let mut n = 0;
            let mut seen = std::collections::HashSet::new();
            loop {
                if n >= max_paths {
                    truncated = true;
                    break;
                }
                n += 1;
                if let Some(b) = build(&view, &mut dfs) {
                    let sql = b.arguments.to_string();
                    if seen.insert(sql) && solves(suite, task, ctx, ToolCall { id: "q".into(), name: b.tool, arguments: b.arguments }) {
                        return (true, truncated);
                    }
                }
                if !dfs.advance() {
                    break;
                }
            }
        }
    }
    (false, truncated)
}

/// Run `call` on a fresh environment, then try every answer the grammar could commit.
fn solves(suite: &dyn Suite, task: &Task, ctx: &Context, call: ToolCall) -> bool {
    let Ok(mut env) = suite.make_env(task) else { return false };
    // an inspection does not change the table, so a fresh environment matches the context
    let Ok(out) = env.step(&call) else { return false };
    if out.signals.error_kind.is_some() {
        return false;
    }
    let mut after = ctx.clone();
    push_call(&mut after, call, out.observation);
    let view = DbView::parse(&after);
    let mut dfs = Dfs { kind: Some("commit"), ..Default::default() };
    loop {
        if let Some(b) = build(&view, &mut dfs) {
            let commit = ToolCall { id: "c".into(), name: b.tool, arguments: b.arguments };
            if let Ok(s) = env.score(Some(&commit)) {
                if s.success {
                    return true;
                }
            }
        }
        if !dfs.advance() {
            return false;
        }
    }
}

pub fn coverage(suite: &dyn Suite, base: &HarnessSpec, tasks: &[Task], max_paths: usize) -> Coverage {
    let mut c = Coverage::default();
    for t in tasks {
        let (ok, trunc) = task_covered(suite, base, t, max_paths);
        c.total += 1;
        let e = c.families.entry(t.family.clone()).or_default();
        e.1 += 1;
        if ok {
            c.covered += 1;
            e.0 += 1;
        }
        if trunc {
            c.truncated += 1;
        }
    }
    c
}
