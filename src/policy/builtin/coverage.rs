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
use crate::message::{AssistantTurn, Context, Message, Origin, Role, ToolCall};
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
pub(super) struct Dfs {
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
    /// A search whose first decision (the action kind) is fixed to `kind`.
    pub(super) fn of_kind(kind: &'static str) -> Dfs {
        Dfs { kind: Some(kind), ..Default::default() }
    }

    pub(super) fn advance(&mut self) -> bool {
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
        messages: base.frame(task_prompt),
        tools: Vec::new(),
    }
}

pub(super) fn push_call(ctx: &mut Context, call: ToolCall, observation: String) {
    let id = call.id.clone();
    let mut a = Message::new(Role::Assistant, String::new(), Origin::Policy);
    a.tool_calls = vec![call];
    ctx.messages.push(a);
    let mut t = Message::new(Role::Tool, observation, Origin::Environment);
    t.tool_call_id = Some(id);
    ctx.messages.push(t);
}

/// A solving sequence: each step's context and the reply (with its decision trace) that the
/// grammar produced there.
pub type Solution = Vec<(Context, AssistantTurn)>;

pub(super) fn turn(b: &super::dbbench::Built, id: &str) -> AssistantTurn {
    let trace = b.trace();
    AssistantTurn {
        content: trace.clone(),
        tool_calls: vec![ToolCall { id: id.into(), name: b.tool.clone(), arguments: b.arguments.clone() }],
        raw: trace,
        ..Default::default()
    }
}

/// Does some grammar sequence solve `task`? Returns (solved, truncated).
pub fn task_covered(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize) -> (bool, bool) {
    let (s, t) = solve(suite, base, task, max_paths);
    (s.is_some(), t)
}

/// Search the grammar for a sequence that solves `task` under the base harness's frame:
/// one query (or mutation) then a commit, optionally after inspecting the table first.
/// Returns the first solution found and whether the search hit `max_paths`.
pub fn solve(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize) -> (Option<Solution>, bool) {
    solve_with(suite, base, task, max_paths, true)
}

/// [`solve`], optionally without the DBBench grammar's first look at the table (`inspect`):
/// warm-start demonstrations are direct question -> SQL -> answer solutions, as in a text-to-SQL
/// corpus, so looking at the data first is something the policy must learn.
pub fn solve_with(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize, inspect: bool) -> (Option<Solution>, bool) {
    if base.offered_tools(suite.tools()).iter().any(|t| t.name == super::appworld::TOOL) {
        return solve_appworld(suite, base, task, max_paths);
    }
    if suite.name() == "swegym" {
        return super::swegym::solve(suite, base, task, max_paths);
    }
    let Ok(mut probe) = suite.make_env(task) else { return (None, false) };
    let task_prompt = probe.task_prompt();
    let frame = base_context(base, &task_prompt);
    // (context, steps that led to it)
    let mut starts: Vec<(Context, Solution)> = vec![(frame.clone(), Vec::new())];
    if inspect {
        let mut dfs = Dfs { kind: Some("inspect"), ..Default::default() };
        let view = DbView::parse(&frame);
        if let Some(b) = build(&view, &mut dfs) {
            let t = turn(&b, "call_0");
            let call = t.tool_calls[0].clone();
            if let Ok(out) = probe.step(&call) {
                let mut c = frame.clone();
                push_call(&mut c, call, out.observation);
                starts.push((c, vec![(frame.clone(), t)]));
            }
        }
    }
    let mutation = DbView::parse(&frame).mutation.is_some();
    let kinds: &[&'static str] = if mutation { &["insert", "update", "delete"] } else { &["query"] };
    let mut truncated = false;
    for (ctx, prefix) in &starts {
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
                    if seen.insert(sql) {
                        let t = turn(&b, &format!("call_{}", prefix.len()));
                        // a query leaves the table as it was, so one environment serves them all;
                        // a mutation gets a fresh one
                        let found = if mutation {
                            match suite.make_env(task) {
                                Ok(mut env) => solves(env.as_mut(), ctx, t.tool_calls[0].clone()),
                                Err(_) => None,
                            }
                        } else {
                            solves(probe.as_mut(), ctx, t.tool_calls[0].clone())
                        };
                        if let Some((after, commit)) = found {
                            let mut sol = prefix.clone();
                            sol.push((ctx.clone(), t));
                            sol.push((after, commit));
                            return (Some(sol), truncated);
                        }
                    }
                }
                if !dfs.advance() {
                    break;
                }
            }
        }
    }
    (None, truncated)
}

/// Run `call`, then try every answer the grammar could commit; the
/// context after the call and the winning commit.
fn solves(env: &mut dyn crate::suite::Environment, ctx: &Context, call: ToolCall) -> Option<(Context, AssistantTurn)> {
    let out = env.step(&call).ok()?;
    if out.signals.error_kind.is_some() {
        return None;
    }
    let mut after = ctx.clone();
    let n = after.messages.iter().filter(|m| m.role == Role::Assistant).count();
    push_call(&mut after, call, out.observation);
    let view = DbView::parse(&after);
    let mut dfs = Dfs { kind: Some("commit"), ..Default::default() };
    loop {
        if let Some(b) = build(&view, &mut dfs) {
            let commit = turn(&b, &format!("call_{}", n + 1));
            if let Ok(s) = env.score(Some(&commit.tool_calls[0])) {
                if s.success {
                    return Some((after, commit));
                }
            }
        }
        if !dfs.advance() {
            return None;
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

/// AppWorld's sequences are long (docs, login, calls, completion), so instead of enumerating
/// every path the search samples whole episodes from the grammar's innate priors: the first
/// greedily, then at rising temperature, one per 300 paths of the budget.
fn solve_appworld(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize) -> (Option<Solution>, bool) {
    let model = super::model::LinearModel::default();
    let tools = base.offered_tools(suite.tools());
    let attempts = (max_paths / 300).max(1);
    for attempt in 0..attempts {
        let Ok(mut env) = suite.make_env(task) else { return (None, false) };
        let mut ctx = Context { messages: base.frame(&env.task_prompt()), tools: tools.clone() };
        let mut steps: Solution = Vec::new();
        let temperature = if attempt == 0 { 0.0 } else { 0.5 + attempt as f32 / attempts as f32 };
        for step in 0..base.max_steps {
            let seed = (attempt as u64) << 32 | step as u64;
            let t = super::sample_turn(&model, &ctx, seed, temperature, |c, ch| super::appworld::build(&super::appworld::AwView::parse(c), ch));
            let Some(call) = t.tool_calls.first().cloned() else { break };
            let Ok(out) = env.step(&call) else { break };
            steps.push((ctx.clone(), t));
            push_call(&mut ctx, call, out.observation);
            if out.done {
                if env.score(None).is_ok_and(|s| s.success) {
                    return (Some(steps), false);
                }
                break;
            }
        }
    }
    (None, false)
}
