//! MySQL to SQLite: turns one MySQL statement into SQL the embedded executor can run with the
//! MySQL behaviours DBBench relies on, or into a meta statement (`SHOW TABLES`, `DESCRIBE t`) the
//! executor answers itself.
//!
//! Everything works on the shared token list from [`sqltext`](super::sqltext):
//! - literals: `"..."` is a string (not an identifier), backslash escapes are resolved, adjacent
//!   literals concatenate, backquoted names become SQLite identifiers;
//! - MySQL-only syntax: `LIMIT a, b`, `CAST(x AS SIGNED|UNSIGNED|DECIMAL(p,s)|CHAR|DOUBLE)`,
//!   `CONVERT(x, T)`, `GROUP_CONCAT(... ORDER BY ... SEPARATOR s)`, `SUBSTRING(s FROM a FOR b)`,
//!   `TRIM(LEADING x FROM s)`, `POSITION(a IN b)`, `IF()`, `LEFT()`, `RIGHT()`, `||`/`&&` as
//!   logic, `<=>`, `DIV`, `MOD`, `FROM DUAL`, `dbbench.` qualifiers, `UPDATE/DELETE ... LIMIT n`;
//! - MySQL type conversion: a comparison between a string-valued operand (a TEXT column) and a
//!   number compares numerically (`mysql_num()` does MySQL's prefix conversion, `'5,200'` is 5);
//!   arithmetic on strings is double arithmetic; a numeric literal inserted into a TEXT column is
//!   stored as MySQL would print it (`1.50` stays `1.50`);
//! - comparisons against string literals use the `mysql_ci` collation even when the other side is
//!   an expression (in MySQL the connection collation is case- and accent-insensitive too);
//! - MySQL 8 reserved words that SQLite would accept as bare names (`Rank`, `Key`, `Rows`) are a
//!   syntax error, as they are on MySQL.
//!
//! Statements that could touch files or other databases (`ATTACH`, `DETACH`, `PRAGMA`, `VACUUM`,
//! `LOAD DATA`, `INTO OUTFILE`) are refused here; the executor's authorizer is the second line.

use super::convert;
use super::sqltext::{self, dquote, lex, squote, TokKind, Token};
pub use super::words::StmtKind;
use super::words::{changes_data, is_dml, matching, Tk};

pub use super::convert::mysql_number_literal_text;

/// A translated statement with a map from output offsets back to source offsets, so SQLite's
/// error positions can be reported against the text the agent wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Translation {
    pub sql: String,
    pub kind: StmtKind,
    /// `(output offset, source offset)` pairs, ascending.
    offsets: Vec<(usize, usize)>,
    source_len: usize,
}

impl Translation {
    /// The source offset of the token that produced output offset `out`.
    pub fn source_offset(&self, out: usize) -> usize {
        if out >= self.sql.len() {
            return self.source_len;
        }
        match self.offsets.binary_search_by(|(o, _)| o.cmp(&out)) {
            Ok(i) => self.offsets[i].1,
            Err(0) => 0,
            Err(i) => self.offsets[i - 1].1,
        }
    }
}

/// Transaction control the executor handles against the connection state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxOp {
    Begin,
    Commit,
    Rollback,
}

/// A prepared statement: SQL for SQLite, or a meta statement answered by the executor.
#[derive(Clone, Debug, PartialEq)]
pub enum Prepared {
    Sql(Translation),
    ShowTables {
        full: bool,
        like: Option<String>,
    },
    ShowColumns {
        table: String,
        full: bool,
        like: Option<String>,
    },
    ShowCreateTable {
        table: String,
    },
    ShowIndex {
        table: String,
    },
    ShowDatabases,
    Use {
        database: String,
    },
    Transaction(TxOp),
    /// Accepted and ignored (`SET NAMES utf8mb4`, `LOCK TABLES`, `SHOW WARNINGS`).
    Noop,
}

/// Why a statement could not be prepared. Offsets are byte offsets in the source text.
#[derive(Clone, Debug, PartialEq)]
pub enum PrepError {
    /// MySQL would report a syntax error at `offset`.
    Syntax { offset: usize },
    /// A statement the executor refuses to run (file or database access); MySQL itself would
    /// report a syntax error at `offset`.
    Refused { offset: usize, what: String },
    /// A table MySQL would not know (`sqlite_master`).
    UnknownTable { name: String },
    /// Valid MySQL the embedded executor does not implement.
    Unsupported { what: String },
    /// Nothing but whitespace and comments.
    Empty,
    /// An UPDATE or DELETE reading its own target table in a subquery (MySQL's error 1093).
    TargetInSubquery { name: String },
}

/// Prepare the whole text of one `execute_sql` call: exactly one non-empty statement (MySQL's
/// connector refuses several), translated or recognised as a meta statement.
pub fn prepare(src: &str) -> Result<Prepared, PrepError> {
    let toks = lex(src).map_err(|e| PrepError::Syntax { offset: e.offset })?;
    let stmts = sqltext::split_statements(&toks);
    match stmts.len() {
        0 => return Err(PrepError::Empty),
        1 => {}
        _ => return Err(PrepError::Syntax { offset: toks[stmts[1].start].start }),
    }
    let range = stmts[0].clone();
    // Anything after the statement other than semicolons was handled by split_statements.
    prepare_statement(src, &toks[range])
}

fn word_at(toks: &[Token], i: usize) -> Option<String> {
    toks.get(i).and_then(|t| t.upper())
}

fn ident_name(t: Option<&Token>) -> Option<String> {
    let t = t?;
    match t.kind {
        TokKind::Word | TokKind::QuotedIdent => Some(t.value.clone()),
        _ => None,
    }
}

/// A table reference `name` or `db.name` starting at `i`: (name, next index).
fn table_ref(toks: &[Token], i: usize) -> Option<(String, usize)> {
    let first = ident_name(toks.get(i))?;
    if toks.get(i + 1).is_some_and(|t| t.kind == TokKind::Dot) {
        let second = ident_name(toks.get(i + 2))?;
        return Some((second, i + 3));
    }
    Some((first, i + 1))
}

fn like_clause(toks: &[Token], i: usize) -> Option<String> {
    if toks.get(i).is_some_and(|t| t.is_kw("LIKE")) {
        toks.get(i + 1).filter(|t| t.kind == TokKind::Str).map(|t| t.value.clone())
    } else {
        None
    }
}

/// The table an UPDATE or DELETE changes, when it changes exactly one.
fn target_table(toks: &[Token], head: &str) -> Option<String> {
    let mut i = 1;
    while matches!(word_at(toks, i).as_deref(), Some("LOW_PRIORITY" | "QUICK" | "IGNORE")) {
        i += 1;
    }
    if head == "DELETE" {
        if word_at(toks, i).as_deref() != Some("FROM") {
            return None; // multi-table DELETE t1, t2 FROM ...
        }
        i += 1;
    }
    let (name, next) = table_ref(toks, i)?;
    let after = toks.get(next);
    // `UPDATE a, b` / `UPDATE a JOIN b`: several tables, left alone
    if after.is_some_and(|t| t.kind == TokKind::Comma || t.is_kw("JOIN") || t.is_kw("INNER") || t.is_kw("LEFT") || t.is_kw("STRAIGHT_JOIN")) {
        return None;
    }
    Some(name)
}

/// MySQL 8 refuses an UPDATE or DELETE whose subquery reads the table it changes (error 1093:
/// "You can't specify target table 'x' for update in FROM clause"); SQLite and MariaDB run it.
/// A derived table (`FROM (SELECT ... FROM x) AS d`) is materialised first and stays allowed.
fn check_target_not_in_subquery(toks: &[Token], head: &str) -> Result<(), PrepError> {
    let Some(target) = target_table(toks, head) else { return Ok(()) };
    // for each open parenthesis: does it open a derived table?
    let mut derived: Vec<bool> = Vec::new();
    for i in 0..toks.len() {
        match toks[i].kind {
            TokKind::LParen => {
                let prev = i.checked_sub(1).map(|p| &toks[p]);
                derived.push(prev.is_some_and(|p| p.is_kw("FROM") || p.is_kw("JOIN")));
            }
            TokKind::RParen => {
                derived.pop();
            }
            _ if !derived.is_empty() && !derived.contains(&true) && (toks[i].is_kw("FROM") || toks[i].is_kw("JOIN")) => {
                if let Some((name, _)) = table_ref(toks, i + 1) {
                    if name == target {
                        return Err(PrepError::TargetInSubquery { name });
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn prepare_statement(src: &str, toks: &[Token]) -> Result<Prepared, PrepError> {
    let first = &toks[0];
    let head = first.upper().unwrap_or_default();
    if head == "UPDATE" || head == "DELETE" {
        check_target_not_in_subquery(toks, &head)?;
    }
    let err_at = |i: usize| PrepError::Syntax { offset: toks.get(i).map_or(src.len(), |t| t.start) };
    match head.as_str() {
        "ATTACH" | "DETACH" | "PRAGMA" | "VACUUM" => {
            return Err(PrepError::Refused { offset: first.start, what: head });
        }
        "LOAD" => return Err(PrepError::Refused { offset: first.start, what: "LOAD DATA".into() }),
        "SHOW" => {
            let mut i = 1;
            let full = word_at(toks, i).as_deref() == Some("FULL");
            if full {
                i += 1;
            }
            match word_at(toks, i).as_deref() {
                Some("TABLES") => {
                    let mut j = i + 1;
                    if matches!(word_at(toks, j).as_deref(), Some("FROM" | "IN")) {
                        j = table_ref(toks, j + 1).map_or(j + 2, |(_, n)| n);
                    }
                    return Ok(Prepared::ShowTables { full, like: like_clause(toks, j) });
                }
                Some("COLUMNS" | "FIELDS") => {
                    if !matches!(word_at(toks, i + 1).as_deref(), Some("FROM" | "IN")) {
                        return Err(err_at(i + 1));
                    }
                    let (table, mut j) = table_ref(toks, i + 2).ok_or_else(|| err_at(i + 2))?;
                    if matches!(word_at(toks, j).as_deref(), Some("FROM" | "IN")) {
                        j += 2;
                    }
                    return Ok(Prepared::ShowColumns { table, full, like: like_clause(toks, j) });
                }
                Some("CREATE") if word_at(toks, i + 1).as_deref() == Some("TABLE") => {
                    let (table, _) = table_ref(toks, i + 2).ok_or_else(|| err_at(i + 2))?;
                    return Ok(Prepared::ShowCreateTable { table });
                }
                Some("INDEX" | "INDEXES" | "KEYS") => {
                    let (table, _) = table_ref(toks, i + 2).ok_or_else(|| err_at(i + 2))?;
                    return Ok(Prepared::ShowIndex { table });
                }
                Some("DATABASES" | "SCHEMAS") => return Ok(Prepared::ShowDatabases),
                Some("WARNINGS" | "ERRORS") => return Ok(Prepared::Noop),
                Some(other) => {
                    return Err(PrepError::Unsupported { what: format!("SHOW {other}") });
                }
                None => return Err(err_at(i)),
            }
        }
        "DESCRIBE" | "DESC" | "EXPLAIN" => {
            let next = toks.get(1);
            let is_stmt =
                next.and_then(|t| t.upper()).is_some_and(|w| matches!(w.as_str(), "SELECT" | "WITH" | "INSERT" | "UPDATE" | "DELETE" | "REPLACE"))
                    || next.is_some_and(|t| t.kind == TokKind::LParen);
            if !is_stmt {
                let (table, j) = table_ref(toks, 1).ok_or_else(|| err_at(1))?;
                let like = ident_name(toks.get(j));
                return Ok(Prepared::ShowColumns { table, full: false, like });
            }
            let mut t = translate_statement(src, &toks[1..])?;
            t.sql = format!("EXPLAIN QUERY PLAN {}", t.sql);
            let shift = "EXPLAIN QUERY PLAN ".len();
            for o in t.offsets.iter_mut() {
                o.0 += shift;
            }
            t.kind = StmtKind::Select;
            return Ok(Prepared::Sql(t));
        }
        "USE" => {
            let db = ident_name(toks.get(1)).ok_or_else(|| err_at(1))?;
            return Ok(Prepared::Use { database: db });
        }
        "SET" | "LOCK" | "UNLOCK" | "FLUSH" => return Ok(Prepared::Noop),
        "BEGIN" => return Ok(Prepared::Transaction(TxOp::Begin)),
        "START" if word_at(toks, 1).as_deref() == Some("TRANSACTION") => return Ok(Prepared::Transaction(TxOp::Begin)),
        "COMMIT" => return Ok(Prepared::Transaction(TxOp::Commit)),
        "ROLLBACK" => return Ok(Prepared::Transaction(TxOp::Rollback)),
        _ => {}
    }
    translate_statement(src, toks).map(Prepared::Sql)
}

fn stmt_kind(toks: &[Token]) -> StmtKind {
    let mut i = 0;
    while toks.get(i).is_some_and(|t| t.kind == TokKind::LParen) {
        i += 1;
    }
    match word_at(toks, i).as_deref() {
        Some("SELECT" | "WITH" | "VALUES" | "TABLE") => StmtKind::Select,
        Some("INSERT" | "REPLACE") => StmtKind::Insert,
        Some("UPDATE") => StmtKind::Update,
        Some("DELETE" | "TRUNCATE") => StmtKind::Delete,
        Some("CREATE" | "DROP" | "ALTER" | "RENAME") => StmtKind::Ddl,
        _ => StmtKind::Other,
    }
}

/// Translate one MySQL statement (its tokens, without the trailing `;`).
fn translate_statement(src: &str, toks: &[Token]) -> Result<Translation, PrepError> {
    let kind = stmt_kind(toks);
    // Unbalanced parentheses: MySQL reports the syntax error at the end or at the stray `)`.
    let mut depth = 0i64;
    for t in toks {
        match t.kind {
            TokKind::LParen => depth += 1,
            TokKind::RParen => {
                depth -= 1;
                if depth < 0 {
                    return Err(PrepError::Syntax { offset: t.start });
                }
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(PrepError::Syntax { offset: src.len() });
    }
    for (i, t) in toks.iter().enumerate() {
        if t.kind == TokKind::Param && t.value == "?" {
            return Err(PrepError::Syntax { offset: t.start });
        }
        // MySQL has no bracket identifiers (SQLite would read `[a b]` as one) and no `:name`.
        if t.kind == TokKind::Op && matches!(t.value.as_str(), "[" | "]" | "{" | "}" | ":") {
            return Err(PrepError::Syntax { offset: t.start });
        }
        // A quoted string where a table name belongs (SQLite would take it as the name).
        if t.kind == TokKind::Str && i > 0 && ["FROM", "JOIN", "INTO", "UPDATE", "TABLE"].iter().any(|k| toks[i - 1].is_kw(k)) {
            return Err(PrepError::Syntax { offset: t.start });
        }
        if t.kind == TokKind::Param && t.value.starts_with("@@") {
            return Err(PrepError::Unsupported { what: format!("system variable {}", t.value) });
        }
        if t.is_kw("OUTFILE") || t.is_kw("DUMPFILE") {
            return Err(PrepError::Refused { offset: t.start, what: t.value.to_ascii_uppercase() });
        }
        if t.is_ident() {
            let lower = t.value.to_ascii_lowercase();
            if matches!(
                lower.as_str(),
                "sqlite_master" | "sqlite_schema" | "sqlite_temp_master" | "sqlite_temp_schema" | "sqlite_sequence" | "sqlite_stat1" | "sqlite_stat4"
            ) {
                return Err(PrepError::UnknownTable { name: t.value.clone() });
            }
        }
        if is_dml(kind) && sqltext::reserved_word_misuse(toks, i) {
            return Err(PrepError::Syntax { offset: t.start });
        }
    }
    let mut tks: Vec<Tk> =
        toks.iter().map(|t| Tk { tok: t.clone(), out: t.value.clone(), pre: String::new(), post: String::new(), removed: false }).collect();
    structural(&mut tks, kind)?;
    convert::convert(&mut tks, kind);
    if matches!(kind, StmtKind::Update | StmtKind::Delete) {
        mutation_limit(&mut tks);
    }
    if kind == StmtKind::Ddl {
        ddl_cleanup(&mut tks);
    }
    // Emit.
    let mut sql = String::new();
    let mut offsets = Vec::with_capacity(tks.len());
    for tk in &tks {
        if tk.pre.is_empty() && tk.out.is_empty() && tk.post.is_empty() {
            continue;
        }
        if !sql.is_empty() {
            sql.push(' ');
        }
        offsets.push((sql.len(), tk.tok.start));
        sql.push_str(&tk.pre);
        sql.push_str(&tk.out);
        sql.push_str(&tk.post);
    }
    Ok(Translation { sql, kind, offsets, source_len: src.len() })
}

/// Index of the next token after `i` that was not removed.
fn next_live(tks: &[Tk], i: usize, hi: usize) -> Option<usize> {
    (i + 1..hi).find(|&j| !tks[j].removed)
}

/// Whether the first argument of the call opened at `open` is one MySQL computes as a double: a
/// column (DBBench's columns hold strings) or a string, alone or under SUM/AVG. Those ROUNDs
/// round half to even; see `mysql_round_double`.
fn rounds_a_double(tks: &[Tk], open: usize) -> bool {
    let Some(close) = matching(tks, open) else { return false };
    let live: Vec<usize> = (open + 1..close).filter(|&j| !tks[j].removed).collect();
    let first_end = live
        .iter()
        .scan(0i32, |depth, &j| {
            match tks[j].tok.kind {
                TokKind::LParen => *depth += 1,
                TokKind::RParen => *depth -= 1,
                TokKind::Comma if *depth == 0 => return None,
                _ => {}
            }
            Some(j)
        })
        .count();
    let first = &live[..first_end];
    let kinds: Vec<TokKind> = first.iter().map(|&j| tks[j].tok.kind).collect();
    let column_or_string = |ks: &[TokKind], idx: &[usize]| match ks {
        [TokKind::Str] | [TokKind::QuotedIdent] => true,
        [TokKind::Word] => !super::words::is_keyword(&tks[idx[0]].tok.value.to_ascii_uppercase()),
        [TokKind::Word | TokKind::QuotedIdent, TokKind::Dot, TokKind::Word | TokKind::QuotedIdent] => true,
        _ => false,
    };
    if column_or_string(&kinds, first) {
        return true;
    }
    let n = kinds.len();
    n >= 4
        && kinds[0] == TokKind::Word
        && (tks[first[0]].tok.is_kw("AVG") || tks[first[0]].tok.is_kw("SUM"))
        && kinds[1] == TokKind::LParen
        && kinds[n - 1] == TokKind::RParen
        && column_or_string(&kinds[2..n - 1], &first[2..n - 1])
}

/// The DECIMAL scale of each result column of a translated SELECT whose value MySQL types as
/// DECIMAL(M,D): `CAST(x AS DECIMAL(M,D))` itself, or MIN/MAX/SUM of it (scale D) or AVG of it
/// (scale D + 4, MySQL's `div_precision_increment`). SQLite computes these as doubles; the
/// executor writes them back as MySQL sends them (`Decimal('16.00')`, not `16.0`), which is what
/// the scorer compares. Empty when no column is such (or the statement is a UNION).
pub fn decimal_result_scales(sql: &str) -> Vec<Option<u32>> {
    if !sql.contains("mysql_cast_decimal") {
        return Vec::new();
    }
    let Ok(toks) = lex(sql) else { return Vec::new() };
    let Some(select) = toks.iter().position(|t| t.is_kw("SELECT")) else { return Vec::new() };
    let mut items: Vec<Vec<&Token>> = vec![Vec::new()];
    let mut depth = 0i32;
    for t in &toks[select + 1..] {
        match t.kind {
            TokKind::LParen => depth += 1,
            TokKind::RParen => depth -= 1,
            _ => {}
        }
        if depth == 0 && (t.is_kw("FROM") || t.is_kw("UNION") || t.kind == TokKind::Semi) {
            if t.is_kw("UNION") {
                return Vec::new();
            }
            break;
        }
        if depth == 0 && t.kind == TokKind::Comma {
            items.push(Vec::new());
        } else if !(items.len() == 1 && items[0].is_empty() && (t.is_kw("DISTINCT") || t.is_kw("ALL"))) {
            if let Some(item) = items.last_mut() {
                item.push(t);
            }
        }
    }
    items.iter().map(|item| decimal_scale(item)).collect()
}

fn decimal_scale(item: &[&Token]) -> Option<u32> {
    // drop an alias: `... AS name` or `...) name` (the translation double-quotes names, which
    // this lexer reads as strings)
    let mut end = item.len();
    let name = |t: &Token| t.is_ident() || t.kind == TokKind::Str;
    if end >= 2 && name(item[end - 1]) && (item[end - 2].is_kw("AS") || item[end - 2].kind == TokKind::RParen) {
        end -= if item[end - 2].is_kw("AS") { 2 } else { 1 };
    }
    let item = &item[..end];
    // `name ( ... )` and nothing after the parenthesis that closes it (`f(a) + f(b)` is not a call)
    let call = |toks: &[&Token], name: &str| {
        if toks.len() < 3 || !toks[0].is_kw(name) || toks[1].kind != TokKind::LParen {
            return false;
        }
        let mut depth = 0i32;
        for (i, t) in toks.iter().enumerate().skip(1) {
            match t.kind {
                TokKind::LParen => depth += 1,
                TokKind::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return i == toks.len() - 1;
                    }
                }
                _ => {}
            }
        }
        false
    };
    if call(item, "mysql_cast_decimal") || call(item, "mysql_cast_decimal_strict") {
        // `mysql_cast_decimal(x, M, D)`: the scale is the number before the closing parenthesis
        // when a precision comes before it; `CAST(x AS DECIMAL)` and `DECIMAL(M)` have scale 0
        let n = item.len();
        let top_commas = item[2..n - 1]
            .iter()
            .scan(0i32, |d, t| {
                match t.kind {
                    TokKind::LParen => *d += 1,
                    TokKind::RParen => *d -= 1,
                    _ => {}
                }
                Some(*d == 0 && t.kind == TokKind::Comma)
            })
            .filter(|c| *c)
            .count();
        return match top_commas {
            2 => item[n - 2].value.parse::<u32>().ok().map(|d| d.min(30)),
            _ => Some(0),
        };
    }
    for (agg, extra) in [("SUM", 0), ("MIN", 0), ("MAX", 0), ("AVG", 4)] {
        if call(item, agg) && item.len() > 3 {
            let inner = &item[2..item.len() - 1];
            let inner = if inner.first().is_some_and(|t| t.is_kw("DISTINCT")) { &inner[1..] } else { inner };
            return decimal_scale(inner).map(|d| (d + extra).min(30));
        }
    }
    None
}

/// Indices of tokens at depth 1 inside the parentheses `open..close`.
fn top_level_inside(tks: &[Tk], open: usize, close: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for (i, tk) in tks.iter().enumerate().take(close).skip(open + 1) {
        match tk.tok.kind {
            TokKind::LParen => {
                if depth == 0 {
                    out.push(i);
                }
                depth += 1;
            }
            TokKind::RParen => depth = depth.saturating_sub(1),
            _ => {
                if depth == 0 {
                    out.push(i);
                }
            }
        }
    }
    out
}

fn string_literal_sql(s: &str) -> String {
    if !s.contains('\0') {
        return squote(s);
    }
    let parts: Vec<String> = s.split('\0').map(squote).collect();
    format!("({})", parts.join(" || char(0) || "))
}

fn map_collation(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    if lower == "binary" || lower.ends_with("_bin") || lower.ends_with("_cs") || lower.ends_with("_as_cs") {
        "BINARY"
    } else {
        "mysql_ci"
    }
}

/// Token-level rewrites of MySQL-only syntax.
fn structural(tks: &mut [Tk], kind: StmtKind) -> Result<(), PrepError> {
    let n = tks.len();
    // Adjacent string literals concatenate ('a' 'b' is 'ab').
    for i in 1..n {
        if tks[i].tok.kind == TokKind::Str {
            if let Some(p) = (0..i).rev().find(|&j| !tks[j].removed) {
                if p == i - 1 && tks[p].tok.kind == TokKind::Str {
                    let add = tks[i].tok.value.clone();
                    tks[p].tok.value.push_str(&add);
                    tks[i].remove();
                }
            }
        }
    }
    // Literals and operators first, so the word rewrites below can place their own text.
    for i in 0..n {
        if tks[i].removed {
            continue;
        }
        let next = next_live(tks, i, n);
        match tks[i].tok.kind {
            TokKind::Str => {
                tks[i].out = string_literal_sql(&tks[i].tok.value);
                continue;
            }
            TokKind::Hex => {
                let v = &tks[i].tok.value;
                let v = if v.len() % 2 == 1 { format!("0{v}") } else { v.clone() };
                tks[i].out = format!("X'{v}'");
                continue;
            }
            TokKind::QuotedIdent => {
                tks[i].out = dquote(&tks[i].tok.value);
                if tks[i].tok.value == "dbbench" && next.is_some_and(|j| tks[j].tok.kind == TokKind::Dot) {
                    tks[i].remove();
                    if let Some(j) = next {
                        tks[j].remove();
                    }
                }
                continue;
            }
            TokKind::Param => {
                // An unset user variable is NULL in MySQL.
                tks[i].set(TokKind::Word, "NULL", "NULL");
                continue;
            }
            TokKind::Op => {
                let v = tks[i].tok.value.clone();
                match v.as_str() {
                    "||" => tks[i].set(TokKind::Word, "OR", "OR"),
                    "&&" => tks[i].set(TokKind::Word, "AND", "AND"),
                    // stays an operator, so the expression pass compares it as `=` (numerically
                    // with a number); SQLite's IS is its NULL-safe equality
                    "<=>" => tks[i].out = "IS".into(),
                    "!" => tks[i].set(TokKind::Word, "NOT", "NOT"),
                    ":=" | "^" => return Err(PrepError::Unsupported { what: format!("operator {v}") }),
                    _ => {}
                }
                continue;
            }
            _ => continue,
        }
    }
    for i in 0..n {
        if tks[i].removed || tks[i].tok.kind != TokKind::Word {
            continue;
        }
        let next = next_live(tks, i, n);
        let next_is_paren = next.is_some_and(|j| tks[j].tok.kind == TokKind::LParen);
        let up = tks[i].tok.value.to_ascii_uppercase();
        match up.as_str() {
            "DBBENCH" if next.is_some_and(|j| tks[j].tok.kind == TokKind::Dot) => {
                tks[i].remove();
                if let Some(j) = next {
                    tks[j].remove();
                }
            }
            "IF" if next_is_paren => tks[i].set(TokKind::Word, "iif", "iif"),
            "LEFT" if next_is_paren => tks[i].set(TokKind::Word, "mysql_left", "mysql_left"),
            "RIGHT" if next_is_paren => tks[i].set(TokKind::Word, "mysql_right", "mysql_right"),
            "ISNULL" if next_is_paren => tks[i].set(TokKind::Word, "mysql_isnull", "mysql_isnull"),
            "NULLIF" if next_is_paren && changes_data(kind) => tks[i].set(TokKind::Word, "mysql_nullif_strict", "mysql_nullif_strict"),
            "NULLIF" if next_is_paren => tks[i].set(TokKind::Word, "mysql_nullif", "mysql_nullif"),
            "GREATEST" if next_is_paren => tks[i].set(TokKind::Word, "mysql_greatest", "mysql_greatest"),
            "LEAST" if next_is_paren => tks[i].set(TokKind::Word, "mysql_least", "mysql_least"),
            "ROUND" if next_is_paren && rounds_a_double(tks, next.unwrap_or(i)) => {
                tks[i].set(TokKind::Word, "mysql_round_double", "mysql_round_double")
            }
            "DATABASE" | "SCHEMA" if next_is_paren => tks[i].set(TokKind::Word, "mysql_database", "mysql_database"),
            "INSERT" if next_is_paren => tks[i].set(TokKind::Word, "mysql_insert", "mysql_insert"),
            "CAST" if next_is_paren => cast(tks, i, next.unwrap_or(i), false, changes_data(kind))?,
            "CONVERT" if next_is_paren => cast(tks, i, next.unwrap_or(i), true, changes_data(kind))?,
            "GROUP_CONCAT" if next_is_paren => group_concat(tks, i, next.unwrap_or(i)),
            "SUBSTRING" | "SUBSTR" | "MID" if next_is_paren => {
                tks[i].set(TokKind::Word, "mysql_substring", "mysql_substring");
                let open = next.unwrap_or(i);
                if let Some(close) = matching(tks, open) {
                    for j in top_level_inside(tks, open, close) {
                        if tks[j].tok.is_kw("FROM") || tks[j].tok.is_kw("FOR") {
                            tks[j].set(TokKind::Comma, ",", ",");
                        }
                    }
                }
            }
            "POSITION" if next_is_paren => {
                tks[i].set(TokKind::Word, "mysql_locate", "mysql_locate");
                let open = next.unwrap_or(i);
                if let Some(close) = matching(tks, open) {
                    for j in top_level_inside(tks, open, close) {
                        if tks[j].tok.is_kw("IN") {
                            tks[j].set(TokKind::Comma, ",", ",");
                            break;
                        }
                    }
                }
            }
            "TRIM" if next_is_paren => trim(tks, i, next.unwrap_or(i)),
            "LIMIT" => {
                // LIMIT a, b  ->  LIMIT b OFFSET a
                let a = next;
                let c = a.and_then(|a| next_live(tks, a, n));
                let b = c.and_then(|c| next_live(tks, c, n));
                if let (Some(a), Some(c), Some(b)) = (a, c, b) {
                    if tks[c].tok.kind == TokKind::Comma && tks[a].tok.kind == TokKind::Number && tks[b].tok.kind == TokKind::Number {
                        let (av, bv) = (tks[a].out.clone(), tks[b].out.clone());
                        tks[a].out = bv;
                        tks[b].out = av;
                        tks[c].set(TokKind::Word, "OFFSET", "OFFSET");
                    }
                }
            }
            "MOD" if !next_is_paren => tks[i].set(TokKind::Op, "%", "%"),
            "DIV" => tks[i].set(TokKind::Op, "DIV", "/"),
            "DISTINCTROW" => tks[i].set(TokKind::Word, "DISTINCT", "DISTINCT"),
            "STRAIGHT_JOIN" => tks[i].set(TokKind::Word, "JOIN", "JOIN"),
            "SQL_CALC_FOUND_ROWS" | "SQL_NO_CACHE" | "SQL_CACHE" | "SQL_SMALL_RESULT" | "SQL_BIG_RESULT" | "SQL_BUFFER_RESULT" | "HIGH_PRIORITY" => {
                tks[i].remove()
            }
            "LOW_PRIORITY" | "DELAYED" | "QUICK" if kind != StmtKind::Select => tks[i].remove(),
            "IGNORE" if i > 0 && tks[..i].iter().rev().find(|t| !t.removed).is_some_and(|t| t.tok.is_kw("INSERT")) => {
                tks[i].out = "OR IGNORE".into();
            }
            "IGNORE" if kind == StmtKind::Update && i > 0 && tks[i - 1].tok.is_kw("UPDATE") => {
                tks[i].out = "OR IGNORE".into();
            }
            "TRUNCATE" if i == 0 => {
                tks[i].out = "DELETE".into();
                match next {
                    Some(j) if tks[j].tok.is_kw("TABLE") => tks[j].out = "FROM".into(),
                    _ => tks[i].out = "DELETE FROM".into(),
                }
            }
            "FROM" if next.is_some_and(|j| tks[j].tok.is_kw("DUAL")) => {
                tks[i].remove();
                if let Some(j) = next {
                    tks[j].remove();
                }
            }
            "COLLATE" => {
                if let Some(j) = next {
                    let name = tks[j].tok.value.clone();
                    tks[j].set(TokKind::Word, map_collation(&name), map_collation(&name));
                }
            }
            "RLIKE" => tks[i].set(TokKind::Word, "REGEXP", "REGEXP"),
            "NOW" | "SYSDATE" | "CURDATE" | "CURTIME" | "UTC_TIMESTAMP" if next_is_paren => {
                let lower = up.to_ascii_lowercase();
                tks[i].set(TokKind::Word, &format!("mysql_{lower}"), &format!("mysql_{lower}"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// `CAST(x AS T)` / `CONVERT(x, T)` / `CONVERT(x USING cs)`.
/// In a data change (`strict`) SIGNED, UNSIGNED and DECIMAL refuse truncating strings, as MySQL's
/// strict mode does (the `_strict` functions).
fn cast(tks: &mut [Tk], name: usize, open: usize, convert: bool, strict: bool) -> Result<(), PrepError> {
    let Some(close) = matching(tks, open) else { return Ok(()) };
    let inside = top_level_inside(tks, open, close);
    let sep = if convert {
        inside.iter().copied().find(|&j| tks[j].tok.kind == TokKind::Comma || tks[j].tok.is_kw("USING"))
    } else {
        inside.iter().copied().rev().find(|&j| tks[j].tok.is_kw("AS"))
    };
    let Some(sep) = sep else {
        return Err(PrepError::Syntax { offset: tks[close].tok.start });
    };
    if convert && tks[sep].tok.is_kw("USING") {
        // CONVERT(x USING utf8mb4) is just x here.
        tks[name].remove();
        for tk in tks.iter_mut().take(close).skip(sep) {
            tk.remove();
        }
        return Ok(());
    }
    let type_toks: Vec<usize> = (sep + 1..close).filter(|&j| !tks[j].removed).collect();
    let Some(&ty) = type_toks.first() else {
        return Err(PrepError::Syntax { offset: tks[close].tok.start });
    };
    let tname = tks[ty].tok.upper().unwrap_or_default();
    let func = match tname.as_str() {
        "SIGNED" => "mysql_cast_signed",
        "UNSIGNED" => "mysql_cast_unsigned",
        "DECIMAL" | "DEC" | "NUMERIC" | "FIXED" => "mysql_cast_decimal",
        "DOUBLE" | "FLOAT" | "REAL" => "mysql_cast_double",
        "CHAR" | "NCHAR" | "BINARY" | "DATE" | "DATETIME" | "TIME" | "YEAR" | "JSON" => "mysql_cast_char",
        _ => return Err(PrepError::Syntax { offset: tks[ty].tok.start }),
    };
    // Only SIGNED/UNSIGNED may be followed by INT/INTEGER.
    if let Some(&second) = type_toks.get(1) {
        let ok = match func {
            "mysql_cast_signed" | "mysql_cast_unsigned" => tks[second].tok.is_kw("INT") || tks[second].tok.is_kw("INTEGER"),
            "mysql_cast_double" => tname == "DOUBLE" && tks[second].tok.is_kw("PRECISION"),
            _ => true,
        };
        if !ok && tks[second].tok.kind != TokKind::LParen {
            return Err(PrepError::Syntax { offset: tks[second].tok.start });
        }
    }
    let strict_func = format!("{func}_strict");
    let func = if strict && matches!(func, "mysql_cast_signed" | "mysql_cast_unsigned" | "mysql_cast_decimal") { strict_func.as_str() } else { func };
    tks[name].set(TokKind::Word, func, func);
    // Keep numeric precision arguments: DECIMAL(10,2) -> , 10 , 2 ; CHAR(5) -> , 5
    let mut args: Vec<usize> = Vec::new();
    let paren = type_toks.iter().copied().find(|&j| tks[j].tok.kind == TokKind::LParen);
    if let Some(p) = paren {
        if let Some(q) = matching(tks, p) {
            args = (p + 1..q).filter(|&j| tks[j].tok.kind == TokKind::Number).collect();
        }
    }
    for &j in &type_toks {
        if !args.contains(&j) {
            tks[j].remove();
        }
    }
    let keep_args = matches!(func, "mysql_cast_decimal" | "mysql_cast_decimal_strict" | "mysql_cast_char") && !args.is_empty();
    if keep_args {
        tks[sep].set(TokKind::Comma, ",", ",");
        for w in args.windows(2) {
            tks[w[0]].post.push_str(" ,");
        }
    } else {
        for &a in &args {
            tks[a].remove();
        }
        tks[sep].remove();
    }
    Ok(())
}

/// `GROUP_CONCAT([DISTINCT] e1[, e2...] [ORDER BY ...] [SEPARATOR 's'])` becomes
/// `mysql_gc_join(mysql_group_concat([DISTINCT] concat(e1, e2) [ORDER BY ...]), 's')`: the
/// aggregate collects the values (so DISTINCT works with one argument), the join applies the
/// separator and MySQL's 1024-byte `group_concat_max_len`.
fn group_concat(tks: &mut [Tk], name: usize, open: usize) {
    let Some(close) = matching(tks, open) else { return };
    let inside = top_level_inside(tks, open, close);
    let mut sep = ",".to_string();
    let mut end_of_exprs = close;
    for (k, &j) in inside.iter().enumerate() {
        if tks[j].tok.is_kw("SEPARATOR") {
            if let Some(&s) = inside.get(k + 1) {
                if tks[s].tok.kind == TokKind::Str {
                    sep = tks[s].tok.value.clone();
                    tks[s].remove();
                }
            }
            tks[j].remove();
            end_of_exprs = end_of_exprs.min(j);
        }
        if tks[j].tok.is_kw("ORDER") && inside.get(k + 1).is_some_and(|&b| tks[b].tok.is_kw("BY")) {
            end_of_exprs = end_of_exprs.min(j);
        }
    }
    let mut first = open + 1;
    while first < end_of_exprs && (tks[first].removed || tks[first].tok.is_kw("DISTINCT")) {
        first += 1;
    }
    let commas: Vec<usize> = inside.iter().copied().filter(|&j| j > first && j < end_of_exprs && tks[j].tok.kind == TokKind::Comma).collect();
    if !commas.is_empty() {
        if let Some(last) = (first..end_of_exprs).rev().find(|&j| !tks[j].removed) {
            tks[first].pre = format!("concat( {}", tks[first].pre);
            tks[last].post.push_str(" )");
        }
    }
    tks[name].set(TokKind::Word, "mysql_group_concat", "mysql_gc_join( mysql_group_concat");
    tks[close].out = format!(") , {} )", squote(&sep));
}

/// `TRIM([BOTH|LEADING|TRAILING] [remstr] FROM s)` becomes `mysql_trim('mode', remstr, s)`.
fn trim(tks: &mut [Tk], name: usize, open: usize) {
    let Some(close) = matching(tks, open) else { return };
    let inside = top_level_inside(tks, open, close);
    let Some(from) = inside.iter().copied().find(|&j| tks[j].tok.is_kw("FROM")) else { return };
    tks[name].set(TokKind::Word, "mysql_trim", "mysql_trim");
    let first = inside.first().copied().unwrap_or(from);
    let mode = tks[first].tok.upper().filter(|w| matches!(w.as_str(), "BOTH" | "LEADING" | "TRAILING"));
    let has_rem = match &mode {
        Some(_) => inside.iter().any(|&j| j > first && j < from),
        None => first < from,
    };
    let rem = if has_rem { "" } else { " , ' '" };
    match mode {
        Some(m) => {
            let lit = format!("'{}'{}", m.to_ascii_lowercase(), if has_rem { " ," } else { rem });
            tks[first].set(TokKind::Str, &m.to_ascii_lowercase(), &lit);
        }
        None => tks[open].post = format!(" 'both' ,{rem}"),
    }
    tks[from].set(TokKind::Comma, ",", ",");
}

/// `UPDATE t SET ... [WHERE c] [ORDER BY o] LIMIT n` and the DELETE form become a `rowid IN
/// (SELECT ...)` filter: this SQLite build has no UPDATE/DELETE LIMIT.
fn mutation_limit(tks: &mut [Tk]) {
    let n = tks.len();
    let mut depth = 0i32;
    let mut limit = None;
    let mut order = None;
    let mut where_ = None;
    for (i, tk) in tks.iter().enumerate() {
        match tk.tok.kind {
            TokKind::LParen => depth += 1,
            TokKind::RParen => depth -= 1,
            _ if depth == 0 && !tk.removed => {
                if tk.tok.is_kw("LIMIT") {
                    limit = Some(i);
                } else if tk.tok.is_kw("ORDER") && where_.is_none_or(|w| w < i) && limit.is_none() {
                    order = Some(i);
                } else if tk.tok.is_kw("WHERE") && where_.is_none() {
                    where_ = Some(i);
                }
            }
            _ => {}
        }
    }
    let Some(limit) = limit else { return };
    // The table: after UPDATE [LOW_PRIORITY] [IGNORE] or DELETE ... FROM.
    let table_idx = if tks[0].tok.is_kw("UPDATE") {
        (1..n).find(|&j| !tks[j].removed && tks[j].tok.is_ident() && !tks[j].tok.is_kw("IGNORE"))
    } else {
        (0..n).find(|&j| tks[j].tok.is_kw("FROM")).and_then(|f| next_live(tks, f, n))
    };
    let Some(t) = table_idx else { return };
    let table = dquote(&tks[t].tok.value);
    let tail_start = order.unwrap_or(limit);
    match where_ {
        Some(w) => tks[w].out = format!("WHERE rowid IN ( SELECT rowid FROM {table} WHERE"),
        None => tks[tail_start].pre = format!("WHERE rowid IN ( SELECT rowid FROM {table} {}", tks[tail_start].pre),
    }
    if let Some(last) = (0..n).rev().find(|&j| !tks[j].removed) {
        tks[last].post.push_str(" )");
    }
}

/// Drop MySQL table options (`ENGINE=InnoDB DEFAULT CHARSET=...`) and column attributes SQLite
/// does not know (`AUTO_INCREMENT`, `COMMENT '...'`).
fn ddl_cleanup(tks: &mut [Tk]) {
    let n = tks.len();
    if !(tks[0].tok.is_kw("CREATE")) {
        return;
    }
    let Some(is_table) = (1..n.min(4)).find(|&j| tks[j].tok.is_kw("TABLE")) else { return };
    let Some(open) = (is_table..n).find(|&j| tks[j].tok.kind == TokKind::LParen) else { return };
    // `CREATE TABLE t AS SELECT ...` has no column list to clean.
    if (is_table..open).any(|j| tks[j].tok.is_kw("AS") || tks[j].tok.is_kw("SELECT")) {
        return;
    }
    let Some(close) = matching(tks, open) else { return };
    let mut j = open;
    while j < close {
        if tks[j].tok.is_kw("AUTO_INCREMENT") {
            tks[j].remove();
        }
        if tks[j].tok.is_kw("COMMENT") && j + 1 < close && tks[j + 1].tok.kind == TokKind::Str {
            tks[j].remove();
            tks[j + 1].remove();
        }
        j += 1;
    }
    let rest_is_select = (close + 1..n).any(|k| tks[k].tok.is_kw("SELECT"));
    if !rest_is_select {
        for tk in tks.iter_mut().skip(close + 1) {
            tk.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(s: &str) -> String {
        match prepare(s).unwrap() {
            Prepared::Sql(t) => t.sql,
            other => panic!("not sql: {other:?}"),
        }
    }

    #[test]
    fn literals_and_identifiers() {
        assert_eq!(sql(r#"SELECT `a b` FROM t WHERE x = "it's""#), r#"SELECT "a b" FROM "t" WHERE "x" = 'it''s' COLLATE mysql_ci"#);
        assert_eq!(sql("SELECT 'a' 'b'"), "SELECT 'ab'");
    }

    #[test]
    fn numeric_comparison() {
        assert_eq!(sql("SELECT Score FROM t WHERE Goal < 17"), r#"SELECT "Score" FROM "t" WHERE mysql_num( "Goal" ) < 17"#);
        assert_eq!(sql("SELECT a FROM t WHERE 17 >= `Goal`"), r#"SELECT "a" FROM "t" WHERE 17 >= mysql_num( "Goal" )"#);
        assert_eq!(sql("SELECT a FROM t WHERE b = '5'"), r#"SELECT "a" FROM "t" WHERE "b" = '5' COLLATE mysql_ci"#);
        assert!(sql("SELECT a FROM t WHERE b IN (1, 2)").contains(r#"mysql_num( "b" ) IN"#));
        assert!(sql("SELECT a FROM t WHERE b BETWEEN 1 AND 5").contains(r#"mysql_num( "b" ) BETWEEN"#));
        assert!(sql("SELECT a + 1 FROM t").contains(r#"mysql_num( "a" ) + 1"#));
        assert!(sql("SELECT COUNT(*) / 2 FROM t").contains("/ mysql_real( 2 )"));
    }

    #[test]
    fn mysql_syntax() {
        assert_eq!(sql("SELECT a FROM t LIMIT 5, 10"), r#"SELECT "a" FROM "t" LIMIT 10 OFFSET 5"#);
        assert_eq!(sql("SELECT CAST(a AS SIGNED) FROM t"), r#"SELECT mysql_cast_signed ( "a" ) FROM "t""#);
        assert_eq!(sql("SELECT CAST(a AS DECIMAL(10,2)) FROM t"), r#"SELECT mysql_cast_decimal ( "a" , 10 , 2 ) FROM "t""#);
        assert!(matches!(prepare("SELECT CAST(a AS INT) FROM t"), Err(PrepError::Syntax { .. })));
        assert_eq!(
            sql("SELECT GROUP_CONCAT(DISTINCT a ORDER BY a DESC SEPARATOR ';') FROM t"),
            r#"SELECT mysql_gc_join( mysql_group_concat ( DISTINCT "a" ORDER BY "a" DESC ) , ';' ) FROM "t""#
        );
        assert_eq!(sql("SELECT SUBSTRING(a FROM 2 FOR 3) FROM t"), r#"SELECT mysql_substring ( "a" , 2 , 3 ) FROM "t""#);
        assert_eq!(sql("SELECT 1 FROM DUAL"), "SELECT 1");
        assert!(sql("UPDATE t SET a = 1 WHERE b = 'x' LIMIT 1").contains("rowid IN ( SELECT rowid FROM \"t\" WHERE"));
    }

    #[test]
    fn insert_literals() {
        assert_eq!(sql("INSERT INTO t (a, b, c) VALUES (10, -2.50, 'x')"), r#"INSERT INTO "t" ( "a" , "b" , "c" ) VALUES ( '10' , '-2.50' , 'x' )"#);
        assert_eq!(sql("UPDATE t SET a = 007, b = 'y' WHERE c = 2"), r#"UPDATE "t" SET "a" = '7' , "b" = 'y' WHERE mysql_num_strict( "c" ) = 2"#);
        assert_eq!(mysql_number_literal_text(false, ".50"), "0.50");
        assert_eq!(mysql_number_literal_text(true, "0"), "0");
        assert_eq!(mysql_number_literal_text(false, "1e3"), "1000");
    }

    #[test]
    fn statements() {
        assert!(matches!(prepare("SELECT 1; SELECT 2"), Err(PrepError::Syntax { offset: 10 })));
        assert!(matches!(prepare("SELECT 1;"), Ok(Prepared::Sql(_))));
        assert!(matches!(prepare("ATTACH DATABASE 'x' AS y"), Err(PrepError::Refused { .. })));
        assert!(matches!(prepare("SELECT Rank FROM t"), Err(PrepError::Syntax { offset: 7 })));
        assert_eq!(prepare("SHOW TABLES").unwrap(), Prepared::ShowTables { full: false, like: None });
        assert_eq!(prepare("DESCRIBE `Medal Tally`").unwrap(), Prepared::ShowColumns { table: "Medal Tally".into(), full: false, like: None });
        assert!(matches!(prepare("SELECT * FROM sqlite_master"), Err(PrepError::UnknownTable { .. })));
    }

    #[test]
    fn offsets_map_back() {
        let src = "SELECT `a` FROM t WHERE x = 1";
        let Prepared::Sql(t) = prepare(src).unwrap() else { panic!() };
        let out = t.sql.find("WHERE").unwrap();
        assert_eq!(t.source_offset(out), src.find("WHERE").unwrap());
        assert_eq!(super::super::value::near_text(src, src.find("WHERE").unwrap()).0, "WHERE x = 1");
    }
}
