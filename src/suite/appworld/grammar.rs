//! The built-in policy's action grammar for AppWorld.
//!
//! Reading only the rendered context, it finds the supervisor's email and the instruction (its
//! quoted texts, names, numbers, dates and emails), the apps, APIs and API parameters that docs
//! outputs (or injected docs) have shown, the logins made, and the values earlier outputs
//! returned. One code cell is built per turn by slot decisions: the kind of cell (list apps, list
//! an app's APIs, read an API's doc, log in, call an API, complete the task), then the app, the
//! API, each documented parameter's value (a span of the instruction, a value an output showed,
//! the access token, a value the doc lists, each item of the last listing), whether to read every
//! page, and the answer. Features describe options generically (where a value comes from, how an
//! API's name relates to the instruction), never a particular app or task.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::grammar::kit::{decide_into, f, push_call, Built, Chooser, Decision, Solution};
use crate::grammar::model::{Feature, LinearModel};
use crate::grammar::{sample_turn, Grammar};
use crate::message::{CallKind, Context, Role};
use crate::suite::{SearchFrame, Suite};
use crate::task::Task;

/// The tool the grammar writes cells for.
/// A loop over a listing: its variable, the items it visits, and the filter it applies.
type Loop = (String, Vec<Map<String, Value>>, String);

pub const TOOL: &str = "execute_python";

/// Does this context belong to AppWorld (the grammar's tool is offered or was called)?
pub fn applies(ctx: &Context) -> bool {
    ctx.tools.iter().any(|t| t.name == TOOL) || ctx.messages.iter().any(|m| m.tool_calls.iter().any(|c| c.name == TOOL))
}

/// Innate preferences: what any instruction-following model does with what it is shown.
mod innate {
    /// Doing the next thing the context makes possible (docs before calls, a login before a
    /// call that needs its token, completing after a successful call).
    pub const NEXT_STEP: f32 = 1.5;
    pub const FOLLOW_HINT: f32 = 2.0;
    /// Reading only the first page of a listing unless told there are more: the commonest
    /// AppWorld failure of instruction-following models.
    pub const ONE_PAGE: f32 = -1.5;
    /// "How many" asks for a count, "how much ... in total" for a sum.
    pub const ANSWER_SHAPE: f32 = 2.0;
}

#[derive(Clone, Debug)]
pub struct ParamDoc {
    pub name: String,
    pub ty: String,
    pub required: bool,
    /// Values the doc's description lists in backquotes (`sent`, `received`, ...).
    pub listed: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Cell {
    pub code: String,
    pub output: String,
    pub failed: bool,
}

/// What the context says, parsed once per decision.
#[derive(Clone, Debug, Default)]
pub struct AwView {
    pub email: String,
    pub instruction: String,
    pub words: BTreeSet<String>,
    pub question: bool,
    /// (text, kind): kind is quoted, name, number, date or email.
    pub spans: Vec<(String, &'static str)>,
    pub apps: Vec<String>,
    pub apis: BTreeMap<String, Vec<String>>,
    pub docs: BTreeMap<(String, String), Vec<ParamDoc>>,
    pub logged_in: BTreeSet<String>,
    pub cells: Vec<Cell>,
    /// Outputs parsed as Python literals, with the index of their cell.
    pub values: Vec<(usize, Value)>,
    /// The variable holding the last listing the grammar read (`r<cell>`), if any.
    pub last_list: Option<(String, Vec<Map<String, Value>>)>,
    pub feedback: Vec<String>,
    /// The listing (app, API) a message right after its one-page call said has more pages.
    pub repage: Option<(String, String)>,
    /// The listing (app, API) a message right after its call said to narrow with the filters
    /// its API takes.
    pub narrow: Option<(String, String)>,
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase()).collect()
}

/// Parse a printed Python literal (dicts, lists, strings, numbers, True/False/None).
pub fn py_literal(s: &str) -> Option<Value> {
    let b: Vec<char> = s.trim().chars().collect();
    let mut i = 0;
    let v = lit(&b, &mut i)?;
    while i < b.len() && b[i].is_whitespace() {
        i += 1;
    }
    (i == b.len()).then_some(v)
}

fn lit(b: &[char], i: &mut usize) -> Option<Value> {
    while *i < b.len() && b[*i].is_whitespace() {
        *i += 1;
    }
    let c = *b.get(*i)?;
    match c {
        '[' | '(' => {
            let close = if c == '[' { ']' } else { ')' };
            *i += 1;
            let mut out = Vec::new();
            loop {
                while *i < b.len() && (b[*i].is_whitespace() || b[*i] == ',') {
                    *i += 1;
                }
                if *b.get(*i)? == close {
                    *i += 1;
                    return Some(Value::Array(out));
                }
                out.push(lit(b, i)?);
            }
        }
        '{' => {
            *i += 1;
            let mut out = Map::new();
            loop {
                while *i < b.len() && (b[*i].is_whitespace() || b[*i] == ',') {
                    *i += 1;
                }
                if *b.get(*i)? == '}' {
                    *i += 1;
                    return Some(Value::Object(out));
                }
                let k = lit(b, i)?;
                while *i < b.len() && b[*i].is_whitespace() {
                    *i += 1;
                }
                if *b.get(*i)? != ':' {
                    return None;
                }
                *i += 1;
                let v = lit(b, i)?;
                out.insert(k.as_str().map(str::to_string).unwrap_or_else(|| k.to_string()), v);
            }
        }
        '\'' | '"' => {
            *i += 1;
            let mut s = String::new();
            while *b.get(*i)? != c {
                if b[*i] == '\\' {
                    *i += 1;
                    let e = *b.get(*i)?;
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                } else {
                    s.push(b[*i]);
                }
                *i += 1;
            }
            *i += 1;
            Some(Value::String(s))
        }
        _ => {
            let start = *i;
            while *i < b.len() && !matches!(b[*i], ',' | ']' | '}' | ')' | ':') && !b[*i].is_whitespace() {
                *i += 1;
            }
            let t: String = b[start..*i].iter().collect();
            match t.as_str() {
                "True" => Some(Value::Bool(true)),
                "False" => Some(Value::Bool(false)),
                "None" => Some(Value::Null),
                _ => serde_json::from_str::<Value>(&t).ok().filter(Value::is_number),
            }
        }
    }
}

/// An API's documentation as `apis.api_docs.show_api_doc` prints it: its app, its name and its
/// parameters.
pub fn api_doc(text: &str) -> Option<(String, String, Vec<ParamDoc>)> {
    let Some(Value::Object(doc)) = py_literal(text) else { return None };
    let app = doc.get("app_name")?.as_str()?.to_string();
    let api = doc.get("api_name")?.as_str()?.to_string();
    let params = doc
        .get("parameters")
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter_map(|p| {
                    let desc = p.get("description").and_then(Value::as_str).unwrap_or("");
                    let listed = desc.split('`').skip(1).step_by(2).map(str::to_string).collect();
                    Some(ParamDoc {
                        name: p.get("name")?.as_str()?.to_string(),
                        ty: p.get("type").and_then(Value::as_str).unwrap_or("").to_string(),
                        required: p.get("required").and_then(Value::as_bool).unwrap_or(false),
                        listed,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Some((app, api, params))
}

/// The text between `start` and the next `end` after it.
fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let i = s.find(start)? + start.len();
    let j = s[i..].find(end)?;
    Some(&s[i..i + j])
}

fn instruction_spans(q: &str) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = Vec::new();
    let mut push = |t: String, k: &'static str| {
        if !t.is_empty() && !out.iter().any(|(x, _)| *x == t) {
            out.push((t, k));
        }
    };
    // quoted texts
    let mut rest = q;
    while let Some(i) = rest.find('\'') {
        let after = &rest[i + 1..];
        let Some(j) = after.find("' ").or_else(|| after.find("'.")).or_else(|| if after.ends_with('\'') { Some(after.len() - 1) } else { None })
        else {
            break;
        };
        push(after[..j].to_string(), "quoted");
        rest = &after[j + 1..];
    }
    for raw in q.split_whitespace() {
        let t = raw.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | '?' | '\'' | '"') || c == '.' && !raw.contains('@'));
        let t = t.trim_end_matches('.');
        if t.contains('@') {
            push(t.to_string(), "email");
        } else if t.len() == 10 && t.chars().filter(|c| *c == '-').count() == 2 && t.starts_with("20") {
            push(t.to_string(), "date");
        } else if let Ok(n) = t.trim_start_matches('$').parse::<f64>() {
            if n.is_finite() {
                push(t.trim_start_matches('$').to_string(), "number");
            }
        }
    }
    // names: runs of two or more capitalised words (not the sentence's first word)
    let toks: Vec<&str> = q.split_whitespace().collect();
    let mut i = 1;
    while i < toks.len() {
        let cap = |t: &str| t.chars().next().is_some_and(|c| c.is_uppercase()) && !t.starts_with('\'');
        if cap(toks[i]) {
            let mut j = i;
            let mut parts = Vec::new();
            while j < toks.len() && cap(toks[j]) {
                let w = toks[j].trim_matches(|c: char| !c.is_alphanumeric());
                parts.push(w);
                j += 1;
                if toks[j - 1].ends_with([',', '.', '?']) {
                    break;
                }
            }
            let sentence_start = toks[i - 1].ends_with(['.', '?', '!', ':']);
            if parts.len() >= 2 || parts.len() == 1 && !sentence_start && parts[0].len() > 2 && toks[i].chars().all(|c| c.is_alphanumeric()) {
                push(parts.join(" "), "name");
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

impl AwView {
    pub fn parse(ctx: &Context) -> AwView {
        let mut v = AwView::default();
        let mut first_user = true;
        let mut codes: BTreeMap<String, String> = BTreeMap::new();
        let mut pending = String::new();
        for m in &ctx.messages {
            match m.role {
                Role::System => {}
                Role::User if first_user => {
                    first_user = false;
                    let t = &m.content;
                    v.email = between(t, "My personal email is ", " ").unwrap_or("").to_string();
                    v.instruction = t.split("Task: ").nth(1).unwrap_or(t).trim().to_string();
                    v.words = words(&v.instruction).into_iter().collect();
                    let lower = v.instruction.to_lowercase();
                    v.question = ["what", "how", "which", "who", "when"].iter().any(|w| lower.starts_with(w));
                    v.spans = instruction_spans(&v.instruction);
                }
                Role::User => {
                    v.read_docs_text(&m.content, None);
                    let lower = m.content.to_lowercase();
                    let narrow = tells_to_narrow(&lower);
                    v.feedback.push(lower);
                    let listing = v.cells.last().filter(|c| !c.failed).and_then(|c| {
                        let (app, api) = between(&c.code, "= apis.", "(")?.split_once('.')?;
                        Some(((app.to_string(), api.to_string()), c.code.contains("page_index")))
                    });
                    if let Some((call, paged)) = listing {
                        if tells_of_more_pages(&m.content) && !paged {
                            v.repage = Some(call.clone());
                        }
                        if narrow {
                            v.narrow = Some(call);
                        }
                    }
                }
                Role::Assistant => {
                    for c in &m.tool_calls {
                        let code = c.arguments.get("code").and_then(Value::as_str).unwrap_or("").to_string();
                        codes.insert(c.id.clone(), code.clone());
                        pending = code;
                    }
                }
                Role::Tool => {
                    let code = m.tool_call_id.as_ref().and_then(|id| codes.get(id)).cloned().unwrap_or_else(|| pending.clone());
                    let failed = m.content.contains("Execution failed.");
                    let idx = v.cells.len();
                    v.repage = None;
                    v.narrow = None;
                    v.cells.push(Cell { code: code.clone(), output: m.content.clone(), failed });
                    if failed {
                        v.feedback.push(m.content.to_lowercase());
                        continue;
                    }
                    if code.contains(".login(") {
                        if let Some(app) = between(&code, "= apis.", ".login(") {
                            v.logged_in.insert(app.to_string());
                        }
                    }
                    v.read_docs_text(&m.content, Some(&code));
                    if let Some(val) = py_literal(&m.content) {
                        if let (Some(var), Value::Array(items)) = (
                            code.split([' ', ',']).next().filter(|s| s.len() > 1 && s.starts_with('r') && s[1..].chars().all(|c| c.is_ascii_digit())),
                            &val,
                        ) {
                            let items: Vec<Map<String, Value>> = items.iter().filter_map(|x| x.as_object().cloned()).collect();
                            v.last_list = Some((var.to_string(), items));
                        }
                        v.values.push((idx, val));
                    }
                }
            }
        }
        v
    }

    /// Docs shown in an output (of `code`) or an injected message.
    fn read_docs_text(&mut self, text: &str, code: Option<&str>) {
        let code = code.unwrap_or("");
        // the app list: an output of show_app_descriptions, or an injected copy of one
        if code.contains("show_app_descriptions") || code.is_empty() && text.contains("show_app_descriptions") {
            if let Some(line) = text.lines().find(|l| l.starts_with("[{")) {
                for n in line.split("'name': '").skip(1).filter_map(|p| p.split('\'').next()) {
                    if !n.is_empty() && !self.apps.iter().any(|a| a == n) {
                        self.apps.push(n.to_string());
                    }
                }
            }
        }
        // `app: [{...}]` lines (an injected list) or the output of show_api_descriptions(app_name='x')
        let mut lists: Vec<(String, &str)> = Vec::new();
        if let Some(app) = between(code, "show_api_descriptions(app_name=", ")") {
            lists.push((app.trim_matches(|c| c == '\'' || c == '"').to_string(), text));
        }
        for line in text.lines() {
            if let Some((app, rest)) = line.split_once(": [{") {
                if super::is_name(app) {
                    lists.push((app.to_string(), rest));
                }
            }
        }
        for (app, t) in lists {
            let names: Vec<String> =
                t.split("'name': '").skip(1).filter_map(|p| p.split('\'').next()).filter(|n| super::is_name(n)).map(str::to_string).collect();
            let e = self.apis.entry(app.clone()).or_default();
            for n in names {
                if !e.contains(&n) {
                    e.push(n);
                }
            }
            if !self.apps.contains(&app) {
                self.apps.push(app);
            }
        }
        if code.contains("show_api_doc(") {
            if let Some((app, api, params)) = api_doc(text) {
                let e = self.apis.entry(app.clone()).or_default();
                if !e.contains(&api) {
                    e.push(api.clone());
                }
                self.docs.insert((app, api), params);
            }
        }
    }

    /// Apps the instruction names ("my notes app", "in my contacts").
    pub fn named(&self, app: &str) -> bool {
        let l = self.instruction.to_lowercase().replace('-', "");
        l.contains(&format!("{app} app")) || l.contains(&format!("my {app}"))
    }

    /// Can a required parameter get a value from what the context shows (a span of its type, a
    /// listed value, a boolean, an output field or the last listing's items feeding it)?
    fn can_feed(&self, p: &ParamDoc) -> bool {
        if !p.required || matches!(p.name.as_str(), "access_token" | "page_index" | "page_limit") || !p.listed.is_empty() || p.ty == "boolean" {
            return true;
        }
        let span_ok = self.spans.iter().any(|(_, k)| span_fits(&p.ty, k));
        let fed = |o: &Map<String, Value>| o.keys().any(|k| field_feeds(k, &p.name));
        let out_ok = self.values.iter().any(|(_, val)| match val {
            Value::Array(a) => a.iter().filter_map(Value::as_object).any(fed),
            Value::Object(o) => fed(o),
            _ => false,
        });
        span_ok || out_ok
    }

    fn called(&self, app: &str, api: &str) -> bool {
        self.cells.iter().any(|c| !c.failed && c.code.contains(&format!("apis.{app}.{api}(")))
    }

    fn feedback_mentions(&self, s: &str) -> bool {
        self.feedback.iter().any(|f| f.contains(s))
    }

    /// The listing a message right after it asked to call again (for more pages, or narrowed).
    fn recall(&self) -> Option<&(String, String)> {
        self.repage.as_ref().or(self.narrow.as_ref())
    }
}

fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A span's value as Python.
fn span_py(text: &str, kind: &str) -> String {
    match kind {
        "number" => text.to_string(),
        _ => py_str(text),
    }
}

fn value_py(v: &Value) -> String {
    match v {
        Value::String(s) => py_str(s),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// An item "is about" a span when some text field equals it (names: first + last).
fn item_matches(item: &Map<String, Value>, span: &str) -> bool {
    let s = span.to_lowercase();
    let full =
        format!("{} {}", item.get("first_name").and_then(Value::as_str).unwrap_or(""), item.get("last_name").and_then(Value::as_str).unwrap_or(""))
            .to_lowercase();
    full.trim() == s || item.values().any(|v| v.as_str().is_some_and(|t| t.to_lowercase() == s))
}

/// Can a span of this kind be a value of a parameter of this type (numbers for numbers, the
/// rest for strings)?
fn span_fits(ty: &str, kind: &str) -> bool {
    match ty {
        "number" | "integer" => kind == "number",
        "string" => kind != "number",
        _ => true,
    }
}

/// Does a message say a listing has more pages (the pagination hint, or an error naming
/// `page_index`)?
fn tells_of_more_pages(text: &str) -> bool {
    text.contains("more pages") || text.contains("page_index")
}

/// Does a message (lowercased) ask to narrow a listing with its API's filters?
fn tells_to_narrow(lower: &str) -> bool {
    lower.contains("narrow")
}

/// The word the instruction writes right before a span ("titled 'X'" -> `titled`).
fn cue_word(instruction: &str, span: &str) -> String {
    let Some(i) = instruction.find(span) else { return String::new() };
    // the span's opening quote belongs to neither
    let before = instruction[..i].trim_end_matches(|c: char| !c.is_alphanumeric());
    before.split_whitespace().last().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()).unwrap_or_default()
}

/// Does that word name the parameter ("titled" -> `title`, "description" -> `description`)?
fn cue_names(word: &str, param: &str) -> bool {
    word.len() >= 4 && param.split('_').any(|part| part.len() >= 4 && (word.starts_with(part) || part.starts_with(word)))
}

/// Does an output field feed a parameter (`note_id` -> `note_id`, `email` -> `receiver_email`)?
fn field_feeds(field: &str, param: &str) -> bool {
    field == param || param.ends_with(&format!("_{field}"))
}

fn api_class(api: &str) -> &'static str {
    let verb = api.split('_').next().unwrap_or("");
    match verb {
        "show" | "search" => "read",
        "create" | "add" | "update" | "send" | "complete" | "delete" | "remove" => "write",
        _ => "other",
    }
}

/// Does the API's name share a word with the instruction (singular or plural)?
fn api_overlap(api: &str, v: &AwView) -> bool {
    api.split('_').skip(1).any(|w| {
        let stem = w.trim_end_matches('s');
        stem.len() > 2 && v.words.iter().any(|x| x.trim_end_matches('s') == stem)
    })
}

/// Instruction verbs and the API verb each asks for.
const VERBS: &[(&str, &str)] = &[
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
fn verb_asked(api: &str, v: &AwView) -> bool {
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

impl AwView {
    /// APIs of apps the instruction names that the context points at, by relevance.
    /// An API that changes data is relevant only when the instruction asks for its verb (no
    /// model deletes what it was not asked to); when none of a named app's reads shares a word
    /// with a question, its reads all are (a question about an app is answered by reading it).
    fn relevant(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (app, apis) in &self.apis {
            if !self.named(app) || app == "api_docs" || app == "supervisor" {
                continue;
            }
            let apis: Vec<&String> = apis.iter().filter(|a| *a != "login" && (api_class(a) != "write" || verb_asked(a, self))).collect();
            let reads_point = apis.iter().any(|a| api_class(a) == "read" && relevance(a, self) >= 1.0);
            for a in apis {
                let r = relevance(a, self);
                if r >= 1.0 || self.question && !reads_point && api_class(a) == "read" && r > 0.0 {
                    out.push((app.clone(), a.clone()));
                }
            }
        }
        out
    }
}

struct Builder<'a> {
    v: &'a AwView,
    /// [`AwView::relevant`], worked out once per cell: the kind and the app decisions read it.
    relevant: Vec<(String, String)>,
    decisions: Vec<(Decision, usize)>,
}

impl Builder<'_> {
    fn decide(&mut self, d: Decision, ch: &mut dyn Chooser) -> Option<usize> {
        decide_into(&mut self.decisions, d, ch)
    }

    fn state(&self, slot: &str, label: &str, out: &mut Vec<Feature>) {
        let v = self.v;
        out.push(f(&[slot, label, "bias"]));
        out.push(f(&[slot, label, "apps_known", if v.apps.is_empty() { "n" } else { "y" }]));
        out.push(f(&[slot, label, "logged", if v.logged_in.is_empty() { "n" } else { "y" }]));
        out.push(f(&[slot, label, "q", if v.question { "y" } else { "n" }]));
        let calls = v.cells.iter().filter(|c| !c.failed && c.code.starts_with('r')).count();
        out.push(f(&[
            slot,
            label,
            "calls",
            match calls {
                0 => "0",
                1 => "1",
                _ => "2+",
            },
        ]));
        match v.cells.last() {
            Some(c) if c.failed => out.push(f(&[slot, label, "last", "error"])),
            Some(c) if c.output.trim() == "[]" => out.push(f(&[slot, label, "last", "empty"])),
            Some(_) => out.push(f(&[slot, label, "last", "ok"])),
            None => out.push(f(&[slot, label, "last", "none"])),
        }
    }

    fn kind(&mut self, ch: &mut dyn Chooser) -> Option<&'static str> {
        let v = self.v;
        let named: Vec<&String> = v.apps.iter().filter(|a| v.named(a) && *a != "api_docs" && *a != "supervisor").collect();
        let lists_missing = named.iter().any(|a| !v.apis.contains_key(*a));
        let relevant = &self.relevant;
        let need_doc = relevant.iter().any(|k| !v.docs.contains_key(k));
        let need_login = named.iter().any(|a| v.docs.keys().any(|(x, _)| x == *a) && !v.logged_in.contains(*a));
        let need_call = v.recall().is_some()
            || relevant.iter().any(|(app, api)| v.docs.contains_key(&(app.clone(), api.clone())) && v.logged_in.contains(app) && !v.called(app, api));
        let called = v.cells.iter().any(|c| !c.failed && c.code.starts_with('r'));
        let mut d = Decision { slot: "kind", labels: vec![], options: vec![], prior: vec![] };
        let kinds = ["apps", "apis_of", "doc", "login", "call", "complete"];
        for k in kinds {
            let mut fs = Vec::new();
            self.state("kind", k, &mut fs);
            let next = match k {
                "apps" => v.apps.is_empty(),
                "apis_of" => !v.apps.is_empty() && lists_missing,
                "doc" => !lists_missing && need_doc,
                "login" => !lists_missing && !need_doc && need_login,
                "call" => !need_doc && !need_login && need_call,
                _ => called && !need_call && v.cells.last().is_some_and(|c| !c.failed),
            };
            let mut prior = 0.0;
            if next {
                prior += innate::NEXT_STEP;
                fs.push(f(&["kind", "next"]));
            }
            if k == "complete" && !called {
                prior -= innate::NEXT_STEP;
            }
            if k == "login" && v.feedback_mentions("log in") && need_login {
                prior += innate::FOLLOW_HINT;
            }
            if k == "doc" && v.feedback_mentions("show_api_doc") {
                prior += innate::FOLLOW_HINT / 2.0;
            }
            if k == "call" && (v.feedback_mentions("more pages") || v.narrow.is_some()) {
                prior += innate::FOLLOW_HINT / 2.0;
            }
            d.push(k, fs, prior);
        }
        Some(kinds[self.decide(d, ch)?])
    }

    /// The app a cell of kind `kind` is for: one the instruction names, preferably one where
    /// that kind of cell still has something to do (an API list not read, a relevant doc not
    /// read, no login yet, a relevant API not called).
    fn app(&mut self, slot: &'static str, kind: &str, options: Vec<String>, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.v;
        let relevant = &self.relevant;
        let mut d = Decision { slot, labels: vec![], options: vec![], prior: vec![] };
        for a in &options {
            let named = v.named(a);
            let of_app = || relevant.iter().filter(move |(x, _)| x == a);
            let pending = match kind {
                "apis_of" => !v.apis.contains_key(a),
                "doc" => of_app().any(|k| !v.docs.contains_key(k)),
                "login" => !v.logged_in.contains(a),
                "call" => of_app().any(|(x, api)| !v.called(x, api)) || v.recall().is_some_and(|(x, _)| x == a),
                _ => true,
            };
            let fs = vec![
                f(&[slot, "named", if named { "y" } else { "n" }]),
                f(&[slot, "logged", if v.logged_in.contains(a) { "y" } else { "n" }]),
                f(&[slot, "docs", if v.apis.contains_key(a) { "y" } else { "n" }]),
                f(&[slot, kind, "pending", if pending { "y" } else { "n" }]),
            ];
            d.push(a.clone(), fs, if named { 1.0 } else { 0.0 } + if pending { 0.5 } else { -0.5 });
        }
        let i = self.decide(d, ch)?;
        Some(options[i].clone())
    }

    fn api(&mut self, app: &str, with_doc: bool, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.v;
        let list: Vec<String> = v.apis.get(app).cloned().unwrap_or_default().into_iter().filter(|a| a != "login").collect();
        let mut d = Decision { slot: if with_doc { "doc_api" } else { "api" }, labels: vec![], options: vec![], prior: vec![] };
        let slot = d.slot;
        for a in &list {
            let class = api_class(a);
            let overlap = api_overlap(a, v);
            let documented = v.docs.contains_key(&(app.to_string(), a.clone()));
            let called = v.called(app, a);
            let fs = vec![
                f(&[slot, "class", class, "q", if v.question { "y" } else { "n" }]),
                f(&[slot, "overlap", if overlap { "y" } else { "n" }]),
                f(&[slot, "documented", if documented { "y" } else { "n" }]),
                f(&[slot, "called", if called { "y" } else { "n" }]),
                f(&[slot, "class", class, "called_any", if v.cells.iter().any(|c| c.code.starts_with('r')) { "y" } else { "n" }]),
            ];
            let mut prior = relevance(a, v).clamp(-1.5, 2.0);
            // a call whose required value nothing shown can supply yet comes later
            if !with_doc && v.docs.get(&(app.to_string(), a.clone())).is_some_and(|ps| ps.iter().any(|p| !v.can_feed(p))) {
                prior -= 3.0;
            }
            if with_doc && documented {
                prior -= 2.0;
            }
            if !with_doc && !documented {
                prior -= 1.0;
            }
            let recall = !with_doc && v.recall().is_some_and(|(x, y)| x == app && y == a);
            if recall {
                prior += innate::FOLLOW_HINT;
            } else if !with_doc && called {
                prior -= 2.0;
            }
            if !with_doc && class == "read" && !v.cells.iter().any(|c| c.code.starts_with('r')) {
                prior += 0.5;
            }
            d.push(a.clone(), fs, prior);
        }
        let i = self.decide(d, ch)?;
        Some(list[i].clone())
    }

    /// The value of one parameter, as Python; `None` = omit it. `Err(())` = no option.
    /// `narrowing`: a message asked to call this listing again with filters set from the task,
    /// which a model follows by giving a filter the task's value of its kind (an email to an
    /// email, a date to a date, a name or quoted text to the search query, a listed value the
    /// task says).
    fn arg(&mut self, app: &str, p: &ParamDoc, each: Option<&[Map<String, Value>]>, narrowing: bool, ch: &mut dyn Chooser) -> Option<Option<String>> {
        let v = self.v;
        // (label, python, features, prior)
        let mut opts: Vec<(String, Option<String>, Vec<Feature>, f32)> = Vec::new();
        let slot = "arg";
        if p.name == "access_token" {
            if v.logged_in.contains(app) {
                return Some(Some(format!("tok_{app}")));
            }
            opts.push(("omit".into(), None, vec![f(&[slot, "token_missing"])], 0.0));
        } else {
            if !p.required {
                opts.push(("omit".into(), None, vec![f(&[slot, "omit", p.ty.as_str()]), f(&[slot, "omit"])], 0.5));
            }
            for (t, k) in &v.spans {
                if span_fits(&p.ty, k) {
                    let kind_of = if p.name.contains("email") {
                        "email"
                    } else if p.name.contains("date") {
                        "date"
                    } else {
                        "text"
                    };
                    // Whether the instruction names this parameter right before this span, before
                    // another span, or not at all ("titled 'X' with the content 'Y'").
                    let cue = if cue_names(&cue_word(&v.instruction, t), &p.name) {
                        "this"
                    } else if v.spans.iter().any(|(o, _)| cue_names(&cue_word(&v.instruction, o), &p.name)) {
                        "other"
                    } else {
                        "none"
                    };
                    // the span is what the parameter takes: an email for an email, a date for a
                    // date, a name or a quoted text for a search query
                    let agrees = match kind_of {
                        "text" => p.name == "query" && matches!(*k, "quoted" | "name"),
                        kind => kind == *k,
                    };
                    opts.push((
                        format!("span:{t}"),
                        Some(span_py(t, k)),
                        vec![
                            f(&[slot, "span", k, p.ty.as_str()]),
                            f(&[slot, "span", k, "param", kind_of]),
                            f(&[slot, "span", "cue", cue]),
                            f(&[slot, "span", "kind_agrees", if agrees { "y" } else { "n" }]),
                        ],
                        0.3 + if narrowing && agrees { innate::FOLLOW_HINT } else { 0.0 },
                    ));
                }
            }
            for l in &p.listed {
                let in_q = v.words.contains(&l.to_lowercase());
                opts.push((
                    format!("listed:{l}"),
                    Some(py_str(l)),
                    vec![f(&[slot, "listed", if in_q { "inq" } else { "no" }])],
                    if in_q { 1.0 + if narrowing { innate::FOLLOW_HINT } else { 0.0 } } else { 0.0 },
                ));
            }
            if p.ty == "boolean" {
                for b in ["True", "False"] {
                    opts.push((format!("bool:{b}"), Some(b.into()), vec![f(&[slot, "bool", b])], 0.0));
                }
            }
            if let Some(items) = each {
                for field in items.first().map(|i| i.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
                    if field_feeds(&field, &p.name) {
                        opts.push((format!("item:{field}"), Some(format!("x[{}]", py_str(&field))), vec![f(&[slot, "item_field"])], 1.0));
                    }
                }
            }
            // values earlier outputs showed under a field feeding this parameter
            let mut seen = BTreeSet::new();
            for (_, val) in v.values.iter().rev().take(4) {
                let items: Vec<&Map<String, Value>> = match val {
                    Value::Array(a) => a.iter().filter_map(Value::as_object).collect(),
                    Value::Object(o) => vec![o],
                    _ => vec![],
                };
                for it in items {
                    for (k, x) in it {
                        if !field_feeds(k, &p.name) || x.is_array() || x.is_object() {
                            continue;
                        }
                        let label = format!("out:{}", value_py(x));
                        if !seen.insert(label.clone()) {
                            continue;
                        }
                        let about = v.spans.iter().any(|(s, _)| item_matches(it, s));
                        // An output's own field copied back into a write (email -> email) changes
                        // nothing; outputs feed ids and differently named fields (email -> receiver_email).
                        let copy_back = k == &p.name && !p.name.ends_with("_id");
                        opts.push((
                            label,
                            Some(value_py(x)),
                            vec![
                                f(&[slot, "output", if about { "about" } else { "other" }]),
                                f(&[slot, "output", "copy_back", if copy_back { "y" } else { "n" }]),
                            ],
                            if about && !copy_back { 1.0 } else { 0.0 },
                        ));
                    }
                }
            }
        }
        let mut d = Decision { slot, labels: vec![], options: vec![], prior: vec![] };
        let mut pys = Vec::new();
        for (label, py, fs, prior) in opts {
            d.push(format!("{}={label}", p.name), fs, prior);
            pys.push(py);
        }
        let i = self.decide(d, ch)?;
        Some(pys[i].clone())
    }

    /// Loop over the last listing: every item, or those whose field relates to a span.
    /// A loop calls the API once per item, which is what the items are for when they feed one
    /// of its ids (`song_id` of each song); otherwise a single call is the innate choice.
    fn each(&mut self, params: &[ParamDoc], ch: &mut dyn Chooser) -> Option<Option<Loop>> {
        let v = self.v;
        let Some((var, items)) = &v.last_list else { return Some(None) };
        let feeds_id =
            params.iter().any(|p| p.required && p.name.ends_with("_id") && items.first().is_some_and(|i| i.keys().any(|k| field_feeds(k, &p.name))));
        let mut d = Decision { slot: "each", labels: vec![], options: vec![], prior: vec![] };
        let mut out: Vec<Option<Loop>> = vec![None];
        d.push(
            "none",
            vec![f(&["each", "none"]), f(&["each", "none", "feeds_id", if feeds_id { "y" } else { "n" }])],
            if feeds_id { 0.0 } else { 1.0 },
        );
        d.push("all", vec![f(&["each", "all"])], 0.0);
        out.push(Some((var.clone(), items.clone(), "True".into())));
        let fields: Vec<String> = items.first().map(|i| i.keys().cloned().collect()).unwrap_or_default();
        for field in fields {
            for (t, k) in &v.spans {
                let eq: Vec<_> =
                    items.iter().filter(|i| i.get(&field).and_then(Value::as_str).is_some_and(|s| s.eq_ignore_ascii_case(t))).cloned().collect();
                if !eq.is_empty() {
                    d.push(format!("{field}=={t}"), vec![f(&["each", "eq", k])], 0.5);
                    out.push(Some((var.clone(), eq, format!("x[{}] == {}", py_str(&field), py_str(t)))));
                }
                if *k == "date" && items.iter().any(|i| i.get(&field).and_then(Value::as_str).is_some_and(|s| s.len() == 10 && s.starts_with("20"))) {
                    d.push(format!("{field}<={t}"), vec![f(&["each", "le", "date"])], 0.5);
                    let le: Vec<_> =
                        items.iter().filter(|i| i.get(&field).and_then(Value::as_str).is_some_and(|s| s <= t.as_str())).cloned().collect();
                    out.push(Some((var.clone(), le, format!("x[{}] <= {}", py_str(&field), py_str(t)))));
                }
            }
        }
        let i = self.decide(d, ch)?;
        Some(out[i].clone())
    }

    fn answer(&mut self, ch: &mut dyn Chooser) -> Option<Option<String>> {
        let v = self.v;
        let mut d = Decision { slot: "answer", labels: vec![], options: vec![], prior: vec![] };
        let mut out: Vec<Option<String>> = vec![None];
        let lower = v.instruction.to_lowercase();
        let (how_many, in_total) = (lower.starts_with("how many"), lower.contains("in total"));
        let shape = |asked: bool| if asked { innate::ANSWER_SHAPE } else { 0.0 };
        // What a kind of answer is learned for depends on what the question asks ("what does
        // ... say" is answered by a field, "how many" by a count).
        let q_shape = if how_many {
            "count"
        } else if in_total {
            "total"
        } else {
            "value"
        };
        d.push("none", vec![f(&["answer", "none", "q", if v.question { "y" } else { "n" }])], if v.question { -1.0 } else { 1.0 });
        if let Some((_, val)) = v.values.last() {
            match val {
                Value::Object(o) => {
                    for (k, x) in o {
                        match x {
                            Value::Array(a) => {
                                d.push(format!("len:{k}"), vec![f(&["answer", "len_field", q_shape])], shape(how_many));
                                out.push(Some(a.len().to_string()));
                            }
                            Value::Object(_) => {}
                            _ => {
                                let overlap = v.words.contains(&k.to_lowercase()) || k.split('_').any(|w| v.words.contains(w));
                                d.push(
                                    format!("field:{k}"),
                                    vec![f(&["answer", "field", if overlap { "named" } else { "other" }, q_shape])],
                                    if overlap { 0.5 } else { 0.0 },
                                );
                                out.push(Some(value_py(x)));
                            }
                        }
                    }
                }
                Value::Array(a) => {
                    let items: Vec<&Map<String, Value>> = a.iter().filter_map(Value::as_object).collect();
                    d.push("count", vec![f(&["answer", "count", q_shape])], shape(how_many));
                    out.push(Some(items.len().to_string()));
                    let about: Vec<&&Map<String, Value>> = items.iter().filter(|i| v.spans.iter().any(|(s, _)| item_matches(i, s))).collect();
                    if let Some(first) = about.first() {
                        for (k, x) in first.iter() {
                            if x.is_string() || x.is_number() {
                                let overlap = k.split('_').any(|w| v.words.contains(w));
                                d.push(
                                    format!("about:{k}"),
                                    vec![f(&["answer", "about_field", if overlap { "named" } else { "other" }, q_shape])],
                                    if overlap { 0.5 } else { 0.0 },
                                );
                                out.push(Some(value_py(x)));
                            }
                        }
                    }
                    // sums of a numeric field over the items about a span
                    if let Some(first) = items.first() {
                        for (k, x) in first.iter() {
                            if !x.is_number() || k.ends_with("_id") {
                                continue;
                            }
                            for (s, _) in &v.spans {
                                let sel: Vec<f64> =
                                    items.iter().filter(|i| item_matches(i, s)).filter_map(|i| i.get(k).and_then(Value::as_f64)).collect();
                                if !sel.is_empty() {
                                    let total = (sel.iter().sum::<f64>() * 100.0).round() / 100.0;
                                    d.push(format!("sum:{k}|{s}"), vec![f(&["answer", "sum", q_shape])], shape(in_total));
                                    out.push(Some(total.to_string()));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let i = self.decide(d, ch)?;
        Some(out[i].clone())
    }
}

fn cell(code: String, b: Builder) -> Built {
    Built { tool: TOOL.into(), arguments: serde_json::json!({ "code": code }), decisions: b.decisions }
}

/// Build one code cell from the view.
pub fn build(v: &AwView, ch: &mut dyn Chooser) -> Option<Built> {
    let mut b = Builder { v, relevant: v.relevant(), decisions: Vec::new() };
    let kind = b.kind(ch)?;
    let n = v.cells.len();
    match kind {
        "apps" => Some(cell("print(apis.api_docs.show_app_descriptions())".into(), b)),
        "apis_of" => {
            let app = b.app("app", "apis_of", v.apps.iter().filter(|a| *a != "api_docs").cloned().collect(), ch)?;
            Some(cell(format!("print(apis.api_docs.show_api_descriptions(app_name={}))", py_str(&app)), b))
        }
        "doc" => {
            let app = b.app("app", "doc", v.apis.keys().filter(|a| *a != "api_docs").cloned().collect(), ch)?;
            let api = b.api(&app, true, ch)?;
            Some(cell(format!("print(apis.api_docs.show_api_doc(app_name={}, api_name={}))", py_str(&app), py_str(&api)), b))
        }
        "login" => {
            let app = b.app("app", "login", v.apps.iter().filter(|a| !matches!(a.as_str(), "api_docs" | "supervisor")).cloned().collect(), ch)?;
            Some(cell(
                format!(
                    "pw = {{a['account_name']: a['password'] for a in apis.supervisor.show_account_passwords()}}\ntok_{app} = apis.{app}.login(username={}, password=pw[{}])['access_token']\nprint('logged in to {app}')",
                    py_str(&v.email),
                    py_str(&app)
                ),
                b,
            ))
        }
        "call" => {
            let app = b.app("app", "call", v.apis.keys().filter(|a| !matches!(a.as_str(), "api_docs" | "supervisor")).cloned().collect(), ch)?;
            let api = b.api(&app, false, ch)?;
            let params = v
                .docs
                .get(&(app.clone(), api.clone()))
                .cloned()
                .unwrap_or_else(|| vec![ParamDoc { name: "access_token".into(), ty: "string".into(), required: true, listed: vec![] }]);
            let each = if api_class(&api) == "write" { b.each(&params, ch)? } else { None };
            let pages = params.iter().any(|p| p.name == "page_index");
            let narrowing = v.narrow.as_ref().is_some_and(|(x, y)| *x == app && *y == api);
            let mut args = Vec::new();
            for p in params.iter().filter(|p| p.name != "page_index" && p.name != "page_limit") {
                if let Some(val) = b.arg(&app, p, each.as_ref().map(|e| e.1.as_slice()), narrowing, ch)? {
                    args.push(format!("{}={val}", p.name));
                }
            }
            let all_pages = if pages {
                let mut d = Decision { slot: "pages", labels: vec![], options: vec![], prior: vec![] };
                d.push("one", vec![f(&["pages", "one"])], 0.0);
                let full = v
                    .cells
                    .iter()
                    .rev()
                    .find(|c| c.code.contains(&format!("apis.{app}.{api}(")))
                    .and_then(|c| py_literal(&c.output))
                    .and_then(|x| x.as_array().map(|a| a.len() == 5))
                    .unwrap_or(false);
                let hinted = v.feedback.iter().any(|f| tells_of_more_pages(f));
                d.push(
                    "all",
                    vec![
                        f(&["pages", "all"]),
                        f(&["pages", "all", "hinted", if hinted { "y" } else { "n" }]),
                        f(&["pages", "all", "full_before", if full { "y" } else { "n" }]),
                    ],
                    if hinted { innate::FOLLOW_HINT } else { innate::ONE_PAGE },
                );
                b.decide(d, ch)? == 1
            } else {
                false
            };
            let var = format!("r{n}");
            let call = format!("apis.{app}.{api}({})", args.join(", "));
            let code = match (&each, all_pages) {
                (Some((list, _, cond)), _) => format!("{var} = []\nfor x in {list}:\n    if {cond}:\n        {var}.append({call})\nprint({var})"),
                (None, true) => {
                    let sep = if args.is_empty() { "" } else { ", " };
                    format!(
                        "{var}, page = [], 0\nwhile True:\n    batch = apis.{app}.{api}({}{sep}page_index=page, page_limit=20)\n    if not batch:\n        break\n    {var} += batch\n    page += 1\nprint({var})",
                        args.join(", ")
                    )
                }
                (None, false) => format!("{var} = {call}\nprint({var})"),
            };
            Some(cell(code, b))
        }
        _ => {
            let answer = b.answer(ch)?;
            let code = match answer {
                Some(a) => format!("apis.supervisor.complete_task(answer={a})"),
                None => "apis.supervisor.complete_task()".into(),
            };
            Some(cell(code, b))
        }
    }
}

/// The reply for an extra call (plan / reflect) under a harness, from the same view.
pub fn note(v: &AwView, kind: CallKind) -> String {
    match kind {
        crate::message::CallKind::Plan => {
            let apps: Vec<&String> = v.apps.iter().filter(|a| v.named(a)).collect();
            format!("Read the API docs of {:?}, log in, read every page of the listings, then complete the task.", apps)
        }
        crate::message::CallKind::Reflect => {
            let last = v.cells.last().map(|c| c.output.lines().last().unwrap_or("").to_string()).unwrap_or_default();
            format!("The last cell failed: {last}")
        }
        _ => "OK".into(),
    }
}

/// AppWorld's grammar as the built-in policy uses it: one view of the context per call.
pub struct AppWorldGrammar;

impl Grammar for AppWorldGrammar {
    fn build(&self, ctx: &Context, ch: &mut dyn Chooser) -> Option<Built> {
        build(&AwView::parse(ctx), ch)
    }

    fn note(&self, ctx: &Context, kind: CallKind) -> String {
        note(&AwView::parse(ctx), kind)
    }
}

/// The grammar, as the suite hands it to the built-in policy.
pub const GRAMMAR: AppWorldGrammar = AppWorldGrammar;

/// AppWorld's sequences are long (docs, login, calls, completion), so instead of enumerating
/// every path the search samples whole episodes from the grammar's innate priors: the first
/// greedily, then at rising temperature, one per 300 paths of the budget.
pub fn solve(suite: &dyn Suite, task: &Task, frame: &SearchFrame<'_>, max_paths: usize, _inspect: bool) -> (Option<Solution>, bool) {
    let model = LinearModel::default();
    let attempts = (max_paths / 300).max(1);
    for attempt in 0..attempts {
        let Ok(mut env) = suite.make_env(task) else { return (None, false) };
        let mut ctx = frame.context(&env.task_prompt());
        let mut steps: Solution = Vec::new();
        let temperature = if attempt == 0 { 0.0 } else { 0.5 + 2.5 * attempt as f32 / attempts as f32 };
        for step in 0..frame.max_steps {
            let seed = (attempt as u64) << 32 | step as u64;
            let t = sample_turn(&model, &GRAMMAR, &ctx, seed, temperature);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Origin, ToolCall};

    #[test]
    fn python_literals_parse() {
        let v = py_literal("[{'a': 'it\\'s', 'b': True, 'c': None, 'd': [1, 2.5]}, {\"e\": -3}]").unwrap();
        assert_eq!(v, serde_json::json!([{"a": "it's", "b": true, "c": null, "d": [1, 2.5]}, {"e": -3}]));
        assert!(py_literal("Execution successful.").is_none());
    }

    #[test]
    fn the_view_reads_the_prompt_docs_logins_and_listings() {
        let mut ctx = Context {
            messages: vec![
                Message::system("s"),
                Message::user("My name is: A B. My personal email is a.b@example.com and phone number is 1.\nTask: Send $12.50 to my friend Ava Garcia with my wallet app, with the description 'taxi'.", Origin::Frame),
            ],
            tools: vec![],
        };
        let mut push = |code: &str, out: &str| {
            let id = format!("c{}", ctx.messages.len());
            let mut a = Message::new(Role::Assistant, String::new(), Origin::Policy);
            a.tool_calls = vec![ToolCall { id: id.clone(), name: TOOL.into(), arguments: serde_json::json!({ "code": code }) }];
            ctx.messages.push(a);
            let mut t = Message::new(Role::Tool, out, Origin::Environment);
            t.tool_call_id = Some(id);
            ctx.messages.push(t);
        };
        push("print(apis.api_docs.show_app_descriptions())", "[{'description': 'x', 'name': 'wallet'}, {'description': 'y', 'name': 'contacts'}]");
        push(
            "print(apis.api_docs.show_api_descriptions(app_name=\"wallet\"))",
            "[{'description': 'x', 'name': 'login'}, {'description': 'y', 'name': 'send_money'}]",
        );
        push(
            "print(apis.api_docs.show_api_doc(app_name=\"wallet\", api_name=\"send_money\"))",
            "{'api_name': 'send_money', 'app_name': 'wallet', 'parameters': [{'name': 'access_token', 'type': 'string', 'required': True, 'description': 'd'}, {'name': 'amount', 'type': 'number', 'required': True, 'description': 'Dollars.'}]}",
        );
        push("pw = {}\ntok_wallet = apis.wallet.login(username='a', password='b')['access_token']\nprint('ok')", "ok");
        push(
            "r5 = apis.contacts.search_contacts(access_token=tok_contacts)\nprint(r5)",
            "[{'first_name': 'Ava', 'last_name': 'Garcia', 'email': 'ava@x.com'}]",
        );
        let v = AwView::parse(&ctx);
        assert_eq!(v.email, "a.b@example.com");
        assert_eq!(v.apps, vec!["wallet", "contacts"]);
        assert_eq!(v.apis["wallet"], vec!["login", "send_money"]);
        assert_eq!(v.docs[&("wallet".to_string(), "send_money".to_string())].len(), 2);
        assert!(v.logged_in.contains("wallet"));
        assert!(
            v.spans.contains(&("12.50".into(), "number"))
                && v.spans.contains(&("Ava Garcia".into(), "name"))
                && v.spans.contains(&("taxi".into(), "quoted")),
            "{:?}",
            v.spans
        );
        assert_eq!(v.last_list.as_ref().map(|l| l.0.as_str()), Some("r5"));
        assert!(v.named("wallet") && !v.named("music"));
        assert!(relevance("send_money", &v) >= 1.0 && relevance("show_balance", &v) < 1.0);
    }

    fn ctx_with(instruction: &str, cells: &[(&str, &str)], hint: Option<&str>) -> Context {
        let mut ctx = Context {
            messages: vec![
                Message::system("s"),
                Message::user(
                    format!("My name is: A B. My personal email is a.b@example.com and phone number is 1.\nTask: {instruction}"),
                    Origin::Frame,
                ),
            ],
            tools: vec![],
        };
        for (i, (code, out)) in cells.iter().enumerate() {
            let id = format!("c{i}");
            let mut a = Message::new(Role::Assistant, String::new(), Origin::Policy);
            a.tool_calls = vec![ToolCall { id: id.clone(), name: TOOL.into(), arguments: serde_json::json!({ "code": code }) }];
            ctx.messages.push(a);
            let mut t = Message::new(Role::Tool, *out, Origin::Environment);
            t.tool_call_id = Some(id);
            ctx.messages.push(t);
        }
        if let Some(h) = hint {
            ctx.messages.push(Message::user(h, Origin::Frame));
        }
        ctx
    }

    #[test]
    fn cue_words_name_the_parameter_a_span_is_for() {
        let q = "Create a note in my notes app titled 'Call Omar' with the content 'water the keys before 2023-05-21.'.";
        let v = AwView::parse(&ctx_with(q, &[], None));
        assert!(v.spans.contains(&("water the keys before 2023-05-21.".into(), "quoted")), "{:?}", v.spans);
        assert!(cue_names(&cue_word(q, "Call Omar"), "title") && !cue_names(&cue_word(q, "Call Omar"), "content"));
        assert!(cue_names(&cue_word(q, "water the keys before 2023-05-21."), "content"));
        assert!(!cue_names("my", "query") && !cue_names("friend", "receiver_email"));
    }

    #[test]
    fn writes_the_instruction_does_not_ask_for_are_never_relevant_and_hyphens_do_not_hide_an_app() {
        let q = "Mark every open item in my to-do app that is due on or before 2023-05-12 as completed.";
        let cells = [(
            "print(apis.api_docs.show_api_descriptions(app_name=\"todo\"))",
            "[{'name': 'login'}, {'name': 'show_items'}, {'name': 'add_item'}, {'name': 'complete_item'}, {'name': 'delete_item'}]",
        )];
        let v = AwView::parse(&ctx_with(q, &cells, None));
        assert!(v.named("todo"));
        let r: Vec<String> = v.relevant().into_iter().map(|(_, a)| a).collect();
        assert!(r.contains(&"complete_item".to_string()) && r.contains(&"show_items".to_string()), "{r:?}");
        assert!(!r.contains(&"delete_item".to_string()) && !r.contains(&"add_item".to_string()), "{r:?}");
    }

    #[test]
    fn a_hint_of_more_pages_after_a_one_page_listing_asks_for_that_listing_again() {
        let q = "How much money in total have I received from Nina Novak (nina.novak@example.com) in my wallet app?";
        let call = ("r5 = apis.wallet.show_transactions(access_token=tok_wallet)\nprint(r5)", "[{'amount': 1.0}]");
        let hinted = AwView::parse(&ctx_with(q, &[call], Some("That listing returned a full page, so there may be more pages.")));
        assert_eq!(hinted.repage, Some(("wallet".to_string(), "show_transactions".to_string())));
        // no hint, or another cell after it: nothing to read again
        assert_eq!(AwView::parse(&ctx_with(q, &[call], None)).repage, None);
        let later = ctx_with(q, &[call, ("print(1)", "1")], None);
        assert_eq!(AwView::parse(&later).repage, None);
    }

    #[test]
    fn a_hint_to_narrow_an_unfiltered_listing_calls_it_again_with_the_tasks_values_as_filters() {
        let q = "How much money in total have I received from Nina Novak (nina.novak@example.com) in my wallet app? Answer in dollars as a number.";
        let doc = "{'app_name': 'wallet', 'api_name': 'show_transactions', 'parameters': [\
            {'name': 'access_token', 'type': 'string', 'required': True, 'description': 'x'}, \
            {'name': 'direction', 'type': 'string', 'required': False, 'description': '`sent`, `received` or `all`.'}, \
            {'name': 'email', 'type': 'string', 'required': False, 'description': 'Only transactions with this person.'}, \
            {'name': 'page_index', 'type': 'integer', 'required': False, 'description': 'x'}]}";
        let page = "[{'amount': 1.0, 'sender_email': 'x@example.com'}, {'amount': 2.0, 'sender_email': 'y@example.com'}]";
        let cells = [
            ("print(apis.api_docs.show_app_descriptions())", "[{'description': 'x', 'name': 'wallet'}]"),
            ("print(apis.api_docs.show_api_descriptions(app_name=\"wallet\"))", "[{'name': 'show_transactions', 'description': 'x'}]"),
            ("print(apis.api_docs.show_api_doc(app_name=\"wallet\", api_name=\"show_transactions\"))", doc),
            (
                "pw = 1\ntok_wallet = apis.wallet.login(username=\"a\", password=pw[\"wallet\"])['access_token']\nprint('logged in to wallet')",
                "logged in to wallet",
            ),
            ("r4 = apis.wallet.show_transactions(access_token=tok_wallet)\nprint(r4)", page),
        ];
        let hint = "That listing was read without any filter and came back full. Narrow it: call it again with the values the task gives as filters.";
        let narrowed = AwView::parse(&ctx_with(q, &cells, Some(hint)));
        assert_eq!(narrowed.narrow, Some(("wallet".to_string(), "show_transactions".to_string())));
        assert_eq!(narrowed.repage, None, "narrowing is not paging");
        // the innate model follows it: the same listing, the direction the task says and its email
        let t = sample_turn(&LinearModel::default(), &GRAMMAR, &ctx_with(q, &cells, Some(hint)), 0, 0.0);
        let code = t.tool_calls[0].arguments["code"].as_str().unwrap().to_string();
        assert!(
            code.contains("apis.wallet.show_transactions(access_token=tok_wallet, direction=\"received\", email=\"nina.novak@example.com\")"),
            "{code}"
        );
        // without the hint it completes from the page it has
        let t = sample_turn(&LinearModel::default(), &GRAMMAR, &ctx_with(q, &cells, None), 0, 0.0);
        assert!(t.tool_calls[0].arguments["code"].as_str().unwrap().contains("complete_task"), "{:?}", t.tool_calls);
    }
}
