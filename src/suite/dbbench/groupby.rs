//! MySQL 8's `ONLY_FULL_GROUP_BY` (on by default, and on in AgentBench's `mysql:8` container),
//! which SQLite does not have: `SELECT Name, MAX(Area) FROM t` is an error there, not the row with
//! the largest area.
//!
//! The check is deliberately conservative: it only reports a query when it is sure, i.e. an
//! aggregated SELECT (aggregate functions, or GROUP BY) whose select list names a column of a
//! base table outside any aggregate, that is not grouped (by name, by position or by alias, or as
//! the same expression) and not fixed by a `col = constant` conjunct in WHERE (MySQL's functional
//! dependence). Anything it cannot resolve (derived tables, unknown columns) is left alone.

use std::collections::{HashMap, HashSet};

use super::sqltext::{lex, matching_paren, TokKind, Token};
use super::value::SqlError;
use super::words::is_keyword;

const AGGREGATES: &[&str] = &[
    "AVG",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
    "COUNT",
    "GROUP_CONCAT",
    "JSON_ARRAYAGG",
    "JSON_OBJECTAGG",
    "MAX",
    "MIN",
    "STD",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "SUM",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
    "ANY_VALUE",
];

const CLAUSES: &[&str] = &["FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "WINDOW", "INTO", "FOR", "UNION", "INTERSECT", "EXCEPT", "LOCK"];

/// A column reference: optional qualifier and name.
type ColRef = (Option<String>, String);

fn depth_at(toks: &[Token]) -> Vec<i32> {
    let mut d = 0;
    toks.iter()
        .map(|t| {
            let here = if t.kind == TokKind::RParen { d - 1 } else { d };
            match t.kind {
                TokKind::LParen => d += 1,
                TokKind::RParen => d -= 1,
                _ => {}
            }
            here
        })
        .collect()
}

/// Column references in `toks[lo..hi]` outside aggregates and subqueries. Returns `None` when the
/// item uses something the check does not model (a window function).
fn column_refs(toks: &[Token], lo: usize, hi: usize) -> Option<Vec<ColRef>> {
    let mut out = Vec::new();
    let mut i = lo;
    while i < hi {
        let t = &toks[i];
        let next = toks.get(i + 1);
        if t.kind == TokKind::LParen {
            // A subquery has its own level.
            if toks.get(i + 1).is_some_and(|n| n.is_kw("SELECT") || n.is_kw("WITH")) {
                i = matching_paren(toks, i).map_or(hi, |c| c + 1);
                continue;
            }
            i += 1;
            continue;
        }
        if t.kind == TokKind::Word && next.is_some_and(|n| n.kind == TokKind::LParen) {
            let up = t.value.to_ascii_uppercase();
            let close = matching_paren(toks, i + 1).unwrap_or(hi);
            if toks.get(close + 1).is_some_and(|n| n.is_kw("OVER")) {
                return None;
            }
            if AGGREGATES.contains(&up.as_str()) {
                i = close + 1;
                continue;
            }
            if up == "CAST" || up == "CONVERT" {
                // Only the expression part: not the type after AS / the comma.
                let mut depth = 0;
                let mut end = close;
                for (j, x) in toks.iter().enumerate().take(close).skip(i + 2) {
                    match x.kind {
                        TokKind::LParen => depth += 1,
                        TokKind::RParen => depth -= 1,
                        _ if depth == 0 && (x.is_kw("AS") || x.kind == TokKind::Comma || x.is_kw("USING")) => {
                            end = j;
                            break;
                        }
                        _ => {}
                    }
                }
                out.extend(column_refs(toks, i + 2, end)?);
                i = close + 1;
                continue;
            }
            i += 2;
            continue;
        }
        let is_col = match t.kind {
            TokKind::QuotedIdent => true,
            TokKind::Word => !is_keyword(&t.value.to_ascii_uppercase()) && !t.value.eq_ignore_ascii_case("INTERVAL"),
            _ => false,
        };
        if !is_col {
            i += 1;
            continue;
        }
        // `a.b` / `db.a.b`.
        let mut parts = vec![t.value.clone()];
        let mut j = i;
        while toks.get(j + 1).is_some_and(|d| d.kind == TokKind::Dot) && toks.get(j + 2).is_some_and(|n| n.is_ident()) {
            parts.push(toks[j + 2].value.clone());
            j += 2;
        }
        if toks.get(j + 1).is_some_and(|d| d.kind == TokKind::Dot) {
            // `t.*`
            i = j + 3;
            continue;
        }
        let col = parts.pop().unwrap_or_default();
        out.push((parts.pop(), col));
        i = j + 1;
    }
    Some(out)
}

/// Split `lo..hi` at commas of depth `d`.
fn split_commas(toks: &[Token], depth: &[i32], lo: usize, hi: usize, d: i32) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut s = lo;
    for i in lo..hi {
        if toks[i].kind == TokKind::Comma && depth[i] == d {
            out.push((s, i));
            s = i + 1;
        }
    }
    if s < hi {
        out.push((s, hi));
    }
    out
}

/// The alias at the end of a select item, and where the expression ends.
fn strip_alias(toks: &[Token], lo: usize, hi: usize) -> (usize, Option<String>) {
    if hi >= lo + 2 && toks[hi - 1].is_ident() && toks[hi - 2].is_kw("AS") {
        return (hi - 2, Some(toks[hi - 1].value.clone()));
    }
    if hi >= lo + 2 && toks[hi - 1].kind == TokKind::Str && toks[hi - 2].is_kw("AS") {
        return (hi - 2, Some(toks[hi - 1].value.clone()));
    }
    if hi >= lo + 2 {
        let last = &toks[hi - 1];
        let prev = &toks[hi - 2];
        let last_is_name = last.kind == TokKind::QuotedIdent || (last.kind == TokKind::Word && !is_keyword(&last.value.to_ascii_uppercase()));
        let prev_ends_expr = matches!(prev.kind, TokKind::RParen | TokKind::Number | TokKind::Str | TokKind::QuotedIdent)
            || (prev.kind == TokKind::Word && !is_keyword(&prev.value.to_ascii_uppercase()))
            || prev.is_kw("END")
            || prev.is_kw("NULL");
        if last_is_name && prev_ends_expr {
            return (hi - 1, Some(last.value.clone()));
        }
    }
    (hi, None)
}

fn norm(toks: &[Token], lo: usize, hi: usize) -> String {
    toks[lo..hi].iter().map(|t| if t.is_ident() { t.value.to_lowercase() } else { t.value.clone() }).collect::<Vec<_>>().join(" ")
}

/// The ONLY_FULL_GROUP_BY error MySQL 8 would report for `src`, if any. `tables` is the schema:
/// table names and their columns.
pub fn only_full_group_by_error(src: &str, tables: &[(String, Vec<String>)]) -> Option<SqlError> {
    let toks = lex(src).ok()?;
    let depth = depth_at(&toks);
    for (s, t) in toks.iter().enumerate() {
        if !t.is_kw("SELECT") {
            continue;
        }
        if let Some(e) = check_select(&toks, &depth, s, tables) {
            return Some(e);
        }
    }
    None
}

/// The extent of the SELECT at `s` (the token after its last one) and where each of its clauses
/// starts, at the SELECT's own depth.
fn clauses<'t>(toks: &[Token], depth: &[i32], s: usize) -> (usize, HashMap<&'t str, usize>) {
    let d = depth[s];
    let n = toks.len();
    let mut end = n;
    let mut clause_at: HashMap<&'t str, usize> = HashMap::new();
    for i in s + 1..n {
        if depth[i] < d {
            end = i;
            break;
        }
        if depth[i] == d {
            if let Some(up) = toks[i].upper() {
                if let Some(c) = CLAUSES.iter().find(|c| **c == up) {
                    if matches!(*c, "UNION" | "INTERSECT" | "EXCEPT") {
                        end = i;
                        break;
                    }
                    clause_at.entry(c).or_insert(i);
                }
            }
        }
    }
    (end, clause_at)
}

/// The tables a FROM clause (tokens `from..from_end` at depth `d`) reads, each with its alias
/// (`(table, alias)`), and whether it also reads a derived table (a subquery).
fn from_sources(toks: &[Token], depth: &[i32], d: i32, from: usize, from_end: usize) -> (Vec<(String, Option<String>)>, bool) {
    let mut sources: Vec<(String, Option<String>)> = Vec::new();
    let mut derived = false;
    let mut i = from + 1;
    let mut expect_table = true;
    while i < from_end {
        let t = &toks[i];
        if depth[i] > d {
            i += 1;
            continue;
        }
        if t.kind == TokKind::LParen && depth[i] == d {
            derived = true;
            i = matching_paren(toks, i).map_or(from_end, |c| c + 1);
            expect_table = false;
            continue;
        }
        if t.kind == TokKind::Comma || t.is_kw("JOIN") {
            expect_table = true;
            i += 1;
            continue;
        }
        if t.is_kw("ON") || t.is_kw("USING") {
            expect_table = false;
        }
        if expect_table && t.is_ident() && !(t.kind == TokKind::Word && is_keyword(&t.value.to_ascii_uppercase())) {
            let mut name = t.value.clone();
            let mut j = i;
            if toks.get(i + 1).is_some_and(|x| x.kind == TokKind::Dot) && toks.get(i + 2).is_some_and(|x| x.is_ident()) {
                name = toks[i + 2].value.clone();
                j = i + 2;
            }
            let mut alias = None;
            let mut k = j + 1;
            if toks.get(k).is_some_and(|x| x.is_kw("AS")) {
                k += 1;
            }
            if let Some(a) =
                toks.get(k).filter(|x| k < from_end && x.is_ident() && !(x.kind == TokKind::Word && is_keyword(&x.value.to_ascii_uppercase())))
            {
                alias = Some(a.value.clone());
                j = k;
            }
            sources.push((name, alias));
            expect_table = false;
            i = j + 1;
            continue;
        }
        i += 1;
    }
    (sources, derived)
}

fn check_select(toks: &[Token], depth: &[i32], s: usize, tables: &[(String, Vec<String>)]) -> Option<SqlError> {
    let d = depth[s];
    let (end, clause_at) = clauses(toks, depth, s);
    let clause_end = |start: usize| -> usize { clause_at.values().copied().filter(|&c| c > start).min().unwrap_or(end).min(end) };
    let mut list_start = s + 1;
    while list_start < end && (toks[list_start].is_kw("DISTINCT") || toks[list_start].is_kw("ALL") || toks[list_start].is_kw("DISTINCTROW")) {
        list_start += 1;
    }
    let list_end = clause_end(s);
    let items = split_commas(toks, depth, list_start, list_end, d);

    // Aggregated?
    let has_group = clause_at.contains_key("GROUP");
    let aggregate_here = |lo: usize, hi: usize| {
        (lo..hi).any(|i| {
            depth[i] == d
                && toks[i].kind == TokKind::Word
                && AGGREGATES.contains(&toks[i].value.to_ascii_uppercase().as_str())
                && toks.get(i + 1).is_some_and(|x| x.kind == TokKind::LParen)
                && matching_paren(toks, i + 1).is_some_and(|c| !toks.get(c + 1).is_some_and(|x| x.is_kw("OVER")))
        })
    };
    let mut aggregated = has_group || aggregate_here(list_start, list_end);
    if let Some(&h) = clause_at.get("HAVING") {
        aggregated |= aggregate_here(h, clause_end(h));
    }
    if !aggregated {
        return None;
    }

    // FROM: tables and aliases.
    let from = clause_at.get("FROM").copied()?;
    let (sources, derived) = from_sources(toks, depth, d, from, clause_end(from));
    let resolve = |(q, c): &ColRef| -> Option<(String, String)> {
        let cands: Vec<&(String, Option<String>)> = match q {
            Some(q) => sources.iter().filter(|(t, a)| a.as_deref() == Some(q.as_str()) || (a.is_none() && t == q)).collect(),
            None => {
                if derived {
                    return None;
                }
                sources.iter().collect()
            }
        };
        for (t, _) in cands {
            let (tname, cols) = tables.iter().find(|(n, _)| n == t)?;
            if let Some(col) = cols.iter().find(|x| x.eq_ignore_ascii_case(c)) {
                return Some((tname.clone(), col.clone()));
            }
        }
        None
    };

    // Columns fixed by WHERE col = constant (only when WHERE is a pure conjunction).
    let mut fixed: HashSet<String> = HashSet::new();
    if let Some(&w) = clause_at.get("WHERE") {
        let we = clause_end(w);
        let has_or = (w + 1..we).any(|i| depth[i] == d && (toks[i].is_kw("OR") || toks[i].value == "||" || toks[i].is_kw("XOR")));
        if !has_or {
            for i in w + 1..we {
                if depth[i] != d || toks[i].value != "=" || toks[i].kind != TokKind::Op {
                    continue;
                }
                let lit = |t: &Token| matches!(t.kind, TokKind::Str | TokKind::Number | TokKind::Hex);
                if i > 0 && toks[i - 1].is_ident() && toks.get(i + 1).is_some_and(lit) {
                    fixed.insert(toks[i - 1].value.to_lowercase());
                }
                if i > 0 && lit(&toks[i - 1]) && toks.get(i + 1).is_some_and(|t| t.is_ident()) {
                    fixed.insert(toks[i + 1].value.to_lowercase());
                }
            }
        }
    }

    // Select items, their aliases and columns.
    let mut parsed = Vec::new();
    for &(lo, hi) in &items {
        let (ehi, alias) = strip_alias(toks, lo, hi);
        let refs = column_refs(toks, lo, ehi)?;
        parsed.push((lo, ehi, alias, refs));
    }

    // GROUP BY items: names, positions, aliases, expressions.
    let mut grouped_cols: HashSet<String> = HashSet::new();
    let mut grouped_items: HashSet<usize> = HashSet::new();
    if let Some(&g) = clause_at.get("GROUP") {
        let gstart = if toks.get(g + 1).is_some_and(|x| x.is_kw("BY")) { g + 2 } else { g + 1 };
        let gend = clause_end(g);
        for (lo, hi) in split_commas(toks, depth, gstart, gend, d) {
            let mut hi2 = hi;
            while hi2 > lo
                && (toks[hi2 - 1].is_kw("ASC") || toks[hi2 - 1].is_kw("DESC") || toks[hi2 - 1].is_kw("ROLLUP") || toks[hi2 - 1].is_kw("WITH"))
            {
                hi2 -= 1;
            }
            if hi2 == lo + 1 && toks[lo].kind == TokKind::Number {
                if let Ok(k) = toks[lo].value.parse::<usize>() {
                    if k >= 1 && k <= parsed.len() {
                        grouped_items.insert(k - 1);
                    }
                }
                continue;
            }
            if hi2 == lo + 1 && toks[lo].is_ident() {
                if let Some(k) = parsed.iter().position(|p| p.2.as_deref().is_some_and(|a| a.eq_ignore_ascii_case(&toks[lo].value))) {
                    grouped_items.insert(k);
                }
            }
            let text = norm(toks, lo, hi2);
            for (k, p) in parsed.iter().enumerate() {
                if norm(toks, p.0, p.1) == text {
                    grouped_items.insert(k);
                }
            }
            for (_, c) in column_refs(toks, lo, hi2)? {
                grouped_cols.insert(c.to_lowercase());
            }
        }
    }

    for (k, (_, _, _, refs)) in parsed.iter().enumerate() {
        if grouped_items.contains(&k) {
            continue;
        }
        for r in refs {
            let c = r.1.to_lowercase();
            if grouped_cols.contains(&c) || fixed.contains(&c) {
                continue;
            }
            let Some((table, col)) = resolve(r) else { continue };
            let what = format!("dbbench.{table}.{col}");
            return Some(if has_group {
                SqlError::new(
                    1055,
                    "42000",
                    format!(
                        "Expression #{} of SELECT list is not in GROUP BY clause and contains nonaggregated column '{what}' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by",
                        k + 1
                    ),
                )
            } else {
                SqlError::new(
                    1140,
                    "42000",
                    format!(
                        "In aggregated query without GROUP BY, expression #{} of SELECT list contains nonaggregated column '{what}'; this is incompatible with sql_mode=only_full_group_by",
                        k + 1
                    ),
                )
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Vec<(String, Vec<String>)> {
        vec![("t".into(), vec!["Name".into(), "Area".into(), "Year".into()]), ("u".into(), vec!["Name".into(), "Pop".into()])]
    }

    fn check(sql: &str) -> Option<u32> {
        only_full_group_by_error(sql, &schema()).map(|e| e.errno)
    }

    #[test]
    fn rejects_bare_columns_with_aggregates() {
        assert_eq!(check("SELECT Name, MAX(Area) FROM t"), Some(1140));
        let e = only_full_group_by_error("SELECT Name, MAX(Area) FROM t", &schema()).unwrap();
        assert_eq!(
            e.message,
            "In aggregated query without GROUP BY, expression #1 of SELECT list contains nonaggregated column 'dbbench.t.Name'; this is incompatible with sql_mode=only_full_group_by"
        );
        assert_eq!(check("SELECT Name, Year, COUNT(*) FROM t GROUP BY Name"), Some(1055));
        assert_eq!(check("SELECT x.Name, SUM(x.Area) FROM t AS x"), Some(1140));
        assert_eq!(check("SELECT ROUND(Area), COUNT(*) FROM t"), Some(1140));
    }

    #[test]
    fn accepts_valid_grouping() {
        assert_eq!(check("SELECT MAX(Area) FROM t"), None);
        assert_eq!(check("SELECT Name, MAX(Area) FROM t GROUP BY Name"), None);
        assert_eq!(check("SELECT `Name` AS n, COUNT(*) c FROM t GROUP BY n"), None);
        assert_eq!(check("SELECT Name, COUNT(*) FROM t GROUP BY 1"), None);
        assert_eq!(check("SELECT UPPER(Name), COUNT(*) FROM t GROUP BY UPPER(Name)"), None);
        assert_eq!(check("SELECT Name, COUNT(*) FROM t WHERE Name = 'Giza'"), None);
        assert_eq!(check("SELECT Name, Area FROM t ORDER BY Area DESC LIMIT 1"), None);
        assert_eq!(check("SELECT Name FROM t WHERE Area = (SELECT MAX(Area) FROM t)"), None);
        assert_eq!(check("SELECT Name, (SELECT COUNT(*) FROM u) FROM t"), None);
        assert_eq!(check("SELECT Name, COUNT(*) OVER () FROM t"), None);
        assert_eq!(check("SELECT d.Name, MAX(d.Area) FROM (SELECT * FROM t) d"), None);
        assert_eq!(check("SELECT CAST(MAX(Area) AS SIGNED) FROM t"), None);
        assert_eq!(check("SELECT Nope, COUNT(*) FROM t"), None);
        assert_eq!(check("SELECT COUNT(*), 'x' AS label FROM t"), None);
        assert_eq!(check("SELECT CASE WHEN COUNT(*) > 1 THEN 'many' ELSE 'one' END FROM t"), None);
    }
}
