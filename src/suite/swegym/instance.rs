//! SWE-Gym instances: the official schema (`instance_id, repo, base_commit, problem_statement,
//! patch, test_patch, hints_text, created_at, version, FAIL_TO_PASS, PASS_TO_PASS`), read from a
//! JSON array or JSONL file, with errors naming the file, line and field.
//!
//! `FAIL_TO_PASS` / `PASS_TO_PASS` are lists of test names; the official releases store them
//! either as JSON lists or as strings holding a JSON list, and both are accepted. Fields outside
//! the schema (e.g. `environment_setup_commit`) are kept in the task payload untouched.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::suite::{json_kind, LoadError, ShapeError};
use crate::task::Task;

/// One SWE-Gym instance.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Instance {
    pub instance_id: String,
    pub repo: String,
    pub base_commit: String,
    pub problem_statement: String,
    /// The reference fix, a unified diff against `base_commit`.
    pub patch: String,
    /// The tests that reveal the bug, a unified diff applied before the tests run.
    pub test_patch: String,
    #[serde(default)]
    pub hints_text: String,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub version: String,
    #[serde(rename = "FAIL_TO_PASS")]
    pub fail_to_pass: Vec<String>,
    #[serde(rename = "PASS_TO_PASS")]
    pub pass_to_pass: Vec<String>,
}

const REQUIRED_TEXT: &[&str] = &["instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch"];
const OPTIONAL_TEXT: &[&str] = &["hints_text", "created_at", "version"];

impl Instance {
    /// Validate one record; the error names the field.
    pub fn from_json(v: &Value) -> Result<Instance, ShapeError> {
        let obj = v.as_object().ok_or_else(|| ShapeError(format!("a record must be a JSON object, got {}", json_kind(v))))?;
        let text = |name: &str, required: bool| -> Result<String, ShapeError> {
            match obj.get(name) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(Value::Number(n)) if name == "version" => Ok(n.to_string()),
                Some(Value::Null) | None if !required => Ok(String::new()),
                None => Err(ShapeError(format!("missing field `{name}`"))),
                Some(other) => Err(ShapeError(format!("field `{name}`: expected a string, got {}", json_kind(other)))),
            }
        };
        let mut t = std::collections::BTreeMap::new();
        for f in REQUIRED_TEXT {
            t.insert(*f, text(f, true)?);
        }
        for f in OPTIONAL_TEXT {
            t.insert(*f, text(f, false)?);
        }
        if t["instance_id"].trim().is_empty() {
            return Err(ShapeError("field `instance_id`: must not be empty".into()));
        }
        if !t["repo"].contains('/') {
            return Err(ShapeError(format!("field `repo`: expected `owner/name`, got `{}`", t["repo"])));
        }
        let tests = |name: &str| -> Result<Vec<String>, ShapeError> {
            let raw = obj.get(name).ok_or_else(|| ShapeError(format!("missing field `{name}`")))?;
            let list = match raw {
                Value::String(s) => serde_json::from_str::<Value>(s)
                    .map_err(|e| ShapeError(format!("field `{name}`: a string must hold a JSON list of test names ({e})")))?,
                other => other.clone(),
            };
            let items =
                list.as_array().ok_or_else(|| ShapeError(format!("field `{name}`: expected a list of test names, got {}", json_kind(&list))))?;
            items
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| ShapeError(format!("field `{name}`[{i}]: expected a test name (string), got {}", json_kind(x))))
                })
                .collect()
        };
        let fail_to_pass = tests("FAIL_TO_PASS")?;
        let pass_to_pass = tests("PASS_TO_PASS")?;
        if fail_to_pass.is_empty() {
            return Err(ShapeError("field `FAIL_TO_PASS`: an instance needs at least one test that the fix makes pass".into()));
        }
        let take = |k: &str| t[k].clone();
        Ok(Instance {
            instance_id: take("instance_id"),
            repo: take("repo"),
            base_commit: take("base_commit"),
            problem_statement: take("problem_statement"),
            patch: take("patch"),
            test_patch: take("test_patch"),
            hints_text: take("hints_text"),
            created_at: take("created_at"),
            version: take("version"),
            fail_to_pass,
            pass_to_pass,
        })
    }

    /// The family of an instance: its repository (held-out splits are by repository).
    pub fn family(&self) -> &str {
        &self.repo
    }

    pub fn to_task(&self, raw: Value) -> Task {
        Task {
            id: self.instance_id.clone(),
            suite: "swegym".into(),
            family: self.repo.clone(),
            instruction: self.problem_statement.clone(),
            payload: raw,
        }
    }
}

/// The line (1-based) where each top-level element of a JSON array starts.
fn element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let (mut depth, mut line, mut in_str, mut esc, mut expect) = (0usize, 1usize, false, false, false);
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        if expect && !c.is_whitespace() && c != ']' {
            lines.push(line);
            expect = false;
        }
        match c {
            '"' => in_str = true,
            '[' | '{' => {
                depth += 1;
                if depth == 1 {
                    expect = true;
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => expect = true,
            _ => {}
        }
    }
    lines
}

/// Parse instances from text: a JSON array (or a single object) or JSON Lines. Each result
/// carries the record's line and its raw JSON.
pub fn parse(file: &str, text: &str) -> Result<Vec<(usize, Instance, Value)>, LoadError> {
    let err = |line: usize, message: String| LoadError { file: file.to_string(), line, message };
    let trimmed = text.trim_start();
    let mut out = Vec::new();
    if trimmed.starts_with('[') || (trimmed.starts_with('{') && serde_json::from_str::<Value>(text).is_ok()) {
        let v: Value = serde_json::from_str(text).map_err(|e| err(e.line(), format!("invalid JSON: {e}")))?;
        let (items, lines) = match v {
            Value::Array(items) => {
                let lines = element_lines(text);
                (items, lines)
            }
            obj => (vec![obj], vec![text.len() - trimmed.len() + 1]),
        };
        for (i, item) in items.into_iter().enumerate() {
            let line = lines.get(i).copied().unwrap_or(1);
            let inst = Instance::from_json(&item).map_err(|m| err(line, format!("record {}: {m}", i + 1)))?;
            out.push((line, inst, item));
        }
    } else {
        for (i, l) in text.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(l).map_err(|e| err(i + 1, format!("invalid JSON: {e}")))?;
            let inst = Instance::from_json(&v).map_err(|m| err(i + 1, m.0))?;
            out.push((i + 1, inst, v));
        }
    }
    let mut seen = std::collections::HashMap::new();
    for (line, inst, _) in &out {
        if let Some(prev) = seen.insert(inst.instance_id.clone(), *line) {
            return Err(err(*line, format!("duplicate instance_id `{}` (first on line {prev})", inst.instance_id)));
        }
    }
    Ok(out)
}

/// Load a JSON or JSONL file of instances as tasks.
pub fn load_tasks(path: &Path) -> Result<Vec<Task>, LoadError> {
    let file = path.display().to_string();
    let text = crate::files::read_text_limited(path, crate::files::MAX_DATASET_BYTES).map_err(|e| LoadError {
        file: file.clone(),
        line: 0,
        message: e.to_string(),
    })?;
    Ok(parse(&file, &text)?.into_iter().map(|(_, inst, raw)| inst.to_task(raw)).collect())
}

/// The instance behind a task (its payload).
pub fn instance_of(task: &Task) -> Result<Instance, ShapeError> {
    Instance::from_json(&task.payload)
}

/// The folder of the bundled dataset: `$HARNESS_S_DATASETS/swegym` if the variable is set, else
/// `datasets/swegym` under the crate root. It holds `bundled.jsonl` and `repos/<name>/`.
pub fn bundled_dir() -> PathBuf {
    match std::env::var_os("HARNESS_S_DATASETS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("swegym"),
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/swegym")),
    }
}

/// The owner of every bundled repository: `harness-s/<name>` lives in `repos/<name>/`.
pub const BUNDLED_OWNER: &str = "harness-s";

/// The clean source of a bundled repository, if `repo` is one.
pub fn bundled_repo_dir(repo: &str) -> Option<PathBuf> {
    let name = repo.strip_prefix(BUNDLED_OWNER)?.strip_prefix('/')?;
    if name.is_empty() || name.contains("..") || name.contains('/') {
        return None;
    }
    let p = bundled_dir().join("repos").join(name);
    p.is_dir().then_some(p)
}

pub fn bundled_tasks() -> Result<Vec<Task>, LoadError> {
    let path = bundled_dir().join("bundled.jsonl");
    if !path.exists() {
        return Err(LoadError {
            file: path.display().to_string(),
            line: 0,
            message: "the bundled SWE-Gym dataset is missing (run `cargo run --bin gen-swegym`, or point HARNESS_S_DATASETS at a folder holding swegym/bundled.jsonl)".into(),
        });
    }
    load_tasks(&path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec() -> Value {
        json!({"instance_id": "o__r-1", "repo": "o/r", "base_commit": "abc", "problem_statement": "It breaks.",
               "patch": "diff", "test_patch": "diff", "hints_text": "", "created_at": "2024-01-01", "version": "1.0",
               "FAIL_TO_PASS": "[\"test_a (t.T)\"]", "PASS_TO_PASS": ["test_b (t.T)"], "extra": 1})
    }

    #[test]
    fn lists_may_be_json_strings() {
        let i = Instance::from_json(&rec()).unwrap();
        assert_eq!(i.fail_to_pass, vec!["test_a (t.T)"]);
        assert_eq!(i.pass_to_pass, vec!["test_b (t.T)"]);
        assert_eq!(i.family(), "o/r");
    }

    #[test]
    fn errors_name_the_field_and_line() {
        let mut bad = rec();
        bad["FAIL_TO_PASS"] = json!([1]);
        assert_eq!(Instance::from_json(&bad).unwrap_err().0, "field `FAIL_TO_PASS`[0]: expected a test name (string), got a number");
        let mut bad = rec();
        bad.as_object_mut().unwrap().remove("patch");
        assert_eq!(Instance::from_json(&bad).unwrap_err().0, "missing field `patch`");
        let mut bad = rec();
        bad["repo"] = json!(7);
        assert_eq!(Instance::from_json(&bad).unwrap_err().0, "field `repo`: expected a string, got a number");
        let mut bad = rec();
        bad["PASS_TO_PASS"] = json!("[not json");
        assert!(Instance::from_json(&bad).unwrap_err().0.starts_with("field `PASS_TO_PASS`: a string must hold a JSON list"));

        let good = rec().to_string();
        let mut b2 = rec();
        b2["instance_id"] = json!("o__r-2");
        b2.as_object_mut().unwrap().remove("base_commit");
        let jsonl = format!("{good}\n\n{}\n", b2);
        let e = parse("x.jsonl", &jsonl).unwrap_err();
        assert_eq!(e.to_string(), "x.jsonl:3: missing field `base_commit`");
        let e = parse("x.jsonl", &format!("{good}\n{{oops\n")).unwrap_err();
        assert!(e.to_string().starts_with("x.jsonl:2: invalid JSON"), "{e}");
        let e = parse("x.jsonl", &format!("{good}\n{good}\n")).unwrap_err();
        assert_eq!(e.to_string(), "x.jsonl:2: duplicate instance_id `o__r-1` (first on line 1)");

        let arr = format!("[\n  {},\n  {}\n]\n", serde_json::to_string_pretty(&rec()).unwrap(), b2);
        let e = parse("x.json", &arr).unwrap_err();
        let line = 2 + serde_json::to_string_pretty(&rec()).unwrap().lines().count();
        assert_eq!(e.to_string(), format!("x.json:{line}: record 2: missing field `base_commit`"));
        let e = parse("x.json", "[1, 2]").unwrap_err();
        assert_eq!(e.to_string(), "x.json:1: record 1: a record must be a JSON object, got a number");
    }
}
