//! What the grammar reads from a DBBench context: the table and its headers, the question's
//! value spans, format evidence, earlier calls and results, errors and feedback ([`DbView`]).

use super::*;

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

pub(super) fn words(s: &str) -> Vec<String> {
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

    pub(super) fn parse_task(&mut self, text: &str) {
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

    pub(super) fn scan_evidence(&mut self, text: &str) {
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

    pub(super) fn add_samples(&mut self, rows: &[Vec<String>]) {
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
pub(super) fn shape(v: &str) -> (bool, bool, bool, bool, bool) {
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

pub(super) fn starts_any(s: &str, ps: &[&str]) -> bool {
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
