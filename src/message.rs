//! The shared vocabulary of every layer: the chat-shaped context a policy reads, the assistant
//! turn it returns, tool calls and tool specs (an environment's actions), and the kinds of hook a
//! harness declares (a message's origin names them).
//!
//! These are plain data: an LLM back-end serialises them to its wire format, the built-in policy
//! reads the same messages. `origin` records which layer wrote a message (the environment, the
//! base harness, a sibling hook) so distillation can strip what only a sibling added; it never goes
//! over the wire.
//!
//! Architecture invariant: this module imports nothing of the crate.

use serde::{Deserialize, Serialize};

/// The kinds of hook a harness spec can declare.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum HookKind {
    OnInit,
    PreHint,
    BeforeAction,
    PostStep,
    Plan,
    Reflect,
    Critique,
}

impl HookKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HookKind::OnInit => "on_init",
            HookKind::PreHint => "pre_hint",
            HookKind::BeforeAction => "before_action",
            HookKind::PostStep => "post_step",
            HookKind::Plan => "plan",
            HookKind::Reflect => "reflect",
            HookKind::Critique => "critique",
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    /// The role's name on the wire (`system`, `user`, `assistant`, `tool`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// Who put a message into the context.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, ts_rs::TS)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Origin {
    /// The harness's own frame: system prompt, task prompt rendering.
    Frame,
    /// The policy's own output.
    Policy,
    /// A raw observation from the environment.
    Environment,
    /// Text a harness hook added (hint, injected context, feedback, block message,
    /// plan/reflect/critique output).
    Hook { hook: String, kind: HookKind },
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Parsed JSON arguments (an object for well-formed calls).
    #[ts(type = "unknown")]
    pub arguments: serde_json::Value,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Message {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    pub origin: Origin,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>, origin: Origin) -> Self {
        Message { role, content: content.into(), tool_calls: Vec::new(), tool_call_id: None, origin }
    }
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content, Origin::Frame)
    }
    pub fn user(content: impl Into<String>, origin: Origin) -> Self {
        Self::new(Role::User, content, origin)
    }
}

/// A tool the policy may call, in OpenAI function form.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    #[ts(type = "unknown")]
    pub parameters: serde_json::Value,
}

/// Everything a policy sees for one decision.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Context {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// What a policy call is for: the main decision, or an extra call a harness makes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    Act,
    Plan,
    Reflect,
    Critique,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct AssistantTurn {
    /// Free text (thoughts, or the whole answer for a text-only model).
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// The raw text of the model's reply as received (for the inspector).
    #[serde(default)]
    pub raw: String,
    #[serde(default)]
    pub prompt_tokens: u32,
    #[serde(default)]
    pub completion_tokens: u32,
    /// Token log-probabilities where the back-end reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<f32>>,
}
