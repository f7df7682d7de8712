//! The grammar kit: what every suite's action grammar for the built-in policy is made of.
//!
//! A grammar builds an action from a context as a sequence of slot [`Decision`]s, each a choice
//! among labelled options scored by the log-linear model's [`Feature`]s plus a fixed innate
//! prior; a [`Chooser`] makes each choice (sampling at act time, replaying a trace in training,
//! enumerating paths in a grammar search with [`Dfs`]). The decisions made are the reply's trace
//! ([`Built::trace`]), so training reads a reply back through the same grammar.

use super::model::{slot, Feature};
use crate::message::{AssistantTurn, Context, Message, Origin, Role, ToolCall};

/// One slot decision: its options with their features and a label for each.
pub struct Decision {
    pub slot: &'static str,
    pub labels: Vec<String>,
    pub options: Vec<Vec<Feature>>,
    /// Fixed log-prior per option (innate preferences, see [`innate`]).
    pub prior: Vec<f32>,
}

/// Feature helper.
pub fn f(parts: &[&str]) -> Feature {
    Feature { slot: slot(parts), value: 1.0 }
}

pub fn fv(parts: &[&str], value: f32) -> Feature {
    Feature { slot: slot(parts), value }
}

impl Decision {
    /// Add an option: its label, its features and its innate log-prior.
    pub fn push(&mut self, label: impl Into<String>, features: Vec<Feature>, prior: f32) {
        self.labels.push(label.into());
        self.options.push(features);
        self.prior.push(prior);
    }
}

/// Chooses an option for each decision: sampling at act time, replaying a trace when training.
pub trait Chooser {
    fn choose(&mut self, d: &Decision) -> Option<usize>;
}

/// Let `ch` make decision `d` and keep it with its choice; a decision without options cannot
/// be made (the grammar has nothing to point at). Every suite's grammar builds through this.
pub fn decide_into(decisions: &mut Vec<(Decision, usize)>, d: Decision, ch: &mut dyn Chooser) -> Option<usize> {
    if d.options.is_empty() {
        return None;
    }
    let i = ch.choose(&d)?;
    decisions.push((d, i));
    Some(i)
}

/// The action built and the decisions that built it.
pub struct Built {
    pub tool: String,
    pub arguments: serde_json::Value,
    pub decisions: Vec<(Decision, usize)>,
}

impl Built {
    /// The decision trace written into the reply text (`slot=label; ...`).
    pub fn trace(&self) -> String {
        self.decisions.iter().map(|(d, i)| format!("{}={}", d.slot, d.labels[*i])).collect::<Vec<_>>().join("; ")
    }
}

/// Innate preferences: what any instruction-following model does with what it is shown. They
/// are fixed priors, not learned: an explicit instruction in the context to quote names, to
/// convert text numbers, or a visible format problem, makes the matching choice likelier.
pub mod innate {
    pub const FOLLOW_HINT: f32 = 4.0;
    /// What the request itself asks for (a question is answered by a query; "delete ..." by a
    /// DELETE).
    pub const READ_REQUEST: f32 = 1.5;
    pub const VISIBLE_FORMAT: f32 = 2.0;
}

/// Depth-first enumeration of decision paths: each build follows `path`, extending it with
/// first options; `advance` moves to the next path.
#[derive(Default)]
pub struct Dfs {
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
    pub fn of_kind(kind: &'static str) -> Dfs {
        Dfs { kind: Some(kind), ..Default::default() }
    }

    pub fn advance(&mut self) -> bool {
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

pub fn push_call(ctx: &mut Context, call: ToolCall, observation: String) {
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

/// A call id numbered by the tool calls already in `ctx` (`call_0`, `call_1`, ...), for grammars
/// that count calls rather than assistant turns.
pub fn id_by_tool_calls(ctx: &Context) -> String {
    format!("call_{}", ctx.messages.iter().filter(|m| m.role == Role::Assistant).map(|m| m.tool_calls.len()).sum::<usize>())
}

pub fn turn(b: &Built, id: &str) -> AssistantTurn {
    let trace = b.trace();
    AssistantTurn {
        content: trace.clone(),
        tool_calls: vec![ToolCall { id: id.into(), name: b.tool.clone(), arguments: b.arguments.clone() }],
        raw: trace,
        ..Default::default()
    }
}
