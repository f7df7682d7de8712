//! Chat-completions wire format: request bodies out, assistant turns in.

use serde_json::{json, Map, Value};

use super::text_tools;
use crate::message::{AssistantTurn, Context, Message, Role, ToolCall};
use crate::policy::{CallOptions, PolicyError};

/// How tools are offered to the model for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireMode {
    Native,
    Text,
}

pub(crate) struct RequestParams<'a> {
    pub model: &'a str,
    pub temperature: f32,
    pub max_tokens: Option<u32>,
    pub logprobs: bool,
    pub extra_body: Option<&'a Value>,
}

/// An `f32` as the JSON number a human would write (0.7, not 0.699999988079071).
fn f32_json(x: f32) -> Value {
    x.to_string().parse::<f64>().ok().and_then(|f| serde_json::Number::from_f64(f).map(Value::Number)).unwrap_or(Value::Null)
}

/// The arguments of a call as the JSON string the wire carries. Arguments kept as a raw string
/// (a malformed call) are sent back verbatim rather than double-encoded.
fn arguments_string(call: &ToolCall) -> String {
    match &call.arguments {
        Value::String(raw) => raw.clone(),
        v => serde_json::to_string(v).unwrap_or_else(|_| "{}".into()),
    }
}

fn native_message(m: &Message) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), json!(m.role.as_str()));
    o.insert("content".into(), json!(m.content));
    if m.role == Role::Assistant && !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": arguments_string(c)},
                })
            })
            .collect();
        o.insert("tool_calls".into(), Value::Array(calls));
    }
    if m.role == Role::Tool {
        if let Some(id) = &m.tool_call_id {
            o.insert("tool_call_id".into(), json!(id));
        }
    }
    Value::Object(o)
}

/// Messages for text mode: the tool description joins the leading system message (or becomes
/// one), assistant calls are rendered as `<tool_call>` text and tool results as user messages.
fn text_messages(ctx: &Context) -> Vec<Value> {
    let mut out = Vec::with_capacity(ctx.messages.len() + 1);
    let tools_prompt = (!ctx.tools.is_empty()).then(|| text_tools::tools_prompt(&ctx.tools));
    let mut msgs = ctx.messages.iter().peekable();
    if let Some(tp) = &tools_prompt {
        // Many chat templates accept a single leading system message only, so merge into it.
        match msgs.peek() {
            Some(first) if first.role == Role::System => {
                let first = msgs.next().expect("peeked");
                let content = if first.content.trim().is_empty() { tp.clone() } else { format!("{}\n\n{tp}", first.content) };
                out.push(json!({"role": "system", "content": content}));
            }
            _ => out.push(json!({"role": "system", "content": tp})),
        }
    }
    let mut names: Vec<(&str, &str)> = Vec::new(); // (call id, tool name), latest last
    for m in msgs {
        match m.role {
            Role::Assistant if !m.tool_calls.is_empty() => {
                let mut parts: Vec<String> = Vec::new();
                if !m.content.trim().is_empty() {
                    parts.push(m.content.clone());
                }
                for c in &m.tool_calls {
                    parts.push(text_tools::render_tool_call(c));
                    names.push((&c.id, &c.name));
                }
                out.push(json!({"role": "assistant", "content": parts.join("\n")}));
            }
            Role::Tool => {
                let name = m.tool_call_id.as_deref().and_then(|id| names.iter().rev().find(|(i, _)| *i == id).map(|(_, n)| *n)).unwrap_or("tool");
                let content = format!("{}\n{}", text_tools::tool_result_prefix(name), m.content);
                out.push(json!({"role": "user", "content": content}));
            }
            r => out.push(json!({"role": r.as_str(), "content": m.content})),
        }
    }
    out
}

/// The full request body for one call. `extra_body` keys are merged last (they override).
pub(crate) fn request_body(ctx: &Context, opts: &CallOptions, p: &RequestParams, mode: WireMode) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(p.model));
    let messages = match mode {
        WireMode::Native => ctx.messages.iter().map(native_message).collect(),
        WireMode::Text => text_messages(ctx),
    };
    body.insert("messages".into(), Value::Array(messages));
    if mode == WireMode::Native && !ctx.tools.is_empty() {
        let tools: Vec<Value> = ctx
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        body.insert("tool_choice".into(), json!("auto"));
    }
    body.insert("temperature".into(), f32_json(p.temperature));
    // Servers validate `seed` as a signed 64-bit integer.
    body.insert("seed".into(), json!(opts.seed & (i64::MAX as u64)));
    if let Some(mt) = p.max_tokens {
        body.insert("max_tokens".into(), json!(mt));
    }
    if p.logprobs {
        body.insert("logprobs".into(), json!(true));
    }
    if let Some(Value::Object(extra)) = p.extra_body {
        for (k, v) in extra {
            body.insert(k.clone(), v.clone());
        }
    }
    Value::Object(body)
}

/// Number of tool calls already in the context: generated ids continue from it, so they stay
/// unique within an episode and deterministic.
pub(crate) fn prior_call_count(ctx: &Context) -> usize {
    ctx.messages.iter().map(|m| m.tool_calls.len()).sum()
}

fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        // Some servers return content as an array of parts: [{"type": "text", "text": ...}].
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str())).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push_str("...");
        t
    }
}

/// Parses a 200 reply body. `text_tools` = parse tool calls out of the content (text mode).
pub fn parse_reply(body: &str, text_tools_on: bool, first_index: usize) -> Result<AssistantTurn, PolicyError> {
    let v: Value = serde_json::from_str(body).map_err(|e| PolicyError::Protocol(format!("reply is not JSON ({e}): {}", short(body, 200))))?;
    let Some(choices) = v.get("choices").and_then(Value::as_array) else {
        if let Some(err) = v.get("error") {
            let msg = err.get("message").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| err.to_string());
            return Err(PolicyError::Protocol(format!("reply carries an error: {}", short(&msg, 300))));
        }
        return Err(PolicyError::Protocol(format!("reply has no `choices`: {}", short(body, 200))));
    };
    let Some(choice) = choices.first() else {
        return Err(PolicyError::Protocol("reply has an empty `choices` array".into()));
    };
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return Err(PolicyError::Protocol("reply `choices[0]` has no `message` object".into()));
    };
    let mut turn = AssistantTurn {
        content: content_text(message.get("content")),
        raw: serde_json::to_string(message).unwrap_or_default(),
        ..Default::default()
    };
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let f = c.get("function").unwrap_or(&Value::Null);
            let id = c
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{}", first_index + i));
            let name = f.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => text_tools::parse_arguments_string(s),
                None | Some(Value::Null) => Value::Object(Default::default()),
                Some(other) => other.clone(), // some servers (e.g. Ollama) send an object
            };
            turn.tool_calls.push(ToolCall { id, name, arguments });
        }
    }
    if text_tools_on {
        let (rest, calls) = text_tools::parse_tool_calls(&turn.content, first_index + turn.tool_calls.len());
        if !calls.is_empty() {
            turn.content = rest;
            turn.tool_calls.extend(calls);
        }
    }
    if let Some(u) = v.get("usage") {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).map(|x| x.min(u32::MAX as u64) as u32).unwrap_or(0);
        turn.prompt_tokens = n("prompt_tokens");
        turn.completion_tokens = n("completion_tokens");
    }
    if let Some(content) = choice.get("logprobs").and_then(|l| l.get("content")).and_then(Value::as_array) {
        let lps: Vec<f32> = content.iter().filter_map(|t| t.get("logprob").and_then(Value::as_f64)).map(|x| x as f32).collect();
        turn.logprobs = Some(lps);
    }
    Ok(turn)
}

/// Does a 400 reply say the server cannot do native tool calling? (vLLM without
/// `--enable-auto-tool-choice`, Ollama "does not support tools", llama.cpp without `--jinja`, ...)
pub(crate) fn says_tools_unsupported(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    b.contains("tool")
        && [
            "support",
            "requires",
            "enable-auto-tool-choice",
            "tool-call-parser",
            "jinja",
            "not allowed",
            "not enabled",
            "unrecognized",
            "unknown",
            "extra inputs",
            "extra_forbidden",
        ]
        .iter()
        .any(|k| b.contains(k))
}
