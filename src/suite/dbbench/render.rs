//! Observations exactly as AgentBench's function-calling DBBench returns them: Python's `str()` of
//! the list of row tuples mysql-connector yields (`[('Giza', '3.0'), ('Cairo', None)]`, `[(5,)]`,
//! `[]`), errors as mysql-connector's `str(e)` (`1054 (42S22): Unknown column ...`), cut to 800
//! characters plus `[TRUNCATED]`.
//!
//! Python's `str.isprintable()` needs Unicode general categories; this module carries the
//! non-printable ranges that occur in practice (controls, format characters, non-ASCII spaces,
//! line/paragraph separators, private use, noncharacters). Unassigned code points are treated as
//! printable, where Python would escape them.

use super::value::{ExecResult, SqlError, SqlValue};

/// Characters kept before `[TRUNCATED]`.
pub const OBSERVATION_LIMIT: usize = 800;
/// What AgentBench sends when the database returned an empty string.
pub const NO_RESPONSE: &str = "No response from database.";

/// Python's `str.isprintable()` for one character (see the module note).
pub fn py_is_printable(c: char) -> bool {
    let u = c as u32;
    let ranges: &[(u32, u32)] = &[
        (0x0000, 0x001F),
        (0x007F, 0x00A0),
        (0x00AD, 0x00AD),
        (0x0600, 0x0605),
        (0x061C, 0x061C),
        (0x06DD, 0x06DD),
        (0x070F, 0x070F),
        (0x0890, 0x0891),
        (0x08E2, 0x08E2),
        (0x1680, 0x1680),
        (0x180E, 0x180E),
        (0x2000, 0x200F),
        (0x2028, 0x202F),
        (0x205F, 0x2064),
        (0x2066, 0x206F),
        (0x3000, 0x3000),
        (0xD800, 0xF8FF),
        (0xFDD0, 0xFDEF),
        (0xFEFF, 0xFEFF),
        (0xFFF9, 0xFFFB),
        (0xFFFE, 0xFFFF),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x13430, 0x1343F),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0000, 0xE00FF),
        (0xE01F0, 0xE0FFF),
        (0xF0000, 0x10FFFF),
    ];
    if u & 0xFFFE == 0xFFFE {
        return false;
    }
    !ranges.iter().any(|&(lo, hi)| u >= lo && u <= hi)
}

/// Python `repr()` of a `str`.
pub fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !py_is_printable(c) => {
                let u = c as u32;
                if u < 0x100 {
                    out.push_str(&format!("\\x{u:02x}"));
                } else if u < 0x10000 {
                    out.push_str(&format!("\\u{u:04x}"));
                } else {
                    out.push_str(&format!("\\U{u:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python `repr()` of `bytes`.
pub fn py_bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') { b'"' } else { b'\'' };
    let mut out = String::from("b");
    out.push(quote as char);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c as char);
            }
            0x20..=0x7e => out.push(c as char),
            c => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push(quote as char);
    out
}

/// Python `repr()` of a `float`: the shortest round-trip digits, fixed notation for exponents
/// -4..16, otherwise `1e+16` style.
pub fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if mant.starts_with('-') { "-" } else { "" };
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let e = exp as usize;
            if digits.len() <= e + 1 {
                format!("{sign}{}{}.0", digits, "0".repeat(e + 1 - digits.len()))
            } else {
                format!("{sign}{}.{}", &digits[..=e], &digits[e + 1..])
            }
        } else {
            format!("{sign}0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        }
    } else {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits.clone() };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}

/// Python `repr()` of one value as mysql-connector returns it.
pub fn value_repr(v: &SqlValue) -> String {
    match v {
        SqlValue::Null => "None".into(),
        SqlValue::Int(i) => i.to_string(),
        SqlValue::Float(f) => py_float_repr(*f),
        SqlValue::Text(s) => py_str_repr(s),
        SqlValue::Bytes(b) => py_bytes_repr(b),
        SqlValue::Decimal(d) => format!("Decimal({})", py_str_repr(d)),
    }
}

/// Python `repr()` of a tuple of already-rendered items.
pub fn tuple_repr(items: &[String]) -> String {
    match items.len() {
        0 => "()".into(),
        1 => format!("({},)", items[0]),
        _ => format!("({})", items.join(", ")),
    }
}

/// Python `str()` of a list of row tuples.
pub fn rows_repr(rows: &[Vec<SqlValue>]) -> String {
    let mut out = String::from("[");
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let items: Vec<String> = row.iter().map(value_repr).collect();
        out.push_str(&tuple_repr(&items));
    }
    out.push(']');
    out
}

/// mysql-connector's `str(e)`: `errno (sqlstate): message`.
pub fn error_text(e: &SqlError) -> String {
    if e.sqlstate.is_empty() {
        format!("{}: {}", e.errno, e.message)
    } else {
        format!("{} ({}): {}", e.errno, e.sqlstate, e.message)
    }
}

/// Apply AgentBench's cut: more than 800 characters become the first 800 and `[TRUNCATED]`;
/// an empty string becomes `No response from database.`.
pub fn cut(s: String) -> String {
    if s.is_empty() {
        return NO_RESPONSE.into();
    }
    match s.char_indices().nth(OBSERVATION_LIMIT) {
        Some((byte, _)) => format!("{}[TRUNCATED]", &s[..byte]),
        None => s,
    }
}

/// The full observation for an execution result.
pub fn observation(r: &ExecResult) -> String {
    cut(match r {
        Ok(rs) => rows_repr(&rs.rows),
        Err(e) => error_text(e),
    })
}

/// Python `str()` of a JSON value (what AgentBench's `str(col)` inserts for a row value).
pub fn json_py_str(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => json_py_repr(other),
    }
}

/// Python `repr()` of a JSON value as `json.loads` would have produced it.
pub fn json_py_repr(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match v {
        J::Null => "None".into(),
        J::Bool(b) => {
            if *b {
                "True".into()
            } else {
                "False".into()
            }
        }
        J::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                py_float_repr(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        J::String(s) => py_str_repr(s),
        J::Array(a) => format!("[{}]", a.iter().map(json_py_repr).collect::<Vec<_>>().join(", ")),
        J::Object(o) => format!("{{{}}}", o.iter().map(|(k, v)| format!("{}: {}", py_str_repr(k), json_py_repr(v))).collect::<Vec<_>>().join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::dbbench::executor::{ErrorKind, RowSet};

    fn t(s: &str) -> SqlValue {
        SqlValue::Text(s.into())
    }

    #[test]
    fn tuples_and_values() {
        let rows = vec![vec![t("Giza"), t("3.0")], vec![t("Cairo"), SqlValue::Null]];
        assert_eq!(rows_repr(&rows), "[('Giza', '3.0'), ('Cairo', None)]");
        assert_eq!(rows_repr(&[vec![SqlValue::Int(5)]]), "[(5,)]");
        assert_eq!(rows_repr(&[vec![SqlValue::Float(2011.0)]]), "[(2011.0,)]");
        assert_eq!(rows_repr(&[]), "[]");
        assert_eq!(rows_repr(&[vec![]]), "[()]");
        assert_eq!(value_repr(&SqlValue::Decimal("12.50".into())), "Decimal('12.50')");
        assert_eq!(value_repr(&SqlValue::Bytes(b"a'b\x00".to_vec())), "b\"a'b\\x00\"");
    }

    #[test]
    fn string_quotes_and_escapes() {
        assert_eq!(py_str_repr("Checco D'Angelo"), "\"Checco D'Angelo\"");
        assert_eq!(py_str_repr("say \"hi\""), "'say \"hi\"'");
        assert_eq!(py_str_repr("both ' and \""), "'both \\' and \"'");
        assert_eq!(py_str_repr("a\\b\nc\td\re"), "'a\\\\b\\nc\\td\\re'");
        assert_eq!(py_str_repr("\x07"), "'\\x07'");
        assert_eq!(py_str_repr("1\u{a0}000"), "'1\\xa0000'");
        assert_eq!(py_str_repr("zero\u{200b}width"), "'zero\\u200bwidth'");
        assert_eq!(py_str_repr("Área (km²) – 2–1 ✓ 日本"), "'Área (km²) – 2–1 ✓ 日本'");
        assert_eq!(py_str_repr("emoji 🎉"), "'emoji 🎉'");
        assert_eq!(py_str_repr("\u{e000}"), "'\\ue000'");
        assert_eq!(py_str_repr("\u{10ffff}"), "'\\U0010ffff'");
    }

    #[test]
    fn floats() {
        assert_eq!(py_float_repr(1.0), "1.0");
        assert_eq!(py_float_repr(0.1), "0.1");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(1.5e16), "1.5e+16");
        assert_eq!(py_float_repr(1e15), "1000000000000000.0");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_float_repr(0.00001), "1e-05");
        assert_eq!(py_float_repr(-2.5e-7), "-2.5e-07");
        assert_eq!(py_float_repr(123.456), "123.456");
        assert_eq!(py_float_repr(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(py_float_repr(f64::INFINITY), "inf");
        assert_eq!(py_float_repr(f64::NAN), "nan");
        assert_eq!(py_float_repr(-0.0), "-0.0");
        assert_eq!(py_float_repr(1e20), "1e+20");
    }

    #[test]
    fn truncation_counts_characters() {
        let long = "é".repeat(801);
        let c = cut(long);
        assert!(c.ends_with("[TRUNCATED]"));
        assert_eq!(c.chars().count(), 800 + "[TRUNCATED]".len());
        assert_eq!(cut("x".repeat(800)), "x".repeat(800));
        assert_eq!(cut(String::new()), NO_RESPONSE);
    }

    #[test]
    fn errors() {
        let e =
            SqlError { errno: 1054, sqlstate: "42S22".into(), message: "Unknown column 'x' in 'field list'".into(), kind: ErrorKind::UnknownColumn };
        assert_eq!(observation(&Err(e)), "1054 (42S22): Unknown column 'x' in 'field list'");
        assert_eq!(observation(&Ok(RowSet::default())), "[]");
    }

    #[test]
    fn json_values_as_python_str() {
        use serde_json::json;
        assert_eq!(json_py_str(&json!(null)), "None");
        assert_eq!(json_py_str(&json!(true)), "True");
        assert_eq!(json_py_str(&json!(5)), "5");
        assert_eq!(json_py_str(&json!(5.0)), "5.0");
        assert_eq!(json_py_str(&json!(1e20)), "1e+20");
        assert_eq!(json_py_str(&json!("x")), "x");
        assert_eq!(json_py_str(&json!(["a", 1])), "['a', 1]");
    }
}
