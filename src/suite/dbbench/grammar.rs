//! The built-in policy's action grammar for DBBench.
//!
//! Reading only the rendered context, it finds the table name and headers, the question's value
//! spans (quoted text, numbers, capitalised names), format evidence (text numbers with thousands
//! separators, units, currency or percent signs) wherever the context shows table values, earlier
//! results and errors, and any feedback text. An action is built by a sequence of slot decisions
//! — kind, operation, columns, filter, numeric conversion, quoting, answer — each a softmax over
//! options scored by the log-linear model. Features describe options generically (how well a
//! column name matches the question, whether a name needs quoting, what the context shows), never
//! the identity of a particular column or task, so what is learned on one family can transfer.

use crate::grammar::kit::{decide_into, f, id_by_tool_calls, innate, push_call, turn, Built, Chooser, Decision, Dfs, Solution};
use crate::grammar::model::Feature;
use crate::grammar::{parse_trace, read_back_from, replay_with, Grammar};
use crate::message::ToolCall;
use crate::message::{AssistantTurn, CallKind, Context, Role};
use crate::suite::{SearchFrame, Suite};
use crate::task::Task;

/// DBBench's grammar as the built-in policy uses it.
pub struct DbBenchGrammar;

impl Grammar for DbBenchGrammar {
    fn build(&self, ctx: &Context, ch: &mut dyn Chooser) -> Option<Built> {
        build(&DbView::parse(ctx), ch)
    }

    fn note(&self, ctx: &Context, kind: CallKind) -> String {
        let view = DbView::parse(ctx);
        match kind {
            CallKind::Plan => {
                let mut cols: Vec<(f32, &String)> = view.columns.iter().map(|c| (col_match(c, &view.q_tokens), c)).collect();
                cols.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
                let named: Vec<String> = cols.iter().filter(|c| c.0 > 0.0).take(3).map(|c| format!("`{}`", c.1)).collect();
                format!("Use columns {} of `{}`.", named.join(", "), view.table)
            }
            CallKind::Reflect => {
                let last = view.history.last().map(|h| h.observation.lines().next().unwrap_or("").to_string()).unwrap_or_default();
                format!("The last statement failed: {last}")
            }
            CallKind::Critique | CallKind::Act => "OK".into(),
        }
    }

    /// One id per earlier tool call (the view's history).
    fn call_id(&self, ctx: &Context) -> String {
        id_by_tool_calls(ctx)
    }

    /// A reply whose executed SQL was rewritten by a harness (identifiers quoted) is read as the
    /// rewritten statement.
    fn read_back(&self, ctx: &Context, target: &AssistantTurn) -> Option<(Vec<(Decision, usize)>, bool)> {
        let trace = parse_trace(&target.content);
        if trace.is_empty() {
            return None;
        }
        let view = DbView::parse(ctx);
        let want_sql = target.tool_calls.first().and_then(|c| c.arguments.get("query")).and_then(|q| q.as_str()).map(|s| s.to_string());
        let attempt = |labels: Vec<(String, String)>| replay_with(labels, |ch| build(&view, ch));
        let first = attempt(trace.clone());
        if let (Some(b), Some(want)) = (&first.0, &want_sql) {
            let got = b.arguments.get("query").and_then(|q| q.as_str()).unwrap_or("");
            if got != want && want.contains('`') && trace.iter().any(|(s, l)| s == "quote" && l == "bare") {
                let fixed: Vec<(String, String)> =
                    trace.iter().map(|(s, l)| if s == "quote" { (s.clone(), "backquote".into()) } else { (s.clone(), l.clone()) }).collect();
                let (b2, _, m2) = attempt(fixed);
                if let Some(b2) = b2 {
                    if b2.arguments.get("query").and_then(|q| q.as_str()) == Some(want.as_str()) {
                        return Some((b2.decisions, m2));
                    }
                }
            }
        }
        Some(read_back_from(first))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SpanKind {
    Quoted,
    Number,
    Name,
}

#[derive(Clone, Debug)]
pub struct Span {
    pub text: String,
    pub kind: SpanKind,
    /// Index of the first question token of the span.
    pub at: usize,
}

/// Format evidence seen in the context outside the question.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    pub commas: bool,
    pub currency: Option<String>,
    pub percent: bool,
    pub unit: Option<String>,
    pub trailing_space: bool,
}

#[derive(Clone, Debug)]
pub struct PastCall {
    pub tool: String,
    pub sql: String,
    pub kind: String,
    pub observation: String,
}

/// What the context says, parsed once per decision.
#[derive(Clone, Debug, Default)]
pub struct DbView {
    pub table: String,
    pub columns: Vec<String>,
    pub question: String,
    pub q_tokens: Vec<String>,
    pub spans: Vec<Span>,
    pub feedback: Vec<String>,
    pub evidence: Evidence,
    pub history: Vec<PastCall>,
    pub last_rows: Option<Vec<Vec<String>>>,
    pub last_error: Option<String>,
    pub mutation: Option<&'static str>,
    /// Values seen per column (from a schema card's sample rows or an inspection's output).
    pub samples: Vec<Vec<String>>,
    /// Queries (not mutations) that returned no rows.
    pub empty_queries: Vec<String>,
    /// The newest note since the policy last acted (a hint, a blocked call's message, an error),
    /// lower-cased: what the context asks of the next step.
    pub last_note: Option<String>,
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase()).collect()
}

impl DbView {
    pub fn parse(ctx: &Context) -> DbView {
        let mut v = DbView::default();
        let mut first_user = true;
        let mut pending: Vec<(String, String)> = Vec::new(); // (tool call id, sql)
        for m in &ctx.messages {
            match m.role {
                Role::System => {}
                Role::User if first_user => {
                    first_user = false;
                    v.parse_task(&m.content);
                }
                Role::User => {
                    v.scan_evidence(&m.content);
                    if let Some(i) = m.content.find("Sample rows") {
                        if let Some(j) = m.content[i..].find('[') {
                            if let Some(rows) = parse_rows(&m.content[i + j..]) {
                                v.add_samples(&rows);
                            }
                        }
                    }
                    v.feedback.push(m.content.to_lowercase());
                    v.last_note = Some(m.content.to_lowercase());
                }
                Role::Assistant => {
                    v.last_note = None;
                    for c in &m.tool_calls {
                        let sql = c
                            .arguments
                            .as_object()
                            .and_then(|o| o.values().next())
                            .map(|x| match x {
                                serde_json::Value::String(s) => s.clone(),
                                other => other.to_string(),
                            })
                            .unwrap_or_default();
                        pending.push((c.id.clone(), sql.clone()));
                        v.history.push(PastCall { tool: c.name.clone(), kind: sql_kind(&sql), sql, observation: String::new() });
                    }
                }
                Role::Tool => {
                    v.scan_evidence(&m.content);
                    if let Some(last) = v.history.last_mut() {
                        last.observation = m.content.clone();
                    }
                    match parse_rows(&m.content) {
                        Some(rows) => {
                            if v.history.last().map(|h| h.kind == "inspect").unwrap_or(false) {
                                v.add_samples(&rows);
                            }
                            if rows.is_empty() {
                                if let Some(h) = v.history.last().filter(|h| h.kind == "query") {
                                    v.empty_queries.push(h.sql.clone());
                                }
                            }
                            v.last_rows = Some(rows);
                            v.last_error = None;
                        }
                        None => {
                            v.last_rows = None;
                            v.last_error = Some(error_kind(&m.content).to_string());
                            v.feedback.push(m.content.to_lowercase());
                            v.last_note = Some(m.content.to_lowercase());
                        }
                    }
                }
            }
        }
        let _ = pending;
        v
    }

    fn parse_task(&mut self, text: &str) {
        const TABLE: &str = "The name of this table is ";
        const HEADERS: &str = ", and the headers of this table are ";
        if let Some(i) = text.find(TABLE) {
            let rest = &text[i + TABLE.len()..];
            if let Some(j) = rest.find(HEADERS) {
                self.table = rest[..j].to_string();
                let after = &rest[j + HEADERS.len()..];
                let line = after.lines().next().unwrap_or("");
                let line = line.strip_suffix('.').unwrap_or(line);
                self.columns = line.split(',').map(|c| c.to_string()).filter(|c| !c.is_empty()).collect();
            }
        }
        let q = match text.find("Question: ") {
            Some(i) => text[i + "Question: ".len()..].trim().to_string(),
            None => text.trim().to_string(),
        };
        self.q_tokens = words(&q);
        self.spans = question_spans(&q);
        self.mutation = asked_mutation(&q.to_lowercase());
        self.question = q;
    }

    fn scan_evidence(&mut self, text: &str) {
        let b: Vec<char> = text.chars().collect();
        for i in 0..b.len() {
            let c = b[i];
            if c == ','
                && i > 0
                && b[i - 1].is_ascii_digit()
                && i + 3 < b.len()
                && b[i + 1..i + 4].iter().all(|d| d.is_ascii_digit())
                && (i + 4 >= b.len() || !b[i + 4].is_ascii_digit())
            {
                self.evidence.commas = true;
            }
            if (c == '$' || c == '€' || c == '£') && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
                self.evidence.currency = Some(c.to_string());
            }
            if c == '%' && i > 0 && b[i - 1].is_ascii_digit() {
                self.evidence.percent = true;
            }
            if c.is_ascii_digit() && i + 2 < b.len() && b[i + 1] == ' ' && b[i + 2].is_alphabetic() {
                let mut j = i + 2;
                while j < b.len() && (b[j].is_alphabetic() || b[j] == '²' || b[j] == '³') {
                    j += 1;
                }
                if j < b.len() && (b[j] == '\'' || b[j] == '"') && j - (i + 2) <= 5 {
                    let unit: String = b[i + 1..j].iter().collect();
                    self.evidence.unit = Some(unit);
                }
            }
            if c == ' ' && i + 1 < b.len() && b[i + 1] == '\'' && i > 0 && b[i - 1].is_alphanumeric() {
                self.evidence.trailing_space = true;
            }
        }
    }

    fn add_samples(&mut self, rows: &[Vec<String>]) {
        if self.samples.len() < self.columns.len() {
            self.samples.resize(self.columns.len(), Vec::new());
        }
        for r in rows {
            if r.len() != self.columns.len() {
                continue;
            }
            for (i, val) in r.iter().enumerate() {
                if !self.samples[i].contains(val) {
                    self.samples[i].push(val.clone());
                }
            }
        }
    }

    /// How a value compares with what the context shows of a column: `seen` (it is one of the
    /// shown values), `shape` (it looks like them), `other`, or `unknown` (nothing shown).
    pub fn value_fit(&self, col: &str, value: &str) -> &'static str {
        let Some(i) = self.columns.iter().position(|c| c == col) else { return "unknown" };
        let Some(vals) = self.samples.get(i).filter(|v| !v.is_empty()) else { return "unknown" };
        let norm = |x: &str| x.trim().to_lowercase();
        if vals.iter().any(|v| norm(v) == norm(value)) {
            return "seen";
        }
        let sv = shape(value);
        if vals.iter().filter(|v| shape(v) == sv).count() * 2 >= vals.len() {
            "shape"
        } else {
            "other"
        }
    }

    pub fn inspected(&self) -> bool {
        self.history.iter().any(|h| h.kind == "inspect")
    }
    /// A statement other than a look at the table has run: something an answer can come from.
    pub fn queried(&self) -> bool {
        self.history.iter().any(|h| h.tool == "execute_sql" && h.kind != "inspect")
    }
    /// Does the newest note ask for the query to be redone (its filter checked, the values
    /// looked at again)?
    pub fn asked_to_requery(&self) -> bool {
        self.last_note.as_deref().is_some_and(|n| {
            ["check the filter", "fix the query", "query again", "change the query", "written differently"].iter().any(|p| n.contains(p))
        })
    }

    /// The newest statement repeats an earlier one word for word: running it again would only
    /// give the same output again.
    pub fn repeated_last(&self) -> bool {
        let runs: Vec<&PastCall> = self.history.iter().filter(|h| h.tool == "execute_sql").collect();
        match runs.split_last() {
            Some((last, earlier)) => earlier.iter().any(|h| h.sql == last.sql),
            None => false,
        }
    }

    /// Did a query filtering `col` on `value` already return no rows?
    pub fn filter_came_back_empty(&self, col: &str, value: &str) -> bool {
        let l = lit(value);
        let forms = [
            format!("{} = {l}", ident(col, true)),
            format!("{} = {l}", ident(col, false)),
            format!("TRIM({}) = {l}", ident(col, true)),
            format!("TRIM({}) = {l}", ident(col, false)),
        ];
        self.empty_queries.iter().any(|q| forms.iter().any(|f| q.contains(f.as_str())))
    }

    /// Is `text` (a question span) just a mention of a column or of the table?
    pub fn names_column(&self, text: &str) -> bool {
        let w = words(text);
        let known: Vec<String> = self.columns.iter().chain(std::iter::once(&self.table)).flat_map(|c| words(c)).collect();
        !w.is_empty() && w.iter().all(|x| known.contains(x))
    }
    pub fn feedback_mentions(&self, w: &str) -> bool {
        self.feedback.iter().any(|f| f.contains(w))
    }
}

/// A coarse shape of a value: digits, letters, spaces, capitals, symbols.
fn shape(v: &str) -> (bool, bool, bool, bool, bool) {
    let v = v.trim();
    (
        v.chars().any(|c| c.is_ascii_digit()),
        v.chars().any(|c| c.is_alphabetic()),
        v.contains(' '),
        v.chars().next().map(|c| c.is_uppercase()).unwrap_or(false),
        v.chars().any(|c| matches!(c, '$' | '%' | ',' | '-' | '.')),
    )
}

/// Reading the request: does it ask to add, change or remove rows?
pub fn asked_mutation(lower: &str) -> Option<&'static str> {
    let has = |ps: &[&str]| ps.iter().any(|p| lower.contains(p));
    if (starts_any(lower, &["delete", "remove", "drop ", "erase"]) || has(&["no longer be listed", "delete it", "remove it"])) && !lower.contains('?')
    {
        Some("delete")
    } else if (starts_any(lower, &["insert", "record a new"]) || (lower.starts_with("add ") && !lower.starts_with("add up")))
        || has(&["add this row", "new row", "new record", "has to be recorded", "be added to"])
    {
        Some("insert")
    } else if starts_any(lower, &["update", "change", "set ", "correct", "modify", "please correct"])
        || has(&[
            "should have its",
            "should have a ",
            "should have an ",
            "it should be",
            "changed to",
            " becomes ",
            "the new value is",
            "update them",
            ", set the ",
        ])
    {
        Some("update")
    } else {
        None
    }
}

fn starts_any(s: &str, ps: &[&str]) -> bool {
    ps.iter().any(|p| s.starts_with(p))
}

/// Quoted text, numbers, and runs of capitalised words in the question.
pub fn question_spans(q: &str) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let chars: Vec<char> = q.chars().collect();
    let mut i = 0;
    let mut tok = 0;
    let push = |out: &mut Vec<Span>, s: Span| {
        if !s.text.trim().is_empty() && !out.iter().any(|o| o.text == s.text) {
            out.push(s);
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' || c == '“' || c == '‘' {
            let close = match c {
                '“' => '”',
                '‘' => '’',
                x => x,
            };
            // an apostrophe inside a word is not a quote
            if c == '\'' && i > 0 && chars[i - 1].is_alphanumeric() {
                i += 1;
                continue;
            }
            if let Some(j) = chars[i + 1..].iter().position(|&d| d == close) {
                let text: String = chars[i + 1..i + 1 + j].iter().collect();
                push(&mut out, Span { text: text.clone(), kind: SpanKind::Quoted, at: tok });
                tok += words(&text).len();
                i += j + 2;
                continue;
            }
        }
        if c.is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit() || ((chars[j] == '.' || chars[j] == ',') && j + 1 < chars.len() && chars[j + 1].is_ascii_digit()))
            {
                j += 1;
            }
            if j == chars.len() || !chars[j].is_alphabetic() {
                let text: String = chars[i..j].iter().collect();
                push(&mut out, Span { text, kind: SpanKind::Number, at: tok });
            }
            tok += 1;
            i = j.max(i + 1);
            continue;
        }
        if c.is_uppercase() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let mut j = i;
            let mut k;
            loop {
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '.' || chars[j] == '-' || chars[j] == '&') {
                    j += 1;
                }
                k = j;
                if j + 1 < chars.len() && chars[j] == ' ' && chars[j + 1].is_uppercase() {
                    j += 1;
                    continue;
                }
                break;
            }
            let text: String = chars[i..k].iter().collect::<String>().trim_end_matches('.').to_string();
            let n = words(&text).len();
            // the question's first word is capitalised anyway
            if !(tok == 0 && n == 1) {
                push(&mut out, Span { text, kind: SpanKind::Name, at: tok });
            }
            tok += n.max(1);
            i = k.max(i + 1);
            continue;
        }
        if c.is_alphanumeric() {
            while i < chars.len() && chars[i].is_alphanumeric() {
                i += 1;
            }
            tok += 1;
            continue;
        }
        i += 1;
    }
    out
}

/// Parse a Python-style list of tuples (`[('a', 1), ('b', None)]`) into cell strings.
pub fn parse_rows(s: &str) -> Option<Vec<Vec<String>>> {
    let s = s.trim();
    let s = s.strip_suffix("[TRUNCATED]").unwrap_or(s);
    if !s.starts_with('[') {
        return None;
    }
    let b: Vec<char> = s.chars().collect();
    let mut rows = Vec::new();
    let mut i = 1;
    loop {
        while i < b.len() && (b[i] == ' ' || b[i] == ',') {
            i += 1;
        }
        if i >= b.len() || b[i] == ']' {
            break;
        }
        if b[i] != '(' {
            return None;
        }
        i += 1;
        let mut row = Vec::new();
        loop {
            while i < b.len() && (b[i] == ' ' || b[i] == ',') {
                i += 1;
            }
            if i >= b.len() {
                // cut off by truncation: keep what we have
                if !row.is_empty() {
                    rows.push(row);
                }
                return Some(rows);
            }
            if b[i] == ')' {
                i += 1;
                break;
            }
            // a DECIMAL, as MySQL's client library sends it: `Decimal('16.00')`
            const DECIMAL: &str = "Decimal('";
            if b[i..].iter().take(DECIMAL.len()).copied().eq(DECIMAL.chars()) {
                let start = i + DECIMAL.len();
                let mut j = start;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                row.push(b[start..j].iter().collect());
                i = (j + 2).min(b.len());
                continue;
            }
            if b[i] == '\'' || b[i] == '"' {
                let q = b[i];
                let mut j = i + 1;
                let mut val = String::new();
                while j < b.len() && b[j] != q {
                    if b[j] == '\\' && j + 1 < b.len() {
                        j += 1;
                        val.push(match b[j] {
                            'n' => '\n',
                            't' => '\t',
                            c => c,
                        });
                    } else {
                        val.push(b[j]);
                    }
                    j += 1;
                }
                row.push(val);
                i = j + 1;
            } else {
                let mut j = i;
                while j < b.len() && b[j] != ',' && b[j] != ')' {
                    j += 1;
                }
                let raw: String = b[i..j].iter().collect();
                let raw = raw.trim();
                row.push(raw.to_string());
                i = j;
            }
        }
        rows.push(row);
    }
    Some(rows)
}

pub fn error_kind(obs: &str) -> &'static str {
    if obs.starts_with("1054") {
        "unknown_column"
    } else if obs.starts_with("1064") {
        "syntax"
    } else if obs.starts_with("1146") {
        "unknown_table"
    } else if obs.starts_with("Answer committed") {
        "none"
    } else {
        "other"
    }
}

/// Classify one of our own statements, for history features.
pub fn sql_kind(sql: &str) -> String {
    let l = sql.trim().to_lowercase();
    if l.starts_with("select *") {
        "inspect".into()
    } else if l.starts_with("select") {
        "query".into()
    } else if l.starts_with("insert") {
        "insert".into()
    } else if l.starts_with("update") {
        "update".into()
    } else if l.starts_with("delete") {
        "delete".into()
    } else {
        "other".into()
    }
}

/// How well a column name matches the question: share of the name's words found in it.
pub fn col_match(col: &str, q_tokens: &[String]) -> f32 {
    let w = words(col);
    if w.is_empty() {
        return 0.0;
    }
    let hit = w
        .iter()
        .filter(|x| q_tokens.iter().any(|q| q == *x || (q.len() > 3 && x.len() > 3 && (q.starts_with(x.as_str()) || x.starts_with(q.as_str())))))
        .count();
    hit as f32 / w.len() as f32
}

/// Where the column's name stands in the question relative to a value span: just before it,
/// further before, after, or not mentioned.
pub fn proximity(col: &str, s: &Span, q_tokens: &[String]) -> &'static str {
    match col_position(col, q_tokens) {
        Some(p) if p < s.at && s.at - p <= 3 => "before-near",
        Some(p) if p < s.at && s.at - p <= 8 => "before-far",
        Some(p) if p < s.at => "before-distant",
        Some(_) => "after",
        None => "absent",
    }
}

/// Token index of the first question word belonging to the column name, if any.
pub fn col_position(col: &str, q_tokens: &[String]) -> Option<usize> {
    let w = words(col);
    q_tokens.iter().position(|q| w.iter().any(|x| x == q))
}

const RESERVED: &[&str] = &[
    "rank",
    "order",
    "group",
    "key",
    "range",
    "select",
    "from",
    "where",
    "table",
    "index",
    "limit",
    "desc",
    "asc",
    "by",
    "values",
    "insert",
    "update",
    "delete",
    "default",
    "column",
    "row",
    "rows",
    "match",
    "condition",
    "interval",
    "change",
    "character",
];

pub fn needs_quotes(name: &str) -> bool {
    name.chars().any(|c| !(c.is_ascii_alphanumeric() || c == '_'))
        || RESERVED.contains(&name.to_lowercase().as_str())
        || name.chars().next().map(|c| c.is_ascii_digit()).unwrap_or(true)
}

pub fn ident(name: &str, quote: bool) -> String {
    if quote {
        format!("`{}`", name.replace('`', "``"))
    } else {
        name.to_string()
    }
}

pub fn lit(v: &str) -> String {
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// A numeric view of a column under a conversion choice.
pub fn numeric(col: &str, conv: &str, unit: Option<&str>, quote: bool) -> String {
    let c = ident(col, quote);
    match conv {
        "cast" => format!("CAST({c} AS DECIMAL(20,4))"),
        "strip_commas" => format!("CAST(REPLACE({c}, ',', '') AS DECIMAL(20,4))"),
        "strip_all" => {
            let mut e = format!("REPLACE({c}, ',', '')");
            if let Some(u) = unit {
                e = format!("REPLACE({e}, {}, '')", lit(u));
            }
            format!("CAST({e} AS DECIMAL(20,4))")
        }
        _ => c,
    }
}

/// Question-word features crossed with an option label (the lexical cue of a choice).
pub fn lexical(view: &DbView, slot_name: &str, label: &str, out: &mut Vec<Feature>) {
    // Only the question's function words: content words (names, values, column words) would let
    // the model memorise tasks instead of learning what transfers.
    for w in &view.q_tokens {
        if CUE_WORDS.contains(&w.as_str()) {
            out.push(f(&[slot_name, label, "q", w]));
        }
    }
}

const CUE_WORDS: &[&str] = &[
    "what",
    "which",
    "who",
    "how",
    "many",
    "much",
    "count",
    "number",
    "total",
    "sum",
    "add",
    "average",
    "mean",
    "minimum",
    "maximum",
    "smallest",
    "largest",
    "lowest",
    "highest",
    "least",
    "most",
    "greatest",
    "earliest",
    "latest",
    "fewest",
    "top",
    "above",
    "below",
    "over",
    "under",
    "more",
    "less",
    "greater",
    "fewer",
    "after",
    "before",
    "than",
    "between",
    "lower",
    "higher",
    "larger",
    "smaller",
    "list",
    "all",
    "tied",
    "distinct",
    "different",
    "name",
    "give",
    "tell",
    "delete",
    "remove",
    "update",
    "change",
    "set",
    "insert",
    "add",
    "new",
    "row",
    "record",
    "rows",
    "whose",
    "with",
    "where",
    "or",
    "and",
    "among",
];

/// Words that name an operation. The feature "the question uses a word of this operation"
/// has one weight shared by every operation, so learning it on SUM also helps AVG.
pub fn op_lexicon(op: &str) -> &'static [&'static str] {
    match op {
        "count" => &["how many", "number of", "count"],
        "count_distinct" => &["different", "distinct"],
        "sum" => &["total", "sum", "add up", "combined", "altogether"],
        "avg" => &["average", "mean"],
        "min" => &["minimum", "smallest", "lowest", "least", "earliest", "fewest"],
        "max" => &["maximum", "largest", "highest", "greatest", "latest", "most"],
        "argmax" => &["largest", "highest", "greatest", "most", "top", "latest", "higher", "larger"],
        "argmin" => &["smallest", "lowest", "least", "fewest", "earliest", "lower", "smaller"],
        "select" => &["what is", "tell me", "which", "name the", "give"],
        _ => &[],
    }
}

/// Reading the request for its operation: a question that names one ("how many", "total",
/// "average", "the smallest") asks for it; "what is the largest X" asks for a value and "which
/// has the largest X" for the row that has it; a question naming none asks for a plain lookup.
pub fn asked_op_prior(q_lower: &str, op: &str) -> f32 {
    let hit = |o: &str| op_lexicon(o).iter().any(|w| q_lower.contains(w));
    let asks_value = ["what is the", "what was the", "what's the", "what is its", "on average"].iter().any(|w| q_lower.contains(w));
    let specific = ["count", "count_distinct", "sum", "avg", "min", "max", "argmax", "argmin"].iter().any(|o| hit(o));
    let asked = match op {
        "select" => !specific,
        "count" => hit("count") && !hit("count_distinct"),
        "min" | "max" => hit(op) && asks_value,
        "argmin" | "argmax" => hit(op) && !asks_value,
        _ => hit(op),
    };
    if asked {
        innate::READ_REQUEST
    } else {
        0.0
    }
}

/// The values of a filter value: the items of a list value (marked with a leading `\u{1e}`,
/// separated by `\u{1f}`), or the value itself.
fn filter_values(val: &str) -> Vec<&str> {
    match val.strip_prefix('\u{1e}') {
        Some(list) => list.split('\u{1f}').collect(),
        None => vec![val],
    }
}

/// `col = 'v'`, or `col IN ('a', 'b')` for a list value.
fn eq_sql(c: &str, val: &str, trim: bool, q: bool) -> String {
    let col = if trim { format!("TRIM({})", ident(c, q)) } else { ident(c, q) };
    if val.starts_with('\u{1e}') {
        format!("{col} IN ({})", filter_values(val).into_iter().map(lit).collect::<Vec<_>>().join(", "))
    } else {
        format!("{col} = {}", lit(val))
    }
}

fn bucket(x: f32) -> &'static str {
    if x <= 0.0 {
        "0"
    } else if x < 0.5 {
        "lo"
    } else if x < 1.0 {
        "mid"
    } else {
        "full"
    }
}

fn op_class(op: &str) -> &'static str {
    match op {
        "sum" | "avg" | "min" | "max" => "agg",
        "argmax" | "argmin" => "rank",
        "filter_gt" | "filter_lt" => "cmp",
        "count" => "count",
        _ => "plain",
    }
}

struct Builder<'a> {
    view: &'a DbView,
    decisions: Vec<(Decision, usize)>,
    /// The column the query returns, once chosen.
    target: Option<String>,
    /// Question values already placed (a threshold, a first filter).
    used: Vec<String>,
}

impl<'a> Builder<'a> {
    fn decide(&mut self, d: Decision, ch: &mut dyn Chooser) -> Option<usize> {
        decide_into(&mut self.decisions, d, ch)
    }

    fn context_feats(&self, slot_name: &str, label: &str, out: &mut Vec<Feature>) {
        let v = self.view;
        out.push(f(&[slot_name, label, "bias"]));
        let step = match v.history.len() {
            0 => "0",
            1 => "1",
            2..=3 => "2-3",
            _ => "4+",
        };
        out.push(f(&[slot_name, label, "step", step]));
        out.push(f(&[slot_name, label, "inspected", if v.inspected() { "y" } else { "n" }]));
        out.push(f(&[slot_name, label, "queried", if v.queried() { "y" } else { "n" }]));
        let last = v.history.last().map(|h| h.kind.as_str()).unwrap_or("none");
        out.push(f(&[slot_name, label, "last", last]));
        if let Some(e) = &v.last_error {
            out.push(f(&[slot_name, label, "err", e]));
        }
        match &v.last_rows {
            Some(r) if r.is_empty() => out.push(f(&[slot_name, label, "rows", "empty"])),
            Some(r) if r.len() == 1 => out.push(f(&[slot_name, label, "rows", "one"])),
            Some(_) => out.push(f(&[slot_name, label, "rows", "many"])),
            None => {}
        }
        out.push(f(&[slot_name, label, "mut", v.mutation.unwrap_or("select")]));
    }

    fn kind(&mut self, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.view;
        let kinds = ["inspect", "query", "insert", "update", "delete", "commit"];
        let mut d = Decision { slot: "kind", labels: vec![], options: vec![], prior: vec![] };
        for k in kinds {
            // Context features only: the request's own wording enters through `asked` below,
            // so that "do what is asked" is one weight for every kind of request.
            let mut fs = Vec::new();
            self.context_feats("kind", k, &mut fs);
            let mut prior = 0.0;
            // reading the question: "Delete the row ..." asks for a DELETE, a question for a query
            let asked = v.mutation.unwrap_or("query");
            if k == asked {
                prior += innate::READ_REQUEST;
                // one weight for "do what the request asks", whatever it asks: it transfers to
                // requests of a kind never trained on
                fs.push(f(&["kind", "asked"]));
                fs.push(f(&["kind", "asked", if v.queried() { "after" } else { "first" }]));
            }
            // nothing to answer from yet
            if k == "commit" && !v.queried() {
                prior -= innate::READ_REQUEST;
            }
            if k == "commit" && v.feedback_mentions("commit it now") && v.last_rows.is_some() {
                prior += innate::FOLLOW_HINT;
            }
            // the same statement came back the same way twice: answer from it
            if k == "commit" && v.repeated_last() && v.queried() {
                prior += innate::FOLLOW_HINT;
            }
            if k != "commit" && k != "inspect" && v.feedback_mentions("not run any query") {
                prior += innate::FOLLOW_HINT;
            }
            // a hint proposing a look at the rows, not yet taken
            if k == "inspect" && !v.inspected() && v.feedback_mentions("select * from") {
                prior += innate::FOLLOW_HINT;
            }
            // asked to redo the query
            if k == asked && v.asked_to_requery() {
                prior += innate::FOLLOW_HINT;
            }
            d.push(k.to_string(), fs, prior);
        }
        let i = self.decide(d, ch)?;
        Some(kinds[i].to_string())
    }

    fn column(&mut self, slot_name: &'static str, op: &str, exclude: &[&str], ch: &mut dyn Chooser) -> Option<String> {
        let v = self.view;
        let mut d = Decision { slot: slot_name, labels: vec![], options: vec![], prior: vec![] };
        let cls = op_class(op);
        for (ci, c) in v.columns.iter().enumerate() {
            if exclude.contains(&c.as_str()) {
                continue;
            }
            let m = col_match(c, &v.q_tokens);
            let mut fs = vec![
                f(&[slot_name, "match", bucket(m)]),
                f(&[slot_name, cls, "match", bucket(m)]),
                // the first column is usually the row's name: what a "which" question returns,
                // rarely what a "total" question adds up
                f(&[slot_name, cls, "first", if ci == 0 { "y" } else { "n" }]),
            ];
            if let Some(p) = col_position(c, &v.q_tokens) {
                let b = if p < 4 {
                    "early"
                } else if p < 10 {
                    "mid"
                } else {
                    "late"
                };
                fs.push(f(&[slot_name, cls, "pos", b]));
            }
            // Reading the request: the column a question names is what it asks about, or what
            // it compares on; a "which ... has the largest X" question asks for a row, whose
            // column it may not name.
            let prior = if slot_name == "measure" || (slot_name == "target" && cls != "rank") { innate::READ_REQUEST * m } else { 0.0 };
            d.push(c.clone(), fs, prior);
        }
        let i = self.decide(d, ch)?;
        Some(self.decisions.last().map(|(d, _)| d.labels[i].clone()).unwrap_or_default())
    }

    /// A (column, value) filter, or none.
    fn filter(
        &mut self,
        slot_name: &'static str,
        op: &str,
        allow_none: bool,
        numbers_only: bool,
        exclude: &[&str],
        ch: &mut dyn Chooser,
    ) -> Option<Option<(String, String)>> {
        let v = self.view;
        let cls = op_class(op);
        let mut d = Decision { slot: slot_name, labels: vec![], options: vec![], prior: vec![] };
        let mut pairs: Vec<Option<(String, String)>> = Vec::new();
        if allow_none {
            let mut fs = vec![f(&[slot_name, "none"]), f(&[slot_name, cls, "none"])];
            fs.push(f(&[slot_name, "none", "spans", &v.spans.len().min(3).to_string()]));
            // reading the request: a value the question gives, not yet placed, is there to be
            // filtered on (a span that only names a column is not a value)
            let unplaced = v.spans.iter().take(5).any(|s| !self.used.contains(&s.text) && !v.names_column(&s.text));
            d.push("none", fs, if unplaced { -innate::READ_REQUEST } else { 0.0 });
            pairs.push(None);
        }
        let quoted: Vec<&Span> = v.spans.iter().filter(|s| s.kind == SpanKind::Quoted).collect();
        if allow_none && !numbers_only && quoted.len() >= 2 {
            let list = quoted.iter().map(|s| s.text.clone()).collect::<Vec<_>>().join("\u{1f}");
            for c in &v.columns {
                if exclude.contains(&c.as_str()) {
                    continue;
                }
                let m = col_match(c, &v.q_tokens);
                let fs = vec![
                    f(&[slot_name, "in"]),
                    f(&[slot_name, cls, "in"]),
                    f(&[slot_name, "in", "match", bucket(m)]),
                    f(&[slot_name, "in", "first_col", if v.columns.first() == Some(c) { "y" } else { "n" }]),
                    f(&[slot_name, "in", "n", &quoted.len().min(4).to_string()]),
                ];
                d.push(format!("{}|in:{}", c, quoted.len()), fs, 0.0);
                pairs.push(Some((c.clone(), format!("\u{1e}{list}"))));
            }
        }
        for s in v.spans.iter().take(5) {
            if numbers_only && s.kind != SpanKind::Number {
                continue;
            }
            for c in &v.columns {
                if exclude.contains(&c.as_str()) {
                    continue;
                }
                let m = col_match(c, &v.q_tokens);
                let kind = match s.kind {
                    SpanKind::Quoted => "quoted",
                    SpanKind::Number => "number",
                    SpanKind::Name => "name",
                };
                let mut fs = vec![f(&[slot_name, "span", kind]), f(&[slot_name, cls, "span", kind]), f(&[slot_name, "match", bucket(m)])];
                let prox = proximity(c, s, &v.q_tokens);
                fs.push(f(&[slot_name, "prox", prox]));
                fs.push(f(&[slot_name, "prox", prox, kind]));
                // the word before the value ("to", "is", "named", ...) says what role it plays
                if s.at > 0 {
                    if let Some(w) = v.q_tokens.get(s.at - 1) {
                        fs.push(f(&[slot_name, "prev", w]));
                    }
                }
                let order = v.spans.iter().position(|o| o.text == s.text).unwrap_or(0).min(3).to_string();
                fs.push(f(&[slot_name, "order", &order]));
                if v.columns.first() == Some(c) {
                    fs.push(f(&[slot_name, "first_col"]));
                }
                let fit = v.value_fit(c, &s.text);
                fs.push(f(&[slot_name, "fit", fit]));
                if self.target.as_deref() == Some(c.as_str()) {
                    fs.push(f(&[slot_name, "is_target"]));
                }
                // a value visibly belonging to a column is where an instruction model looks
                let mut prior = match fit {
                    _ if !slot_name.starts_with("where") => 0.0,
                    "seen" => innate::VISIBLE_FORMAT,
                    "shape" => innate::VISIBLE_FORMAT * 0.5,
                    "other" => -innate::VISIBLE_FORMAT * 0.5,
                    _ => 0.0,
                };
                // reading the request: the value a question gives is not the value it asks for
                if slot_name.starts_with("where") && self.target.as_deref() == Some(c.as_str()) {
                    prior -= innate::READ_REQUEST;
                }
                // reading the context: this very filter already came back empty
                if slot_name.starts_with("where") && v.filter_came_back_empty(c, &s.text) {
                    prior -= innate::READ_REQUEST;
                    fs.push(f(&[slot_name, "came_back_empty"]));
                }
                d.push(format!("{}|{}", c, s.text), fs, prior);
                pairs.push(Some((c.clone(), s.text.clone())));
            }
        }
        if d.options.is_empty() {
            return Some(None);
        }
        let i = self.decide(d, ch)?;
        Some(pairs[i].clone())
    }

    /// Compare filter values exactly or after trimming stored spaces.
    fn match_mode(&mut self, ch: &mut dyn Chooser) -> Option<bool> {
        let view = self.view;
        let mut d = Decision { slot: "match", labels: vec![], options: vec![], prior: vec![] };
        for m in ["exact", "trim"] {
            let mut fs = vec![f(&["match", m, "bias"]), f(&["match", m, "mut", view.mutation.unwrap_or("select")])];
            if view.evidence.trailing_space {
                fs.push(f(&["match", m, "ev", "trailing_space"]));
            }
            if view.last_rows.as_ref().map(|r| r.is_empty()).unwrap_or(false) {
                fs.push(f(&["match", m, "last_empty"]));
            }
            if view.feedback_mentions("spacing") {
                fs.push(f(&["match", m, "hint"]));
            }
            d.labels.push(m.into());
            d.options.push(fs);
            let visible = view.evidence.trailing_space || view.feedback_mentions("spacing");
            d.prior.push(if m == "trim" && visible { innate::VISIBLE_FORMAT } else { 0.0 });
        }
        Some(self.decide(d, ch)? == 1)
    }

    /// Assign one value span to each column of an INSERT, column by column.
    fn assign_values(&mut self, ch: &mut dyn Chooser) -> Option<Vec<String>> {
        let v = self.view;
        let spans: Vec<&Span> = {
            let quoted: Vec<&Span> = v.spans.iter().filter(|s| s.kind == SpanKind::Quoted).collect();
            if quoted.len() >= v.columns.len() {
                quoted
            } else {
                v.spans.iter().collect()
            }
        };
        let mut used = vec![false; spans.len()];
        let mut out = Vec::new();
        for (ci, c) in v.columns.iter().enumerate() {
            let mut d = Decision { slot: "value", labels: vec![], options: vec![], prior: vec![] };
            let mut idx = Vec::new();
            for (si, s) in spans.iter().enumerate() {
                if used[si] {
                    continue;
                }
                let prox = proximity(c, s, &v.q_tokens);
                let first_free = used.iter().position(|u| !u) == Some(si);
                let fs = vec![
                    f(&["value", "prox", prox]),
                    f(&["value", "first_free", if first_free { "y" } else { "n" }]),
                    f(&["value", "same_order", if si == ci { "y" } else { "n" }]),
                    f(&["value", "kind", if s.kind == SpanKind::Number { "number" } else { "text" }]),
                ];
                d.push(s.text.clone(), fs, 0.0);
                idx.push(si);
            }
            if d.options.is_empty() {
                out.push(String::new());
                continue;
            }
            let k = self.decide(d, ch)?;
            used[idx[k]] = true;
            out.push(spans[idx[k]].text.clone());
        }
        Some(out)
    }

    fn conversion(&mut self, op: &str, ch: &mut dyn Chooser) -> Option<String> {
        let v = self.view;
        let e = &v.evidence;
        let hint = v.feedback_mentions("convert") || v.feedback_mentions("replace(") || v.feedback_mentions("separator");
        // A REPLACE points at a character to remove, so it exists only once the context shows
        // one (a separator, unit or currency sign in a seen value) or a hint names it: blind,
        // the grammar can only cast.
        let mut opts = vec!["none", "cast"];
        if e.commas || hint {
            opts.push("strip_commas");
        }
        if e.unit.is_some() || e.currency.is_some() {
            opts.push("strip_all");
        }
        let mut d = Decision { slot: "conv", labels: vec![], options: vec![], prior: vec![] };
        for o in &opts {
            let mut fs = vec![f(&["conv", o, "bias"]), f(&["conv", o, "op", op]), f(&["conv", o, "cls", op_class(op)])];
            if e.commas {
                fs.push(f(&["conv", o, "ev", "commas"]));
            }
            if e.unit.is_some() {
                fs.push(f(&["conv", o, "ev", "unit"]));
            }
            if e.currency.is_some() {
                fs.push(f(&["conv", o, "ev", "currency"]));
            }
            if e.percent {
                fs.push(f(&["conv", o, "ev", "percent"]));
            }
            if hint {
                fs.push(f(&["conv", o, "hint"]));
            }
            self.context_feats("conv", o, &mut fs);
            let mut prior = 0.0;
            let visible = e.commas || e.unit.is_some() || e.currency.is_some();
            if visible && (*o == "strip_commas" || *o == "strip_all") {
                prior += innate::VISIBLE_FORMAT;
            }
            if (e.unit.is_some() || e.currency.is_some()) && *o == "strip_all" {
                prior += innate::VISIBLE_FORMAT;
            }
            if hint && (*o == "strip_commas" || *o == "strip_all") {
                prior += innate::FOLLOW_HINT;
            }
            d.push(o.to_string(), fs, prior);
        }
        let i = self.decide(d, ch)?;
        Some(opts[i].to_string())
    }

    fn quoting(&mut self, names: &[&str], ch: &mut dyn Chooser) -> Option<bool> {
        let v = self.view;
        if !names.iter().any(|n| needs_quotes(n)) {
            return Some(true);
        }
        let hint = v.feedback_mentions("backquote");
        let mut d = Decision { slot: "quote", labels: vec![], options: vec![], prior: vec![] };
        for o in ["backquote", "bare"] {
            let mut fs = vec![f(&["quote", o, "bias"])];
            if hint {
                fs.push(f(&["quote", o, "hint"]));
            }
            if let Some(e) = &v.last_error {
                fs.push(f(&["quote", o, "err", e]));
            }
            d.push(o, fs, if hint && o == "backquote" { innate::FOLLOW_HINT } else { 0.0 });
        }
        let i = self.decide(d, ch)?;
        Some(i == 0)
    }

    fn commit(&mut self, ch: &mut dyn Chooser) -> Option<Vec<String>> {
        let v = self.view;
        let rows = v.last_rows.clone().unwrap_or_default();
        let mut cands: Vec<(&str, Vec<String>)> = vec![("empty", vec![])];
        if !rows.is_empty() {
            cands.push(("first_col", rows.iter().filter_map(|r| r.first().cloned()).collect()));
            cands.push(("first_value", vec![rows[0].first().cloned().unwrap_or_default()]));
            if rows[0].len() > 1 {
                cands.push(("last_col", rows.iter().filter_map(|r| r.last().cloned()).collect()));
            }
        }
        let mut d = Decision { slot: "answer", labels: vec![], options: vec![], prior: vec![] };
        for (label, vals) in &cands {
            let mut fs = Vec::new();
            self.context_feats("answer", label, &mut fs);
            lexical(v, "answer", label, &mut fs);
            fs.push(f(&["answer", label, "n", &vals.len().min(3).to_string()]));
            d.push(label.to_string(), fs, 0.0);
        }
        let i = self.decide(d, ch)?;
        Some(cands[i].1.clone())
    }
}

/// Build one DBBench action from the view.
pub fn build(view: &DbView, ch: &mut dyn Chooser) -> Option<Built> {
    let mut b = Builder { view, decisions: Vec::new(), target: None, used: Vec::new() };
    let kind = b.kind(ch)?;
    let t = &view.table;
    let sql_call =
        |sql: String, b: Builder| Built { tool: "execute_sql".into(), arguments: serde_json::json!({"query": sql}), decisions: b.decisions };
    match kind.as_str() {
        "inspect" => {
            let q = b.quoting(&[t], ch)?;
            Some(sql_call(format!("SELECT * FROM {} LIMIT 5", ident(t, q)), b))
        }
        "commit" => {
            let answers = b.commit(ch)?;
            Some(Built { tool: "commit_final_answer".into(), arguments: serde_json::json!({"answers": answers}), decisions: b.decisions })
        }
        "query" => {
            let ops = ["select", "count", "count_distinct", "sum", "avg", "min", "max", "argmax", "argmin"];
            let mut d = Decision { slot: "op", labels: vec![], options: vec![], prior: vec![] };
            let q_lower = view.question.to_lowercase();
            let asks_which = view.q_tokens.first().map(|w| w == "which" || w == "what" || w == "name" || w == "give").unwrap_or(false);
            for o in ops {
                // Only features shared across operations: a weight per operation, or per
                // operation and question word, would only ever grow for the operations of the
                // training families and pull held-out questions towards them.
                let cls = op_class(o);
                let mut fs = vec![];
                lexical(view, "op", cls, &mut fs);
                let hits = op_lexicon(o).iter().filter(|w| q_lower.contains(*w)).count();
                if hits > 0 {
                    fs.push(f(&["op", "lexmatch"]));
                    fs.push(f(&["op", cls, "lexmatch"]));
                    if asks_which {
                        fs.push(f(&["op", cls, "lexmatch", "which"]));
                    }
                }
                let prior = asked_op_prior(&q_lower, o);
                if prior > 0.0 {
                    fs.push(f(&["op", "asked"]));
                    fs.push(f(&["op", cls, "asked"]));
                }
                if let Some(e) = &view.last_error {
                    fs.push(f(&["op", cls, "err", e]));
                }
                d.push(o, fs, prior);
            }
            let op = ops[b.decide(d, ch)?];
            let target = if op == "count" { None } else { Some(b.column("target", op, &[], ch)?) };
            b.target = target.clone();
            // an optional numeric comparison on another column
            let cmps = ["none", "gt", "lt", "ge", "le"];
            let has_number = view.spans.iter().any(|s| s.kind == SpanKind::Number);
            let cmp = if has_number {
                let mut d = Decision { slot: "cmp", labels: vec![], options: vec![], prior: vec![] };
                for c in cmps {
                    let mut fs = vec![f(&["cmp", c, "bias"]), f(&["cmp", c, "op", op_class(op)])];
                    lexical(view, "cmp", c, &mut fs);
                    d.push(c, fs, 0.0);
                }
                cmps[b.decide(d, ch)?]
            } else {
                "none"
            };
            let excl: Vec<&str> = target.iter().map(|s| s.as_str()).collect();
            let mut measure = None;
            let mut threshold = None;
            if cmp != "none" {
                let m = b.column("measure", op, &excl, ch)?;
                let others: Vec<&str> = view.columns.iter().filter(|c| **c != m).map(|s| s.as_str()).collect();
                threshold = b.filter("threshold", op, false, true, &others, ch)?.map(|(_, v)| v);
                b.used.extend(threshold.iter().cloned());
                measure = Some(m);
                threshold.as_ref()?;
            } else if op == "argmax" || op == "argmin" {
                measure = Some(b.column("measure", op, &excl, ch)?);
            }
            let w1 = b.filter("where", op, true, false, &[], ch)?;
            if let Some((_, v)) = &w1 {
                b.used.extend(filter_values(v).into_iter().map(str::to_string));
            }
            let w2 = match &w1 {
                Some((c, _)) => b.filter("where2", op, true, false, &[c.as_str()], ch)?,
                None => None,
            };
            let eqs: Vec<(String, String)> = w1.into_iter().chain(w2).collect();
            let trim = if eqs.is_empty() { false } else { b.match_mode(ch)? };
            let numeric_col = match op {
                "sum" | "avg" | "min" | "max" => target.clone(),
                _ => measure.clone(),
            };
            let conv = if numeric_col.is_some() { b.conversion(op, ch)? } else { "none".to_string() };
            let mut names: Vec<&str> = vec![t.as_str()];
            names.extend(target.iter().map(|s| s.as_str()));
            names.extend(measure.iter().map(|s| s.as_str()));
            names.extend(eqs.iter().map(|(c, _)| c.as_str()));
            let q = b.quoting(&names, ch)?;
            let unit = view.evidence.unit.clone().or(view.evidence.currency.clone());
            let num = |c: &str| numeric(c, &conv, unit.as_deref(), q);
            let mut wheres: Vec<String> = Vec::new();
            for (c, val) in &eqs {
                wheres.push(eq_sql(c, val, trim, q));
            }
            if let (Some(m), Some(th)) = (&measure, &threshold) {
                let sym = match cmp {
                    "gt" => ">",
                    "lt" => "<",
                    "ge" => ">=",
                    _ => "<=",
                };
                wheres.push(format!("{} {sym} {}", num(m), th.replace(',', "")));
            }
            let tgt = target.as_deref().unwrap_or("");
            let sel = match op {
                "count" => "COUNT(*)".to_string(),
                "count_distinct" => format!("COUNT(DISTINCT {})", ident(tgt, q)),
                "sum" | "avg" | "min" | "max" => format!("{}({})", op.to_uppercase(), num(tgt)),
                _ => ident(tgt, q),
            };
            let where_sql = if wheres.is_empty() { String::new() } else { format!(" WHERE {}", wheres.join(" AND ")) };
            let sql = if op == "argmax" || op == "argmin" {
                let m = num(measure.as_deref().unwrap_or(""));
                let agg = if op == "argmax" { "MAX" } else { "MIN" };
                // ties: every row sharing the best value
                let best = format!("(SELECT {agg}({m}) FROM {}{where_sql})", ident(t, q));
                let cond = if wheres.is_empty() { format!(" WHERE {m} = {best}") } else { format!("{where_sql} AND {m} = {best}") };
                format!("SELECT {} FROM {}{cond}", ident(tgt, q), ident(t, q))
            } else {
                format!("SELECT {sel} FROM {}{where_sql}", ident(t, q))
            };
            Some(sql_call(sql, b))
        }
        "insert" => {
            let vals = b.assign_values(ch)?;
            let mut names: Vec<&str> = vec![t.as_str()];
            names.extend(view.columns.iter().map(|s| s.as_str()));
            let q = b.quoting(&names, ch)?;
            let cols: Vec<String> = view.columns.iter().map(|c| ident(c, q)).collect();
            let lits: Vec<String> = vals.iter().map(|v| lit(v)).collect();
            Some(sql_call(format!("INSERT INTO {} ({}) VALUES ({})", ident(t, q), cols.join(", "), lits.join(", ")), b))
        }
        "update" => {
            let set = b.filter("set", "update", false, false, &[], ch)??;
            let filter = b.filter("where", "update", false, false, &[set.0.as_str()], ch)??;
            let trim = b.match_mode(ch)?;
            let q = b.quoting(&[t.as_str(), set.0.as_str(), filter.0.as_str()], ch)?;
            Some(sql_call(
                format!("UPDATE {} SET {} = {} WHERE {}", ident(t, q), ident(&set.0, q), lit(&set.1), eq_sql(&filter.0, &filter.1, trim, q)),
                b,
            ))
        }
        "delete" => {
            let filter = b.filter("where", "delete", false, false, &[], ch)??;
            let trim = b.match_mode(ch)?;
            let q = b.quoting(&[t.as_str(), filter.0.as_str()], ch)?;
            Some(sql_call(format!("DELETE FROM {} WHERE {}", ident(t, q), eq_sql(&filter.0, &filter.1, trim, q)), b))
        }
        _ => None,
    }
}

/// Search the grammar for a sequence that solves `task`: one query (or mutation) then a commit,
/// optionally after inspecting the table first (`inspect`). Contexts carry no tool specs (the
/// grammar reads only messages).
pub fn solve(suite: &dyn Suite, task: &Task, frame: &SearchFrame<'_>, max_paths: usize, inspect: bool) -> (Option<Solution>, bool) {
    let Ok(mut probe) = suite.make_env(task) else { return (None, false) };
    let task_prompt = probe.task_prompt();
    let frame = Context { messages: (frame.frame)(&task_prompt), tools: Vec::new() };
    // (context, steps that led to it)
    let mut starts: Vec<(Context, Solution)> = vec![(frame.clone(), Vec::new())];
    if inspect {
        let mut dfs = Dfs::of_kind("inspect");
        let view = DbView::parse(&frame);
        if let Some(b) = build(&view, &mut dfs) {
            let t = turn(&b, "call_0");
            let call = t.tool_calls[0].clone();
            if let Ok(out) = probe.step(&call) {
                let mut c = frame.clone();
                push_call(&mut c, call, out.observation);
                starts.push((c, vec![(frame.clone(), t)]));
            }
        }
    }
    let mutation = DbView::parse(&frame).mutation.is_some();
    let kinds: &[&'static str] = if mutation { &["insert", "update", "delete"] } else { &["query"] };
    let mut truncated = false;
    for (ctx, prefix) in &starts {
        let view = DbView::parse(ctx);
        for &kind in kinds {
            let mut dfs = Dfs::of_kind(kind);
            let mut n = 0;
            let mut seen = std::collections::HashSet::new();
            loop {
                if n >= max_paths {
                    truncated = true;
                    break;
                }
                n += 1;
                if let Some(b) = build(&view, &mut dfs) {
                    let sql = b.arguments.to_string();
                    if seen.insert(sql) {
                        let t = turn(&b, &format!("call_{}", prefix.len()));
                        // a query leaves the table as it was, so one environment serves them all;
                        // a mutation gets a fresh one
                        let found = if mutation {
                            match suite.make_env(task) {
                                Ok(mut env) => solves(env.as_mut(), ctx, t.tool_calls[0].clone()),
                                Err(_) => None,
                            }
                        } else {
                            solves(probe.as_mut(), ctx, t.tool_calls[0].clone())
                        };
                        if let Some((after, commit)) = found {
                            let mut sol = prefix.clone();
                            sol.push((ctx.clone(), t));
                            sol.push((after, commit));
                            return (Some(sol), truncated);
                        }
                    }
                }
                if !dfs.advance() {
                    break;
                }
            }
        }
    }
    (None, truncated)
}

/// Run `call`, then try every answer the grammar could commit; the
/// context after the call and the winning commit.
fn solves(env: &mut dyn crate::suite::Environment, ctx: &Context, call: ToolCall) -> Option<(Context, AssistantTurn)> {
    let out = env.step(&call).ok()?;
    if out.signals.error_kind.is_some() {
        return None;
    }
    let mut after = ctx.clone();
    let n = after.messages.iter().filter(|m| m.role == Role::Assistant).count();
    push_call(&mut after, call, out.observation);
    let view = DbView::parse(&after);
    let mut dfs = Dfs::of_kind("commit");
    loop {
        if let Some(b) = build(&view, &mut dfs) {
            let commit = turn(&b, &format!("call_{}", n + 1));
            if let Ok(s) = env.score(Some(&commit.tool_calls[0])) {
                if s.success {
                    return Some((after, commit));
                }
            }
        }
        if !dfs.advance() {
            return None;
        }
    }
}

/// The grammar, as the suite hands it to the built-in policy.
pub const GRAMMAR: DbBenchGrammar = DbBenchGrammar;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Origin, ToolCall};

    #[test]
    fn reads_rows_with_decimals_and_quotes() {
        let rows = parse_rows("[('74', Decimal('16.00')), ('It''s', None), (\"a, b\", Decimal('-0.5'))]").unwrap();
        assert_eq!(rows[0], vec!["74".to_string(), "16.00".to_string()]);
        assert_eq!(rows[2], vec!["a, b".to_string(), "-0.5".to_string()]);
        assert_eq!(parse_rows("[(Decimal('3'),)]").unwrap(), vec![vec!["3".to_string()]]);
    }

    /// Chooses what the innate priors alone prefer (an untrained model scores every option 0).
    struct ByPrior;
    impl Chooser for ByPrior {
        fn choose(&mut self, d: &Decision) -> Option<usize> {
            (0..d.prior.len()).max_by(|&a, &b| d.prior[a].partial_cmp(&d.prior[b]).unwrap().then(b.cmp(&a)))
        }
    }

    /// Records the decisions of one slot and otherwise chooses by prior.
    struct Watch(&'static str, Vec<(Vec<String>, Vec<f32>)>);
    impl Chooser for Watch {
        fn choose(&mut self, d: &Decision) -> Option<usize> {
            if d.slot == self.0 {
                self.1.push((d.labels.clone(), d.prior.clone()));
            }
            ByPrior.choose(d)
        }
    }

    fn task(question: &str) -> Vec<Message> {
        vec![
            Message::system("You are a database agent."),
            Message::user(
                format!("The name of this table is Stores, and the headers of this table are Store,City,Revenue.\nQuestion: {question}"),
                Origin::Frame,
            ),
        ]
    }

    fn ran(msgs: &mut Vec<Message>, sql: &str, observation: &str) {
        let id = format!("c{}", msgs.len());
        let mut a = Message::new(Role::Assistant, "", Origin::Policy);
        a.tool_calls.push(ToolCall { id: id.clone(), name: "execute_sql".into(), arguments: serde_json::json!({"query": sql}) });
        msgs.push(a);
        let mut t = Message::new(Role::Tool, observation, Origin::Environment);
        t.tool_call_id = Some(id);
        msgs.push(t);
    }

    fn hint(msgs: &mut Vec<Message>, text: &str) {
        msgs.push(Message::user(text, Origin::Hook { hook: "hint".into(), kind: crate::message::HookKind::PreHint }));
    }

    fn view(msgs: Vec<Message>) -> DbView {
        DbView::parse(&Context { messages: msgs, tools: Vec::new() })
    }

    fn kind_chosen(msgs: Vec<Message>) -> String {
        let b = build(&view(msgs), &mut ByPrior).unwrap();
        let (d, i) = &b.decisions[0];
        assert_eq!(d.slot, "kind");
        d.labels[*i].clone()
    }

    #[test]
    fn reads_whether_the_request_asks_for_a_change() {
        assert_eq!(asked_mutation("delete the row for store 12."), Some("delete"));
        assert_eq!(asked_mutation("remove every store in oslo."), Some("delete"));
        assert_eq!(asked_mutation("add this row: store 9, bergen, 100."), Some("insert"));
        assert_eq!(asked_mutation("add up the revenue of every store?"), None);
        assert_eq!(asked_mutation("store 4 should have its city changed to oslo."), Some("update"));
        assert_eq!(asked_mutation("which store should i delete?"), None);
        assert_eq!(asked_mutation("what is the total revenue?"), None);
    }

    #[test]
    fn reads_which_operation_the_request_asks_for() {
        let asked = |q: &str| {
            ["select", "count", "sum", "avg", "min", "max", "argmin", "argmax"].into_iter().filter(|o| asked_op_prior(q, o) > 0.0).collect::<Vec<_>>()
        };
        assert_eq!(asked("how many stores are in oslo?"), vec!["count"]);
        assert_eq!(asked("what is the average revenue?"), vec!["avg"]);
        assert_eq!(asked("what is the largest revenue?"), vec!["max"]);
        assert_eq!(asked("which store has the largest revenue?"), vec!["argmax"]);
        assert_eq!(asked("which city is store 4 in?"), vec!["select"]);
    }

    #[test]
    fn a_question_is_answered_by_a_query_and_a_delete_request_by_a_delete() {
        assert_eq!(kind_chosen(task("What is the total Revenue of stores in Oslo?")), "query");
        assert_eq!(kind_chosen(task("Delete the row for store Nord.")), "delete");
    }

    #[test]
    fn follows_a_hint_to_look_at_the_rows_once() {
        let mut m = task("What is the total Revenue of stores in Oslo?");
        hint(&mut m, "Before your first query, run SELECT * FROM `Stores` LIMIT 5 to see how the values are written.");
        assert_eq!(kind_chosen(m.clone()), "inspect");
        let b = build(&view(m.clone()), &mut ByPrior).unwrap();
        assert_eq!(b.arguments["query"], "SELECT * FROM `Stores` LIMIT 5");
        // once looked at, the hint has been followed
        ran(&mut m, "SELECT * FROM `Stores` LIMIT 5", "[('Nord', 'Oslo', '1,200')]");
        assert_ne!(kind_chosen(m), "inspect");
    }

    #[test]
    fn a_replace_exists_only_once_the_context_shows_a_format() {
        let q = "What is the total Revenue of stores in Oslo?";
        let convs = |m: Vec<Message>| {
            let mut w = Watch("conv", Vec::new());
            build(&view(m), &mut w);
            w.1
        };
        // blind: only none or a cast
        let blind = convs(task(q));
        assert!(!blind.is_empty());
        assert!(blind.iter().all(|(labels, _)| labels == &vec!["none".to_string(), "cast".to_string()]), "{blind:?}");
        // the rows show thousands separators: stripping them is offered and preferred
        let mut m = task(q);
        ran(&mut m, "SELECT * FROM `Stores` LIMIT 5", "[('Nord', 'Oslo', '1,200'), ('Sud', 'Bergen', '950')]");
        let seen = convs(m);
        let (labels, prior) = &seen[0];
        let i = labels.iter().position(|l| l == "strip_commas").expect("strip_commas offered");
        assert!(prior[i] > prior[0] && prior[i] > prior[1], "{seen:?}");
    }

    #[test]
    fn the_same_statement_twice_is_answered_not_run_again() {
        let mut m = task("What is the total Revenue of stores in Oslo?");
        ran(&mut m, "SELECT SUM(`Revenue`) FROM `Stores` WHERE `City` = 'Oslo'", "[(None,)]");
        assert!(!view(m.clone()).repeated_last());
        ran(&mut m, "SELECT SUM(`Revenue`) FROM `Stores` WHERE `City` = 'Oslo'", "[(None,)]");
        assert!(view(m.clone()).repeated_last());
        assert_eq!(kind_chosen(m), "commit");
    }

    #[test]
    fn a_hint_to_redo_the_query_is_followed() {
        let mut m = task("What is the total Revenue of stores in Oslo?");
        ran(&mut m, "SELECT SUM(`Revenue`) FROM `Stores` WHERE `City` = 'Oslo'", "[(0,)]");
        let before = view(m.clone());
        assert!(!before.asked_to_requery());
        hint(&mut m, "That result looks wrong: check the filter and query again.");
        let v = view(m.clone());
        assert!(v.asked_to_requery());
        assert_eq!(kind_chosen(m), "query");
    }
}

/// The built-in policy trained through this grammar.
#[cfg(test)]
mod policy_tests {
    use super::*;
    use crate::message::{Message, Origin, Role};
    use crate::policy::builtin::{BuiltinPolicy, TrainExample};
    use std::sync::Arc;

    /// Takes `conv=strip_commas` wherever it is offered, otherwise the first option.
    struct StripCommas;
    impl Chooser for StripCommas {
        fn choose(&mut self, d: &Decision) -> Option<usize> {
            let pick = |l: &str| d.labels.iter().position(|x| x == l);
            Some(match d.slot {
                "kind" => pick("query")?,
                "op" => pick("sum")?,
                "conv" => pick("strip_commas")?,
                _ => 0,
            })
        }
    }

    fn ctx(show_rows: bool) -> Context {
        let mut messages = vec![
            Message::system("You are a database agent."),
            Message::user(
                "The name of this table is Stores, and the headers of this table are Store,City,Revenue.\nQuestion: What is the total Revenue?",
                Origin::Frame,
            ),
        ];
        if show_rows {
            // what a schema-first sibling injects: sample rows that show the format
            messages.push(Message::user(
                "Sample rows of Stores: [('Nord', 'Oslo', '1,200'), ('Sud', 'Bergen', '950')]",
                Origin::Hook { hook: "schema".into(), kind: crate::message::HookKind::OnInit },
            ));
        }
        assert!(messages.iter().all(|m| m.role != Role::Tool));
        Context { messages, tools: Vec::new() }
    }

    #[test]
    fn a_reply_the_context_cannot_produce_is_skipped_in_training() {
        let shown = ctx(true);
        let b = build(&DbView::parse(&shown), &mut StripCommas).expect("an action");
        assert!(b.trace().contains("conv=strip_commas"), "{}", b.trace());
        let target = AssistantTurn {
            content: b.trace(),
            tool_calls: vec![ToolCall { id: "c1".into(), name: b.tool.clone(), arguments: b.arguments.clone() }],
            ..Default::default()
        };

        let p = BuiltinPolicy::new(Arc::new(GRAMMAR));
        // where the rows were shown, the reply reads back and is learned from
        let s = p.train(&[TrainExample { context: shown, target: target.clone(), weight: 1.0 }], 1.0);
        assert_eq!((s.examples, s.partial), (1, 0));
        assert!(s.decisions >= 3);
        let before = p.snapshot();
        // without them, no REPLACE can be pointed at: skipped, and the weights do not move
        let s = p.train(&[TrainExample { context: ctx(false), target: target.clone(), weight: 1.0 }], 1.0);
        assert_eq!((s.examples, s.partial, s.decisions), (0, 1, 0));
        assert!(!p.can_produce(&ctx(false), &target));
        assert!(p.can_produce(&ctx(true), &target));
        assert_eq!(p.snapshot().entries, before.entries);
    }

    #[test]
    fn weight_decay_shrinks_every_weight() {
        let shown = ctx(true);
        let b = build(&DbView::parse(&shown), &mut StripCommas).unwrap();
        let target = AssistantTurn {
            content: b.trace(),
            tool_calls: vec![ToolCall { id: "c1".into(), name: b.tool.clone(), arguments: b.arguments.clone() }],
            ..Default::default()
        };
        let p = BuiltinPolicy::new(Arc::new(GRAMMAR));
        p.train(&[TrainExample { context: shown, target, weight: 1.0 }], 1.0);
        let w0 = p.snapshot();
        // an empty batch with decay 0.1 at lr 1: every weight times 0.9
        p.train_decayed(&[], 1.0, 0.1);
        let w1 = p.snapshot();
        assert!(!w0.entries.is_empty());
        for ((i0, a), (i1, b)) in w0.entries.iter().zip(&w1.entries) {
            assert_eq!(i0, i1);
            assert!((b - a * 0.9).abs() < 1e-6, "{a} -> {b}");
        }
    }
}
