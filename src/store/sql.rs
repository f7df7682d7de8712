//! Internal helpers shared by the store's statements: bind values that work on both back-ends,
//! a small statement builder with `$n` placeholders (understood by SQLite and Postgres alike),
//! and timestamps.

use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{Arguments, Database, Encode, Type};

/// One bind value. The store binds only these types, which both back-ends encode the same way.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Arg {
    I64(i64),
    OptI64(Option<i64>),
    F64(f64),
    OptF64(Option<f64>),
    Text(String),
    OptText(Option<String>),
    Bytes(Vec<u8>),
}

impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::I64(v)
    }
}
impl From<Option<i64>> for Arg {
    fn from(v: Option<i64>) -> Self {
        Arg::OptI64(v)
    }
}
impl From<f64> for Arg {
    fn from(v: f64) -> Self {
        Arg::F64(v)
    }
}
impl From<Option<f64>> for Arg {
    fn from(v: Option<f64>) -> Self {
        Arg::OptF64(v)
    }
}
impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Text(v)
    }
}
impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Text(v.to_string())
    }
}
impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Self {
        Arg::OptText(v)
    }
}

impl From<Vec<u8>> for Arg {
    fn from(v: Vec<u8>) -> Self {
        Arg::Bytes(v)
    }
}

/// `args![a, b, c]`: a `Vec<Arg>` from values convertible into [`Arg`].
macro_rules! args {
    ($($v:expr),* $(,)?) => { vec![$($crate::store::sql::Arg::from($v)),*] };
}
pub(crate) use args;

/// Encode the values into the back-end's argument buffer.
pub(crate) fn arguments<DB: Database>(args: Vec<Arg>) -> Result<DB::Arguments, sqlx::Error>
where
    for<'t> i64: Encode<'t, DB> + Type<DB>,
    for<'t> Option<i64>: Encode<'t, DB> + Type<DB>,
    for<'t> f64: Encode<'t, DB> + Type<DB>,
    for<'t> Option<f64>: Encode<'t, DB> + Type<DB>,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> Option<String>: Encode<'t, DB> + Type<DB>,
    for<'t> Vec<u8>: Encode<'t, DB> + Type<DB>,
{
    let mut out = DB::Arguments::default();
    for arg in args {
        let added = match arg {
            Arg::I64(v) => out.add(v),
            Arg::OptI64(v) => out.add(v),
            Arg::F64(v) => out.add(v),
            Arg::OptF64(v) => out.add(v),
            Arg::Text(v) => out.add(v),
            Arg::OptText(v) => out.add(v),
            Arg::Bytes(v) => out.add(v),
        };
        added.map_err(sqlx::Error::Encode)?;
    }
    Ok(out)
}

/// A `WHERE` clause under construction.
#[derive(Default)]
pub(crate) struct Conditions {
    pub(crate) clauses: Vec<String>,
    pub(crate) args: Vec<Arg>,
}

impl Conditions {
    /// Bind a value and return its placeholder (`$n`).
    pub(crate) fn bind(&mut self, arg: impl Into<Arg>) -> String {
        self.args.push(arg.into());
        format!("${}", self.args.len())
    }
    pub(crate) fn push(&mut self, clause: String) {
        self.clauses.push(clause);
    }
    /// `column = $n`, if the value is given.
    pub(crate) fn eq<T: Into<Arg>>(&mut self, column: &str, value: Option<T>) {
        if let Some(v) = value {
            let p = self.bind(v);
            self.push(format!("{column} = {p}"));
        }
    }
    /// `column IN ($n, ...)` over the values.
    pub(crate) fn is_in<T: Into<Arg>>(&mut self, column: &str, values: impl IntoIterator<Item = T>) {
        let marks: Vec<String> = values.into_iter().map(|v| self.bind(v)).collect();
        self.push(format!("{column} IN ({})", marks.join(", ")));
    }
    /// ` WHERE a AND b ...`, or nothing.
    pub(crate) fn where_sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.clauses.join(" AND "))
        }
    }
}

/// The current time as UTC RFC 3339 text with milliseconds, e.g. `2025-01-02T03:04:05.678Z`.
/// Text of this form sorts chronologically.
pub(crate) fn now_utc() -> String {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    format_utc(since.as_millis() as i64)
}

/// Format Unix milliseconds as UTC RFC 3339 (proleptic Gregorian calendar).
pub(crate) fn format_utc(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let ms = unix_ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Days to civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z", sod / 3600, (sod % 3600) / 60, sod % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_timestamps() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_utc(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(format_utc(1_735_787_045_678), "2025-01-02T03:04:05.678Z");
    }
}
