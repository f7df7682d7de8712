//! Python values, as far as AgentBench's scorer sees them: what `json.loads` produces for a tool
//! call's arguments, and what `eval()` produces for a result string like `[('a',), (5,)]`.
//!
//! [`eval_literal`] evaluates Python *literals* only (strings with prefixes and escapes, ints,
//! floats, None/True/False, lists, tuples, dicts, sets, unary signs). Anything else, which
//! Python's `eval` would either reject or compute (names like `Decimal(...)` raise NameError in
//! AgentBench's scorer; arithmetic such as `[1+2]` would evaluate), yields `None`, which the
//! scorer treats as an `eval` failure.

use super::render::{py_bytes_repr, py_float_repr, py_str_repr};

/// A Python value.
#[derive(Clone, Debug, PartialEq)]
pub enum Py {
    None,
    Bool(bool),
    /// An int, as its canonical decimal text.
    Int(String),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Py>),
    Tuple(Vec<Py>),
    Dict(Vec<(Py, Py)>),
    Set(Vec<Py>),
}

impl Py {
    /// Python `repr()`.
    pub fn repr(&self) -> String {
        let join = |v: &[Py]| v.iter().map(Py::repr).collect::<Vec<_>>().join(", ");
        match self {
            Py::None => "None".into(),
            Py::Bool(b) => {
                if *b {
                    "True".into()
                } else {
                    "False".into()
                }
            }
            Py::Int(s) => s.clone(),
            Py::Float(f) => py_float_repr(*f),
            Py::Str(s) => py_str_repr(s),
            Py::Bytes(b) => py_bytes_repr(b),
            Py::List(v) => format!("[{}]", join(v)),
            Py::Tuple(v) if v.len() == 1 => format!("({},)", v[0].repr()),
            Py::Tuple(v) => format!("({})", join(v)),
            Py::Dict(kv) => format!("{{{}}}", kv.iter().map(|(k, v)| format!("{}: {}", k.repr(), v.repr())).collect::<Vec<_>>().join(", ")),
            Py::Set(v) if v.is_empty() => "set()".into(),
            Py::Set(v) => format!("{{{}}}", join(v)),
        }
    }

    /// Python `str()`.
    pub fn str(&self) -> String {
        match self {
            Py::Str(s) => s.clone(),
            other => other.repr(),
        }
    }

    /// The value `json.loads` gives for a JSON value.
    pub fn from_json(v: &serde_json::Value) -> Py {
        use serde_json::Value as J;
        match v {
            J::Null => Py::None,
            J::Bool(b) => Py::Bool(*b),
            J::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Py::Int(i.to_string())
                } else if let Some(u) = n.as_u64() {
                    Py::Int(u.to_string())
                } else {
                    Py::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            J::String(s) => Py::Str(s.clone()),
            J::Array(a) => Py::List(a.iter().map(Py::from_json).collect()),
            J::Object(o) => Py::Dict(o.iter().map(|(k, v)| (Py::Str(k.clone()), Py::from_json(v))).collect()),
        }
    }
}

/// Python's `str.isspace()` for one character.
pub fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// Python's `float(s)` for a string: `Some` if it parses.
pub fn py_float(s: &str) -> Option<f64> {
    let t = py_strip(s);
    let lower = t.to_ascii_lowercase();
    let body = lower.strip_prefix(['+', '-']).unwrap_or(&lower);
    if matches!(body, "inf" | "infinity" | "nan") {
        let neg = lower.starts_with('-');
        return Some(match body {
            "nan" => f64::NAN,
            _ if neg => f64::NEG_INFINITY,
            _ => f64::INFINITY,
        });
    }
    // Underscores are allowed only between digits.
    let b = t.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let ok = i > 0 && i + 1 < b.len() && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit();
            if !ok {
                return None;
            }
        }
    }
    let clean: String = t.chars().filter(|&c| c != '_').collect();
    // [sign] (digits [. [digits]] | . digits) [e [sign] digits]
    let cb = clean.as_bytes();
    let mut i = 0;
    if i < cb.len() && (cb[i] == b'+' || cb[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < cb.len() && cb[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < cb.len() && cb[i] == b'.' {
        i += 1;
        let f = i;
        while i < cb.len() && cb[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return None;
    }
    if i < cb.len() && (cb[i] == b'e' || cb[i] == b'E') {
        i += 1;
        if i < cb.len() && (cb[i] == b'+' || cb[i] == b'-') {
            i += 1;
        }
        let e = i;
        while i < cb.len() && cb[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return None;
        }
    }
    if i != cb.len() {
        return None;
    }
    clean.parse::<f64>().ok()
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() {
            let c = self.src[self.i..].chars().next().unwrap_or(' ');
            if c == '\\' && self.s.get(self.i + 1) == Some(&b'\n') {
                self.i += 2;
            } else if py_isspace(c) {
                self.i += c.len_utf8();
            } else if c == '#' {
                while self.i < self.s.len() && self.s[self.i] != b'\n' {
                    self.i += 1;
                }
            } else {
                break;
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Py> {
        self.ws();
        let c = self.peek()?;
        match c {
            b'[' => {
                self.i += 1;
                let items = self.items(b']')?;
                Some(Py::List(items.0))
            }
            b'(' => {
                self.i += 1;
                let (items, trailing_comma) = self.items(b')')?;
                if items.len() == 1 && !trailing_comma {
                    Some(items.into_iter().next()?)
                } else {
                    Some(Py::Tuple(items))
                }
            }
            b'{' => {
                self.i += 1;
                self.ws();
                if self.eat(b'}') {
                    return Some(Py::Dict(Vec::new()));
                }
                let first = self.value()?;
                if self.eat(b':') {
                    let v = self.value()?;
                    let mut kv = vec![(first, v)];
                    loop {
                        if self.eat(b'}') {
                            return Some(Py::Dict(kv));
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                        if self.eat(b'}') {
                            return Some(Py::Dict(kv));
                        }
                        let k = self.value()?;
                        if !self.eat(b':') {
                            return None;
                        }
                        kv.push((k, self.value()?));
                    }
                }
                let mut items = vec![first];
                loop {
                    if self.eat(b'}') {
                        return Some(Py::Set(items));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                    if self.eat(b'}') {
                        return Some(Py::Set(items));
                    }
                    items.push(self.value()?);
                }
            }
            b'-' | b'+' => {
                self.i += 1;
                let v = self.value()?;
                let neg = c == b'-';
                match v {
                    Py::Int(s) => {
                        if !neg {
                            return Some(Py::Int(s));
                        }
                        Some(Py::Int(match s.strip_prefix('-') {
                            Some(p) => p.to_string(),
                            None if s == "0" => s,
                            None => format!("-{s}"),
                        }))
                    }
                    Py::Float(f) => Some(Py::Float(if neg { -f } else { f })),
                    Py::Bool(b) => Some(Py::Int(if neg && b { "-1".into() } else { (b as i32).to_string() })),
                    _ => None,
                }
            }
            b'0'..=b'9' | b'.' => self.number(),
            b'\'' | b'"' => self.strings(),
            _ => {
                // Names: None/True/False, or a string prefix.
                let start = self.i;
                while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_') {
                    self.i += 1;
                }
                let word = &self.src[start..self.i];
                match word {
                    "None" => Some(Py::None),
                    "True" => Some(Py::Bool(true)),
                    "False" => Some(Py::Bool(false)),
                    w if w.len() <= 2
                        && !w.is_empty()
                        && w.chars().all(|c| "rRbBuU".contains(c))
                        && matches!(self.peek(), Some(b'\'') | Some(b'"')) =>
                    {
                        self.i = start;
                        self.strings()
                    }
                    _ => None,
                }
            }
        }
    }

    /// Comma-separated values until `close`; returns the items and whether a trailing comma was
    /// present.
    fn items(&mut self, close: u8) -> Option<(Vec<Py>, bool)> {
        let mut out = Vec::new();
        let mut trailing = false;
        loop {
            if self.eat(close) {
                return Some((out, trailing));
            }
            if !out.is_empty() && !trailing {
                return None;
            }
            out.push(self.value()?);
            trailing = self.eat(b',');
        }
    }

    fn number(&mut self) -> Option<Py> {
        let start = self.i;
        let b = self.s;
        if b[start] == b'0' && matches!(b.get(start + 1), Some(b'x' | b'X' | b'o' | b'O' | b'b' | b'B')) {
            let radix = match b[start + 1] {
                b'x' | b'X' => 16,
                b'o' | b'O' => 8,
                _ => 2,
            };
            self.i += 2;
            let ds = self.i;
            while self.i < b.len() && (b[self.i].is_ascii_alphanumeric() || b[self.i] == b'_') {
                self.i += 1;
            }
            let digits: String = self.src[ds..self.i].chars().filter(|&c| c != '_').collect();
            return u128::from_str_radix(&digits, radix).ok().map(|v| Py::Int(v.to_string()));
        }
        while self.i < b.len() && (b[self.i].is_ascii_digit() || b[self.i] == b'_') {
            self.i += 1;
        }
        let mut is_float = false;
        if self.i < b.len() && b[self.i] == b'.' {
            is_float = true;
            self.i += 1;
            while self.i < b.len() && (b[self.i].is_ascii_digit() || b[self.i] == b'_') {
                self.i += 1;
            }
        }
        if self.i < b.len() && (b[self.i] == b'e' || b[self.i] == b'E') {
            let save = self.i;
            self.i += 1;
            if self.i < b.len() && (b[self.i] == b'+' || b[self.i] == b'-') {
                self.i += 1;
            }
            let e = self.i;
            while self.i < b.len() && b[self.i].is_ascii_digit() {
                self.i += 1;
            }
            if self.i == e {
                self.i = save;
                return None;
            }
            is_float = true;
        }
        // `1j`, `1abc`: not a plain number literal.
        if self.i < b.len() && (b[self.i].is_ascii_alphabetic() || b[self.i] == b'_') {
            return None;
        }
        let text = &self.src[start..self.i];
        if text == "." {
            return None;
        }
        if is_float {
            return py_float(text).map(Py::Float);
        }
        let digits: String = text.chars().filter(|&c| c != '_').collect();
        if text.contains("__") || text.ends_with('_') {
            return None;
        }
        if digits.len() > 1 && digits.starts_with('0') {
            // Python 3 forbids leading zeros except for zero itself.
            return digits.chars().all(|c| c == '0').then(|| Py::Int("0".into()));
        }
        Some(Py::Int(digits))
    }

    /// One or more adjacent string literals (they concatenate).
    fn strings(&mut self) -> Option<Py> {
        let mut acc: Option<Py> = None;
        loop {
            self.ws();
            let save = self.i;
            let mut raw = false;
            let mut bytes = false;
            while let Some(c) = self.peek() {
                match c {
                    b'r' | b'R' => raw = true,
                    b'b' | b'B' => bytes = true,
                    b'u' | b'U' => {}
                    _ => break,
                }
                self.i += 1;
            }
            let Some(q) = self.peek().filter(|&c| c == b'\'' || c == b'"') else {
                self.i = save;
                break;
            };
            let triple = self.s[self.i..].starts_with(&[q, q, q]);
            self.i += if triple { 3 } else { 1 };
            let mut body = String::new();
            loop {
                let c = self.src[self.i..].chars().next()?;
                if triple {
                    if self.s[self.i..].starts_with(&[q, q, q]) {
                        self.i += 3;
                        break;
                    }
                } else if c as u32 == q as u32 {
                    self.i += 1;
                    break;
                } else if c == '\n' {
                    return None;
                }
                if c == '\\' {
                    let n = self.src[self.i + 1..].chars().next()?;
                    self.i += 1 + n.len_utf8();
                    if raw {
                        body.push('\\');
                        body.push(n);
                        continue;
                    }
                    match n {
                        '\n' => {}
                        '\\' => body.push('\\'),
                        '\'' => body.push('\''),
                        '"' => body.push('"'),
                        'a' => body.push('\x07'),
                        'b' => body.push('\x08'),
                        'f' => body.push('\x0c'),
                        'n' => body.push('\n'),
                        'r' => body.push('\r'),
                        't' => body.push('\t'),
                        'v' => body.push('\x0b'),
                        '0'..='7' => {
                            let mut v = n.to_digit(8)?;
                            for _ in 0..2 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + (d - b'0') as u32;
                                        self.i += 1;
                                    }
                                    _ => break,
                                }
                            }
                            body.push(char::from_u32(v)?);
                        }
                        'x' | 'u' | 'U' if !(bytes && n != 'x') => {
                            let len = match n {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let hex = self.src.get(self.i..self.i + len)?;
                            let v = u32::from_str_radix(hex, 16).ok()?;
                            self.i += len;
                            body.push(char::from_u32(v)?);
                        }
                        'N' if !bytes => return None,
                        other => {
                            body.push('\\');
                            body.push(other);
                        }
                    }
                    continue;
                }
                body.push(c);
                self.i += c.len_utf8();
            }
            let piece = if bytes {
                if !body.chars().all(|c| (c as u32) < 0x100) {
                    return None;
                }
                Py::Bytes(body.chars().map(|c| c as u32 as u8).collect())
            } else {
                Py::Str(body)
            };
            acc = Some(match (acc, piece) {
                (None, p) => p,
                (Some(Py::Str(a)), Py::Str(b)) => Py::Str(a + &b),
                (Some(Py::Bytes(mut a)), Py::Bytes(b)) => {
                    a.extend(b);
                    Py::Bytes(a)
                }
                _ => return None,
            });
        }
        acc
    }
}

/// Evaluate a Python literal expression; `None` if Python's `eval` would fail (or compute
/// something this evaluator does not model).
pub fn eval_literal(src: &str) -> Option<Py> {
    let mut p = Parser { s: src.as_bytes(), src, i: 0 };
    let v = p.value()?;
    // A top-level tuple without parentheses: `1, 2`.
    p.ws();
    if p.peek() == Some(b',') {
        let mut items = vec![v];
        while p.eat(b',') {
            p.ws();
            if p.peek().is_none() {
                break;
            }
            items.push(p.value()?);
        }
        p.ws();
        return (p.i == p.s.len()).then_some(Py::Tuple(items));
    }
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(eval_literal("[('a',), (5,)]"), Some(Py::List(vec![Py::Tuple(vec![Py::Str("a".into())]), Py::Tuple(vec![Py::Int("5".into())])])));
        assert_eq!(eval_literal("[(2011.0,)]").unwrap().repr(), "[(2011.0,)]");
        assert_eq!(eval_literal("[(None,)]").unwrap().repr(), "[(None,)]");
        assert_eq!(eval_literal("(1)"), Some(Py::Int("1".into())));
        assert_eq!(eval_literal("()"), Some(Py::Tuple(vec![])));
        assert_eq!(eval_literal("['a', \"b\", 'c' 'd']").unwrap().repr(), "['a', 'b', 'cd']");
        assert_eq!(eval_literal(r"['it\'s', '\x41\n']").unwrap().repr(), r#"["it's", 'A\n']"#);
        assert_eq!(eval_literal("[-5, +2.5, 1_000, 0x10]").unwrap().repr(), "[-5, 2.5, 1000, 16]");
        assert_eq!(eval_literal("{'a': 1}").unwrap().repr(), "{'a': 1}");
        assert_eq!(eval_literal("[Decimal('5')]"), None);
        assert_eq!(eval_literal("[a, b]"), None);
        assert_eq!(eval_literal("[nan]"), None);
        assert_eq!(eval_literal("[007]"), None);
        assert_eq!(eval_literal("[1, 2,]").unwrap().repr(), "[1, 2]");
        assert_eq!(eval_literal("[1 2]"), None);
    }

    #[test]
    fn python_float() {
        assert_eq!(py_float(" 1.5 "), Some(1.5));
        assert_eq!(py_float("1_000.5"), Some(1000.5));
        assert_eq!(py_float("5."), Some(5.0));
        assert_eq!(py_float(".5"), Some(0.5));
        assert_eq!(py_float("1e5"), Some(1e5));
        assert!(py_float("inf").unwrap().is_infinite());
        assert!(py_float("-Infinity").unwrap().is_infinite());
        assert!(py_float("NaN").unwrap().is_nan());
        assert_eq!(py_float("1,000"), None);
        assert_eq!(py_float("_1"), None);
        assert_eq!(py_float("1e"), None);
        assert_eq!(py_float(""), None);
        assert_eq!(py_float("0x10"), None);
    }
}
