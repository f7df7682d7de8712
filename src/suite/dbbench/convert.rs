//! MySQL's type conversion, applied to translated statements: the expression pass of
//! [`translate`](super::translate).
//!
//! It parses each nesting level of the token list into operands (literals, columns, calls,
//! groups, CASE) and operators, then:
//! - wraps a string-valued operand compared with a number in `mysql_num()`, so the comparison is
//!   numeric with MySQL's prefix conversion (`Goal < 17`, `x IN (1, 2)`, `x BETWEEN 1 AND 5`);
//! - wraps string-valued operands of arithmetic in `mysql_num()` (MySQL computes in doubles) and
//!   the divisor of `/` in `mysql_real()` (never integer division);
//! - gives string literals compared with strings the `mysql_ci` collation;
//! - turns `BINARY x` into a case-sensitive comparison;
//! - stores numeric literals inserted or assigned into columns as MySQL spells them;
//! - double-quotes bare column and table names in DML, so SQLite never reads them as keywords.

use super::sqltext::{dquote, squote, TokKind};
use super::words::{changes_data, is_dml, is_keyword, matching, StmtKind, Tk, CALLABLE_KEYWORDS, NUMERIC_FUNCS};

/// Run the expression pass over a whole statement.
pub(super) fn convert(tks: &mut [Tk], kind: StmtKind) {
    let n = tks.len();
    let mut ex = Expr { tks, kind };
    ex.level(0, n, true);
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Prim {
    Num,
    Str,
    Null,
    Col,
    Call { numeric: bool },
    Group { numeric: Option<bool>, num_list: bool },
    Case,
}

#[derive(Clone, Debug, PartialEq)]
enum AtomKind {
    Prim(Prim),
    Arith(String),
    Cmp,
    Kw(String),
    Comma,
    Other,
}

#[derive(Clone, Debug)]
struct Atom {
    s: usize,
    e: usize,
    kind: AtomKind,
    wrapped: bool,
}

impl Atom {
    fn prim(&self) -> Option<Prim> {
        match self.kind {
            AtomKind::Prim(p) => Some(p),
            _ => None,
        }
    }
}

/// What a parenthesised level turned out to be, for the enclosing level.
#[derive(Clone, Copy, Debug, Default)]
struct LevelInfo {
    /// `Some(true)` if the level is one numeric expression, `Some(false)` if one string-valued
    /// expression, `None` otherwise (a subquery, a list).
    numeric: Option<bool>,
    /// A non-empty comma-separated list of numeric literals: `IN (1, 2, 3)`.
    num_list: bool,
}

struct Expr<'a> {
    tks: &'a mut [Tk],
    kind: StmtKind,
}

fn texty(p: Prim) -> bool {
    match p {
        Prim::Col | Prim::Str | Prim::Case => true,
        Prim::Call { numeric } => !numeric,
        Prim::Group { numeric, .. } => numeric != Some(true),
        Prim::Num | Prim::Null => false,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum RunClass {
    Numeric,
    Text,
    Null,
}

impl Expr<'_> {
    fn live(&self, i: usize, hi: usize) -> Option<usize> {
        (i..hi).find(|&j| !self.tks[j].removed)
    }

    fn wrap(&mut self, s: usize, e: usize, func: &str) {
        // a data-change statement converts strictly (MySQL's strict mode): see `mysql_num_strict`
        let func = if func == "mysql_num" && changes_data(self.kind) { "mysql_num_strict" } else { func };
        self.tks[s].pre = format!("{func}( {}", self.tks[s].pre);
        self.tks[e].post.push_str(" )");
    }

    /// Parse one primary starting at `i` (a live token). Returns the atom.
    fn primary(&mut self, i: usize, hi: usize, dml: bool, after_table_kw: bool) -> Option<Atom> {
        let t = self.tks[i].tok.clone();
        let mk = |s, e, p| Atom { s, e, kind: AtomKind::Prim(p), wrapped: false };
        let atom = match t.kind {
            TokKind::Number => mk(i, i, Prim::Num),
            TokKind::Str | TokKind::Hex => mk(i, i, Prim::Str),
            TokKind::LParen => {
                let close = matching(self.tks, i).filter(|&c| c < hi)?;
                let sub = self.live(i + 1, close).is_some_and(|j| self.tks[j].tok.is_kw("SELECT") || self.tks[j].tok.is_kw("WITH"));
                let info = self.level(i + 1, close, false);
                let numeric = if sub { None } else { info.numeric };
                mk(i, close, Prim::Group { numeric, num_list: info.num_list && !sub })
            }
            TokKind::QuotedIdent => {
                let e = self.chain(i, hi);
                mk(i, e, Prim::Col)
            }
            TokKind::Word => {
                let up = t.value.to_ascii_uppercase();
                let next = self.live(i + 1, hi);
                let next_paren = next.is_some_and(|j| self.tks[j].tok.kind == TokKind::LParen);
                if up == "NULL" {
                    mk(i, i, Prim::Null)
                } else if up == "TRUE" || up == "FALSE" {
                    mk(i, i, Prim::Num)
                } else if up == "CASE" {
                    let end = self.case_end(i, hi)?;
                    self.level(i + 1, end, false);
                    mk(i, end, Prim::Case)
                } else if next_paren && !after_table_kw && (!is_keyword(&up) || CALLABLE_KEYWORDS.contains(&up.as_str()) || up == "EXISTS") {
                    let open = next?;
                    let close = matching(self.tks, open).filter(|&c| c < hi)?;
                    self.level(open + 1, close, false);
                    let mut e = close;
                    // Window functions: f(...) OVER (...) / OVER w
                    if let Some(o) = self.live(close + 1, hi) {
                        if self.tks[o].tok.is_kw("OVER") {
                            if let Some(w) = self.live(o + 1, hi) {
                                e = if self.tks[w].tok.kind == TokKind::LParen { matching(self.tks, w).filter(|&c| c < hi).unwrap_or(w) } else { w };
                            }
                        }
                    }
                    let numeric = NUMERIC_FUNCS.contains(&up.as_str());
                    mk(i, e, Prim::Call { numeric })
                } else if is_keyword(&up) {
                    return None;
                } else {
                    let e = self.chain(i, hi);
                    if dml {
                        // Quote bare column/table names so SQLite never reads them as keywords.
                        for j in i..=e {
                            if self.tks[j].tok.kind == TokKind::Word && !self.tks[j].removed {
                                self.tks[j].out = dquote(&self.tks[j].tok.value);
                            }
                        }
                    }
                    mk(i, e, Prim::Col)
                }
            }
            _ => return None,
        };
        // Postfix COLLATE name.
        let mut atom = atom;
        if let Some(c) = self.live(atom.e + 1, hi) {
            if self.tks[c].tok.is_kw("COLLATE") {
                if let Some(nm) = self.live(c + 1, hi) {
                    atom.e = nm;
                }
            }
        }
        Some(atom)
    }

    /// Extend an identifier over `.name` / `.*` qualifiers.
    fn chain(&self, i: usize, hi: usize) -> usize {
        let mut e = i;
        while let Some(d) = self.live(e + 1, hi) {
            if self.tks[d].tok.kind != TokKind::Dot {
                break;
            }
            let Some(nx) = self.live(d + 1, hi) else { break };
            let ok = self.tks[nx].tok.is_ident() || self.tks[nx].tok.value == "*";
            if !ok {
                break;
            }
            e = nx;
        }
        e
    }

    fn case_end(&self, i: usize, hi: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut paren = 0i32;
        for j in i..hi {
            let t = &self.tks[j].tok;
            match t.kind {
                TokKind::LParen => paren += 1,
                TokKind::RParen => paren -= 1,
                _ if paren == 0 && t.is_kw("CASE") => depth += 1,
                _ if paren == 0 && t.is_kw("END") => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Process the tokens `lo..hi` of one nesting level (inner levels first).
    fn level(&mut self, lo: usize, hi: usize, top: bool) -> LevelInfo {
        let dml = is_dml(self.kind);
        let mut atoms: Vec<Atom> = Vec::new();
        let mut i = lo;
        while i < hi {
            if self.tks[i].removed {
                i += 1;
                continue;
            }
            let t = self.tks[i].tok.clone();
            let prev_is_prim = atoms.last().is_some_and(|a| a.prim().is_some());
            match t.kind {
                TokKind::Op if !prev_is_prim && matches!(t.value.as_str(), "-" | "+" | "~") => {
                    // Unary prefix: fold into the following primary.
                    if let Some(j) = self.live(i + 1, hi) {
                        if let Some(mut a) = self.primary(j, hi, dml, false) {
                            // `-x` on a string is double negation in MySQL.
                            if let Some(p) = a.prim() {
                                if texty(p) && t.value != "~" {
                                    self.wrap(a.s, a.e, "mysql_num");
                                    a.wrapped = true;
                                }
                            }
                            a.s = i;
                            i = a.e + 1;
                            atoms.push(a);
                            continue;
                        }
                    }
                    atoms.push(Atom { s: i, e: i, kind: AtomKind::Other, wrapped: false });
                    i += 1;
                    continue;
                }
                TokKind::Op => {
                    let kind = match t.value.as_str() {
                        "+" | "-" | "*" | "/" | "%" | "DIV" => AtomKind::Arith(t.value.clone()),
                        "=" | "<" | ">" | "<=" | ">=" | "<>" | "!=" | "<=>" => AtomKind::Cmp,
                        _ => AtomKind::Other,
                    };
                    atoms.push(Atom { s: i, e: i, kind, wrapped: false });
                    i += 1;
                    continue;
                }
                TokKind::Comma => {
                    atoms.push(Atom { s: i, e: i, kind: AtomKind::Comma, wrapped: false });
                    i += 1;
                    continue;
                }
                _ => {}
            }
            // `INTO t (a, b)`, `TABLE t (...)`: a table name, not a function call.
            let after_table_kw = atoms
                .last()
                .is_some_and(|a| matches!(&a.kind, AtomKind::Kw(w) if matches!(w.as_str(), "INTO" | "TABLE" | "FROM" | "JOIN" | "UPDATE")));
            if let Some(a) = self.primary(i, hi, dml, after_table_kw) {
                i = a.e + 1;
                atoms.push(a);
                continue;
            }
            let kind = match t.upper() {
                Some(w) => AtomKind::Kw(w),
                None => AtomKind::Other,
            };
            // Skip a stray group we could not parse (unbalanced): treat as other.
            atoms.push(Atom { s: i, e: i, kind, wrapped: false });
            i += 1;
        }
        self.apply_rules(&mut atoms, top);
        self.summarize(&atoms)
    }

    fn summarize(&self, atoms: &[Atom]) -> LevelInfo {
        let num_list = !atoms.is_empty()
            && atoms.iter().enumerate().all(|(k, a)| if k % 2 == 0 { a.prim() == Some(Prim::Num) } else { a.kind == AtomKind::Comma });
        let has_structure = atoms.iter().any(|a| matches!(a.kind, AtomKind::Comma | AtomKind::Other))
            || atoms.iter().any(|a| matches!(&a.kind, AtomKind::Kw(w) if matches!(w.as_str(), "SELECT" | "WITH" | "FROM")));
        let numeric = if atoms.is_empty() || has_structure {
            None
        } else if atoms.iter().any(|a| matches!(a.kind, AtomKind::Cmp | AtomKind::Kw(_))) {
            // A condition: 0/1 in MySQL.
            Some(true)
        } else if atoms.len() == 1 {
            atoms[0].prim().map(|p| !texty(p) || atoms[0].wrapped)
        } else {
            Some(true)
        };
        LevelInfo { numeric, num_list }
    }

    /// The operand run ending at atom `end` (inclusive), going left: Prim (Arith Prim)*.
    fn run_left(atoms: &[Atom], end: usize) -> Option<(usize, usize)> {
        atoms.get(end)?.prim()?;
        let mut s = end;
        while s >= 2 && matches!(atoms[s - 1].kind, AtomKind::Arith(_)) && atoms[s - 2].prim().is_some() {
            s -= 2;
        }
        Some((s, end))
    }

    fn run_right(atoms: &[Atom], start: usize) -> Option<(usize, usize)> {
        atoms.get(start)?.prim()?;
        let mut e = start;
        while e + 2 < atoms.len() && matches!(atoms[e + 1].kind, AtomKind::Arith(_)) && atoms[e + 2].prim().is_some() {
            e += 2;
        }
        Some((start, e))
    }

    fn classify(atoms: &[Atom], run: (usize, usize)) -> RunClass {
        if run.0 != run.1 {
            return RunClass::Numeric;
        }
        let a = &atoms[run.0];
        match a.prim() {
            Some(Prim::Null) => RunClass::Null,
            Some(p) if texty(p) && !a.wrapped => RunClass::Text,
            _ => RunClass::Numeric,
        }
    }

    fn wrap_run(&mut self, atoms: &mut [Atom], run: (usize, usize)) {
        self.wrap_run_with(atoms, run, "mysql_num");
    }

    fn wrap_run_with(&mut self, atoms: &mut [Atom], run: (usize, usize), func: &str) {
        if run.0 == run.1 && atoms[run.0].wrapped {
            return;
        }
        let (s, e) = (atoms[run.0].s, atoms[run.1].e);
        self.wrap(s, e, func);
        if run.0 == run.1 {
            atoms[run.0].wrapped = true;
        }
    }

    fn apply_rules(&mut self, atoms: &mut [Atom], top: bool) {
        // BINARY x: a case-sensitive comparison.
        for k in 0..atoms.len() {
            if matches!(&atoms[k].kind, AtomKind::Kw(w) if w == "BINARY") && atoms.get(k + 1).is_some_and(|a| a.prim().is_some()) {
                let s = atoms[k].s;
                self.tks[s].remove();
                let e = atoms[k + 1].e;
                self.tks[e].post.push_str(" COLLATE BINARY");
            }
        }
        // Assignment positions (UPDATE ... SET a = v, ON DUPLICATE KEY UPDATE a = v).
        let mut assign = vec![false; atoms.len()];
        if top {
            let mut in_set = false;
            for k in 0..atoms.len() {
                match &atoms[k].kind {
                    AtomKind::Kw(w) if w == "SET" => in_set = self.kind == StmtKind::Update || self.kind == StmtKind::Insert,
                    AtomKind::Kw(w) if w == "UPDATE" && k >= 2 && matches!(&atoms[k - 1].kind, AtomKind::Kw(x) if x == "KEY") => in_set = true,
                    AtomKind::Kw(w) if matches!(w.as_str(), "WHERE" | "ORDER" | "LIMIT") => in_set = false,
                    AtomKind::Cmp if in_set => {
                        let after_sep = k >= 2 && matches!(&atoms[k - 2].kind, AtomKind::Comma | AtomKind::Kw(_));
                        if after_sep && atoms[k - 1].prim() == Some(Prim::Col) && self.tks[atoms[k].s].tok.value == "=" {
                            assign[k] = true;
                        }
                    }
                    _ => {}
                }
            }
        }
        // Arithmetic on strings is double arithmetic; `/` is never integer division.
        for k in 0..atoms.len() {
            let AtomKind::Arith(op) = atoms[k].kind.clone() else { continue };
            if k == 0 || atoms[k - 1].prim().is_none() || atoms.get(k + 1).and_then(|a| a.prim()).is_none() {
                continue;
            }
            // `a DIV b` and `a % b` as MySQL computes them: DIV divides exactly and truncates
            // (`'9.776' DIV 2` is 4), `%` of fractions is fractional (`'14.4' % 3` is 2.4); SQLite's
            // `/` and `%` would give 4.888 and 2. Rewritten as calls when no other `*`, `/`, `%`
            // or DIV binds to the same operands (a chain keeps SQLite's operators).
            if op == "DIV" || op == "%" {
                let multiplicative =
                    |a: Option<&Atom>| matches!(a.map(|a| &a.kind), Some(AtomKind::Arith(o)) if matches!(o.as_str(), "*" | "/" | "%" | "DIV"));
                let chained = (k >= 2 && multiplicative(atoms.get(k - 2))) || multiplicative(atoms.get(k + 2));
                let fractional = [k - 1, k + 1].iter().any(|&side| {
                    texty(atoms[side].prim().unwrap_or(Prim::Null)) || {
                        let t = &self.tks[atoms[side].s].tok;
                        atoms[side].s == atoms[side].e && t.kind == TokKind::Number && !t.value.bytes().all(|b| b.is_ascii_digit())
                    }
                });
                if op == "DIV" || fractional {
                    for side in [k - 1, k + 1] {
                        if texty(atoms[side].prim().unwrap_or(Prim::Null)) && !atoms[side].wrapped {
                            self.wrap_run(atoms, (side, side));
                        }
                    }
                }
                if !chained && (op == "DIV" || fractional) {
                    let o = atoms[k].s;
                    self.tks[o].out = ",".into();
                    self.wrap_run_with(atoms, (k - 1, k + 1), if op == "DIV" { "mysql_div" } else { "mod" });
                }
                continue;
            }
            for side in [k - 1, k + 1] {
                if let Some(p) = atoms[side].prim() {
                    if texty(p) && !atoms[side].wrapped {
                        self.wrap_run(atoms, (side, side));
                    }
                }
            }
            if op == "/" && !atoms[k + 1].wrapped {
                self.wrap_run_with(atoms, (k + 1, k + 1), "mysql_real");
            }
        }
        // Comparisons.
        for k in 0..atoms.len() {
            if atoms[k].kind != AtomKind::Cmp || assign[k] || k == 0 {
                continue;
            }
            let (Some(l), Some(r)) = (Self::run_left(atoms, k - 1), Self::run_right(atoms, k + 1)) else { continue };
            self.compare(atoms, l, r);
        }
        // x [NOT] IN (1, 2, 3)
        for k in 1..atoms.len() {
            if !matches!(&atoms[k].kind, AtomKind::Kw(w) if w == "IN") {
                continue;
            }
            let Some(Prim::Group { num_list: true, .. }) = atoms.get(k + 1).and_then(|a| a.prim()) else { continue };
            let end = if matches!(&atoms[k - 1].kind, AtomKind::Kw(w) if w == "NOT") { k.checked_sub(2) } else { Some(k - 1) };
            let Some(end) = end else { continue };
            if let Some(l) = Self::run_left(atoms, end) {
                if Self::classify(atoms, l) == RunClass::Text {
                    self.wrap_run(atoms, l);
                }
            }
        }
        // x [NOT] BETWEEN a AND b
        for k in 1..atoms.len() {
            if !matches!(&atoms[k].kind, AtomKind::Kw(w) if w == "BETWEEN") {
                continue;
            }
            let end = if matches!(&atoms[k - 1].kind, AtomKind::Kw(w) if w == "NOT") { k.checked_sub(2) } else { Some(k - 1) };
            let Some(x) = end.and_then(|e| Self::run_left(atoms, e)) else { continue };
            let Some(a) = Self::run_right(atoms, k + 1) else { continue };
            if !matches!(atoms.get(a.1 + 1).map(|t| &t.kind), Some(AtomKind::Kw(w)) if w == "AND") {
                continue;
            }
            let Some(b) = Self::run_right(atoms, a.1 + 2) else { continue };
            let runs = [x, a, b];
            let classes: Vec<RunClass> = runs.iter().map(|&r| Self::classify(atoms, r)).collect();
            if classes.contains(&RunClass::Numeric) {
                for (r, c) in runs.iter().zip(&classes) {
                    if *c == RunClass::Text {
                        self.wrap_run(atoms, *r);
                    }
                }
            }
        }
        // Numeric literals stored into TEXT columns keep MySQL's spelling.
        for k in 0..atoms.len() {
            let is_values = matches!(&atoms[k].kind, AtomKind::Kw(w) if w == "VALUES" || w == "VALUE");
            if is_values {
                let mut j = k + 1;
                while let Some(a) = atoms.get(j) {
                    match a.prim() {
                        Some(Prim::Group { .. }) => self.stringify_tuple(a.s, a.e),
                        _ if a.kind == AtomKind::Comma => {}
                        _ => break,
                    }
                    j += 1;
                }
            }
            if assign[k] {
                if let Some(v) = atoms.get(k + 1) {
                    let single = atoms.get(k + 2).is_none_or(|n| !matches!(n.kind, AtomKind::Arith(_)));
                    if single && v.prim() == Some(Prim::Num) {
                        self.stringify_literal(v.s, v.e);
                    } else if !single {
                        // an arithmetic value stored into a TEXT column is written as MySQL writes
                        // a number (`18`, not SQLite's `18.0`)
                        let end = (k + 1..atoms.len())
                            .take_while(|&j| {
                                !matches!(&atoms[j].kind, AtomKind::Comma)
                                    && !matches!(&atoms[j].kind, AtomKind::Kw(w) if matches!(w.as_str(), "WHERE" | "ORDER" | "LIMIT"))
                            })
                            .last()
                            .unwrap_or(k + 1);
                        let (s, e) = (atoms[k + 1].s, atoms[end].e);
                        self.tks[s].pre = format!("mysql_store( {}", self.tks[s].pre);
                        self.tks[e].post.push_str(" )");
                    }
                }
            }
        }
    }

    fn compare(&mut self, atoms: &mut [Atom], l: (usize, usize), r: (usize, usize)) {
        let lc = Self::classify(atoms, l);
        let rc = Self::classify(atoms, r);
        match (lc, rc) {
            (RunClass::Numeric, RunClass::Text) => self.wrap_run(atoms, r),
            (RunClass::Text, RunClass::Numeric) => self.wrap_run(atoms, l),
            (RunClass::Text, RunClass::Text) => {
                for run in [l, r] {
                    if run.0 == run.1 && atoms[run.0].prim() == Some(Prim::Str) && atoms[run.0].s == atoms[run.0].e {
                        let e = atoms[run.0].e;
                        self.tks[e].post.push_str(" COLLATE mysql_ci");
                    }
                }
            }
            _ => {}
        }
    }

    /// `VALUES (10, -2.50, 'x')`: numeric literal items become the strings MySQL would store.
    fn stringify_tuple(&mut self, open: usize, close: usize) {
        let mut item: Vec<usize> = Vec::new();
        let mut depth = 0usize;
        let mut items: Vec<Vec<usize>> = Vec::new();
        for j in open + 1..close {
            let k = self.tks[j].tok.kind;
            match k {
                TokKind::LParen => depth += 1,
                TokKind::RParen => depth = depth.saturating_sub(1),
                _ => {}
            }
            if self.tks[j].removed {
                continue;
            }
            if depth == 0 && k == TokKind::Comma {
                items.push(std::mem::take(&mut item));
            } else {
                item.push(j);
            }
        }
        items.push(item);
        for it in items {
            match it.as_slice() {
                [a] if self.tks[*a].tok.kind == TokKind::Number => self.stringify_literal(*a, *a),
                [s, a]
                    if self.tks[*a].tok.kind == TokKind::Number
                        && matches!(self.tks[*s].tok.value.as_str(), "-" | "+")
                        && self.tks[*s].tok.kind == TokKind::Op =>
                {
                    self.stringify_literal(*s, *a)
                }
                _ => {}
            }
        }
    }

    /// Replace the literal spanning tokens `s..=e` (an optional sign and a number).
    fn stringify_literal(&mut self, s: usize, e: usize) {
        let neg = s != e && self.tks[s].tok.value == "-";
        let text = mysql_number_literal_text(neg, &self.tks[e].tok.value);
        for j in s..e {
            self.tks[j].remove();
        }
        self.tks[e].out = squote(&text);
    }
}

/// How MySQL turns a numeric literal into a string (what a TEXT column stores for `VALUES (1.50)`).
pub fn mysql_number_literal_text(neg: bool, lit: &str) -> String {
    let sign = |zero: bool| if neg && !zero { "-" } else { "" };
    if lit.contains(['e', 'E']) {
        let v: f64 = lit.parse().unwrap_or(0.0);
        return super::functions::mysql_double_to_string(if neg { -v } else { v });
    }
    let (int, frac) = match lit.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (lit, None),
    };
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    match frac {
        Some(f) if !f.is_empty() => {
            let zero = int == "0" && f.chars().all(|c| c == '0');
            format!("{}{int}.{f}", sign(zero))
        }
        _ => format!("{}{int}", sign(int == "0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_spelling() {
        assert_eq!(mysql_number_literal_text(false, ".50"), "0.50");
        assert_eq!(mysql_number_literal_text(true, "0"), "0");
        assert_eq!(mysql_number_literal_text(true, "2.50"), "-2.50");
        assert_eq!(mysql_number_literal_text(false, "007"), "7");
        assert_eq!(mysql_number_literal_text(false, "5."), "5");
        assert_eq!(mysql_number_literal_text(false, "1e3"), "1000");
    }
}
