//! Line edit operators: small, local changes to one line of Python (a comparison made strict, a
//! `+` turned into `-`, `min` into `max`, a constant off by one, ...).
//!
//! The bundled dataset's generator seeds bugs with them, and the built-in policy's repair grammar
//! proposes fixes with them. The set is closed under inversion (every operator's undo is another
//! operator of the set), so every seeded bug can be repaired by one operator at the right line —
//! what the policy must learn is *where* and *which*.

/// (name, class, from, to): replace one occurrence of `from` by `to`.
pub const OPERATORS: &[(&str, &str, &str, &str)] = &[
    ("lt_to_le", "compare", " < ", " <= "),
    ("le_to_lt", "compare", " <= ", " < "),
    ("gt_to_ge", "compare", " > ", " >= "),
    ("ge_to_gt", "compare", " >= ", " > "),
    ("eq_to_ne", "compare", " == ", " != "),
    ("ne_to_eq", "compare", " != ", " == "),
    ("add_to_sub", "arith", " + ", " - "),
    ("sub_to_add", "arith", " - ", " + "),
    ("floordiv_to_div", "arith", " // ", " / "),
    ("div_to_floordiv", "arith", " / ", " // "),
    ("and_to_or", "logic", " and ", " or "),
    ("or_to_and", "logic", " or ", " and "),
    ("min_to_max", "minmax", "min(", "max("),
    ("max_to_min", "minmax", "max(", "min("),
    ("true_to_false", "bool", "True", "False"),
    ("false_to_true", "bool", "False", "True"),
    ("first_to_last", "index", "[0]", "[-1]"),
    ("last_to_first", "index", "[-1]", "[0]"),
    ("lower_to_upper", "case", ".lower()", ".upper()"),
    ("upper_to_lower", "case", ".upper()", ".lower()"),
    ("lstrip_to_rstrip", "strip", ".lstrip(", ".rstrip("),
    ("rstrip_to_lstrip", "strip", ".rstrip(", ".lstrip("),
    ("startswith_to_endswith", "affix", ".startswith(", ".endswith("),
    ("endswith_to_startswith", "affix", ".endswith(", ".startswith("),
    ("drop_not", "negate", "if not ", "if "),
    ("add_not", "negate", "if ", "if not "),
];

/// Integer constants are moved by one in either direction.
pub const INT_OPERATORS: &[(&str, &str)] = &[("int_inc", "const"), ("int_dec", "const")];

/// One way to change one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineEdit {
    pub op: &'static str,
    pub class: &'static str,
    /// Which occurrence on the line (0-based).
    pub occurrence: usize,
    pub after: String,
}

/// Is byte `at` of `line` inside a string literal or a comment (by counting quotes before it)?
fn in_literal(line: &str, at: usize) -> bool {
    let before = &line[..at];
    if before.contains('#') {
        return true;
    }
    before.matches('\'').count() % 2 == 1 || before.matches('"').count() % 2 == 1
}

/// Lines the operators never touch: blank lines, comments, imports, docstring delimiters.
pub fn editable(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty() || t.starts_with('#') || t.starts_with("import ") || t.starts_with("from ") || t.starts_with("\"\"\"") || t.starts_with("'''"))
}

/// Every edit the operators can make to `line`, in a fixed order (operator, then occurrence),
/// without duplicates.
pub fn edits(line: &str) -> Vec<LineEdit> {
    let mut out: Vec<LineEdit> = Vec::new();
    if !editable(line) {
        return out;
    }
    let push = |e: LineEdit, out: &mut Vec<LineEdit>| {
        if e.after != line && !e.after.contains("not not ") && !out.iter().any(|o| o.after == e.after) {
            out.push(e);
        }
    };
    for (op, class, from, to) in OPERATORS {
        for (k, (at, _)) in line.match_indices(from).enumerate() {
            if in_literal(line, at) {
                continue;
            }
            if *op == "add_not" && line[at..].starts_with("if not ") {
                continue;
            }
            let after = format!("{}{}{}", &line[..at], to, &line[at + from.len()..]);
            push(LineEdit { op, class, occurrence: k, after }, &mut out);
        }
    }
    // integer literals standing alone (not part of a name or a float)
    let b = line.as_bytes();
    let mut k = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.')) {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let float_or_name = j < b.len() && (b[j] == b'.' || b[j].is_ascii_alphabetic() || b[j] == b'_');
            if !float_or_name && !in_literal(line, i) {
                if let Ok(n) = line[i..j].parse::<i64>() {
                    for (op, class) in INT_OPERATORS {
                        let m = if *op == "int_inc" { n + 1 } else { n - 1 };
                        if m < 0 {
                            continue;
                        }
                        let after = format!("{}{}{}", &line[..i], m, &line[j..]);
                        push(LineEdit { op, class, occurrence: k, after }, &mut out);
                    }
                }
                k += 1;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_of_a_line() {
        let e = edits("    if n < len(xs) and xs[0] == 1:");
        let ops: Vec<&str> = e.iter().map(|e| e.op).collect();
        assert_eq!(ops, vec!["lt_to_le", "eq_to_ne", "and_to_or", "first_to_last", "add_not", "int_inc", "int_inc", "int_dec"]);
        assert_eq!(e[0].after, "    if n <= len(xs) and xs[0] == 1:");
        assert!(edits("    # x < y").is_empty());
        assert!(edits("    return 'a < b'").is_empty());
        assert!(edits("import os").is_empty());
        // 1.5 and x1 are not integer constants
        assert!(edits("    y = x1 * 1.5").is_empty());
    }

    #[test]
    fn every_edit_can_be_undone() {
        for line in ["    return max(a, b) + 1", "    if not s.startswith('x') or n >= 2:", "    return xs[-1].lower()"] {
            for e in edits(line) {
                assert!(edits(&e.after).iter().any(|u| u.after == line), "{line} -> {} cannot be undone", e.after);
            }
        }
    }
}
