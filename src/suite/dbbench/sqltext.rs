//! MySQL SQL text: the one tokenizer every DBBench component shares (the SQLite translation, the
//! identifier-quoting rewrite, the action predicates, the MySQL executor's statement check), plus
//! identifier facts (MySQL 8 reserved words, which names need backquotes).
//!
//! The lexer follows MySQL's default SQL mode: `'...'` and `"..."` are both string literals with
//! backslash escapes, `` `...` `` quotes identifiers, `#` and `-- ` start line comments. It never
//! panics; an unterminated literal or comment is a [`LexError`] carrying its byte offset.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    /// An unquoted identifier or keyword.
    Word,
    /// A backquoted identifier; `value` holds the name.
    QuotedIdent,
    /// A string literal (single- or double-quoted); `value` holds the decoded string.
    Str,
    /// A hexadecimal literal `X'..'` or `0x..`; `value` holds the hex digits.
    Hex,
    /// A numeric literal; `value` holds its text.
    Number,
    /// An operator (`=`, `<=`, `+`, `||`, ...).
    Op,
    LParen,
    RParen,
    Comma,
    Dot,
    Semi,
    /// `?`, `@var`, `@@var`.
    Param,
}

/// One token with its byte span in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokKind,
    pub start: usize,
    pub end: usize,
    /// Decoded value (see [`TokKind`]); for words, numbers and operators the source text.
    pub value: String,
}

impl Token {
    /// The word in upper case if this is an unquoted word.
    pub fn upper(&self) -> Option<String> {
        (self.kind == TokKind::Word).then(|| self.value.to_ascii_uppercase())
    }
    /// Is this the unquoted keyword `kw` (case-insensitive)?
    pub fn is_kw(&self, kw: &str) -> bool {
        self.kind == TokKind::Word && self.value.eq_ignore_ascii_case(kw)
    }
    /// An identifier (unquoted word or backquoted name).
    pub fn is_ident(&self) -> bool {
        matches!(self.kind, TokKind::Word | TokKind::QuotedIdent)
    }
}

/// An unterminated string, identifier or comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    /// Byte offset where the unterminated construct starts.
    pub offset: usize,
    pub what: &'static str,
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || (c as u32) >= 0x80
}

fn is_mysql_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Decode the body of a MySQL string literal (between the quotes), resolving backslash escapes
/// and doubled quotes. `\%` and `\_` keep their backslash, as MySQL does, so LIKE sees them.
fn decode_string_body(body: &str, quote: char) -> String {
    let mut out = String::with_capacity(body.len());
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('0') => out.push('\0'),
                Some('\'') => out.push('\''),
                Some('"') => out.push('"'),
                Some('b') => out.push('\x08'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('Z') => out.push('\x1a'),
                Some('\\') => out.push('\\'),
                Some('%') => out.push_str("\\%"),
                Some('_') => out.push_str("\\_"),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else if c == quote {
            // A doubled quote inside the literal stands for one quote.
            if it.peek() == Some(&quote) {
                it.next();
            }
            out.push(quote);
        } else {
            out.push(c);
        }
    }
    out
}

/// Scan a quoted construct starting at byte `start` (which holds the quote). Returns the end
/// offset (after the closing quote). Backslash escapes apply when `escapes` is set.
fn scan_quoted(src: &str, start: usize, quote: char, escapes: bool) -> Option<usize> {
    let bytes = src.as_bytes();
    let q = quote as u8;
    let mut i = start + 1;
    while i < bytes.len() {
        let b = bytes[i];
        if escapes && b == b'\\' {
            i += 2;
            continue;
        }
        if b == q {
            if i + 1 < bytes.len() && bytes[i + 1] == q {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// Tokenize MySQL SQL text. Whitespace and comments are dropped.
pub fn lex(src: &str) -> Result<Vec<Token>, LexError> {
    let bytes = src.as_bytes();
    let mut toks: Vec<Token> = Vec::new();
    let mut i = 0usize;
    let n = bytes.len();
    let char_at = |i: usize| src[i..].chars().next().unwrap_or('\0');
    while i < n {
        let c = char_at(i);
        let clen = c.len_utf8();
        if is_mysql_space(c) {
            i += clen;
            continue;
        }
        // Comments.
        if c == '#' {
            while i < n && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == '-' && i + 1 < n && bytes[i + 1] == b'-' {
            let after = if i + 2 < n { Some(char_at(i + 2)) } else { None };
            if after.is_none_or(|a| is_mysql_space(a) || a.is_control()) {
                while i < n && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
        }
        if c == '/' && i + 1 < n && bytes[i + 1] == b'*' {
            match src[i + 2..].find("*/") {
                Some(p) => {
                    i = i + 2 + p + 2;
                    continue;
                }
                None => return Err(LexError { offset: i, what: "comment" }),
            }
        }
        let start = i;
        // String literals, with optional introducers (N'..', _utf8mb4'..') handled below.
        if c == '\'' || c == '"' {
            let end = scan_quoted(src, i, c, true).ok_or(LexError { offset: i, what: "string" })?;
            let body = &src[i + 1..end - 1];
            toks.push(Token { kind: TokKind::Str, start, end, value: decode_string_body(body, c) });
            i = end;
            continue;
        }
        if c == '`' {
            let end = scan_quoted(src, i, '`', false).ok_or(LexError { offset: i, what: "identifier" })?;
            let name = src[i + 1..end - 1].replace("``", "`");
            toks.push(Token { kind: TokKind::QuotedIdent, start, end, value: name });
            i = end;
            continue;
        }
        // Numbers (and identifiers that start with digits, which MySQL allows).
        let prev_is_name = toks.last().is_some_and(|t| matches!(t.kind, TokKind::Word | TokKind::QuotedIdent | TokKind::RParen));
        if c.is_ascii_digit() || (c == '.' && !prev_is_name && i + 1 < n && bytes[i + 1].is_ascii_digit()) {
            // Hex / binary literals.
            if c == '0' && i + 2 < n && (bytes[i + 1] == b'x' || bytes[i + 1] == b'X') {
                let mut j = i + 2;
                while j < n && bytes[j].is_ascii_hexdigit() {
                    j += 1;
                }
                if j > i + 2 && !(j < n && is_ident_char(char_at(j))) {
                    toks.push(Token { kind: TokKind::Hex, start, end: j, value: src[i + 2..j].to_string() });
                    i = j;
                    continue;
                }
            }
            let mut j = i;
            while j < n && bytes[j].is_ascii_digit() {
                j += 1;
            }
            let mut is_number = true;
            if j < n && bytes[j] == b'.' {
                j += 1;
                while j < n && bytes[j].is_ascii_digit() {
                    j += 1;
                }
            }
            if j < n && (bytes[j] == b'e' || bytes[j] == b'E') {
                let mut k = j + 1;
                if k < n && (bytes[k] == b'+' || bytes[k] == b'-') {
                    k += 1;
                }
                if k < n && bytes[k].is_ascii_digit() {
                    while k < n && bytes[k].is_ascii_digit() {
                        k += 1;
                    }
                    j = k;
                }
            }
            if j < n && is_ident_char(char_at(j)) && !src[i..j].contains('.') {
                // `1st`, `2011_results`: an identifier.
                is_number = false;
                while j < n && is_ident_char(char_at(j)) {
                    j += char_at(j).len_utf8();
                }
            }
            let kind = if is_number { TokKind::Number } else { TokKind::Word };
            toks.push(Token { kind, start, end: j, value: src[i..j].to_string() });
            i = j;
            continue;
        }
        if is_ident_char(c) {
            let mut j = i;
            while j < n && is_ident_char(char_at(j)) {
                j += char_at(j).len_utf8();
            }
            let word = &src[i..j];
            // Introducers and prefixed literals: X'..', N'..', _charset'..'.
            if j < n && bytes[j] == b'\'' {
                let up = word.to_ascii_uppercase();
                if up == "X" {
                    let end = scan_quoted(src, j, '\'', false).ok_or(LexError { offset: j, what: "string" })?;
                    toks.push(Token { kind: TokKind::Hex, start, end, value: src[j + 1..end - 1].to_string() });
                    i = end;
                    continue;
                }
                if up == "N" || word.starts_with('_') {
                    let end = scan_quoted(src, j, '\'', true).ok_or(LexError { offset: j, what: "string" })?;
                    let body = &src[j + 1..end - 1];
                    toks.push(Token { kind: TokKind::Str, start, end, value: decode_string_body(body, '\'') });
                    i = end;
                    continue;
                }
            }
            toks.push(Token { kind: TokKind::Word, start, end: j, value: word.to_string() });
            i = j;
            continue;
        }
        // Parameters and variables.
        if c == '?' {
            toks.push(Token { kind: TokKind::Param, start, end: i + 1, value: "?".into() });
            i += 1;
            continue;
        }
        if c == '@' {
            let mut j = i + 1;
            while j < n && bytes[j] == b'@' {
                j += 1;
            }
            while j < n && (is_ident_char(char_at(j)) || bytes[j] == b'.') {
                j += char_at(j).len_utf8();
            }
            toks.push(Token { kind: TokKind::Param, start, end: j, value: src[i..j].to_string() });
            i = j;
            continue;
        }
        let single = |kind: TokKind| Token { kind, start, end: start + clen, value: c.to_string() };
        match c {
            '(' => toks.push(single(TokKind::LParen)),
            ')' => toks.push(single(TokKind::RParen)),
            ',' => toks.push(single(TokKind::Comma)),
            '.' => toks.push(single(TokKind::Dot)),
            ';' => toks.push(single(TokKind::Semi)),
            _ => {
                const OPS3: [&str; 2] = ["<=>", "->>"];
                const OPS2: [&str; 10] = ["<=", ">=", "<>", "!=", "||", "&&", "<<", ">>", ":=", "->"];
                let rest = &src[i..];
                let op = OPS3.iter().chain(OPS2.iter()).find(|o| rest.starts_with(**o)).map(|o| o.to_string()).unwrap_or_else(|| c.to_string());
                let end = i + op.len();
                toks.push(Token { kind: TokKind::Op, start, end, value: op });
                i = end;
                continue;
            }
        }
        i += clen;
    }
    Ok(toks)
}

/// Split a token list into statements at top-level semicolons. Empty statements are dropped.
/// Each element is a range of token indices (semicolon excluded).
pub fn split_statements(toks: &[Token]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut begin = 0;
    for (i, t) in toks.iter().enumerate() {
        if t.kind == TokKind::Semi {
            if i > begin {
                out.push(begin..i);
            }
            begin = i + 1;
        }
    }
    if toks.len() > begin {
        out.push(begin..toks.len());
    }
    out
}

/// Index of the token closing the parenthesis opened at `open` (or `None` if unbalanced).
pub fn matching_paren(toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.kind {
            TokKind::LParen => depth += 1,
            TokKind::RParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// MySQL 8.0 reserved words (the ones that cannot be used unquoted as identifiers).
pub const MYSQL_RESERVED: &[&str] = &[
    "ACCESSIBLE",
    "ADD",
    "ALL",
    "ALTER",
    "ANALYZE",
    "AND",
    "AS",
    "ASC",
    "ASENSITIVE",
    "BEFORE",
    "BETWEEN",
    "BIGINT",
    "BINARY",
    "BLOB",
    "BOTH",
    "BY",
    "CALL",
    "CASCADE",
    "CASE",
    "CHANGE",
    "CHAR",
    "CHARACTER",
    "CHECK",
    "COLLATE",
    "COLUMN",
    "CONDITION",
    "CONSTRAINT",
    "CONTINUE",
    "CONVERT",
    "CREATE",
    "CROSS",
    "CUBE",
    "CUME_DIST",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "CURSOR",
    "DATABASE",
    "DATABASES",
    "DAY_HOUR",
    "DAY_MICROSECOND",
    "DAY_MINUTE",
    "DAY_SECOND",
    "DEC",
    "DECIMAL",
    "DECLARE",
    "DEFAULT",
    "DELAYED",
    "DELETE",
    "DENSE_RANK",
    "DESC",
    "DESCRIBE",
    "DETERMINISTIC",
    "DISTINCT",
    "DISTINCTROW",
    "DIV",
    "DOUBLE",
    "DROP",
    "DUAL",
    "EACH",
    "ELSE",
    "ELSEIF",
    "EMPTY",
    "ENCLOSED",
    "ESCAPED",
    "EXCEPT",
    "EXISTS",
    "EXIT",
    "EXPLAIN",
    "FALSE",
    "FETCH",
    "FIRST_VALUE",
    "FLOAT",
    "FLOAT4",
    "FLOAT8",
    "FOR",
    "FORCE",
    "FOREIGN",
    "FROM",
    "FULLTEXT",
    "FUNCTION",
    "GENERATED",
    "GET",
    "GRANT",
    "GROUP",
    "GROUPING",
    "GROUPS",
    "HAVING",
    "HIGH_PRIORITY",
    "HOUR_MICROSECOND",
    "HOUR_MINUTE",
    "HOUR_SECOND",
    "IF",
    "IGNORE",
    "IN",
    "INDEX",
    "INFILE",
    "INNER",
    "INOUT",
    "INSENSITIVE",
    "INSERT",
    "INT",
    "INT1",
    "INT2",
    "INT3",
    "INT4",
    "INT8",
    "INTEGER",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "IO_AFTER_GTIDS",
    "IO_BEFORE_GTIDS",
    "IS",
    "ITERATE",
    "JOIN",
    "JSON_TABLE",
    "KEY",
    "KEYS",
    "KILL",
    "LAG",
    "LAST_VALUE",
    "LATERAL",
    "LEAD",
    "LEADING",
    "LEAVE",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LINEAR",
    "LINES",
    "LOAD",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "LOCK",
    "LONG",
    "LONGBLOB",
    "LONGTEXT",
    "LOOP",
    "LOW_PRIORITY",
    "MASTER_BIND",
    "MASTER_SSL_VERIFY_SERVER_CERT",
    "MATCH",
    "MAXVALUE",
    "MEDIUMBLOB",
    "MEDIUMINT",
    "MEDIUMTEXT",
    "MIDDLEINT",
    "MINUTE_MICROSECOND",
    "MINUTE_SECOND",
    "MOD",
    "MODIFIES",
    "NATURAL",
    "NOT",
    "NO_WRITE_TO_BINLOG",
    "NTH_VALUE",
    "NTILE",
    "NULL",
    "NUMERIC",
    "OF",
    "ON",
    "OPTIMIZE",
    "OPTIMIZER_COSTS",
    "OPTION",
    "OPTIONALLY",
    "OR",
    "ORDER",
    "OUT",
    "OUTER",
    "OUTFILE",
    "OVER",
    "PARTITION",
    "PERCENT_RANK",
    "PRECISION",
    "PRIMARY",
    "PROCEDURE",
    "PURGE",
    "RANGE",
    "RANK",
    "READ",
    "READS",
    "READ_WRITE",
    "REAL",
    "RECURSIVE",
    "REFERENCES",
    "REGEXP",
    "RELEASE",
    "RENAME",
    "REPEAT",
    "REPLACE",
    "REQUIRE",
    "RESIGNAL",
    "RESTRICT",
    "RETURN",
    "REVOKE",
    "RIGHT",
    "RLIKE",
    "ROW",
    "ROWS",
    "ROW_NUMBER",
    "SCHEMA",
    "SCHEMAS",
    "SECOND_MICROSECOND",
    "SELECT",
    "SENSITIVE",
    "SEPARATOR",
    "SET",
    "SHOW",
    "SIGNAL",
    "SMALLINT",
    "SPATIAL",
    "SPECIFIC",
    "SQL",
    "SQLEXCEPTION",
    "SQLSTATE",
    "SQLWARNING",
    "SQL_BIG_RESULT",
    "SQL_CALC_FOUND_ROWS",
    "SQL_SMALL_RESULT",
    "SSL",
    "STARTING",
    "STORED",
    "STRAIGHT_JOIN",
    "SYSTEM",
    "TABLE",
    "TERMINATED",
    "THEN",
    "TINYBLOB",
    "TINYINT",
    "TINYTEXT",
    "TO",
    "TRAILING",
    "TRIGGER",
    "TRUE",
    "UNDO",
    "UNION",
    "UNIQUE",
    "UNLOCK",
    "UNSIGNED",
    "UPDATE",
    "USAGE",
    "USE",
    "USING",
    "UTC_DATE",
    "UTC_TIME",
    "UTC_TIMESTAMP",
    "VALUES",
    "VARBINARY",
    "VARCHAR",
    "VARCHARACTER",
    "VARYING",
    "VIRTUAL",
    "WHEN",
    "WHERE",
    "WHILE",
    "WINDOW",
    "WITH",
    "WRITE",
    "XOR",
    "YEAR_MONTH",
    "ZEROFILL",
];

/// Is `word` a MySQL 8 reserved word?
pub fn is_mysql_reserved(word: &str) -> bool {
    let up = word.to_ascii_uppercase();
    MYSQL_RESERVED.binary_search(&up.as_str()).is_ok()
}

/// Reserved words MySQL refuses as bare identifiers but SQLite would happily accept, so the
/// translation must reject them itself to behave like MySQL (`SELECT Rank FROM t` is a syntax
/// error on MySQL 8). Words that are only legal as function names are refused unless a `(`
/// follows.
pub const RESERVED_SQLITE_ACCEPTS: &[&str] = &[
    "ACCESSIBLE",
    "CHANGE",
    "CONDITION",
    "CUME_DIST",
    "DATABASE",
    "DATABASES",
    "DENSE_RANK",
    "DUAL",
    "FIRST_VALUE",
    "FUNCTION",
    "GENERATED",
    "GROUPS",
    "KEY",
    "KEYS",
    "LAG",
    "LAST_VALUE",
    "LEAD",
    "LINES",
    "MAXVALUE",
    "NTH_VALUE",
    "NTILE",
    "OPTION",
    "PERCENT_RANK",
    "RANGE",
    "RANK",
    "READ",
    "RELEASE",
    "ROW",
    "ROWS",
    "ROW_NUMBER",
    "SCHEMA",
    "SCHEMAS",
    "SENSITIVE",
    "STORED",
    "USAGE",
    "VIRTUAL",
    "WINDOW",
    "WRITE",
];

/// Is the bare word at `i` a MySQL reserved word used where MySQL would reject it (as a column,
/// table or alias name) while SQLite would accept it? Used both to reproduce MySQL's syntax error
/// and to decide what the `quote_identifiers` rewrite should quote.
pub fn reserved_word_misuse(toks: &[Token], i: usize) -> bool {
    let t = &toks[i];
    let Some(up) = t.upper() else { return false };
    if !RESERVED_SQLITE_ACCEPTS.contains(&up.as_str()) {
        return false;
    }
    let next = toks.get(i + 1);
    let prev = if i > 0 { toks.get(i - 1) } else { None };
    // After a period a word is always an identifier in MySQL.
    if prev.is_some_and(|p| p.kind == TokKind::Dot) {
        return false;
    }
    // Function-call uses: RANK(), ROW(...), DATABASE(), SCHEMA().
    if next.is_some_and(|n| n.kind == TokKind::LParen) {
        return false;
    }
    match up.as_str() {
        // Window frames: `OVER (ORDER BY x ROWS BETWEEN ...)`; `WINDOW w AS (...)`.
        "ROWS" | "RANGE" | "GROUPS" => !inside_over_clause(toks, i),
        "ROW" => {
            // `CURRENT ROW` in frames, `VALUES ROW(...)`.
            !(prev.is_some_and(|p| p.is_kw("CURRENT")) || inside_over_clause(toks, i))
        }
        "WINDOW" => {
            // The WINDOW clause: `WINDOW w AS (`.
            !(toks.get(i + 2).is_some_and(|t| t.is_kw("AS")))
        }
        "KEY" => !prev.is_some_and(|p| p.is_kw("DUPLICATE") || p.is_kw("PRIMARY") || p.is_kw("FOREIGN") || p.is_kw("UNIQUE")),
        "DUAL" => !prev.is_some_and(|p| p.is_kw("FROM")),
        _ => true,
    }
}

/// Is token `i` inside a parenthesised group opened right after `OVER` or `AS` (a window spec)?
fn inside_over_clause(toks: &[Token], i: usize) -> bool {
    let mut depth = 0i32;
    let mut j = i;
    while j > 0 {
        j -= 1;
        match toks[j].kind {
            TokKind::RParen => depth += 1,
            TokKind::LParen => {
                if depth == 0 {
                    return j > 0 && (toks[j - 1].is_kw("OVER") || toks[j - 1].is_kw("AS"));
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    false
}

/// Does a table or column name have to be backquoted in MySQL? True for names with spaces or
/// punctuation, names made only of digits, and reserved words.
pub fn needs_backquotes(name: &str) -> bool {
    if name.is_empty() {
        return true;
    }
    if !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return true;
    }
    if name.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    is_mysql_reserved(name)
}

/// Backquote a name for MySQL, doubling any backquote inside.
pub fn backquote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Quote a name as an SQLite identifier.
pub fn dquote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Quote a string as an SQLite string literal.
pub fn squote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(sql: &str) -> Vec<(TokKind, String)> {
        lex(sql).unwrap().into_iter().map(|t| (t.kind, t.value)).collect()
    }

    #[test]
    fn reserved_list_is_sorted() {
        let mut v = MYSQL_RESERVED.to_vec();
        v.sort_unstable();
        assert_eq!(v, MYSQL_RESERVED);
        for w in RESERVED_SQLITE_ACCEPTS {
            assert!(is_mysql_reserved(w), "{w}");
        }
    }

    #[test]
    fn strings_and_escapes() {
        let t = kinds(r#"SELECT 'it\'s', "say ""hi""", 'a''b', '50\%', 'x\ny'"#);
        assert_eq!(t[1], (TokKind::Str, "it's".into()));
        assert_eq!(t[3], (TokKind::Str, "say \"hi\"".into()));
        assert_eq!(t[5], (TokKind::Str, "a'b".into()));
        assert_eq!(t[7], (TokKind::Str, "50\\%".into()));
        assert_eq!(t[9], (TokKind::Str, "x\ny".into()));
    }

    #[test]
    fn identifiers_numbers_comments() {
        let t = kinds("SELECT `a``b`, 1st, 2.5e3, .5, 0x1F # comment\n-- also\n/* block */ x");
        assert_eq!(t[1], (TokKind::QuotedIdent, "a`b".into()));
        assert_eq!(t[3], (TokKind::Word, "1st".into()));
        assert_eq!(t[5], (TokKind::Number, "2.5e3".into()));
        assert_eq!(t[7], (TokKind::Number, ".5".into()));
        assert_eq!(t[9], (TokKind::Hex, "1F".into()));
        assert_eq!(t[10], (TokKind::Word, "x".into()));
        assert_eq!(t.len(), 11);
    }

    #[test]
    fn operators_and_minus_minus() {
        let t = kinds("a<=>b AND c!=d OR e--1");
        assert_eq!(t[1].1, "<=>");
        assert_eq!(t[5].1, "!=");
        // `--1` is not a comment (no space after the dashes).
        assert_eq!(t[8].1, "e");
        assert_eq!(t[9].1, "-");
        assert_eq!(t[10].1, "-");
    }

    #[test]
    fn unterminated() {
        assert_eq!(lex("SELECT 'abc").unwrap_err(), LexError { offset: 7, what: "string" });
        assert!(lex("SELECT `abc").is_err());
        assert!(lex("SELECT /* x").is_err());
    }

    #[test]
    fn statements() {
        let t = lex("SELECT 1; ; SELECT 2;").unwrap();
        assert_eq!(split_statements(&t).len(), 2);
    }

    #[test]
    fn reserved_misuse() {
        let t = lex("SELECT Rank, t.rank, RANK() OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t").unwrap();
        assert!(reserved_word_misuse(&t, 1));
        assert!(!reserved_word_misuse(&t, 5));
        assert!(!reserved_word_misuse(&t, 7));
        let rows = t.iter().position(|x| x.is_kw("ROWS")).unwrap();
        assert!(!reserved_word_misuse(&t, rows));
        let row = t.iter().position(|x| x.is_kw("ROW")).unwrap();
        assert!(!reserved_word_misuse(&t, row));
    }

    #[test]
    fn quoting_needs() {
        assert!(needs_backquotes("Home team"));
        assert!(needs_backquotes("Rank"));
        assert!(needs_backquotes("W-L-T"));
        assert!(!needs_backquotes("Name"));
        assert!(!needs_backquotes("Área"));
    }
}
