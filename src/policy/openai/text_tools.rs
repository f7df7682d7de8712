//! Tool calling for models or servers without native function calling ([`ToolMode::Text`]).
//!
//! Tools are described in the system prompt ([`tools_prompt`]), and calls are parsed back out of
//! the reply text ([`parse_tool_calls`]) in three accepted shapes, tried in this order:
//!
//! 1. `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks (Hermes / Qwen style; a
//!    missing closing tag at the very end of the reply is tolerated);
//! 2. fenced code blocks (```` ```json ````, or no language) holding a `{"name", "arguments"}`
//!    object or an array of them;
//! 3. a bare `{"name": ..., "arguments": ...}` object anywhere in the text.
//!
//! History is rendered back in the same convention: earlier assistant tool calls become
//! `<tool_call>` text, tool results become user messages starting `Tool result (<name>):`.
//!
//! [`ToolMode::Text`]: super::ToolMode::Text

use serde_json::Value;

use crate::message::{ToolCall, ToolSpec};

pub const OPEN_TAG: &str = "<tool_call>";
pub const CLOSE_TAG: &str = "</tool_call>";

/// The prefix of a user message carrying a tool result in text mode: `Tool result (<name>):`.
pub fn tool_result_prefix(name: &str) -> String {
    format!("Tool result ({name}):")
}

/// The system-prompt section describing `tools` and the exact call format to use.
pub fn tools_prompt(tools: &[ToolSpec]) -> String {
    let mut s = String::from(
        "# Tools\n\n\
         You can call the tools below. Each is given as a JSON object with its name, a \
         description, and the JSON Schema of its arguments.\n\n<tools>\n",
    );
    for t in tools {
        s.push_str(&format!(
            "{{\"name\": {}, \"description\": {}, \"parameters\": {}}}\n",
            json_str(&t.name),
            json_str(&t.description),
            serde_json::to_string(&t.parameters).unwrap_or_else(|_| "{}".into()),
        ));
    }
    s.push_str(
        "</tools>\n\n\
         To call a tool, reply with a block in exactly this format, one block per call:\n\
         <tool_call>\n\
         {\"name\": \"<tool name>\", \"arguments\": <the arguments as a JSON object>}\n\
         </tool_call>\n\
         You may write your reasoning before the block; write nothing after it. \
         The result of each call comes back in a user message that starts with \
         \"Tool result (<tool name>):\".",
    );
    s
}

/// One call rendered as a `<tool_call>` block (used for history in text mode).
pub fn render_tool_call(call: &ToolCall) -> String {
    format!(
        "{OPEN_TAG}\n{{\"name\": {}, \"arguments\": {}}}\n{CLOSE_TAG}",
        json_str(&call.name),
        serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into())
    )
}

/// Parses tool calls out of reply text. Returns the remaining text (the calls cut out, trimmed)
/// and the calls, with ids `call_<first_index>`, `call_<first_index + 1>`, ...
///
/// A `<tool_call>` block whose body is not valid JSON still yields a call (name recovered from
/// the text where possible, `arguments` = the raw body as a JSON string) so the environment can
/// report the malformed call instead of the policy silently doing nothing.
pub fn parse_tool_calls(text: &str, first_index: usize) -> (String, Vec<ToolCall>) {
    let mut raw_calls: Vec<(String, Value)> = Vec::new();
    let content;
    if let Some((rest, found)) = parse_tagged(text) {
        content = rest;
        raw_calls = found;
    } else if let Some((rest, found)) = parse_fenced(text) {
        content = rest;
        raw_calls = found;
    } else if let Some((rest, found)) = parse_bare(text) {
        content = rest;
        raw_calls = found;
    } else {
        content = text.trim().to_string();
    }
    let calls = raw_calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall { id: format!("call_{}", first_index + i), name, arguments })
        .collect();
    (content, calls)
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Normalises an `arguments` value: a JSON string holding JSON is decoded, null/missing is `{}`.
pub(crate) fn normalize_arguments(v: Option<&Value>) -> Value {
    match v {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(s)) => parse_arguments_string(s),
        Some(other) => other.clone(),
    }
}

/// Decodes an `arguments` JSON string; an empty string is `{}`; an undecodable one is kept as
/// `Value::String(raw)`.
pub(crate) fn parse_arguments_string(s: &str) -> Value {
    if s.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_string()))
}

/// `{"name": <string>, "arguments"|"parameters": ...}` → (name, arguments). With `strict`, the
/// arguments key must be present (used for bare objects, to avoid false positives).
fn as_call(v: &Value, strict: bool) -> Option<(String, Value)> {
    let obj = v.as_object()?;
    let name = obj.get("name")?.as_str()?.to_string();
    let args = obj.get("arguments").or_else(|| obj.get("parameters"));
    if strict && args.is_none() {
        return None;
    }
    Some((name, normalize_arguments(args)))
}

/// A call object or an array of call objects.
fn as_calls(v: &Value, strict: bool) -> Option<Vec<(String, Value)>> {
    match v {
        Value::Array(items) if !items.is_empty() => items.iter().map(|i| as_call(i, strict)).collect(),
        _ => as_call(v, strict).map(|c| vec![c]),
    }
}

fn parse_tagged(text: &str) -> Option<(String, Vec<(String, Value)>)> {
    let mut pos = 0;
    let mut rest = String::new();
    let mut calls = Vec::new();
    let mut found = false;
    while let Some(off) = text[pos..].find(OPEN_TAG) {
        found = true;
        let start = pos + off;
        rest.push_str(&text[pos..start]);
        let body_start = start + OPEN_TAG.len();
        let (body, next) = match text[body_start..].find(CLOSE_TAG) {
            Some(e) => (&text[body_start..body_start + e], body_start + e + CLOSE_TAG.len()),
            None => (&text[body_start..], text.len()),
        };
        let body = strip_fence(body.trim());
        match serde_json::from_str::<Value>(body).ok().and_then(|v| as_calls(&v, false)) {
            Some(cs) => calls.extend(cs),
            None => calls.push((recover_name(body), Value::String(body.to_string()))),
        }
        pos = next;
    }
    if !found {
        return None;
    }
    rest.push_str(&text[pos..]);
    Some((rest.trim().to_string(), calls))
}

/// ```` ```json\n{...}\n``` ```` → `{...}` (models sometimes fence inside the tags).
fn strip_fence(body: &str) -> &str {
    if let Some(inner) = body.strip_prefix("```") {
        let inner = match inner.find('\n') {
            Some(nl) => &inner[nl + 1..],
            None => inner,
        };
        return inner.trim_end().strip_suffix("```").unwrap_or(inner).trim();
    }
    body
}

/// Best-effort `"name": "x"` recovery from a body that is not valid JSON.
fn recover_name(body: &str) -> String {
    let Some(k) = body.find("\"name\"") else { return String::new() };
    let after = body[k + 6..].trim_start();
    let Some(after) = after.strip_prefix(':') else { return String::new() };
    let after = after.trim_start();
    let Some(after) = after.strip_prefix('"') else { return String::new() };
    match after.find('"') {
        Some(e) => after[..e].to_string(),
        None => String::new(),
    }
}

fn parse_fenced(text: &str) -> Option<(String, Vec<(String, Value)>)> {
    let mut pos = 0;
    let mut rest = String::new();
    let mut calls = Vec::new();
    while let Some(off) = text[pos..].find("```") {
        let open = pos + off;
        let info_start = open + 3;
        let Some(nl) = text[info_start..].find('\n') else { break };
        let info = text[info_start..info_start + nl].trim().to_ascii_lowercase();
        let body_start = info_start + nl + 1;
        let Some(close) = text[body_start..].find("```") else { break };
        let body = &text[body_start..body_start + close];
        let end = body_start + close + 3;
        let lang_ok = matches!(info.as_str(), "" | "json" | "tool_call" | "tool_code");
        let parsed = if lang_ok { serde_json::from_str::<Value>(body.trim()).ok().and_then(|v| as_calls(&v, true)) } else { None };
        match parsed {
            Some(cs) => {
                rest.push_str(&text[pos..open]);
                calls.extend(cs);
            }
            None => rest.push_str(&text[pos..end]),
        }
        pos = end;
    }
    if calls.is_empty() {
        return None;
    }
    rest.push_str(&text[pos..]);
    Some((rest.trim().to_string(), calls))
}

fn parse_bare(text: &str) -> Option<(String, Vec<(String, Value)>)> {
    let mut pos = 0; // start of text not yet copied to `rest`
    let mut scan = 0; // where to look for the next '{'
    let mut rest = String::new();
    let mut calls = Vec::new();
    while let Some(off) = text[scan..].find('{') {
        let start = scan + off;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                let end = start + stream.byte_offset();
                if let Some(cs) = as_calls(&v, true) {
                    rest.push_str(&text[pos..start]);
                    calls.extend(cs);
                    pos = end;
                }
                scan = end;
            }
            _ => scan = start + 1,
        }
    }
    if calls.is_empty() {
        return None;
    }
    rest.push_str(&text[pos..]);
    Some((rest.trim().to_string(), calls))
}
