//! What DBBench offers harness hooks: the `quote_identifiers` rewrite and the
//! `unquoted_identifier` / `cast_needed` action predicates.
//!
//! They read only the proposed action and what the environment makes discoverable through
//! [`Environment::resource`] (`tables`, `numeric_columns`), never the task payload.

use serde_json::Value;

use super::sqltext::{backquote, is_mysql_reserved, lex, matching_paren, needs_backquotes, reserved_word_misuse, TokKind, Token};
use crate::suite::{Action, Environment};

/// The SQL of an `execute_sql` action and the argument key it came from.
pub fn sql_of(action: &Action) -> Option<(String, String)> {
    if action.name != "execute_sql" {
        return None;
    }
    let obj = action.arguments.as_object()?;
    let (k, v) = obj.get_key_value("query").or_else(|| obj.iter().next())?;
    Some((k.clone(), v.as_str()?.to_string()))
}

/// Tables and their columns as the environment's `tables` resource lists them.
fn tables_of(env: &dyn Environment) -> Vec<(String, Vec<String>)> {
    let Some(text) = env.resource("tables") else { return Vec::new() };
    let Ok(Value::Array(ts)) = serde_json::from_str::<Value>(&text) else { return Vec::new() };
    ts.iter()
        .filter_map(|t| {
            let name = t.get("name")?.as_str()?.to_string();
            let cols = t.get("columns")?.as_array()?.iter().filter_map(|c| c.as_str().map(str::to_string)).collect();
            Some((name, cols))
        })
        .collect()
}

fn tok_eq(a: &Token, b: &Token) -> bool {
    a.kind == b.kind
        && match a.kind {
            TokKind::Word => a.value.to_lowercase() == b.value.to_lowercase(),
            _ => a.value == b.value,
        }
}

struct Candidate {
    name: String,
    toks: Vec<Token>,
    is_table: bool,
}

/// Backquote, in `sql`, every unquoted mention of one of the names that MySQL needs quoted
/// (spaces, punctuation, reserved words). `tables` lists table names, `columns` column names.
/// `None` if nothing changes.
pub fn quote_names(sql: &str, tables: &[String], columns: &[String]) -> Option<String> {
    let toks = lex(sql).ok()?;
    let mut cands: Vec<Candidate> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (name, is_table) in tables.iter().map(|t| (t, true)).chain(columns.iter().map(|c| (c, false))) {
        if name.is_empty() || !needs_backquotes(name) || !seen.insert(name.to_lowercase()) {
            continue;
        }
        if name.contains('#') || name.contains("--") || name.contains("/*") || name.contains('`') {
            continue;
        }
        let Ok(nt) = lex(name) else { continue };
        if nt.is_empty() || nt.iter().any(|t| matches!(t.kind, TokKind::Str | TokKind::QuotedIdent | TokKind::Hex)) {
            continue;
        }
        if nt.len() == 1 && !(nt[0].kind == TokKind::Word && is_mysql_reserved(&nt[0].value)) {
            continue;
        }
        cands.push(Candidate { name: name.clone(), toks: nt, is_table });
    }
    if cands.is_empty() {
        return None;
    }
    cands.sort_by_key(|c| std::cmp::Reverse(c.toks.len()));
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if matches!(toks[i].kind, TokKind::Str | TokKind::QuotedIdent | TokKind::Hex) {
            i += 1;
            continue;
        }
        let mut advanced = false;
        for c in &cands {
            let n = c.toks.len();
            if i + n > toks.len() || !(0..n).all(|j| tok_eq(&toks[i + j], &c.toks[j])) {
                continue;
            }
            if n == 1 && !single_word_needs_quotes(&toks, i, c.is_table) {
                continue;
            }
            edits.push((toks[i].start, toks[i + n - 1].end, backquote(&c.name)));
            i += n;
            advanced = true;
            break;
        }
        if !advanced {
            i += 1;
        }
    }
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + 2 * edits.len());
    let mut pos = 0;
    for (s, e, rep) in edits {
        out.push_str(&sql[pos..s]);
        out.push_str(&rep);
        pos = e;
    }
    out.push_str(&sql[pos..]);
    (out != sql).then_some(out)
}

/// A one-word reserved name at `i`: quote it only where MySQL would reject it as a bare name.
fn single_word_needs_quotes(toks: &[Token], i: usize, is_table: bool) -> bool {
    if reserved_word_misuse(toks, i) {
        return true;
    }
    let prev = if i > 0 { toks.get(i - 1) } else { None };
    let next = toks.get(i + 1);
    if is_table && prev.is_some_and(|p| ["FROM", "JOIN", "INTO", "UPDATE", "TABLE", "DESCRIBE", "DESC"].iter().any(|k| p.is_kw(k))) {
        return true;
    }
    // ORDER / GROUP used as a column name (not followed by BY).
    let up = toks[i].value.to_ascii_uppercase();
    if (up == "ORDER" || up == "GROUP") && !next.is_some_and(|n| n.is_kw("BY")) {
        return prev.is_none_or(|p| p.kind != TokKind::Dot);
    }
    false
}

/// `quote_identifiers`: the action with every unquoted name needing backquotes quoted.
pub fn quote_identifiers(action: &Action, env: &dyn Environment) -> Option<Action> {
    let (key, sql) = sql_of(action)?;
    let tables = tables_of(env);
    let names: Vec<String> = tables.iter().map(|(n, _)| n.clone()).collect();
    let cols: Vec<String> = tables.iter().flat_map(|(_, c)| c.iter().cloned()).collect();
    let new_sql = quote_names(&sql, &names, &cols)?;
    let mut out = action.clone();
    if let Some(obj) = out.arguments.as_object_mut() {
        obj.insert(key, Value::String(new_sql));
    }
    Some(out)
}

/// `unquoted_identifier`: the SQL mentions a name needing backquotes without them.
pub fn unquoted_identifier(action: &Action, env: &dyn Environment) -> bool {
    quote_identifiers(action, env).is_some()
}

/// Does a column of text values hold numbers MySQL's implicit conversion gets wrong? Returns
/// `(numeric, misconverted)`: `numeric` if at least half the non-empty values are numbers once
/// formatting is removed; `misconverted` if, in addition, some value converts to a different
/// number under MySQL's prefix rule (`'5,200'` is 5, `'£8.5m'` is 0). Trailing units or `%` alone
/// do not make a column misconverted: MySQL reads `'99.8%'` as 99.8.
pub fn profile_values(values: &[String]) -> (bool, bool) {
    let mut nonempty = 0usize;
    let mut numeric = 0usize;
    let mut wrong = false;
    for v in values {
        let t = v.trim();
        if t.is_empty() || t.eq_ignore_ascii_case("none") || t == "-" || t == "—" || t.eq_ignore_ascii_case("n/a") {
            continue;
        }
        nonempty += 1;
        let Some(clean) = cleaned_number(t) else { continue };
        numeric += 1;
        let naive = super::functions::mysql_str_to_double(t);
        if (naive - clean).abs() > 1e-9 * clean.abs().max(1.0) {
            wrong = true;
        }
    }
    let is_numeric = nonempty > 0 && numeric * 2 >= nonempty;
    (is_numeric, is_numeric && wrong)
}

/// The number a person reads in a formatted value: currency prefixes and thousands separators
/// removed, the leading number taken (`'£8.5m'` is 8.5, `'5,200 km'` is 5200).
fn cleaned_number(s: &str) -> Option<f64> {
    let mut t = s.trim();
    for p in ["US$", "A$", "C$", "NZ$", "HK$", "R$", "Rs.", "Rs"] {
        if let Some(r) = t.strip_prefix(p) {
            t = r.trim_start();
            break;
        }
    }
    let t = t.trim_start_matches(|c: char| "$£€¥₹~≈ ".contains(c));
    let mut num = String::new();
    let mut seen_digit = false;
    let mut chars = t.chars().peekable();
    if let Some(&c) = chars.peek() {
        if c == '-' || c == '−' {
            num.push('-');
            chars.next();
        }
    }
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() {
            num.push(c);
            seen_digit = true;
        } else if c == ',' && seen_digit {
            // A thousands separator only if three digits follow.
            let rest: String = chars.clone().skip(1).take(4).collect();
            let digits = rest.chars().take_while(|d| d.is_ascii_digit()).count();
            if digits != 3 {
                break;
            }
        } else if c == '.' {
            num.push(c);
        } else {
            break;
        }
        chars.next();
    }
    if !seen_digit {
        return None;
    }
    num.trim_end_matches('.').parse().ok()
}

/// Numeric-text columns (name, misconverted) from the environment's `numeric_columns` resource.
fn numeric_columns(env: &dyn Environment) -> Vec<(String, bool)> {
    let Some(text) = env.resource("numeric_columns") else { return Vec::new() };
    let Ok(Value::Array(cols)) = serde_json::from_str::<Value>(&text) else { return Vec::new() };
    cols.iter().filter_map(|c| Some((c.get("name")?.as_str()?.to_string(), c.get("misconverted")?.as_bool()?))).collect()
}

/// The column an identifier chain at `i..=j` names (its last part).
fn ident_chain(toks: &[Token], i: usize, end: usize) -> Option<String> {
    let mut k = i;
    let mut last = None;
    while k <= end {
        let t = toks.get(k)?;
        if !t.is_ident() {
            return None;
        }
        last = Some(t.value.clone());
        k += 1;
        if k <= end {
            if toks[k].kind != TokKind::Dot {
                return None;
            }
            k += 1;
        }
    }
    last
}

/// `cast_needed` on SQL text: an aggregate (SUM/AVG over a misconverted column, MIN/MAX over any
/// numeric-text column, which MySQL compares as strings) or a numeric comparison of a
/// misconverted column, with the bare column as the operand (no REPLACE/CAST around it).
pub fn cast_needed_sql(sql: &str, cols: &[(String, bool)]) -> bool {
    let Ok(toks) = lex(sql) else { return false };
    let lookup = |name: &str| cols.iter().find(|(c, _)| c.eq_ignore_ascii_case(name)).map(|(_, m)| *m);
    for i in 0..toks.len() {
        let t = &toks[i];
        if let Some(up) = t.upper() {
            if matches!(up.as_str(), "SUM" | "AVG" | "MIN" | "MAX") && toks.get(i + 1).is_some_and(|n| n.kind == TokKind::LParen) {
                let Some(close) = matching_paren(&toks, i + 1) else { continue };
                let mut s = i + 2;
                if toks.get(s).is_some_and(|x| x.is_kw("DISTINCT")) {
                    s += 1;
                }
                if s >= close {
                    continue;
                }
                if let Some(col) = ident_chain(&toks, s, close - 1) {
                    match (up.as_str(), lookup(&col)) {
                        ("SUM" | "AVG", Some(true)) => return true,
                        ("MIN" | "MAX", Some(_)) => return true,
                        _ => {}
                    }
                }
            }
        }
        if t.kind == TokKind::Op && matches!(t.value.as_str(), "<" | ">" | "<=" | ">=" | "=" | "!=" | "<>") && i > 0 {
            let num_right = toks.get(i + 1).is_some_and(|n| n.kind == TokKind::Number)
                || (toks.get(i + 1).is_some_and(|n| n.value == "-") && toks.get(i + 2).is_some_and(|n| n.kind == TokKind::Number));
            let left_col = toks[i - 1].is_ident() && lookup(&toks[i - 1].value) == Some(true);
            let right_col = toks.get(i + 1).is_some_and(|n| n.is_ident() && lookup(&n.value) == Some(true));
            let num_left = toks[i - 1].kind == TokKind::Number;
            if (left_col && num_right) || (right_col && num_left) {
                return true;
            }
        }
    }
    false
}

/// `cast_needed`: see [`cast_needed_sql`].
pub fn cast_needed(action: &Action, env: &dyn Environment) -> bool {
    let Some((_, sql)) = sql_of(action) else { return false };
    let cols = numeric_columns(env);
    !cols.is_empty() && cast_needed_sql(&sql, &cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn quoting() {
        let tables = s(&["Football Matches"]);
        let cols = s(&["Home team", "Home team score", "Rank", "Area (km²)", "Name", "W-L-T"]);
        assert_eq!(
            quote_names("SELECT Home team score, Rank FROM Football Matches WHERE Home team = 'x'", &tables, &cols).unwrap(),
            "SELECT `Home team score`, `Rank` FROM `Football Matches` WHERE `Home team` = 'x'"
        );
        assert_eq!(quote_names("SELECT `Rank`, Name FROM `Football Matches`", &tables, &cols), None);
        assert_eq!(quote_names("SELECT RANK() OVER (ORDER BY x) FROM t", &tables, &cols), None);
        assert_eq!(quote_names("SELECT * FROM t WHERE Name = 'Home team'", &tables, &cols), None);
        assert_eq!(
            quote_names("SELECT Area (km²) FROM t WHERE W-L-T = '5-1'", &tables, &cols).unwrap(),
            "SELECT `Area (km²)` FROM t WHERE `W-L-T` = '5-1'"
        );
        assert_eq!(quote_names("SELECT a FROM table", &s(&["table"]), &[]).unwrap(), "SELECT a FROM `table`");
    }

    #[test]
    fn profiles() {
        assert_eq!(profile_values(&s(&["5,200", "12", "1,429"])), (true, true));
        assert_eq!(profile_values(&s(&["99.8%", "50%"])), (true, false));
        assert_eq!(profile_values(&s(&["£8.5m", "£1m"])), (true, true));
        assert_eq!(profile_values(&s(&["Giza", "Cairo"])), (false, false));
        assert_eq!(profile_values(&s(&["12", "7"])), (true, false));
    }

    #[test]
    fn casts() {
        let cols = vec![("Attendance".to_string(), true), ("Year".to_string(), false)];
        assert!(cast_needed_sql("SELECT SUM(Attendance) FROM t", &cols));
        assert!(cast_needed_sql("SELECT Name FROM t WHERE Attendance > 5000", &cols));
        assert!(cast_needed_sql("SELECT MAX(`Year`) FROM t", &cols));
        assert!(!cast_needed_sql("SELECT SUM(REPLACE(Attendance, ',', '')) FROM t", &cols));
        assert!(!cast_needed_sql("SELECT SUM(Year) FROM t", &cols));
        assert!(!cast_needed_sql("SELECT Name FROM t WHERE Attendance = '5,000'", &cols));
    }
}
