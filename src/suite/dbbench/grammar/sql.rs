//! Writing SQL: names quoted when MySQL needs it, literals, and the numeric conversions of text
//! columns.

pub(super) const RESERVED: &[&str] = &[
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

/// The values of a filter value: the items of a list value (marked with a leading `\u{1e}`,
/// separated by `\u{1f}`), or the value itself.
pub(super) fn filter_values(val: &str) -> Vec<&str> {
    match val.strip_prefix('\u{1e}') {
        Some(list) => list.split('\u{1f}').collect(),
        None => vec![val],
    }
}

/// `col = 'v'`, or `col IN ('a', 'b')` for a list value.
pub(super) fn eq_sql(c: &str, val: &str, trim: bool, q: bool) -> String {
    let col = if trim { format!("TRIM({})", ident(c, q)) } else { ident(c, q) };
    if val.starts_with('\u{1e}') {
        format!("{col} IN ({})", filter_values(val).into_iter().map(lit).collect::<Vec<_>>().join(", "))
    } else {
        format!("{col} = {}", lit(val))
    }
}
