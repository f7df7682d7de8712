//! AgentBench's `DBResultProcessor` (function-calling DBBench), ported faithfully.
//!
//! `clean_answer` turns a committed answer or a ground truth into a list of normalised strings:
//! `None` is `["0"]`; a string that looks like a MySQL result `[(...,), ...]` gives the values of
//! its one-element tuples; a string list `['a', 'b']` gives its items (parsed by hand when it is
//! not a valid Python literal); anything else is one value, stripped of spaces and quotes. Each
//! value then becomes `"0"` if it is none/null/undefined/nan/inf/infinity/-inf/-infinity/empty,
//! loses a trailing `%`, and loses its commas unless it is bracketed.
//!
//! `compare_results`: mutations compare the cleaned lists for equality; otherwise two single
//! values are equal if both are `"0"`, or both parse as floats within 1e-2, or the strings are
//! equal; lists made only of floats need the same length and a one-to-one match within 1e-2;
//! other lists compare as sets.

use std::collections::HashSet;

use super::pyval::{eval_literal, py_float, py_strip, Py};
use super::record::QueryType;

/// `str(x).strip().strip("'\"")`.
fn strip_quotes(s: &str) -> String {
    py_strip(s).trim_matches(|c| c == '\'' || c == '"').to_string()
}

/// `_normalize_special_values` on a string.
pub fn normalize_value(value: &str) -> String {
    let s = py_strip(value);
    if let Some(head) = s.strip_suffix('%') {
        return py_strip(head).to_string();
    }
    let mut s = s.to_string();
    if s.contains(',') && !s.starts_with('[') && !s.ends_with(']') {
        s = s.replace(',', "");
    }
    match s.to_lowercase().as_str() {
        "none" | "null" | "undefined" | "nan" | "inf" | "infinity" | "-inf" | "-infinity" | "" => "0".into(),
        _ => s,
    }
}

/// The value an item of a list/tuple contributes: `(v,)` gives `v`, anything else itself.
fn item_value(item: &Py) -> String {
    match item {
        Py::Tuple(t) if t.len() == 1 => strip_quotes(&t[0].str()),
        other => strip_quotes(&other.str()),
    }
}

/// `_clean_mysql_result`: values of a result string like `[('a',), (5,)]`.
fn clean_mysql_result(result: &Py) -> Option<Vec<String>> {
    let Py::Str(r) = result else { return None };
    if !(r.starts_with('[') && r.ends_with(']')) {
        return None;
    }
    if let Some(Py::List(items)) = eval_literal(r) {
        if items.iter().all(|i| matches!(i, Py::Tuple(_))) {
            return Some(
                items
                    .iter()
                    .filter_map(|i| match i {
                        Py::Tuple(t) if t.len() == 1 => Some(strip_quotes(&t[0].str())),
                        _ => None,
                    })
                    .collect(),
            );
        }
    }
    let stripped = r.trim_matches(|c| c == '[' || c == ']');
    if stripped.len() >= 3 && stripped.matches('(').count() == 1 && stripped.starts_with('(') && stripped.ends_with(",)") {
        return Some(vec![strip_quotes(&stripped[1..stripped.len() - 2])]);
    }
    None
}

/// `_clean_answer`. `None` stands for Python's `None` result (the scorer then fails the
/// comparison, as `len(None)` raises inside AgentBench's try block).
pub fn clean_answer(answer: &Py) -> Option<Vec<String>> {
    if *answer == Py::None {
        return Some(vec!["0".into()]);
    }
    if let Some(vals) = clean_mysql_result(answer) {
        return Some(vals.iter().map(|v| normalize_value(v)).collect());
    }
    match answer {
        Py::Str(s) => {
            let s = py_strip(s);
            if s.starts_with('[') && s.ends_with(']') {
                match eval_literal(s) {
                    Some(Py::List(items)) => Some(items.iter().map(|i| normalize_value(&item_value(i))).collect()),
                    // eval succeeded but gave something else: the function falls through to None.
                    Some(_) => None,
                    None => Some(manual_split(s)),
                }
            } else {
                Some(vec![normalize_value(&strip_quotes(s))])
            }
        }
        Py::List(items) | Py::Tuple(items) => Some(items.iter().map(|i| normalize_value(&item_value(i))).collect()),
        other => Some(vec![normalize_value(&strip_quotes(&other.str()))]),
    }
}

/// AgentBench's hand parser for bracketed strings `eval` rejects: quotes toggle a flag (and are
/// dropped), commas outside quotes split.
fn manual_split(s: &str) -> Vec<String> {
    let inner: String = {
        let chars: Vec<char> = s.chars().collect();
        chars[1..chars.len().saturating_sub(1).max(1)].iter().collect()
    };
    let mut items = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    for c in inner.chars() {
        if c == '"' || c == '\'' {
            in_quotes = !in_quotes;
        } else if c == ',' && !in_quotes {
            if !current.is_empty() {
                items.push(normalize_value(&strip_quotes(&current)));
                current.clear();
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        items.push(normalize_value(&strip_quotes(&current)));
    }
    items
}

fn is_float(s: &str) -> bool {
    py_float(s).is_some()
}

fn float_equal(a: &str, b: &str) -> bool {
    match (py_float(a), py_float(b)) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-2,
        _ => false,
    }
}

/// `compare_results(answer, ground_truth, query_type)`.
pub fn compare_results(answer: &Py, ground_truth: &Py, query_type: QueryType) -> bool {
    let a = clean_answer(answer);
    let g = clean_answer(ground_truth);
    if query_type.is_mutation() {
        return a == g;
    }
    let (Some(a), Some(g)) = (a, g) else { return false };
    compare_cleaned(&a, &g)
}

/// The select-type comparison on cleaned lists.
pub fn compare_cleaned(a: &[String], g: &[String]) -> bool {
    if a.len() == 1 && g.len() == 1 {
        let (x, y) = (&a[0], &g[0]);
        if x == "0" && y == "0" {
            return true;
        }
        if is_float(x) && is_float(y) {
            return float_equal(x, y);
        }
        return x == y;
    }
    if a.iter().all(|x| is_float(x)) && g.iter().all(|x| is_float(x)) {
        if a.len() != g.len() {
            return false;
        }
        let mut matched = vec![false; g.len()];
        for x in a {
            let Some(i) = (0..g.len()).find(|&i| !matched[i] && float_equal(x, &g[i])) else { return false };
            matched[i] = true;
        }
        return matched.iter().all(|&m| m);
    }
    let sa: HashSet<&String> = a.iter().collect();
    let sg: HashSet<&String> = g.iter().collect();
    sa == sg
}

/// The answer AgentBench takes from a `commit_final_answer` call: `list(arguments.values())[0]`.
/// Argument order is not preserved by JSON objects here, so `answers` is preferred when present.
/// `None` if there is no value (AgentBench would fail the sample).
pub fn committed_answer(arguments: &serde_json::Value) -> Option<Py> {
    let obj = arguments.as_object()?;
    let v = obj.get("answers").or_else(|| obj.values().next())?;
    Some(Py::from_json(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Py {
        Py::Str(x.into())
    }
    fn list(xs: &[&str]) -> Py {
        Py::List(xs.iter().map(|x| s(x)).collect())
    }
    fn clean(p: &Py) -> Vec<String> {
        clean_answer(p).unwrap()
    }

    #[test]
    fn normaliser() {
        assert_eq!(normalize_value(" None "), "0");
        assert_eq!(normalize_value("NULL"), "0");
        assert_eq!(normalize_value("-Infinity"), "0");
        assert_eq!(normalize_value(""), "0");
        assert_eq!(normalize_value("99.8%"), "99.8");
        assert_eq!(normalize_value("1,234,567"), "1234567");
        assert_eq!(normalize_value("[1,2]"), "[1,2]");
        assert_eq!(normalize_value("1,5%"), "1,5");
        assert_eq!(normalize_value("March 19, 1998"), "March 19 1998");
    }

    #[test]
    fn cleaning() {
        assert_eq!(clean(&Py::None), vec!["0"]);
        assert_eq!(clean(&s("[('09aa8fbf72f39362970f95a1276b957c',)]")), vec!["09aa8fbf72f39362970f95a1276b957c"]);
        assert_eq!(clean(&s("[(None,)]")), vec!["0"]);
        assert_eq!(clean(&s("[(2011.0,)]")), vec!["2011.0"]);
        assert_eq!(clean(&s("[('a', 1)]")), Vec::<String>::new());
        assert_eq!(clean(&s("['a', 'b']")), vec!["a", "b"]);
        assert_eq!(clean(&s("[a, 'b c', d]")), vec!["a", "b c", "d"]);
        assert_eq!(clean(&s("  'quoted'  ")), vec!["quoted"]);
        assert_eq!(clean(&list(&["1,000", "x%"])), vec!["1000", "x"]);
        assert_eq!(clean(&Py::List(vec![Py::Int("5".into()), Py::None])), vec!["5", "0"]);
        // The string is stripped before `eval`.
        assert_eq!(clean_answer(&s("[1] ")), Some(vec!["1".to_string()]));
        // A valid literal that is not a list (a tuple): AgentBench's cleaner falls through to None.
        assert_eq!(clean_answer(&s("[1] , [2]")), None);
    }

    #[test]
    fn comparisons() {
        let t = QueryType::Comparison;
        assert!(compare_results(&list(&["5"]), &list(&["5.0"]), t));
        assert!(compare_results(&list(&["5.004"]), &list(&["5"]), t));
        assert!(!compare_results(&list(&["5.02"]), &list(&["5"]), t));
        assert!(compare_results(&list(&["none"]), &list(&[""]), t));
        assert!(compare_results(&list(&["NULL"]), &list(&["0"]), t));
        assert!(compare_results(&list(&["Giza"]), &list(&["Giza"]), t));
        assert!(!compare_results(&list(&["giza"]), &list(&["Giza"]), t));
        assert!(compare_results(&list(&["b", "a"]), &list(&["a", "b"]), t));
        assert!(compare_results(&list(&["a", "a", "b"]), &list(&["a", "b"]), t));
        assert!(compare_results(&list(&["1.0", "2"]), &list(&["2.001", "1"]), t));
        assert!(!compare_results(&list(&["1", "1"]), &list(&["1", "2"]), t));
        assert!(!compare_results(&list(&["1", "2", "3"]), &list(&["1", "2"]), t));
        assert!(compare_results(&list(&["12%"]), &list(&["12"]), t));
        assert!(compare_results(&list(&["32,502"]), &list(&["32502.0"]), t));
        assert!(compare_results(&s("[('K255AZ',), ('K228EE',)]"), &list(&["K228EE", "K255AZ"]), t));
        let m = QueryType::Insert;
        assert!(compare_results(&s("09aa8fbf72f39362970f95a1276b957c"), &s("[('09aa8fbf72f39362970f95a1276b957c',)]"), m));
        assert!(compare_results(&s("None"), &s("[(None,)]"), m));
        assert!(!compare_results(&s("09aa"), &s("[('09ab',)]"), m));
    }

    #[test]
    fn committed() {
        use serde_json::json;
        assert_eq!(committed_answer(&json!({"answers": ["a"]})), Some(list(&["a"])));
        assert_eq!(committed_answer(&json!({"x": 5})), Some(Py::Int("5".into())));
        assert_eq!(committed_answer(&json!({})), None);
        assert_eq!(committed_answer(&json!("a")), None);
    }
}
