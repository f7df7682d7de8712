//! The training batch: what one update of one job learns from, as the loop builds it
//! ([`TrainSequence`]) and as an external trainer reads it (one JSONL line per [`BatchLine`],
//! specified in `docs/trainer-protocol.md` and `docs/trainer-batch.schema.json`).
//!
//! A sequence is one episode's contribution: every decision step it trains on, under one
//! group-relative `advantage` and one `weight`; the built-in learner trains each step with weight
//! `weight × advantage`, the same number a trainer reads from the line. A line is in OpenAI/TRL
//! conversational form (`messages` with assistant `tool_calls` and `tool` turns, `tools` as
//! function specs) so that TRL's `SFTTrainer` reads it as it is. Consecutive steps whose contexts
//! extend each other become one line; assistant turns that are not training targets (an answer the
//! loop does not train on) carry OpenAI's per-message `"weight": 0`.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::message::{AssistantTurn, Context, Message, Role, ToolCall, ToolSpec};
use crate::policy::builtin::TrainExample;

/// Where a sequence comes from.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// An on-policy rollout under the base harness (GRPO group member).
    Rollout,
    /// A sibling's successful rescue, distilled into the context named by `harness`.
    RescueDistilled,
    /// A solving demonstration found by the grammar search, before the first iteration.
    WarmStart,
    /// An evaluation trajectory (in exports only; never trained on).
    Evaluation,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Rollout => "rollout",
            Source::RescueDistilled => "rescue-distilled",
            Source::WarmStart => "warm-start",
            Source::Evaluation => "evaluation",
        }
    }

    pub const ALL: [Source; 4] = [Source::Rollout, Source::RescueDistilled, Source::WarmStart, Source::Evaluation];

    pub fn parse(s: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// Where a sequence's steps are kept in the run store, so that an export can rebuild the batch.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum StepsRef {
    /// The tool-calling steps of a stored episode.
    Episode { id: i64 },
    /// An episode of the iteration not yet stored: its position in the iteration's save list
    /// (replaced by [`StepsRef::Episode`] once stored; never written).
    Unsaved { index: usize },
    /// The examples of a `distilled` record.
    Distilled { key: String },
    /// Demonstration `index` of the run-state entry `key`.
    Demonstration { key: String, index: usize },
}

/// A sequence without its steps: one entry of a stored batch manifest (`batch` record).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SequenceRef {
    #[serde(flatten)]
    pub info: SequenceInfo,
    pub steps: StepsRef,
}

/// A stored batch (`batch` record): which sequences one update learned from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BatchManifest {
    pub suite: String,
    pub seed_index: usize,
    #[serde(flatten)]
    pub meta: BatchMeta,
    pub sequences: Vec<SequenceRef>,
    /// The base harness's tool specs, for demonstrations (the search's contexts leave them out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_tools: Vec<ToolSpec>,
}

/// What a sequence is and how the update weighs it: shared by the loop's [`TrainSequence`], the
/// stored [`SequenceRef`] and the trainer's [`BatchLine`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SequenceInfo {
    pub task_id: String,
    pub family: String,
    /// The GRPO group the advantage is relative to (a rescue joins its task's failed group).
    pub group_id: String,
    pub reward: f64,
    /// Group-relative advantage `(r − mean) / std` (1 for demonstrations and SFT rescues).
    pub advantage: f32,
    /// The sequence's weight apart from its advantage (`distill.weight` for rescues, else 1).
    pub weight: f32,
    pub source: Source,
    /// The harness whose context the steps are in.
    pub harness: String,
}

/// One episode's training steps with the numbers the update weighs them by.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainSequence {
    #[serde(flatten)]
    pub info: SequenceInfo,
    /// The steps, each with weight `weight × advantage`.
    pub steps: Vec<TrainExample>,
    /// Where the steps are stored.
    pub steps_ref: Option<StepsRef>,
}

impl TrainSequence {
    /// A sequence over `steps` (contexts and targets), each step weighted `weight × advantage`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        task_id: &str,
        family: &str,
        group_id: &str,
        reward: f64,
        advantage: f32,
        weight: f32,
        source: Source,
        harness: &str,
        steps: impl IntoIterator<Item = (Context, AssistantTurn)>,
    ) -> Self {
        let w = weight * advantage;
        let info = SequenceInfo {
            task_id: task_id.into(),
            family: family.into(),
            group_id: group_id.into(),
            reward,
            advantage,
            weight,
            source,
            harness: harness.into(),
        };
        TrainSequence {
            info,
            steps: steps.into_iter().map(|(context, target)| TrainExample { context, target, weight: w }).collect(),
            steps_ref: None,
        }
    }

    pub fn stored_at(mut self, r: StepsRef) -> Self {
        self.steps_ref = Some(r);
        self
    }

    /// The manifest entry (`None` if the steps' place is unknown).
    pub fn reference(&self) -> Option<SequenceRef> {
        Some(SequenceRef { info: self.info.clone(), steps: self.steps_ref.clone()? })
    }

    /// A sequence rebuilt from its manifest entry and its steps.
    pub fn from_reference(r: &SequenceRef, steps: impl IntoIterator<Item = (Context, AssistantTurn)>) -> Self {
        let i = &r.info;
        TrainSequence::new(&i.task_id, &i.family, &i.group_id, i.reward, i.advantage, i.weight, i.source, &i.harness, steps)
            .stored_at(r.steps.clone())
    }
}

/// Every step of every sequence, in order: what the built-in learner trains on.
pub fn flatten(batch: &[TrainSequence]) -> Vec<TrainExample> {
    batch.iter().flat_map(|s| s.steps.iter().cloned()).collect()
}

/// Which job and update a batch belongs to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BatchMeta {
    pub arm: String,
    pub seed: u64,
    pub iteration: usize,
    /// The version of the policy the rollouts were sampled from.
    pub policy_version: u64,
}

/// One line of a batch file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BatchLine {
    pub messages: Vec<Value>,
    pub tools: Vec<Value>,
    #[serde(flatten)]
    pub info: SequenceInfo,
    #[serde(flatten)]
    pub meta: BatchMeta,
}

/// A tool call in conversational form. `arguments` stays a JSON object, as the chat templates of
/// TRL and transformers expect (the chat-completions wire carries a string instead).
fn call_json(c: &ToolCall) -> Value {
    json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
}

/// A context message in conversational form; `origin` (the workbench's bookkeeping) is dropped.
pub fn message_json(m: &Message) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), json!(m.role.as_str()));
    o.insert("content".into(), json!(m.content));
    if !m.tool_calls.is_empty() {
        o.insert("tool_calls".into(), Value::Array(m.tool_calls.iter().map(call_json).collect()));
    }
    if let Some(id) = &m.tool_call_id {
        o.insert("tool_call_id".into(), json!(id));
    }
    if m.role == Role::Assistant {
        // an assistant turn from the context is not a training target
        o.insert("weight".into(), json!(0));
    }
    Value::Object(o)
}

/// The policy's turn as a training target (`"weight": 1`).
pub fn target_json(t: &AssistantTurn) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), json!("assistant"));
    o.insert("content".into(), json!(t.content));
    if !t.tool_calls.is_empty() {
        o.insert("tool_calls".into(), Value::Array(t.tool_calls.iter().map(call_json).collect()));
    }
    o.insert("weight".into(), json!(1));
    Value::Object(o)
}

pub fn tool_json(t: &ToolSpec) -> Value {
    json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}})
}

/// `m` as the message the policy's turn `t` became in later contexts.
fn same_turn(m: &Message, t: &AssistantTurn) -> bool {
    m.role == Role::Assistant && m.content == t.content && m.tool_calls == t.tool_calls
}

/// The conversations of one sequence: consecutive steps whose contexts extend the previous step's
/// context and target become one conversation (every target in it weighted 1).
fn conversations(seq: &TrainSequence) -> Vec<(Vec<Value>, &[ToolSpec])> {
    let mut out: Vec<(Vec<Value>, &[ToolSpec])> = Vec::new();
    // the previous step: does this one continue its conversation?
    let mut prev: Option<(&Context, &AssistantTurn)> = None;
    for step in &seq.steps {
        let extends = prev.is_some_and(|(c, t)| {
            let n = c.messages.len();
            c.tools == step.context.tools
                && step.context.messages.len() > n
                && step.context.messages[..n] == c.messages[..]
                && same_turn(&step.context.messages[n], t)
        });
        match (extends, out.last_mut(), prev) {
            (true, Some((msgs, _)), Some((c, _))) => {
                for m in &step.context.messages[c.messages.len() + 1..] {
                    msgs.push(message_json(m));
                }
                msgs.push(target_json(&step.target));
            }
            _ => {
                let mut msgs: Vec<Value> = step.context.messages.iter().map(message_json).collect();
                msgs.push(target_json(&step.target));
                out.push((msgs, &step.context.tools));
            }
        }
        prev = Some((&step.context, &step.target));
    }
    out
}

/// The lines of a batch, in the batch's order.
pub fn lines(batch: &[TrainSequence], meta: &BatchMeta) -> Vec<BatchLine> {
    let mut out = Vec::new();
    for seq in batch {
        for (messages, tools) in conversations(seq) {
            out.push(BatchLine { messages, tools: tools.iter().map(tool_json).collect(), info: seq.info.clone(), meta: meta.clone() });
        }
    }
    out
}

/// Writes the batch as JSONL to `path` (through a temporary file, so a reader never sees half a
/// batch); returns the number of lines.
pub fn write_jsonl(path: &std::path::Path, batch: &[TrainSequence], meta: &BatchMeta) -> std::io::Result<usize> {
    write_lines(path, &lines(batch, meta))
}

/// [`write_jsonl`] for lines already made.
pub fn write_lines(path: &std::path::Path, ls: &[BatchLine]) -> std::io::Result<usize> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("jsonl.tmp");
    {
        let mut f = std::io::BufWriter::new(crate::files::create(&tmp, true)?);
        for l in ls {
            serde_json::to_writer(&mut f, l).map_err(std::io::Error::other)?;
            f.write_all(b"\n")?;
        }
        f.flush()?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(ls.len())
}
