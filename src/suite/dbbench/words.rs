//! The SQL vocabulary the translator ([`super::translate`]) and the text-number converter
//! ([`super::convert`]) share: keywords, functions that return numbers, statement kinds, and the
//! token being rewritten with its bracket matching. Below both, so neither imports the other for
//! it.

use super::sqltext::{TokKind, Token};

/// What kind of statement was translated (drives `empty_result` and schema refreshes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StmtKind {
    Select,
    Insert,
    Update,
    Delete,
    Ddl,
    Other,
}

/// One token being rewritten: its (possibly re-classified) token, the text to emit, and text to
/// put before and after it.
#[derive(Clone, Debug)]
pub(super) struct Tk {
    pub(super) tok: Token,
    pub(super) out: String,
    pub(super) pre: String,
    pub(super) post: String,
    pub(super) removed: bool,
}

impl Tk {
    pub(super) fn remove(&mut self) {
        self.removed = true;
        self.out.clear();
    }
    pub(super) fn set(&mut self, kind: TokKind, value: &str, out: &str) {
        self.tok.kind = kind;
        self.tok.value = value.to_string();
        self.out = out.to_string();
    }
}

/// Words that structure a statement: never column names, and `word (` is not a function call.
pub(super) const KEYWORDS: &[&str] = &[
    "ALL",
    "AND",
    "ANY",
    "AS",
    "ASC",
    "BETWEEN",
    "BINARY",
    "BY",
    "CASE",
    "COLLATE",
    "CONFLICT",
    "CROSS",
    "CURRENT",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "DEFAULT",
    "DELAYED",
    "DELETE",
    "DESC",
    "DISTINCT",
    "DIV",
    "DO",
    "DUPLICATE",
    "ELSE",
    "END",
    "ESCAPE",
    "EXCEPT",
    "EXCLUDE",
    "EXISTS",
    "FALSE",
    "FILTER",
    "FOLLOWING",
    "FROM",
    "FULL",
    "GLOB",
    "GROUP",
    "GROUPS",
    "HAVING",
    "HIGH_PRIORITY",
    "IGNORE",
    "IN",
    "INNER",
    "INSERT",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "IS",
    "JOIN",
    "KEY",
    "LATERAL",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "LOW_PRIORITY",
    "MATCH",
    "MOD",
    "NATURAL",
    "NOT",
    "NOTHING",
    "NULL",
    "NULLS",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OTHERS",
    "OUTER",
    "OVER",
    "PARTITION",
    "PRECEDING",
    "QUICK",
    "RANGE",
    "RECURSIVE",
    "REGEXP",
    "REPLACE",
    "RETURNING",
    "RIGHT",
    "RLIKE",
    "ROW",
    "ROWS",
    "SELECT",
    "SEPARATOR",
    "SET",
    "SOME",
    "STRAIGHT_JOIN",
    "TABLE",
    "THEN",
    "TIES",
    "TRUE",
    "UNBOUNDED",
    "UNION",
    "UNKNOWN",
    "UPDATE",
    "USING",
    "VALUE",
    "VALUES",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
    "XOR",
];

/// Keywords that may be followed by `(` as a function call.
pub(super) const CALLABLE_KEYWORDS: &[&str] = &["LEFT", "RIGHT", "REPLACE", "INSERT", "MOD", "IF", "DEFAULT"];

/// Functions whose result is a number (so a comparison with them is numeric, and arithmetic on
/// them needs no string conversion).
pub(super) const NUMERIC_FUNCS: &[&str] = &[
    "ABS",
    "ACOS",
    "ASCII",
    "ASIN",
    "ATAN",
    "ATAN2",
    "AVG",
    "BIT_AND",
    "BIT_COUNT",
    "BIT_LENGTH",
    "BIT_OR",
    "BIT_XOR",
    "CEIL",
    "CEILING",
    "CHANGES",
    "CHARACTER_LENGTH",
    "CHAR_LENGTH",
    "COS",
    "COT",
    "COUNT",
    "CRC32",
    "CUME_DIST",
    "DEGREES",
    "DENSE_RANK",
    "EXISTS",
    "EXP",
    "FIND_IN_SET",
    "FLOOR",
    "INSTR",
    "LENGTH",
    "LN",
    "LOCATE",
    "LOG",
    "LOG10",
    "LOG2",
    "MOD",
    "MYSQL_CAST_DECIMAL",
    "MYSQL_CAST_DECIMAL_STRICT",
    "MYSQL_CAST_DOUBLE",
    "MYSQL_CAST_SIGNED",
    "MYSQL_CAST_SIGNED_STRICT",
    "MYSQL_CAST_UNSIGNED",
    "MYSQL_CAST_UNSIGNED_STRICT",
    "MYSQL_LOCATE",
    "MYSQL_NUM",
    "MYSQL_ROUND_DOUBLE",
    "NTILE",
    "OCTET_LENGTH",
    "ORD",
    "PERCENT_RANK",
    "PI",
    "POW",
    "POWER",
    "RADIANS",
    "RAND",
    "RANDOM",
    "RANK",
    "ROUND",
    "ROW_NUMBER",
    "SIGN",
    "SIN",
    "SQRT",
    "STD",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "STRCMP",
    "SUM",
    "TAN",
    "TOTAL",
    "TRUNCATE",
    "UNICODE",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
];

pub(super) fn is_keyword(up: &str) -> bool {
    KEYWORDS.contains(&up)
}

/// INSERT, UPDATE or DELETE: where MySQL's strict mode turns truncating conversions into errors.
pub(super) fn changes_data(kind: StmtKind) -> bool {
    matches!(kind, StmtKind::Insert | StmtKind::Update | StmtKind::Delete)
}

pub(super) fn is_dml(kind: StmtKind) -> bool {
    matches!(kind, StmtKind::Select | StmtKind::Insert | StmtKind::Update | StmtKind::Delete)
}

pub(super) fn matching(tks: &[Tk], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tks.iter().enumerate().skip(open) {
        match t.tok.kind {
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
