//! Distillation: a rescue trajectory (a success under a sibling harness) becomes training
//! examples in the base harness's context.
//!
//! - `strip` (default): replay the rescue's executed actions and the environment's raw
//!   observations through the base harness's renderer. Everything only the sibling added — hints,
//!   injected context, block messages, critiques, plans, reflections, rewritten-away proposals — is
//!   gone; rewritten actions are kept in their executed form, so the policy learns to write them
//!   itself.
//! - `keep-scaffold` (control): train on the contexts the policy actually saw under the sibling.
//! - `internalize`: as `strip`, but the output of an extra call the sibling made for the policy
//!   (a plan, a reflection) becomes part of the policy's own reply text at that step.

use serde::{Deserialize, Serialize};

use crate::episode::{Effect, Episode};
use crate::harness::engine::apply_history;
use crate::harness::HarnessSpec;
use crate::message::{AssistantTurn, Context, Message, Origin, Role};
use crate::policy::builtin::TrainExample;
use crate::suite::{EnvError, Suite};
use crate::task::Task;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DistillMode {
    Strip,
    KeepScaffold,
    Internalize,
}

impl DistillMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "strip" => Some(Self::Strip),
            "keep-scaffold" => Some(Self::KeepScaffold),
            "internalize" => Some(Self::Internalize),
            _ => None,
        }
    }
}

/// The examples distilled from one rescue, stored next to it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DistilledExample {
    pub mode: DistillMode,
    pub task_id: String,
    pub from_harness: String,
    pub to_harness: String,
    pub examples: Vec<TrainExample>,
}

/// Distil `rescue` into examples for `base`. `weight` is each example's training weight.
pub fn distil(
    mode: DistillMode,
    rescue: &Episode,
    base: &HarnessSpec,
    suite: &dyn Suite,
    task: &Task,
    weight: f32,
) -> Result<DistilledExample, EnvError> {
    let mut examples = Vec::new();
    if mode == DistillMode::KeepScaffold {
        for step in &rescue.steps {
            if let Some(target) = executed_turn(step, None) {
                examples.push(TrainExample { context: step.context.clone(), target, weight });
            }
        }
        return Ok(DistilledExample {
            mode,
            task_id: rescue.task_id.clone(),
            from_harness: rescue.harness.clone(),
            to_harness: rescue.harness.clone(),
            examples,
        });
    }
    let env = suite.make_env(task)?;
    let task_prompt = env.task_prompt();
    drop(env);
    let tools = base.offered_tools(suite.tools());
    let mut messages = base.frame(&task_prompt);
    for step in &rescue.steps {
        let thought = if mode == DistillMode::Internalize {
            let notes: Vec<String> = step
                .interventions
                .iter()
                .filter_map(|iv| match &iv.effect {
                    Effect::Call { output, .. } => Some(output.clone()),
                    _ => None,
                })
                .collect();
            if notes.is_empty() {
                None
            } else {
                Some(notes.join("\n"))
            }
        } else {
            None
        };
        let Some(target) = executed_turn(step, thought.as_deref()) else { continue };
        let context = Context { messages: apply_history(&messages, &base.render.history), tools: tools.clone() };
        examples.push(TrainExample { context, target: target.clone(), weight });
        let mut a = Message::new(Role::Assistant, target.content.clone(), Origin::Policy);
        a.tool_calls = target.tool_calls.clone();
        messages.push(a);
        for c in step.calls.iter().filter(|c| c.executed.is_some()) {
            let mut m = Message::new(Role::Tool, c.observation.clone(), Origin::Environment);
            m.tool_call_id = Some(c.proposed.id.clone());
            messages.push(m);
        }
    }
    Ok(DistilledExample { mode, task_id: rescue.task_id.clone(), from_harness: rescue.harness.clone(), to_harness: base.name.clone(), examples })
}

/// The step's reply restricted to what was executed (rewrites applied, blocked calls dropped);
/// `None` if nothing was executed.
fn executed_turn(step: &crate::episode::Step, thought: Option<&str>) -> Option<AssistantTurn> {
    let calls: Vec<_> =
        step.calls.iter().filter_map(|c| c.executed.as_ref().map(|a| crate::message::ToolCall { id: c.proposed.id.clone(), ..a.clone() })).collect();
    if calls.is_empty() {
        return None;
    }
    let mut content = step.output.content.clone();
    if let Some(t) = thought {
        content.push('\n');
        content.push_str(t);
    }
    Some(AssistantTurn { content, tool_calls: calls, ..Default::default() })
}

/// Every text in the examples' contexts that did not come from the base frame, the policy, or the
/// environment (used by tests: a stripped example must contain none of the sibling's text).
pub fn foreign_messages(d: &DistilledExample) -> Vec<String> {
    d.examples.iter().flat_map(|e| e.context.messages.iter()).filter(|m| matches!(m.origin, Origin::Hook { .. })).map(|m| m.content.clone()).collect()
}
