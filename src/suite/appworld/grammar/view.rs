//! What the grammar reads from an AppWorld context: the supervisor, the instruction's spans,
//! the apps, APIs and parameters docs have shown, logins and earlier outputs ([`AwView`]), and
//! Python literals in outputs.

use super::*;

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

pub(super) fn words(s: &str) -> Vec<String> {
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

pub(super) fn lit(b: &[char], i: &mut usize) -> Option<Value> {
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
pub(super) fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let i = s.find(start)? + start.len();
    let j = s[i..].find(end)?;
    Some(&s[i..i + j])
}

pub(super) fn instruction_spans(q: &str) -> Vec<(String, &'static str)> {
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
    pub(super) fn read_docs_text(&mut self, text: &str, code: Option<&str>) {
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
                if super::super::is_name(app) {
                    lists.push((app.to_string(), rest));
                }
            }
        }
        for (app, t) in lists {
            let names: Vec<String> =
                t.split("'name': '").skip(1).filter_map(|p| p.split('\'').next()).filter(|n| super::super::is_name(n)).map(str::to_string).collect();
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
    pub(super) fn can_feed(&self, p: &ParamDoc) -> bool {
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

    pub(super) fn called(&self, app: &str, api: &str) -> bool {
        self.cells.iter().any(|c| !c.failed && c.code.contains(&format!("apis.{app}.{api}(")))
    }

    pub(super) fn feedback_mentions(&self, s: &str) -> bool {
        self.feedback.iter().any(|f| f.contains(s))
    }

    /// The listing a message right after it asked to call again (for more pages, or narrowed).
    pub(super) fn recall(&self) -> Option<&(String, String)> {
        self.repage.as_ref().or(self.narrow.as_ref())
    }
}

impl AwView {
    /// APIs of apps the instruction names that the context points at, by relevance.
    /// An API that changes data is relevant only when the instruction asks for its verb (no
    /// model deletes what it was not asked to); when none of a named app's reads shares a word
    /// with a question, its reads all are (a question about an app is answered by reading it).
    pub(super) fn relevant(&self) -> Vec<(String, String)> {
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
