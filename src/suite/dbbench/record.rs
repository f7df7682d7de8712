//! DBBench records in AgentBench's JSONL release format, their validation, and their tasks.
//!
//! A record: `description` (the question), `label` (answers for select types; the gold SQL as
//! the single element for mutations), `table` (`{table_name, table_info{columns[{name,type}],
//! rows}}` or a list of those), `type` (a list whose first element is the query type),
//! `answer_md5` (mutations: the expected table hash as MySQL's result string
//! `[('<md5>',)]`), `add_description`, optional `evidence`, `sql{query}`, `source`, optional `id`
//! and `family`. Unknown fields are kept in [`DbRecord::raw`] (and so in the task payload).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::render::json_py_str;
use crate::suite::{json_kind, LoadError, ShapeError};
use crate::task::Task;

/// The query types of DBBench, in AgentBench's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QueryType {
    Other,
    Counting,
    Comparison,
    Ranking,
    AggregationSum,
    AggregationMin,
    AggregationMax,
    AggregationAvg,
    Insert,
    Update,
    Delete,
}

impl QueryType {
    pub const ALL: [QueryType; 11] = [
        QueryType::Other,
        QueryType::Counting,
        QueryType::Comparison,
        QueryType::Ranking,
        QueryType::AggregationSum,
        QueryType::AggregationMin,
        QueryType::AggregationMax,
        QueryType::AggregationAvg,
        QueryType::Insert,
        QueryType::Update,
        QueryType::Delete,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            QueryType::Other => "other",
            QueryType::Counting => "counting",
            QueryType::Comparison => "comparison",
            QueryType::Ranking => "ranking",
            QueryType::AggregationSum => "aggregation-SUM",
            QueryType::AggregationMin => "aggregation-MIN",
            QueryType::AggregationMax => "aggregation-MAX",
            QueryType::AggregationAvg => "aggregation-AVG",
            QueryType::Insert => "INSERT",
            QueryType::Update => "UPDATE",
            QueryType::Delete => "DELETE",
        }
    }

    pub fn parse(s: &str) -> Option<QueryType> {
        QueryType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// INSERT, UPDATE and DELETE are scored by the table hash.
    pub fn is_mutation(self) -> bool {
        matches!(self, QueryType::Insert | QueryType::Update | QueryType::Delete)
    }

    /// The metric category: `SELECT` for every non-mutation type.
    pub fn category(self) -> &'static str {
        if self.is_mutation() {
            self.as_str()
        } else {
            "SELECT"
        }
    }
}

impl std::fmt::Display for QueryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A column as the record declares it (every column is created as TEXT regardless).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    pub name: String,
    pub decl_type: String,
}

/// A table of a record, with its rows as the strings AgentBench inserts (`str(value)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSpec {
    pub name: String,
    pub columns: Vec<ColumnSpec>,
    pub rows: Vec<Vec<String>>,
}

impl TableSpec {
    pub fn column_names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }
}

/// One DBBench record.
#[derive(Clone, Debug, PartialEq)]
pub struct DbRecord {
    pub description: String,
    /// The answers (select types) or `[gold SQL]` (mutations), as JSON scalars.
    pub label: Vec<Value>,
    pub tables: Vec<TableSpec>,
    /// The first element of `type`.
    pub query_type: QueryType,
    /// The whole `type` list.
    pub type_list: Vec<String>,
    /// Mutations: the expected hash as a MySQL result string, e.g. `[('09aa...',)]`.
    pub answer_md5: Option<String>,
    pub add_description: Option<String>,
    pub evidence: Option<String>,
    /// `sql.query`, if present.
    pub sql_query: Option<String>,
    pub source: Option<String>,
    pub id: Option<String>,
    pub family: Option<String>,
    /// The record as loaded, unknown fields included.
    pub raw: Value,
    /// The 1-based line in the file it came from (0 if not from a file).
    pub line: usize,
}

fn opt_string(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<String>, ShapeError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ShapeError(format!("field `{key}` must be a string, got {}", json_kind(other)))),
    }
}

fn parse_table(v: &Value, path: &str) -> Result<TableSpec, ShapeError> {
    let Value::Object(t) = v else {
        return Err(ShapeError(format!("`{path}` must be an object, got {}", json_kind(v))));
    };
    let name = match t.get("table_name") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(ShapeError(format!("`{path}.table_name` must be a string, got {}", json_kind(other)))),
        None => return Err(ShapeError(format!("`{path}`: missing field `table_name`"))),
    };
    if name.is_empty() {
        return Err(ShapeError(format!("`{path}.table_name` is empty")));
    }
    let info = match t.get("table_info") {
        Some(Value::Object(o)) => o,
        Some(other) => return Err(ShapeError(format!("`{path}.table_info` must be an object, got {}", json_kind(other)))),
        None => return Err(ShapeError(format!("`{path}`: missing field `table_info`"))),
    };
    let cols = match info.get("columns") {
        Some(Value::Array(a)) => a,
        Some(other) => return Err(ShapeError(format!("`{path}.table_info.columns` must be a list, got {}", json_kind(other)))),
        None => return Err(ShapeError(format!("`{path}.table_info`: missing field `columns`"))),
    };
    if cols.is_empty() {
        return Err(ShapeError(format!("table `{name}` has no columns")));
    }
    let mut columns = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let cp = format!("{path}.table_info.columns[{i}]");
        let Value::Object(c) = c else {
            return Err(ShapeError(format!("`{cp}` must be an object {{name, type}}, got {}", json_kind(c))));
        };
        let cname = match c.get("name") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(ShapeError(format!("`{cp}.name` must be a string, got {}", json_kind(other)))),
            None => return Err(ShapeError(format!("`{cp}`: missing field `name`"))),
        };
        let decl = match c.get("type") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => "TEXT".to_string(),
            Some(other) => return Err(ShapeError(format!("`{cp}.type` must be a string, got {}", json_kind(other)))),
        };
        if let Some(prev) = columns.iter().position(|x: &ColumnSpec| x.name.to_lowercase() == cname.to_lowercase()) {
            return Err(ShapeError(format!(
                "table `{name}`: columns {} and {} are both named `{cname}` (column names are case-insensitive)",
                prev + 1,
                i + 1
            )));
        }
        columns.push(ColumnSpec { name: cname, decl_type: decl });
    }
    let rows_v = match info.get("rows") {
        Some(Value::Array(a)) => a.as_slice(),
        None | Some(Value::Null) => &[],
        Some(other) => return Err(ShapeError(format!("`{path}.table_info.rows` must be a list, got {}", json_kind(other)))),
    };
    let mut rows = Vec::with_capacity(rows_v.len());
    for (r, row) in rows_v.iter().enumerate() {
        let Value::Array(vals) = row else {
            return Err(ShapeError(format!("table `{name}`: row {} must be a list of values, got {}", r + 1, json_kind(row))));
        };
        if vals.len() != columns.len() {
            return Err(ShapeError(format!("table `{name}`: row {} has {} values but the table has {} columns", r + 1, vals.len(), columns.len())));
        }
        rows.push(vals.iter().map(json_py_str).collect());
    }
    Ok(TableSpec { name, columns, rows })
}

impl DbRecord {
    /// Validate and convert one JSON record.
    pub fn from_json(v: Value) -> Result<DbRecord, ShapeError> {
        let Value::Object(obj) = &v else {
            return Err(ShapeError(format!("expected a JSON object, got {}", json_kind(&v))));
        };
        let description = match obj.get("description") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(ShapeError(format!("field `description` must be a string, got {}", json_kind(other)))),
            None => return Err(ShapeError("missing field `description`".into())),
        };
        let type_list: Vec<String> = match obj.get("type") {
            Some(Value::Array(a)) => {
                let mut out = Vec::new();
                for (i, x) in a.iter().enumerate() {
                    match x {
                        Value::String(s) => out.push(s.clone()),
                        other => return Err(ShapeError(format!("field `type` element {i} must be a string, got {}", json_kind(other)))),
                    }
                }
                out
            }
            Some(other) => return Err(ShapeError(format!("field `type` must be a list like [\"counting\"], got {}", json_kind(other)))),
            None => return Err(ShapeError("missing field `type`".into())),
        };
        let allowed = QueryType::ALL.map(|t| t.as_str()).join(", ");
        let first =
            type_list.first().ok_or_else(|| ShapeError(format!("field `type` is an empty list; its first element must be one of {allowed}")))?;
        let query_type =
            QueryType::parse(first).ok_or_else(|| ShapeError(format!("field `type` must start with one of {allowed}; got \"{first}\"")))?;
        let label = match obj.get("label") {
            Some(Value::Array(a)) => {
                for (i, x) in a.iter().enumerate() {
                    if matches!(x, Value::Array(_) | Value::Object(_)) {
                        return Err(ShapeError(format!("field `label` element {i} must be a string, number, boolean or null, got {}", json_kind(x))));
                    }
                }
                a.clone()
            }
            Some(other) => return Err(ShapeError(format!("field `label` must be a list, got {}", json_kind(other)))),
            None => return Err(ShapeError("missing field `label`".into())),
        };
        let tables = match obj.get("table") {
            Some(t @ Value::Object(_)) => vec![parse_table(t, "table")?],
            Some(Value::Array(a)) => {
                if a.is_empty() {
                    return Err(ShapeError("field `table` is an empty list".into()));
                }
                let mut out = Vec::new();
                for (i, t) in a.iter().enumerate() {
                    out.push(parse_table(t, &format!("table[{i}]"))?);
                }
                out
            }
            Some(other) => return Err(ShapeError(format!("field `table` must be an object or a list of objects, got {}", json_kind(other)))),
            None => return Err(ShapeError("missing field `table`".into())),
        };
        let answer_md5 = match obj.get("answer_md5") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(ShapeError(format!("field `answer_md5` must be a string like \"[('<md5>',)]\", got {}", json_kind(other)))),
        };
        let sql_query = match obj.get("sql") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Object(o)) => match o.get("query") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => return Err(ShapeError(format!("field `sql.query` must be a string, got {}", json_kind(other)))),
            },
            Some(other) => return Err(ShapeError(format!("field `sql` must be an object {{query}}, got {}", json_kind(other)))),
        };
        let id = match obj.get("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(other) => return Err(ShapeError(format!("field `id` must be a non-empty string, got {}", json_kind(other)))),
        };
        let rec = DbRecord {
            description,
            label,
            tables,
            query_type,
            type_list,
            answer_md5,
            add_description: opt_string(obj, "add_description")?,
            evidence: opt_string(obj, "evidence")?,
            sql_query,
            source: opt_string(obj, "source")?,
            id,
            family: opt_string(obj, "family")?,
            raw: v.clone(),
            line: 0,
        };
        if rec.query_type.is_mutation() && rec.answer_md5.as_deref().is_none_or(|s| s.trim().is_empty()) && rec.gold_sql().is_none() {
            return Err(ShapeError(format!("a {} record needs `answer_md5` or its gold SQL (`label[0]` or `sql.query`)", rec.query_type)));
        }
        Ok(rec)
    }

    /// The gold SQL of a mutation: `label[0]`, else `sql.query`.
    pub fn gold_sql(&self) -> Option<&str> {
        match self.label.first() {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
            _ => self.sql_query.as_deref().filter(|s| !s.trim().is_empty()),
        }
    }

    /// The expected hash, if the record carries one.
    pub fn expected_md5(&self) -> Option<&str> {
        self.answer_md5.as_deref().filter(|s| !s.trim().is_empty())
    }

    /// AgentBench's user prompt for this record.
    pub fn prompt(&self) -> String {
        let mut p = String::new();
        if let Some(e) = self.evidence.as_deref().filter(|e| !e.is_empty()) {
            p.push_str("Evidence about the question: ");
            p.push_str(e);
            p.push('\n');
        }
        if let Some(a) = self.add_description.as_deref().filter(|a| !a.is_empty()) {
            p.push_str("Additional table information about the question: ");
            p.push_str(a);
            p.push('\n');
        }
        p.push_str("Question: ");
        p.push_str(&self.description);
        p.push('\n');
        p
    }

    /// The task for this record; `stem` names the file (for the default id).
    pub fn to_task(&self, stem: &str) -> Task {
        let id = self.id.clone().unwrap_or_else(|| format!("dbbench-{stem}-{:04}", self.line));
        let family = self.family.clone().unwrap_or_else(|| self.query_type.as_str().to_string());
        Task { id, suite: "dbbench".into(), family, instruction: self.description.clone(), payload: self.raw.clone() }
    }
}

/// Strip serde_json's " at line L column C" suffix.
fn json_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(p) => s[..p].to_string(),
        None => s,
    }
}

/// Parse JSONL text. `file` names the source in errors. Blank lines are skipped.
pub fn parse_jsonl(text: &[u8], file: &str) -> Result<Vec<DbRecord>, LoadError> {
    let mut out = Vec::new();
    for (i, raw_line) in text.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let err = |message: String| LoadError { file: file.to_string(), line: line_no, message };
        let mut bytes = raw_line;
        if let Some(b) = bytes.strip_suffix(b"\r") {
            bytes = b;
        }
        if i == 0 {
            if let Some(b) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
                bytes = b;
            }
        }
        let Ok(line) = std::str::from_utf8(bytes) else {
            return Err(err("line is not valid UTF-8".into()));
        };
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| err(format!("invalid JSON at column {}: {}", e.column(), json_message(&e))))?;
        let mut rec = DbRecord::from_json(v).map_err(|e| err(e.0))?;
        rec.line = line_no;
        out.push(rec);
    }
    Ok(out)
}

/// Load an AgentBench DBBench JSONL file.
pub fn load_jsonl(path: &Path) -> Result<Vec<DbRecord>, LoadError> {
    let file = path.display().to_string();
    let bytes = crate::files::read_limited(path, crate::files::MAX_DATASET_BYTES).map_err(|e| LoadError {
        file: file.clone(),
        line: 0,
        message: format!("cannot read file: {e}"),
    })?;
    parse_jsonl(&bytes, &file)
}

/// Load a JSONL file as tasks.
pub fn load_tasks(path: &Path) -> Result<Vec<Task>, LoadError> {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "file".into());
    let recs = load_jsonl(path)?;
    let tasks: Vec<Task> = recs.iter().map(|r| r.to_task(&stem)).collect();
    let mut seen = std::collections::HashMap::new();
    for (r, t) in recs.iter().zip(&tasks) {
        if let Some(prev) = seen.insert(t.id.clone(), r.line) {
            return Err(LoadError {
                file: path.display().to_string(),
                line: r.line,
                message: format!("duplicate task id `{}` (first used on line {prev})", t.id),
            });
        }
    }
    Ok(tasks)
}

/// Where the bundled dataset lives: `$HARNESS_S_DATASETS/dbbench/bundled.jsonl` if the variable
/// is set, else `datasets/dbbench/bundled.jsonl` under the crate root.
pub fn bundled_path() -> PathBuf {
    match std::env::var_os("HARNESS_S_DATASETS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("dbbench").join("bundled.jsonl"),
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/dbbench/bundled.jsonl")),
    }
}

/// The bundled tasks.
pub fn bundled_tasks() -> Result<Vec<Task>, LoadError> {
    let path = bundled_path();
    if !path.exists() {
        return Err(LoadError {
            file: path.display().to_string(),
            line: 0,
            message: "the bundled DBBench dataset is missing (generate datasets/dbbench/bundled.jsonl, or point \
                      HARNESS_S_DATASETS at a folder holding dbbench/bundled.jsonl)"
                .into(),
        });
    }
    load_tasks(&path)
}

/// The record behind a task (its payload).
pub fn record_of(task: &Task) -> Result<DbRecord, ShapeError> {
    DbRecord::from_json(task.payload.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "description": "How many?",
            "label": ["3"],
            "table": {"table_name": "t", "table_info": {"columns": [{"name": "a", "type": "TEXT"}, {"name": "b", "type": "TEXT"}], "rows": [["x", 1], [null, 2.5]]}},
            "type": ["counting"],
            "add_description": "The name of this table is t, and the headers of this table are a,b.",
            "source": "wikisql",
            "extra": {"kept": true}
        })
    }

    #[test]
    fn record_roundtrip() {
        let r = DbRecord::from_json(base()).unwrap();
        assert_eq!(r.query_type, QueryType::Counting);
        assert_eq!(r.tables[0].rows, vec![vec!["x".to_string(), "1".into()], vec!["None".into(), "2.5".into()]]);
        assert_eq!(r.raw["extra"]["kept"], json!(true));
        assert_eq!(
            r.prompt(),
            "Additional table information about the question: The name of this table is t, and the headers of this table are a,b.\nQuestion: How many?\n"
        );
        let mut r2 = r.clone();
        r2.line = 7;
        let t = r2.to_task("dev");
        assert_eq!(t.id, "dbbench-dev-0007");
        assert_eq!(t.family, "counting");
    }

    #[test]
    fn bad_records() {
        let mut v = base();
        v["type"] = json!(["SELECTX"]);
        assert!(DbRecord::from_json(v).unwrap_err().0.contains("must start with one of other, counting"));
        let mut v = base();
        v["table"]["table_info"]["rows"] = json!([["x"]]);
        assert_eq!(DbRecord::from_json(v).unwrap_err().0, "table `t`: row 1 has 1 values but the table has 2 columns");
        let mut v = base();
        v.as_object_mut().unwrap().remove("table");
        assert_eq!(DbRecord::from_json(v).unwrap_err().0, "missing field `table`");
        let mut v = base();
        v["type"] = json!(["INSERT"]);
        v["label"] = json!([]);
        assert!(DbRecord::from_json(v).unwrap_err().0.contains("needs `answer_md5`"));
    }
}
