//! MySQL semantics inside SQLite: the `mysql_ci` collation, MySQL's string/number conversions,
//! and the functions DBBench queries use, registered on each executor connection.
//!
//! `mysql_ci` is MySQL 8's `utf8mb4_0900_ai_ci` as [`collation`](super::collation) describes it.
//!
//! Registered (MySQL names unless noted): `md5`, `concat` (NULL if any argument is NULL),
//! `concat_ws` (skips NULLs), `mysql_group_concat` + `mysql_gc_join` (GROUP_CONCAT with
//! `group_concat_max_len` = 1024 bytes), `mysql_substring` (SUBSTRING/SUBSTR/MID), `mysql_left`,
//! `mysql_right`, `mysql_trim`, `mysql_locate`/`locate`/`instr` (collation-aware), `like`
//! (collation-aware, `\` escapes by default), `length` (bytes), `char_length`, `lower`/`upper`/
//! `lcase`/`ucase` (Unicode), `sum`/`avg` (strings converted as MySQL does; window-capable),
//! `mysql_num` (MySQL's string-to-double prefix conversion; numbers unchanged), `mysql_real`,
//! `mysql_cast_signed`/`unsigned`/`decimal`/`double`/`char`, `mysql_nullif`, and the `_strict`
//! forms of the number conversions that INSERT/UPDATE/DELETE use (error 1292 on truncation, as
//! MySQL's strict mode), `mysql_greatest`/`mysql_least` (MySQL 8's comparison rules), math
//! (`floor`, `ceil`, `ceiling`, `pow`, `power`, `sqrt`, `exp`, `ln`, `log`, `log2`, `log10`, `mod`
//! (fractional for doubles), `mysql_div` (DIV), `mysql_round_double` (ROUND of a double, half to
//! even), `sign`, `pi`, `truncate`, `rand`), string helpers (`reverse`, `repeat`, `space`, `lpad`,
//! `rpad`, `substring_index`, `find_in_set`, `strcmp`, `ascii`, `ord`, `mysql_insert`),
//! `regexp`/`regexp_like` (see [`regex`](super::regex)), date parts (`year`, `month`, `day`; NULL
//! unless the string reads as a MySQL date), `mysql_isnull`, `mysql_database`, `version`, and clock
//! functions (`mysql_now`, `mysql_curdate`, ...; UTC).

use std::cmp::Ordering;

use md5::{Digest, Md5};
use rusqlite::functions::{Aggregate, Context, FunctionFlags, WindowAggregate};
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

/// MySQL's `group_concat_max_len` default, in bytes.
pub const GROUP_CONCAT_MAX_LEN: usize = 1024;

pub use super::collation::{collate_ci, fold};

/// MySQL's conversion of a double to a string (what `CONCAT(x)` or a TEXT column shows).
pub fn mysql_double_to_string(f: f64) -> String {
    if f.is_nan() || f.is_infinite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if f == 0.0 {
        return "0".into();
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    if !(-5..15).contains(&exp) {
        let rest = &digits[1..];
        let m = if rest.is_empty() { digits[..1].to_string() } else { format!("{}.{}", &digits[..1], rest) };
        return format!("{sign}{m}e{exp}");
    }
    if exp >= 0 {
        let e = exp as usize;
        if digits.len() <= e + 1 {
            format!("{sign}{}{}", digits, "0".repeat(e + 1 - digits.len()))
        } else {
            format!("{sign}{}.{}", &digits[..=e], &digits[e + 1..])
        }
    } else {
        format!("{sign}0.{}{}", "0".repeat((-exp - 1) as usize), digits)
    }
}

/// MySQL's string-to-number conversion: the longest numeric prefix after leading whitespace
/// (`'5,200'` is 5, `' 12abc'` is 12, `'abc'` is 0).
pub fn mysql_str_to_double(s: &str) -> f64 {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let start = i;
    let Some(end) = number_end(b, start) else { return 0.0 };
    let text = &s[start..end];
    let text = text.strip_suffix('.').unwrap_or(text);
    let v: f64 = text.parse().unwrap_or(0.0);
    if v.is_infinite() {
        if v > 0.0 {
            f64::MAX
        } else {
            f64::MIN
        }
    } else {
        v
    }
}

/// MySQL's string-to-integer conversion (CAST(s AS SIGNED)): the integer prefix, clamped.
pub fn mysql_str_to_int(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i128 = 0;
    for c in digits.bytes().take_while(|c| c.is_ascii_digit()) {
        v = (v * 10 + (c - b'0') as i128).min(i64::MAX as i128 + 1);
    }
    let v = if neg { -v } else { v };
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// The MySQL string form of an SQLite value (`None` for NULL).
pub fn value_str(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(mysql_double_to_string(f)),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

/// The start of the message of MySQL's error 1292 for a string that is not wholly a number
/// (`Truncated incorrect DOUBLE value: 'x'`, likewise INTEGER and DECIMAL); the executor turns a
/// function error holding it into that error.
pub const TRUNCATED: &str = "Truncated incorrect ";

/// Strict mode's refusal (error 1292) of a string `s` that MySQL would truncate converting it to
/// `what` (`DOUBLE`, `DECIMAL`: not wholly a number; `INTEGER`: not wholly an integer).
fn refuse_truncation(s: &str, what: &str) -> rusqlite::Result<()> {
    let whole = if what == "INTEGER" { is_whole_integer(s) } else { is_whole_number(s) };
    if whole {
        Ok(())
    } else {
        Err(user_err(format!("{TRUNCATED}{what} value: '{s}'")))
    }
}

/// Does MySQL convert `s` to an integer without truncating it: optional surrounding whitespace
/// around an optionally signed run of digits?
pub fn is_whole_integer(s: &str) -> bool {
    let t = s.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'));
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Does MySQL convert `s` to a number without truncating it: optional surrounding whitespace
/// around one decimal number (sign, digits, point, exponent)?
pub fn is_whole_number(s: &str) -> bool {
    let t = s.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'));
    number_end(t.as_bytes(), 0) == Some(t.len())
}

/// Where the decimal number that starts at `b[start]` ends (sign, digits, point, and an exponent
/// only when digits follow its `e`), or `None` when it has no digit: the prefix MySQL converts.
fn number_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    Some(i)
}

/// The MySQL double value of an SQLite value (`None` for NULL).
pub fn value_num(v: ValueRef<'_>) -> Option<f64> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i as f64),
        ValueRef::Real(f) => Some(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(mysql_str_to_double(&String::from_utf8_lossy(t))),
    }
}

fn value_int(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => Some(round_half_away(f) as i64),
        ValueRef::Text(_) | ValueRef::Blob(_) => value_num(v).map(|f| round_half_away(f) as i64),
    }
}

fn round_half_away(f: f64) -> f64 {
    f.round()
}

/// MySQL's `my_double_round`: round `x` to `d` decimals (negative: to tens, hundreds, ...) with
/// rint(), which rounds half to even.
pub fn mysql_double_round(x: f64, d: i64) -> f64 {
    let scale = 10f64.powi(d.unsigned_abs().min(400) as i32);
    if d < 0 {
        if scale.is_infinite() {
            return 0.0;
        }
        (x / scale).round_ties_even() * scale
    } else {
        let scaled = x * scale;
        if scaled.is_infinite() {
            return x;
        }
        scaled.round_ties_even() / scale
    }
}

/// GREATEST (`want` = Greater) or LEAST (Less) of SQLite values under MySQL 8's rules.
pub fn greatest_or_least(args: &[ValueRef<'_>], want: Ordering) -> Value {
    if args.iter().any(|v| matches!(v, ValueRef::Null)) {
        return Value::Null;
    }
    if args.iter().any(|v| matches!(v, ValueRef::Text(_) | ValueRef::Blob(_))) {
        let texts: Vec<String> = args
            .iter()
            .map(|v| match v {
                ValueRef::Integer(i) => i.to_string(),
                ValueRef::Real(f) => mysql_double_to_string(*f),
                other => value_str(*other).unwrap_or_default(),
            })
            .collect();
        let mut best = 0;
        for i in 1..texts.len() {
            if collate_ci(&texts[i], &texts[best]) == want {
                best = i;
            }
        }
        return Value::Text(texts[best].clone());
    }
    if args.iter().all(|v| matches!(v, ValueRef::Integer(_))) {
        let ints = args.iter().filter_map(|v| if let ValueRef::Integer(i) = v { Some(*i) } else { None });
        return Value::Integer(if want == Ordering::Greater { ints.max() } else { ints.min() }.unwrap_or(0));
    }
    let mut best = value_num(args[0]).unwrap_or(0.0);
    for v in &args[1..] {
        let x = value_num(*v).unwrap_or(0.0);
        if x.partial_cmp(&best) == Some(want) {
            best = x;
        }
    }
    Value::Real(best)
}

fn user_err(msg: impl Into<String>) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(msg.into().into())
}

fn arg<'a>(ctx: &'a Context<'_>, i: usize) -> ValueRef<'a> {
    ctx.get_raw(i)
}

fn hex_md5(bytes: &[u8]) -> String {
    let d = Md5::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// MD5 of a string as lower-case hex, as MySQL's `MD5()` returns it.
pub fn md5_hex(s: &str) -> String {
    hex_md5(s.as_bytes())
}

/// Steps a single LIKE may take (a SQL function call cannot be interrupted by the time limit).
const LIKE_BUDGET: u64 = 20_000_000;

/// A LIKE that would run past [`LIKE_BUDGET`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LikeTooSlow;

/// MySQL `LIKE` under `mysql_ci`: `%` any run, `_` one character, `escape` quotes the next one.
pub fn mysql_like(pattern: &str, value: &str, escape: Option<char>) -> Result<bool, LikeTooSlow> {
    #[derive(Clone, Copy, PartialEq)]
    enum P {
        Lit(char),
        One,
        Many,
    }
    let mut pat: Vec<P> = Vec::new();
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        if Some(c) == escape {
            match it.next() {
                Some(n) => pat.extend(fold(&n.to_string()).chars().map(P::Lit)),
                None => pat.extend(fold(&c.to_string()).chars().map(P::Lit)),
            }
        } else if c == '%' {
            if pat.last() != Some(&P::Many) {
                pat.push(P::Many);
            }
        } else if c == '_' {
            pat.push(P::One);
        } else {
            pat.extend(fold(&c.to_string()).chars().map(P::Lit));
        }
    }
    let val: Vec<char> = fold(value).chars().collect();
    // Greedy wildcard matching with backtracking to the last `%`.
    let (mut p, mut v) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    let mut steps = 0u64;
    while v < val.len() {
        steps += 1;
        if steps > LIKE_BUDGET {
            return Err(LikeTooSlow);
        }
        match pat.get(p) {
            Some(P::Lit(c)) if *c == val[v] => {
                p += 1;
                v += 1;
            }
            Some(P::One) => {
                p += 1;
                v += 1;
            }
            Some(P::Many) => {
                star = Some((p, v));
                p += 1;
            }
            _ => match star {
                Some((sp, sv)) => {
                    p = sp + 1;
                    v = sv + 1;
                    star = Some((sp, sv + 1));
                }
                None => return Ok(false),
            },
        }
    }
    while pat.get(p) == Some(&P::Many) {
        p += 1;
    }
    Ok(p == pat.len())
}

/// [`mysql_like`] as an SQL function result.
fn like_value(pattern: &str, value: &str, escape: Option<char>) -> rusqlite::Result<Value> {
    mysql_like(pattern, value, escape)
        .map(|b| Value::Integer(b as i64))
        .map_err(|_| user_err("Query execution was interrupted, maximum statement execution time exceeded"))
}

/// 1-based character position of `sub` in `s` under `mysql_ci`, searching from `from` (1-based);
/// 0 if absent.
pub fn locate_ci(sub: &str, s: &str, from: i64) -> i64 {
    let chars: Vec<char> = s.chars().collect();
    let needle = fold(sub);
    let start = (from.max(1) - 1) as usize;
    if needle.is_empty() {
        return if start <= chars.len() { start as i64 + 1 } else { 0 };
    }
    for i in start..chars.len() {
        let rest: String = chars[i..].iter().collect();
        if fold(&rest).starts_with(&needle) {
            return i as i64 + 1;
        }
    }
    0
}

/// MySQL SUBSTRING(s, pos, len) on characters.
pub fn mysql_substring(s: &str, pos: i64, len: Option<i64>) -> String {
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len() as i64;
    let start = if pos > 0 {
        pos - 1
    } else if pos < 0 {
        n + pos
    } else {
        return String::new();
    };
    if start < 0 || start >= n {
        return String::new();
    }
    let end = match len {
        Some(l) if l < 1 => return String::new(),
        Some(l) => (start.saturating_add(l)).min(n),
        None => n,
    };
    chars[start as usize..end as usize].iter().collect()
}

fn text_result(s: Option<String>) -> Value {
    s.map_or(Value::Null, Value::Text)
}

fn scalar<F>(db: &Connection, name: &str, n: i32, det: bool, f: F) -> rusqlite::Result<()>
where
    F: Fn(&Context<'_>) -> rusqlite::Result<Value> + Send + 'static,
{
    let mut flags = FunctionFlags::SQLITE_UTF8;
    if det {
        flags |= FunctionFlags::SQLITE_DETERMINISTIC;
    }
    db.create_scalar_function(name, n, flags, f)
}

/// SUM/AVG with MySQL's string conversion. `avg` selects the result.
struct SumAgg {
    avg: bool,
}

#[derive(Default)]
struct SumAcc {
    int_sum: i128,
    float_sum: f64,
    count: i64,
    non_int: i64,
}

impl SumAcc {
    fn add(&mut self, v: ValueRef<'_>, sign: i64) {
        match v {
            ValueRef::Null => return,
            ValueRef::Integer(i) => self.int_sum += sign as i128 * i as i128,
            other => {
                self.float_sum += sign as f64 * value_num(other).unwrap_or(0.0);
                self.non_int += sign;
            }
        }
        self.count += sign;
    }
    fn result(&self, avg: bool) -> Value {
        if self.count <= 0 {
            return Value::Null;
        }
        let total = self.int_sum as f64 + self.float_sum;
        if avg {
            return Value::Real(total / self.count as f64);
        }
        if self.non_int == 0 {
            if let Ok(i) = i64::try_from(self.int_sum) {
                return Value::Integer(i);
            }
        }
        Value::Real(total)
    }
}

impl Aggregate<SumAcc, Value> for SumAgg {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<SumAcc> {
        Ok(SumAcc::default())
    }
    fn step(&self, ctx: &mut Context<'_>, acc: &mut SumAcc) -> rusqlite::Result<()> {
        acc.add(ctx.get_raw(0), 1);
        Ok(())
    }
    fn finalize(&self, _: &mut Context<'_>, acc: Option<SumAcc>) -> rusqlite::Result<Value> {
        Ok(acc.map_or(Value::Null, |a| a.result(self.avg)))
    }
}

impl WindowAggregate<SumAcc, Value> for SumAgg {
    fn value(&self, acc: Option<&mut SumAcc>) -> rusqlite::Result<Value> {
        Ok(acc.map_or(Value::Null, |a| a.result(self.avg)))
    }
    fn inverse(&self, ctx: &mut Context<'_>, acc: &mut SumAcc) -> rusqlite::Result<()> {
        acc.add(ctx.get_raw(0), -1);
        Ok(())
    }
}

/// Collects GROUP_CONCAT values; `mysql_gc_join` applies the separator and the length cut.
/// Values come in their final order, and the result keeps only its first
/// [`GROUP_CONCAT_MAX_LEN`] bytes, so once the values collected hold more than that, later ones
/// cannot change it and are not kept (a group of millions of long values costs no memory).
struct GroupConcat;

impl Aggregate<(Vec<String>, usize), Value> for GroupConcat {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<(Vec<String>, usize)> {
        Ok((Vec::new(), 0))
    }
    fn step(&self, ctx: &mut Context<'_>, (acc, bytes): &mut (Vec<String>, usize)) -> rusqlite::Result<()> {
        if *bytes > GROUP_CONCAT_MAX_LEN {
            return Ok(());
        }
        if let Some(s) = value_str(ctx.get_raw(0)) {
            *bytes += s.len();
            acc.push(s);
        }
        Ok(())
    }
    fn finalize(&self, _: &mut Context<'_>, acc: Option<(Vec<String>, usize)>) -> rusqlite::Result<Value> {
        match acc {
            Some((v, _)) if !v.is_empty() => Ok(Value::Text(serde_json::to_string(&v).unwrap_or_default())),
            _ => Ok(Value::Null),
        }
    }
}

/// Join collected values and cut to `max` bytes on a character boundary.
pub fn gc_join(items: &[String], sep: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(it);
        if out.len() > max {
            break;
        }
    }
    if out.len() > max {
        let mut cut = max;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

fn civil_now() -> (i64, u32, u32, u32, u32, u32) {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d, (rem / 3600) as u32, ((rem % 3600) / 60) as u32, (rem % 60) as u32)
}

/// The (year, month, day) MySQL reads from a string in a date context, if any.
pub fn parse_mysql_date(s: &str) -> Option<(i64, u32, u32)> {
    let t = s.trim();
    let digits_only: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
    let (y, m, d) = if digits_only.len() == t.len() && (t.len() == 8 || t.len() == 6) {
        let (ys, rest) = t.split_at(t.len() - 4);
        (ys.to_string(), rest[..2].to_string(), rest[2..].to_string())
    } else {
        let mut parts = Vec::new();
        let mut cur = String::new();
        for ch in t.chars() {
            if ch.is_ascii_digit() {
                cur.push(ch);
            } else if ch.is_ascii_punctuation() {
                if cur.is_empty() {
                    return None;
                }
                parts.push(std::mem::take(&mut cur));
                if parts.len() == 3 {
                    break;
                }
            } else if ch == ' ' || ch == 'T' {
                break;
            } else {
                return None;
            }
        }
        if !cur.is_empty() && parts.len() < 3 {
            parts.push(cur);
        }
        if parts.len() < 3 {
            return None;
        }
        (parts[0].clone(), parts[1].clone(), parts[2].clone())
    };
    if y.is_empty() || y.len() > 4 || m.is_empty() || m.len() > 2 || d.is_empty() || d.len() > 2 {
        return None;
    }
    let mut year: i64 = y.parse().ok()?;
    if y.len() <= 2 {
        year += if year < 70 { 2000 } else { 1900 };
    }
    let (month, day): (u32, u32) = (m.parse().ok()?, d.parse().ok()?);
    (month <= 12 && day <= 31).then_some((year, month, day))
}

/// Register the collation and every MySQL function on `db`.
pub fn register(db: &Connection) -> rusqlite::Result<()> {
    db.create_collation("mysql_ci", collate_ci)?;
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    db.create_window_function("sum", 1, flags, SumAgg { avg: false })?;
    db.create_window_function("avg", 1, flags, SumAgg { avg: true })?;
    db.create_aggregate_function("mysql_group_concat", 1, flags, GroupConcat)?;
    register_strings(db)?;
    register_casts(db)?;
    register_math(db)?;
    register_regexp(db)?;
    register_dates(db)?;
    register_clock(db)?;
    Ok(())
}

/// Operand conversion and string functions.
fn register_strings(db: &Connection) -> rusqlite::Result<()> {
    // MySQL's operand conversion: strings become doubles, numbers stay as they are.
    scalar(db, "mysql_num", 1, true, |c| {
        Ok(match arg(c, 0) {
            ValueRef::Integer(i) => Value::Integer(i),
            v => value_num(v).map_or(Value::Null, Value::Real),
        })
    })?;
    scalar(db, "mysql_real", 1, true, |c| Ok(value_num(arg(c, 0)).map_or(Value::Null, Value::Real)))?;
    // The same conversion inside INSERT/UPDATE/DELETE: MySQL's strict mode (on by default) turns
    // the truncation warning of a string that is not wholly a number into error 1292, and the
    // statement changes nothing.
    scalar(db, "mysql_num_strict", 1, true, |c| {
        Ok(match arg(c, 0) {
            ValueRef::Integer(i) => Value::Integer(i),
            v @ (ValueRef::Text(_) | ValueRef::Blob(_)) => {
                let s = value_str(v).unwrap_or_default();
                refuse_truncation(&s, "DOUBLE")?;
                Value::Real(mysql_str_to_double(&s))
            }
            v => value_num(v).map_or(Value::Null, Value::Real),
        })
    })?;
    // A number stored into a TEXT column: MySQL writes a double as `mysql_double_to_string`.
    scalar(db, "mysql_store", 1, true, |c| {
        Ok(match arg(c, 0) {
            ValueRef::Real(f) => Value::Text(mysql_double_to_string(f)),
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        })
    })?;
    // NULLIF compares as `=` does: numerically when either side is a number, else by `mysql_ci`
    // (SQLite's own NULLIF compares a TEXT '3' and the number 3 as different).
    // NULLIF compares as `=` does; inside INSERT/UPDATE/DELETE (`_strict`) a string that is not
    // wholly a number, compared with a number, is error 1292 as in MySQL's strict mode.
    for (name, strict) in [("mysql_nullif", false), ("mysql_nullif_strict", true)] {
        scalar(db, name, 2, true, move |c| {
            let (a, b) = (arg(c, 0), arg(c, 1));
            let equal = match (a, b) {
                (ValueRef::Null, _) | (_, ValueRef::Null) => false,
                (ValueRef::Integer(x), ValueRef::Integer(y)) => x == y,
                (ValueRef::Integer(_) | ValueRef::Real(_), _) | (_, ValueRef::Integer(_) | ValueRef::Real(_)) => {
                    if strict {
                        for v in [a, b] {
                            if let ValueRef::Text(_) | ValueRef::Blob(_) = v {
                                refuse_truncation(&value_str(v).unwrap_or_default(), "DOUBLE")?;
                            }
                        }
                    }
                    value_num(a) == value_num(b)
                }
                _ => collate_ci(&value_str(a).unwrap_or_default(), &value_str(b).unwrap_or_default()) == Ordering::Equal,
            };
            Ok(match a {
                _ if equal => Value::Null,
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Integer(i),
                ValueRef::Real(f) => Value::Real(f),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            })
        })?;
    }
    scalar(db, "md5", 1, true, |c| {
        Ok(match arg(c, 0) {
            ValueRef::Null => Value::Null,
            ValueRef::Blob(b) => Value::Text(hex_md5(b)),
            v => Value::Text(md5_hex(&value_str(v).unwrap_or_default())),
        })
    })?;
    scalar(db, "concat", -1, true, |c| {
        if c.is_empty() {
            return Err(user_err("Incorrect parameter count in the call to native function 'concat'"));
        }
        let mut out = String::new();
        for i in 0..c.len() {
            match value_str(arg(c, i)) {
                Some(s) => out.push_str(&s),
                None => return Ok(Value::Null),
            }
        }
        Ok(Value::Text(out))
    })?;
    scalar(db, "concat_ws", -1, true, |c| {
        if c.len() < 2 {
            return Err(user_err("Incorrect parameter count in the call to native function 'concat_ws'"));
        }
        let Some(sep) = value_str(arg(c, 0)) else { return Ok(Value::Null) };
        let parts: Vec<String> = (1..c.len()).filter_map(|i| value_str(arg(c, i))).collect();
        Ok(Value::Text(parts.join(&sep)))
    })?;
    scalar(db, "mysql_gc_join", 2, true, |c| {
        let Some(json) = value_str(arg(c, 0)) else { return Ok(Value::Null) };
        let sep = value_str(arg(c, 1)).unwrap_or_default();
        let items: Vec<String> = serde_json::from_str(&json).unwrap_or_default();
        Ok(Value::Text(gc_join(&items, &sep, GROUP_CONCAT_MAX_LEN)))
    })?;
    for n in [2, 3] {
        scalar(db, "mysql_substring", n, true, |c| {
            let Some(s) = value_str(arg(c, 0)) else { return Ok(Value::Null) };
            let Some(pos) = value_int(arg(c, 1)) else { return Ok(Value::Null) };
            let len = if c.len() > 2 {
                match value_int(arg(c, 2)) {
                    Some(l) => Some(l),
                    None => return Ok(Value::Null),
                }
            } else {
                None
            };
            Ok(Value::Text(mysql_substring(&s, pos, len)))
        })?;
    }
    scalar(db, "mysql_left", 2, true, |c| {
        let (Some(s), Some(n)) = (value_str(arg(c, 0)), value_int(arg(c, 1))) else { return Ok(Value::Null) };
        Ok(Value::Text(s.chars().take(n.max(0) as usize).collect()))
    })?;
    scalar(db, "mysql_right", 2, true, |c| {
        let (Some(s), Some(n)) = (value_str(arg(c, 0)), value_int(arg(c, 1))) else { return Ok(Value::Null) };
        let chars: Vec<char> = s.chars().collect();
        let k = (n.max(0) as usize).min(chars.len());
        Ok(Value::Text(chars[chars.len() - k..].iter().collect()))
    })?;
    scalar(db, "mysql_trim", 3, true, |c| {
        let mode = value_str(arg(c, 0)).unwrap_or_default();
        let (Some(rem), Some(mut s)) = (value_str(arg(c, 1)), value_str(arg(c, 2))) else { return Ok(Value::Null) };
        if !rem.is_empty() {
            if mode != "trailing" {
                while let Some(r) = s.strip_prefix(rem.as_str()) {
                    s = r.to_string();
                }
            }
            if mode != "leading" {
                while let Some(r) = s.strip_suffix(rem.as_str()) {
                    s = r.to_string();
                }
            }
        }
        Ok(Value::Text(s))
    })?;
    for (name, swap) in [("mysql_locate", false), ("locate", false), ("instr", true)] {
        let nargs: &[i32] = if swap { &[2] } else { &[2, 3] };
        for &n in nargs {
            scalar(db, name, n, true, move |c| {
                let (a, b) = if swap { (1, 0) } else { (0, 1) };
                let (Some(sub), Some(s)) = (value_str(arg(c, a)), value_str(arg(c, b))) else { return Ok(Value::Null) };
                let from = if c.len() > 2 { value_int(arg(c, 2)).unwrap_or(1) } else { 1 };
                Ok(Value::Integer(locate_ci(&sub, &s, from)))
            })?;
        }
    }
    scalar(db, "like", 2, true, |c| {
        let (Some(p), Some(v)) = (value_str(arg(c, 0)), value_str(arg(c, 1))) else { return Ok(Value::Null) };
        like_value(&p, &v, Some('\\'))
    })?;
    scalar(db, "like", 3, true, |c| {
        let (Some(p), Some(v)) = (value_str(arg(c, 0)), value_str(arg(c, 1))) else { return Ok(Value::Null) };
        let esc = value_str(arg(c, 2)).unwrap_or_default();
        let mut chars = esc.chars();
        let e = chars.next();
        if chars.next().is_some() {
            return Err(user_err("Incorrect arguments to ESCAPE"));
        }
        like_value(&p, &v, e)
    })?;
    scalar(db, "length", 1, true, |c| {
        Ok(match arg(c, 0) {
            ValueRef::Null => Value::Null,
            ValueRef::Blob(b) => Value::Integer(b.len() as i64),
            v => Value::Integer(value_str(v).unwrap_or_default().len() as i64),
        })
    })?;
    scalar(db, "octet_length", 1, true, |c| Ok(value_str(arg(c, 0)).map_or(Value::Null, |s| Value::Integer(s.len() as i64))))?;
    for name in ["char_length", "character_length"] {
        scalar(db, name, 1, true, |c| Ok(value_str(arg(c, 0)).map_or(Value::Null, |s| Value::Integer(s.chars().count() as i64))))?;
    }
    for name in ["lower", "lcase"] {
        scalar(db, name, 1, true, |c| Ok(text_result(value_str(arg(c, 0)).map(|s| s.to_lowercase()))))?;
    }
    for name in ["upper", "ucase"] {
        scalar(db, name, 1, true, |c| Ok(text_result(value_str(arg(c, 0)).map(|s| s.to_uppercase()))))?;
    }
    scalar(db, "reverse", 1, true, |c| Ok(text_result(value_str(arg(c, 0)).map(|s| s.chars().rev().collect()))))?;
    scalar(db, "repeat", 2, true, |c| {
        let (Some(s), Some(n)) = (value_str(arg(c, 0)), value_int(arg(c, 1))) else { return Ok(Value::Null) };
        let n = n.max(0) as usize;
        if s.len().saturating_mul(n) > 1_000_000 {
            return Ok(Value::Null);
        }
        Ok(Value::Text(s.repeat(n)))
    })?;
    scalar(db, "space", 1, true, |c| {
        let Some(n) = value_int(arg(c, 0)) else { return Ok(Value::Null) };
        Ok(Value::Text(" ".repeat(n.clamp(0, 1_000_000) as usize)))
    })?;
    for (name, left) in [("lpad", true), ("rpad", false)] {
        scalar(db, name, 3, true, move |c| {
            let (Some(s), Some(n), Some(pad)) = (value_str(arg(c, 0)), value_int(arg(c, 1)), value_str(arg(c, 2))) else {
                return Ok(Value::Null);
            };
            let n = n.clamp(-1, 1_000_000);
            if n < 0 {
                return Ok(Value::Null);
            }
            let n = n as usize;
            let chars: Vec<char> = s.chars().collect();
            if chars.len() >= n {
                return Ok(Value::Text(chars[..n].iter().collect()));
            }
            if pad.is_empty() {
                return Ok(Value::Null);
            }
            let fill: String = pad.chars().cycle().take(n - chars.len()).collect();
            Ok(Value::Text(if left { format!("{fill}{s}") } else { format!("{s}{fill}") }))
        })?;
    }
    scalar(db, "substring_index", 3, true, |c| {
        let (Some(s), Some(d), Some(k)) = (value_str(arg(c, 0)), value_str(arg(c, 1)), value_int(arg(c, 2))) else {
            return Ok(Value::Null);
        };
        if d.is_empty() || k == 0 {
            return Ok(Value::Text(String::new()));
        }
        let parts: Vec<&str> = s.split(d.as_str()).collect();
        let k_abs = k.unsigned_abs() as usize;
        if k_abs >= parts.len() {
            return Ok(Value::Text(s));
        }
        let out = if k > 0 { parts[..k_abs].join(&d) } else { parts[parts.len() - k_abs..].join(&d) };
        Ok(Value::Text(out))
    })?;
    scalar(db, "find_in_set", 2, true, |c| {
        let (Some(s), Some(list)) = (value_str(arg(c, 0)), value_str(arg(c, 1))) else { return Ok(Value::Null) };
        let needle = fold(&s);
        let pos = list.split(',').position(|x| fold(x) == needle).map_or(0, |p| p as i64 + 1);
        Ok(Value::Integer(pos))
    })?;
    scalar(db, "strcmp", 2, true, |c| {
        let (Some(a), Some(b)) = (value_str(arg(c, 0)), value_str(arg(c, 1))) else { return Ok(Value::Null) };
        Ok(Value::Integer(match collate_ci(&a, &b) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }))
    })?;
    for name in ["ascii", "ord"] {
        scalar(db, name, 1, true, |c| Ok(value_str(arg(c, 0)).map_or(Value::Null, |s| Value::Integer(s.bytes().next().map_or(0, |b| b as i64)))))?;
    }
    scalar(db, "mysql_insert", 4, true, |c| {
        let (Some(s), Some(pos), Some(len), Some(new)) = (value_str(arg(c, 0)), value_int(arg(c, 1)), value_int(arg(c, 2)), value_str(arg(c, 3)))
        else {
            return Ok(Value::Null);
        };
        let chars: Vec<char> = s.chars().collect();
        if pos < 1 || pos as usize > chars.len() {
            return Ok(Value::Text(s));
        }
        let start = pos as usize - 1;
        let end = if len < 0 { chars.len() } else { (start + len as usize).min(chars.len()) };
        let out: String = chars[..start].iter().chain(new.chars().collect::<Vec<_>>().iter()).chain(chars[end..].iter()).collect();
        Ok(Value::Text(out))
    })?;
    scalar(db, "mysql_isnull", 1, true, |c| Ok(Value::Integer(matches!(arg(c, 0), ValueRef::Null) as i64)))?;
    scalar(db, "mysql_database", 0, true, |_| Ok(Value::Text("dbbench".into())))?;
    scalar(db, "version", 0, true, |_| Ok(Value::Text("8.0.36".into())))?;
    Ok(())
}

/// Casts.
/// CAST to SIGNED, UNSIGNED or DECIMAL (`base` names the SQL function; DECIMAL takes the
/// precision and scale as further arguments).
fn cast_value(base: &str, args: &[ValueRef<'_>]) -> rusqlite::Result<Value> {
    let x = args[0];
    Ok(match base {
        "mysql_cast_signed" => match x {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(f) => Value::Integer(round_half_away(f).clamp(i64::MIN as f64, i64::MAX as f64) as i64),
            v => Value::Integer(mysql_str_to_int(&value_str(v).unwrap_or_default())),
        },
        "mysql_cast_unsigned" => {
            let v = match x {
                ValueRef::Null => return Ok(Value::Null),
                ValueRef::Integer(i) => i,
                ValueRef::Real(f) => round_half_away(f).clamp(i64::MIN as f64, i64::MAX as f64) as i64,
                v => mysql_str_to_int(&value_str(v).unwrap_or_default()),
            };
            if v >= 0 {
                Value::Integer(v)
            } else {
                Value::Real((v as u64) as f64)
            }
        }
        _ => {
            let Some(x) = value_num(x) else { return Ok(Value::Null) };
            let p = args.get(1).map_or(10, |a| value_int(*a).unwrap_or(10)).clamp(1, 65);
            let s = args.get(2).map_or(0, |a| value_int(*a).unwrap_or(0)).clamp(0, 30);
            let scale = 10f64.powi(s as i32);
            let mut v = (x * scale).round() / scale;
            let max = 10f64.powi((p - s) as i32) - 1.0 / scale;
            v = v.clamp(-max, max);
            if s == 0 && v.abs() < 9.0e18 {
                Value::Integer(v as i64)
            } else {
                Value::Real(v)
            }
        }
    })
}

fn register_casts(db: &Connection) -> rusqlite::Result<()> {
    for base in ["mysql_cast_signed", "mysql_cast_unsigned"] {
        scalar(db, base, 1, true, move |c| cast_value(base, &[arg(c, 0)]))?;
    }
    scalar(db, "mysql_cast_decimal", -1, true, |c| {
        if c.is_empty() || c.len() > 3 {
            return Err(user_err("Incorrect parameter count in the call to native function 'cast'"));
        }
        let args: Vec<ValueRef<'_>> = (0..c.len()).map(|i| arg(c, i)).collect();
        cast_value("mysql_cast_decimal", &args)
    })?;
    // The same casts inside INSERT/UPDATE/DELETE: MySQL's strict mode makes the truncation of a
    // string that is not wholly an integer (SIGNED, UNSIGNED) or a number (DECIMAL) error 1292,
    // and the statement changes nothing.
    for (name, base, what) in [
        ("mysql_cast_signed_strict", "mysql_cast_signed", "INTEGER"),
        ("mysql_cast_unsigned_strict", "mysql_cast_unsigned", "INTEGER"),
        ("mysql_cast_decimal_strict", "mysql_cast_decimal", "DECIMAL"),
    ] {
        scalar(db, name, -1, true, move |c| {
            if c.is_empty() || c.len() > 3 {
                return Err(user_err("Incorrect parameter count in the call to native function 'cast'"));
            }
            let v = arg(c, 0);
            if let ValueRef::Text(_) | ValueRef::Blob(_) = v {
                refuse_truncation(&value_str(v).unwrap_or_default(), what)?;
            }
            let args: Vec<ValueRef<'_>> = (0..c.len()).map(|i| arg(c, i)).collect();
            cast_value(base, &args)
        })?;
    }
    scalar(db, "mysql_cast_double", 1, true, |c| Ok(value_num(arg(c, 0)).map_or(Value::Null, Value::Real)))?;
    scalar(db, "mysql_cast_char", -1, true, |c| {
        if c.is_empty() {
            return Ok(Value::Null);
        }
        let Some(s) = value_str(arg(c, 0)) else { return Ok(Value::Null) };
        if c.len() > 1 {
            if let Some(n) = value_int(arg(c, 1)) {
                return Ok(Value::Text(s.chars().take(n.max(0) as usize).collect()));
            }
        }
        Ok(Value::Text(s))
    })?;
    Ok(())
}

/// Math.
fn register_math(db: &Connection) -> rusqlite::Result<()> {
    // Math.
    fn num1(c: &Context<'_>, f: impl Fn(f64) -> Option<f64>) -> Value {
        value_num(arg(c, 0)).and_then(f).map_or(Value::Null, Value::Real)
    }
    for (name, up) in [("floor", false), ("ceil", true), ("ceiling", true)] {
        scalar(db, name, 1, true, move |c| {
            Ok(match arg(c, 0) {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Integer(i),
                v => {
                    let x = value_num(v).unwrap_or(0.0);
                    Value::Real(if up { x.ceil() } else { x.floor() })
                }
            })
        })?;
    }
    for name in ["pow", "power"] {
        scalar(db, name, 2, true, |c| {
            let (Some(a), Some(b)) = (value_num(arg(c, 0)), value_num(arg(c, 1))) else { return Ok(Value::Null) };
            let r = a.powf(b);
            Ok(if r.is_finite() { Value::Real(r) } else { Value::Null })
        })?;
    }
    scalar(db, "sqrt", 1, true, |c| Ok(num1(c, |x| (x >= 0.0).then(|| x.sqrt()))))?;
    scalar(db, "exp", 1, true, |c| Ok(num1(c, |x| Some(x.exp()).filter(|v| v.is_finite()))))?;
    scalar(db, "ln", 1, true, |c| Ok(num1(c, |x| (x > 0.0).then(|| x.ln()))))?;
    scalar(db, "log", 1, true, |c| Ok(num1(c, |x| (x > 0.0).then(|| x.ln()))))?;
    scalar(db, "log", 2, true, |c| {
        let (Some(b), Some(x)) = (value_num(arg(c, 0)), value_num(arg(c, 1))) else { return Ok(Value::Null) };
        Ok(if b > 0.0 && b != 1.0 && x > 0.0 { Value::Real(x.ln() / b.ln()) } else { Value::Null })
    })?;
    scalar(db, "log10", 1, true, |c| Ok(num1(c, |x| (x > 0.0).then(|| x.log10()))))?;
    scalar(db, "log2", 1, true, |c| Ok(num1(c, |x| (x > 0.0).then(|| x.log2()))))?;
    // NULL with a NULL operand or a zero divisor; integers stay integers, anything else is a
    // double (MySQL's string conversion).
    fn divide(c: &Context<'_>, ints: fn(i64, i64) -> i64, doubles: fn(f64, f64) -> Value) -> Value {
        match (arg(c, 0), arg(c, 1)) {
            (ValueRef::Null, _) | (_, ValueRef::Null) | (_, ValueRef::Integer(0)) => Value::Null,
            (ValueRef::Integer(a), ValueRef::Integer(b)) => Value::Integer(ints(a, b)),
            (a, b) => match (value_num(a).unwrap_or(0.0), value_num(b).unwrap_or(0.0)) {
                (_, 0.0) => Value::Null,
                (a, b) => doubles(a, b),
            },
        }
    }
    scalar(db, "mod", 2, true, |c| Ok(divide(c, i64::wrapping_rem, |a, b| Value::Real(a % b))))?;
    // `a DIV b`: integers divide as integers; anything else divides exactly (MySQL uses
    // DECIMAL: '0.3' DIV '0.1' is 3, where doubles give 2.999...) and truncates toward zero.
    scalar(db, "mysql_div", 2, true, |c| {
        Ok(divide(c, i64::wrapping_div, |a, b| {
            let q = a / b;
            let nearest = q.round();
            let q = if (q - nearest).abs() <= 1e-9 * nearest.abs().max(1.0) { nearest } else { q.trunc() };
            Value::Integer(q.clamp(i64::MIN as f64, i64::MAX as f64) as i64)
        }))
    })?;
    scalar(db, "sign", 1, true, |c| {
        Ok(value_num(arg(c, 0)).map_or(Value::Null, |x| {
            Value::Integer(if x > 0.0 {
                1
            } else if x < 0.0 {
                -1
            } else {
                0
            })
        }))
    })?;
    // GREATEST/LEAST as MySQL 8 compares (the rules of its manual, since 8.0.4): NULL if any
    // argument is NULL; numbers compare as numbers; once any argument is a string, every argument
    // compares as a string in the connection collation and the result is that string.
    for (name, mysql_name, want) in [("mysql_greatest", "GREATEST", Ordering::Greater), ("mysql_least", "LEAST", Ordering::Less)] {
        scalar(db, name, -1, true, move |c| {
            if c.len() < 2 {
                return Err(user_err(format!("Incorrect parameter count in the call to native function '{mysql_name}'")));
            }
            let args: Vec<ValueRef<'_>> = (0..c.len()).map(|i| arg(c, i)).collect();
            Ok(greatest_or_least(&args, want))
        })?;
    }
    // ROUND of an approximate (double) value: MySQL rounds `value * 10^d` with the C library's
    // rint(), half to even (`ROUND('88.5')` is 88). The translator sends here the ROUNDs whose
    // argument MySQL computes as a double (a string column, SUM or AVG of one); exact values
    // (literals, integer arithmetic) keep SQLite's half-away-from-zero round, as DECIMAL does.
    for n in [1, 2] {
        scalar(db, "mysql_round_double", n, true, move |c| {
            let Some(x) = value_num(arg(c, 0)) else { return Ok(Value::Null) };
            let d = if n == 2 {
                match value_int(arg(c, 1)) {
                    Some(d) => d,
                    None => return Ok(Value::Null),
                }
            } else {
                0
            };
            Ok(Value::Real(mysql_double_round(x, d)))
        })?;
    }
    scalar(db, "pi", 0, true, |_| Ok(Value::Real(std::f64::consts::PI)))?;
    scalar(db, "truncate", 2, true, |c| {
        let x = arg(c, 0);
        let Some(d) = value_int(arg(c, 1)) else { return Ok(Value::Null) };
        if let ValueRef::Null = x {
            return Ok(Value::Null);
        }
        let v = value_num(x).unwrap_or(0.0);
        let scale = 10f64.powi(d.clamp(-30, 30) as i32);
        let t = (v * scale).trunc() / scale;
        Ok(match x {
            ValueRef::Integer(_) if d >= 0 => Value::Integer(t as i64),
            _ => Value::Real(t),
        })
    })?;
    scalar(db, "rand", 0, false, |_| Ok(Value::Real(rand::random::<f64>())))?;
    scalar(db, "rand", 1, false, |_| Ok(Value::Real(rand::random::<f64>())))?;
    Ok(())
}

/// REGEXP / RLIKE and REGEXP_LIKE.
fn register_regexp(db: &Connection) -> rusqlite::Result<()> {
    // REGEXP / RLIKE (SQLite calls regexp(pattern, value)) and REGEXP_LIKE(value, pattern).
    for (name, pat_first) in [("regexp", true), ("regexp_like", false)] {
        scalar(db, name, 2, true, move |c| {
            let (p, v) = if pat_first { (0, 1) } else { (1, 0) };
            let (Some(pat), Some(val)) = (value_str(arg(c, p)), value_str(arg(c, v))) else { return Ok(Value::Null) };
            let re = super::regex::Regex::new(&pat).map_err(|_| user_err("Illegal argument to a regular expression."))?;
            let hit = re.is_match(&val).map_err(|e| user_err(e.0))?;
            Ok(Value::Integer(hit as i64))
        })?;
    }
    Ok(())
}

/// Date parts of strings MySQL reads as dates.
fn register_dates(db: &Connection) -> rusqlite::Result<()> {
    // Date parts of strings MySQL reads as dates ('2011-05-03', '2011/5/3 10:00', '20110503');
    // anything else is NULL, as in MySQL.
    for (name, part) in [("year", 0usize), ("month", 1), ("day", 2), ("dayofmonth", 2)] {
        scalar(db, name, 1, true, move |c| {
            let Some(s) = value_str(arg(c, 0)) else { return Ok(Value::Null) };
            Ok(match parse_mysql_date(&s) {
                Some((y, m, d)) => Value::Integer([y, m as i64, d as i64][part]),
                None => Value::Null,
            })
        })?;
    }
    Ok(())
}

/// The clock (UTC).
fn register_clock(db: &Connection) -> rusqlite::Result<()> {
    // Clock (UTC).
    type Clock = (&'static str, fn() -> String);
    let clock: [Clock; 6] = [
        ("mysql_now", || {
            let (y, m, d, h, mi, s) = civil_now();
            format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}")
        }),
        ("mysql_sysdate", || {
            let (y, m, d, h, mi, s) = civil_now();
            format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}")
        }),
        ("mysql_utc_timestamp", || {
            let (y, m, d, h, mi, s) = civil_now();
            format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}")
        }),
        ("mysql_curdate", || {
            let (y, m, d, ..) = civil_now();
            format!("{y:04}-{m:02}-{d:02}")
        }),
        ("mysql_curtime", || {
            let (_, _, _, h, mi, s) = civil_now();
            format!("{h:02}:{mi:02}:{s:02}")
        }),
        ("now", || {
            let (y, m, d, h, mi, s) = civil_now();
            format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}")
        }),
    ];
    for (name, f) in clock {
        scalar(db, name, 0, false, move |_| Ok(Value::Text(f())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding() {
        assert_eq!(collate_ci("Élan", "elan"), Ordering::Equal);
        assert_eq!(collate_ci("STRASSE", "straße"), Ordering::Equal);
        assert_ne!(collate_ci("a ", "a"), Ordering::Equal);
        assert_eq!(collate_ci("abc", "ABD"), Ordering::Less);
    }

    #[test]
    fn conversions() {
        assert_eq!(mysql_str_to_double("5,200"), 5.0);
        assert_eq!(mysql_str_to_double("  -12.5e2x"), -1250.0);
        assert_eq!(mysql_str_to_double("abc"), 0.0);
        assert_eq!(mysql_str_to_double("£8.5m"), 0.0);
        assert_eq!(mysql_str_to_double("7."), 7.0);
        assert_eq!(mysql_str_to_int("12.7abc"), 12);
        assert_eq!(mysql_double_to_string(2011.0), "2011");
        assert_eq!(mysql_double_to_string(0.1), "0.1");
        assert_eq!(mysql_double_to_string(1e20), "1e20");
        assert_eq!(mysql_double_to_string(-2.5e-7), "-2.5e-7");
        assert_eq!(mysql_double_to_string(123.456), "123.456");
    }

    #[test]
    fn like_and_locate() {
        let like = |p: &str, v: &str, e: Option<char>| mysql_like(p, v, e).unwrap();
        assert!(like("%jimmy%", "Jimmy Page", Some('\\')));
        assert!(like("caf_", "Café", Some('\\')));
        assert!(like("50\\%", "50%", Some('\\')));
        assert!(!like("50\\%", "500", Some('\\')));
        assert!(like("a%b%c", "aXXbYYc", None));
        assert!(!like("a%b%c", "aXXbYY", None));
        assert_eq!(locate_ci("B", "abc", 1), 2);
        assert_eq!(locate_ci("z", "abc", 1), 0);
    }

    #[test]
    fn dates() {
        assert_eq!(parse_mysql_date("2011-05-03"), Some((2011, 5, 3)));
        assert_eq!(parse_mysql_date("2011/5/3 10:00:00"), Some((2011, 5, 3)));
        assert_eq!(parse_mysql_date("20110503"), Some((2011, 5, 3)));
        assert_eq!(parse_mysql_date("99-01-02"), Some((1999, 1, 2)));
        assert_eq!(parse_mysql_date("4 June 1997"), None);
        assert_eq!(parse_mysql_date("2011-13-01"), None);
    }

    #[test]
    fn substring_and_join() {
        assert_eq!(mysql_substring("abcdef", 1, Some(5)), "abcde");
        assert_eq!(mysql_substring("abcdef", 0, Some(5)), "");
        assert_eq!(mysql_substring("abcdef", -2, None), "ef");
        assert_eq!(gc_join(&["ab".into(), "cd".into()], ",", 4), "ab,c");
    }
}
