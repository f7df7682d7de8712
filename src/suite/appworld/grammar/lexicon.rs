//! How an API and a value relate to the instruction: cue words, verbs, API classes and the
//! relevance prior; and writing values as Python.

use super::*;

pub(super) fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A span's value as Python.
pub(super) fn span_py(text: &str, kind: &str) -> String {
    match kind {
        "number" => text.to_string(),
        _ => py_str(text),
    }
}

pub(super) fn value_py(v: &Value) -> String {
    match v {
        Value::String(s) => py_str(s),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// An item "is about" a span when some text field equals it (names: first + last).
pub(super) fn item_matches(item: &Map<String, Value>, span: &str) -> bool {
    let s = span.to_lowercase();
    let full =
        format!("{} {}", item.get("first_name").and_then(Value::as_str).unwrap_or(""), item.get("last_name").and_then(Value::as_str).unwrap_or(""))
            .to_lowercase();
    full.trim() == s || item.values().any(|v| v.as_str().is_some_and(|t| t.to_lowercase() == s))
}

/// Can a span of this kind be a value of a parameter of this type (numbers for numbers, the
/// rest for strings)?
pub(super) fn span_fits(ty: &str, kind: &str) -> bool {
    match ty {
        "number" | "integer" => kind == "number",
        "string" => kind != "number",
        _ => true,
    }
}

/// Does a message say a listing has more pages (the pagination hint, or an error naming
/// `page_index`)?
pub(super) fn tells_of_more_pages(text: &str) -> bool {
    text.contains("more pages") || text.contains("page_index")
}

/// Does a message (lowercased) ask to narrow a listing with its API's filters?
pub(super) fn tells_to_narrow(lower: &str) -> bool {
    lower.contains("narrow")
}

/// The word the instruction writes right before a span ("titled 'X'" -> `titled`).
pub(super) fn cue_word(instruction: &str, span: &str) -> String {
    let Some(i) = instruction.find(span) else { return String::new() };
    // the span's opening quote belongs to neither
    let before = instruction[..i].trim_end_matches(|c: char| !c.is_alphanumeric());
    before.split_whitespace().last().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()).unwrap_or_default()
}

/// Does that word name the parameter ("titled" -> `title`, "description" -> `description`)?
pub(super) fn cue_names(word: &str, param: &str) -> bool {
    word.len() >= 4 && param.split('_').any(|part| part.len() >= 4 && (word.starts_with(part) || part.starts_with(word)))
}

/// Does an output field feed a parameter (`note_id` -> `note_id`, `email` -> `receiver_email`)?
pub(super) fn field_feeds(field: &str, param: &str) -> bool {
    field == param || param.ends_with(&format!("_{field}"))
}

pub(super) fn api_class(api: &str) -> &'static str {
    let verb = api.split('_').next().unwrap_or("");
    match verb {
        "show" | "search" => "read",
        "create" | "add" | "update" | "send" | "complete" | "delete" | "remove" => "write",
        _ => "other",
    }
}

/// Does the API's name share a word with the instruction (singular or plural)?
pub(super) fn api_overlap(api: &str, v: &AwView) -> bool {
    api.split('_').skip(1).any(|w| {
        let stem = w.trim_end_matches('s');
        stem.len() > 2 && v.words.iter().any(|x| x.trim_end_matches('s') == stem)
    })
}

/// Instruction verbs and the API verb each asks for.
pub(super) const VERBS: &[(&str, &str)] = &[
    ("create", "create"),
    ("add", "add"),
    ("update", "update"),
    ("send", "send"),
    ("delete", "delete"),
    ("remove", "remove"),
    ("mark", "complete"),
    ("completed", "complete"),
    ("with", "add"),
];

/// Does the instruction ask for this API's verb ("mark ... completed" asks for `complete_*`)?
pub(super) fn verb_asked(api: &str, v: &AwView) -> bool {
    let verb = api.split('_').next().unwrap_or("");
    VERBS.iter().any(|(w, a)| *a == verb && v.words.contains(*w))
}

/// How strongly the context points at an API for this task: its words and verb in the
/// instruction, a read for a question, a search when the instruction names someone.
pub fn relevance(api: &str, v: &AwView) -> f32 {
    let class = api_class(api);
    let verb = api.split('_').next().unwrap_or("");
    let mut r = 0.0;
    if api_overlap(api, v) {
        r += 1.0;
    }
    if verb_asked(api, v) {
        r += 1.5;
    }
    match (v.question, class) {
        (true, "read") => r += 0.5,
        (true, "write") => r -= 1.5,
        _ => {}
    }
    if verb == "search" && v.spans.iter().any(|(_, k)| *k == "name") {
        r += 0.5;
    }
    r
}
