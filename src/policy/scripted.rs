//! A policy that replays a fixed list of assistant turns: for replaying a recorded trajectory and
//! for exercising harness hooks deterministically in tests.

use std::sync::Mutex;

use super::{CallOptions, Policy, PolicyError};
use crate::message::{AssistantTurn, CallKind, Context, ToolCall};

pub struct ScriptedPolicy {
    name: String,
    turns: Mutex<std::collections::VecDeque<AssistantTurn>>,
    /// Reply to plan / reflect / critique calls (not taken from the script).
    pub extra_reply: String,
    /// Every context seen, with the call kind, for inspection.
    pub seen: Mutex<Vec<(CallKind, Context)>>,
}

impl ScriptedPolicy {
    pub fn new(name: &str, turns: Vec<AssistantTurn>) -> Self {
        ScriptedPolicy { name: name.into(), turns: Mutex::new(turns.into()), extra_reply: "OK".into(), seen: Mutex::new(Vec::new()) }
    }

    /// A turn with one tool call.
    pub fn call(name: &str, args: serde_json::Value) -> AssistantTurn {
        AssistantTurn {
            content: String::new(),
            tool_calls: vec![ToolCall { id: format!("call_{name}"), name: name.into(), arguments: args }],
            ..Default::default()
        }
    }
}

impl Policy for ScriptedPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn act(&self, ctx: &Context, opts: &CallOptions) -> Result<AssistantTurn, PolicyError> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).push((opts.kind, ctx.clone()));
        if opts.kind != CallKind::Act {
            return Ok(AssistantTurn { content: self.extra_reply.clone(), ..Default::default() });
        }
        let next = self.turns.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
        Ok(next.unwrap_or_else(|| AssistantTurn { content: "(script ended)".into(), ..Default::default() }))
    }
}
