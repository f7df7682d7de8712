//! Scoring as SWE-Gym does it: take the agent's diff against `base_commit`, apply it to a fresh
//! copy of the repository at `base_commit`, reset the files the test patch touches and apply the
//! test patch, run the instance's FAIL_TO_PASS and PASS_TO_PASS tests, and call the instance
//! resolved iff every one of them passes. An empty diff is unresolved.
//!
//! Results are cached per process by (instance, diff), so a repeated identical attempt costs
//! nothing.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};

use super::instance::{Instance, BUNDLED_OWNER};
use super::runtime::{shell_quote, Limits, Runtime};
use crate::suite::EnvError;

/// How an instance's tests are run and their log read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    /// `python3 -m unittest -v`, tests named `test_x (package.module.Class)`.
    Unittest,
    /// Django's `tests/runtests.py` (unittest-style log, docstring names).
    Django,
    /// `pytest -rA`, tests named by node id.
    Pytest,
    /// SymPy's own runner, `bin/test -C --verbose`, tests named by function (`test_x ok`).
    Sympy,
}

impl Framework {
    pub fn of(inst: &Instance) -> Framework {
        if inst.repo == "django/django" {
            Framework::Django
        } else if inst.repo == "sympy/sympy" {
            Framework::Sympy
        } else if inst.repo.starts_with(&format!("{BUNDLED_OWNER}/")) || !inst.fail_to_pass.iter().any(|t| t.contains("::")) {
            Framework::Unittest
        } else {
            Framework::Pytest
        }
    }
}

/// Files a unified diff touches (the `b/` side; the `a/` side for deletions).
pub fn diff_files(diff: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in diff.lines() {
        if let Some(rest) = l.strip_prefix("diff --git a/") {
            if let Some((_, b)) = rest.split_once(" b/") {
                if !out.iter().any(|x| x == b) {
                    out.push(b.to_string());
                }
            }
        }
    }
    out
}

/// `test_x (pkg.mod.Class)` (or Python 3.11's `test_x (pkg.mod.Class.test_x)`) as the id
/// `python -m unittest` takes: `pkg.mod.Class.test_x`.
pub fn unittest_id(name: &str) -> Option<String> {
    let (method, rest) = name.split_once(" (")?;
    let class = rest.strip_suffix(')')?;
    let class = class.strip_suffix(&format!(".{method}")).unwrap_or(class);
    Some(format!("{class}.{method}"))
}

/// The command that runs an instance's tests, from the repository root.
pub fn test_command(inst: &Instance) -> String {
    let tests: Vec<&String> = inst.fail_to_pass.iter().chain(&inst.pass_to_pass).collect();
    match Framework::of(inst) {
        Framework::Unittest => {
            let ids: Vec<String> = tests.iter().filter_map(|t| unittest_id(t)).map(|t| shell_quote(&t)).collect();
            format!("python3 -m unittest -v {}", ids.join(" "))
        }
        Framework::Django => {
            let modules: Vec<String> = diff_files(&inst.test_patch)
                .iter()
                .filter_map(|f| f.strip_prefix("tests/")?.strip_suffix(".py").map(|m| m.replace('/', ".")))
                .collect();
            format!("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {}", modules.join(" "))
        }
        Framework::Pytest => {
            let files: Vec<String> = diff_files(&inst.test_patch).iter().map(|f| shell_quote(f)).collect();
            format!("pytest --no-header -rA --tb=no -p no:cacheprovider {}", files.join(" "))
        }
        Framework::Sympy => {
            let files: Vec<String> = diff_files(&inst.test_patch).iter().map(|f| shell_quote(f)).collect();
            format!("PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose {}", files.join(" "))
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    Failed,
    Error,
    Skipped,
}

/// The status of every test a log reports.
pub fn parse_log(framework: Framework, log: &str) -> BTreeMap<String, TestStatus> {
    let mut out = BTreeMap::new();
    match framework {
        Framework::Unittest | Framework::Django => {
            for line in log.lines() {
                let Some((name, status)) = line.rsplit_once(" ... ") else { continue };
                let status = match status.trim() {
                    "ok" | "expected failure" => TestStatus::Passed,
                    "FAIL" | "unexpected success" => TestStatus::Failed,
                    "ERROR" => TestStatus::Error,
                    s if s.starts_with("skipped") => TestStatus::Skipped,
                    _ => continue,
                };
                let name = name.trim();
                // Python 3.11+ names a test `test_x (pkg.Class.test_x)`; SWE-bench names it `test_x (pkg.Class)`
                let name = match name.split_once(" (") {
                    Some((m, rest)) if rest.ends_with(&format!(".{m})")) => format!("{m} ({})", &rest[..rest.len() - m.len() - 2]),
                    _ => name.to_string(),
                };
                out.insert(name, status);
            }
        }
        Framework::Pytest => {
            for line in log.lines() {
                let (status, rest) = match line.split_once(' ') {
                    Some(("PASSED", r)) | Some(("XFAIL", r)) => (TestStatus::Passed, r),
                    Some(("FAILED", r)) => (TestStatus::Failed, r),
                    Some(("ERROR", r)) => (TestStatus::Error, r),
                    Some(("SKIPPED", r)) => (TestStatus::Skipped, r),
                    _ => continue,
                };
                // SWE-bench names a test by the log line's first word after the status, so a
                // parameter with a space (`test_x[assert 1 == 2]`) is cut there; names must match
                // the dataset's, and a later line with the same cut name wins, as there
                let Some(name) = rest.split_whitespace().next() else { continue };
                out.insert(name.to_string(), status);
            }
        }
        Framework::Sympy => {
            // `test_x ok`, `test_x F`, `test_x E` per test (the dataset names tests by function)
            for line in log.lines() {
                let line = line.trim();
                if !line.starts_with("test_") {
                    continue;
                }
                let Some(name) = line.split_whitespace().next() else { continue };
                let status = if line.ends_with(" ok") {
                    TestStatus::Passed
                } else if line.ends_with(" F") {
                    TestStatus::Failed
                } else if line.ends_with(" E") {
                    TestStatus::Error
                } else {
                    continue;
                };
                out.insert(name.to_string(), status);
            }
        }
    }
    out
}

/// The outcome of running an instance's tests over a diff.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TestReport {
    pub resolved: bool,
    /// Why it is not resolved (empty diff, patch does not apply, which tests fail), or `resolved`.
    pub reason: String,
    /// Per FAIL_TO_PASS test: passes after the diff.
    pub fail_to_pass: BTreeMap<String, bool>,
    pub pass_to_pass: BTreeMap<String, bool>,
    /// The tests were run (the diff and the test patch applied).
    pub ran: bool,
    /// The end of the test log.
    pub log_tail: String,
}

impl TestReport {
    pub fn all_pass(&self) -> bool {
        self.ran && self.fail_to_pass.values().chain(self.pass_to_pass.values()).all(|p| *p)
    }
    pub fn failing(&self) -> Vec<String> {
        self.fail_to_pass.iter().chain(&self.pass_to_pass).filter(|(_, p)| !**p).map(|(n, _)| n.clone()).collect()
    }
}

fn tail(s: &str, n: usize) -> String {
    let c = s.chars().count();
    s.chars().skip(c.saturating_sub(n)).collect()
}

/// Apply `diff` to `rt` (a fresh repository at the instance's base), then the test patch, run the
/// tests (for at most `timeout`) and read the log. The tests are run even for an empty diff (so
/// `verify-dataset` can show they fail), but an empty diff is never resolved.
pub fn run_tests(rt: &mut dyn Runtime, inst: &Instance, diff: &str, timeout: Duration) -> Result<TestReport, EnvError> {
    let git = Limits { timeout: Duration::from_secs(60), max_output: 64 * 1024 };
    let mut report = TestReport::default();
    let files = diff_files(&inst.test_patch);
    let touches_tests = diff_files(diff).iter().any(|f| files.contains(f));
    if !diff.trim().is_empty() && !touches_tests {
        // the usual case, in one step: the diff and the test patch touch different files
        let both = format!("{}\n{}", diff.trim_end_matches('\n'), inst.test_patch);
        let out = rt.exec("git apply --whitespace=nowarn -", Some(both.as_bytes()), &git)?;
        if out.ok() {
            return finish_run(rt, inst, diff, report, timeout);
        }
        // `git apply` is all or nothing: apply them one by one to say which does not apply
    }
    if !diff.trim().is_empty() {
        let out = rt.exec("git apply --whitespace=nowarn -", Some(diff.as_bytes()), &git)?;
        if !out.ok() {
            report.reason = format!("the diff does not apply: {}", out.output.trim());
            return Ok(report);
        }
    }
    if !files.is_empty() {
        let base = shell_quote(&inst.base_commit);
        let reset: Vec<String> = files
            .iter()
            .map(|f| {
                let q = shell_quote(f);
                format!("(git checkout -q {base} -- {q} 2>/dev/null || rm -f {q})")
            })
            .collect();
        let out = rt.exec(&reset.join(" && "), None, &git)?;
        if !out.ok() {
            return after_diff(diff, report, format!("resetting the test files failed: {}", out.output.trim()));
        }
    }
    let out = rt.exec("git apply --whitespace=nowarn -", Some(inst.test_patch.as_bytes()), &git)?;
    if !out.ok() {
        return after_diff(diff, report, format!("the test patch of {} does not apply: {}", inst.instance_id, out.output.trim()));
    }
    finish_run(rt, inst, diff, report, timeout)
}

/// A step of grading that failed after the agent's diff was applied: the diff made the
/// repository one the test patch cannot go on (a test folder replaced by a file, say), so the
/// instance is unresolved for that reason. Without a diff the instance itself is broken: an
/// infrastructure error (`verify-dataset` reports it).
fn after_diff(diff: &str, mut report: TestReport, why: String) -> Result<TestReport, EnvError> {
    if diff.trim().is_empty() {
        return Err(EnvError::Infra(why));
    }
    report.reason = why;
    Ok(report)
}

/// Run the tests of a repository with the diff and the test patch applied, and read the log.
fn finish_run(rt: &mut dyn Runtime, inst: &Instance, diff: &str, mut report: TestReport, timeout: Duration) -> Result<TestReport, EnvError> {
    let framework = Framework::of(inst);
    let out = rt.exec(&test_command(inst), None, &Limits { timeout, max_output: 4 * 1024 * 1024 })?;
    let statuses = parse_log(framework, &out.output);
    let passes = |t: &String| statuses.get(t) == Some(&TestStatus::Passed);
    report.ran = true;
    report.fail_to_pass = inst.fail_to_pass.iter().map(|t| (t.clone(), passes(t))).collect();
    report.pass_to_pass = inst.pass_to_pass.iter().map(|t| (t.clone(), passes(t))).collect();
    report.log_tail = tail(&out.output, 2000);
    let failing = report.failing();
    report.resolved = failing.is_empty() && !diff.trim().is_empty();
    report.reason = if diff.trim().is_empty() {
        "empty diff".into()
    } else if out.timed_out {
        format!("the tests timed out after {} s", timeout.as_secs())
    } else if failing.is_empty() {
        "resolved".into()
    } else {
        format!("{} of {} tests fail: {}", failing.len(), report.fail_to_pass.len() + report.pass_to_pass.len(), failing.join(", "))
    };
    Ok(report)
}

fn cache() -> &'static Mutex<HashMap<(String, String), TestReport>> {
    static CACHE: OnceLock<Mutex<HashMap<(String, String), TestReport>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The cache key of a diff.
pub fn diff_key(diff: &str) -> String {
    let mut h = Md5::new();
    h.update(diff.as_bytes());
    format!("{:x}", h.finalize())
}

/// The most results kept; past it the cache starts over.
const CACHE_LIMIT: usize = 200_000;

/// Score `diff` on `inst`: an empty diff is unresolved without running anything; otherwise the
/// cached result, or [`run_tests`] (for at most `timeout`) in the runtime `fresh` makes. Returns
/// the report and whether it came from the cache.
pub fn evaluate(
    inst: &Instance,
    diff: &str,
    timeout: Duration,
    fresh: &dyn Fn() -> Result<Box<dyn Runtime>, EnvError>,
) -> Result<(TestReport, bool), EnvError> {
    if diff.trim().is_empty() {
        return Ok((TestReport { reason: "empty diff".into(), ..Default::default() }, false));
    }
    let key = (inst.instance_id.clone(), diff_key(diff));
    if let Some(r) = cache().lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok((r.clone(), true));
    }
    let mut rt = fresh()?;
    let report = run_tests(rt.as_mut(), inst, diff, timeout)?;
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    if c.len() >= CACHE_LIMIT {
        c.clear();
    }
    c.insert(key, report.clone());
    Ok((report, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_of_each_framework() {
        let log = "test_a (pkg.tests.T.test_a) ... ok\ntest_b (pkg.tests.T) ... FAIL\nA described test. ... ok\ntest_c (x.Y) ... skipped 'no'\ntest_d (x.Y) ... ERROR\n";
        let m = parse_log(Framework::Unittest, log);
        assert_eq!(m["test_a (pkg.tests.T)"], TestStatus::Passed);
        assert_eq!(m["test_b (pkg.tests.T)"], TestStatus::Failed);
        assert_eq!(m["A described test."], TestStatus::Passed);
        assert_eq!(m["test_c (x.Y)"], TestStatus::Skipped);
        assert_eq!(m["test_d (x.Y)"], TestStatus::Error);
        let m = parse_log(
            Framework::Pytest,
            "PASSED tests/t.py::test_a\nFAILED tests/t.py::test_b - assert 1 == 2\nPASSED t.py::test_c[assert 1 == 2]\n",
        );
        assert_eq!(m["tests/t.py::test_a"], TestStatus::Passed);
        assert_eq!(m["tests/t.py::test_b"], TestStatus::Failed);
        // SWE-bench's names stop at the first space of a parameter
        assert_eq!(m["t.py::test_c[assert"], TestStatus::Passed);
        let log = "sympy/matrices/tests/test_sparse.py[3] \ntest_sparse_matrix ok\ntest_transpose F\ntest_trace E\n";
        let m = parse_log(Framework::Sympy, log);
        assert_eq!(m["test_sparse_matrix"], TestStatus::Passed);
        assert_eq!(m["test_transpose"], TestStatus::Failed);
        assert_eq!(m["test_trace"], TestStatus::Error);
    }

    #[test]
    fn test_ids_and_commands() {
        assert_eq!(unittest_id("test_a (pkg.tests.T)").as_deref(), Some("pkg.tests.T.test_a"));
        assert_eq!(unittest_id("test_a (pkg.tests.T.test_a)").as_deref(), Some("pkg.tests.T.test_a"));
        let diff = "diff --git a/tests/sitemaps_tests/test_http.py b/tests/sitemaps_tests/test_http.py\n--- a/x\n+++ b/x\n";
        assert_eq!(diff_files(diff), vec!["tests/sitemaps_tests/test_http.py"]);
        let inst = Instance {
            instance_id: "django__django-1".into(),
            repo: "django/django".into(),
            base_commit: "b".into(),
            problem_statement: String::new(),
            patch: String::new(),
            test_patch: diff.into(),
            hints_text: String::new(),
            created_at: String::new(),
            version: String::new(),
            fail_to_pass: vec!["test_x (sitemaps_tests.test_http.T)".into()],
            pass_to_pass: vec![],
        };
        assert_eq!(test_command(&inst), "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 sitemaps_tests.test_http");
        let py = Instance {
            repo: "pallets/flask".into(),
            fail_to_pass: vec!["tests/t.py::test_a".into()],
            test_patch: "diff --git a/tests/t.py b/tests/t.py\n".into(),
            ..inst.clone()
        };
        assert_eq!(test_command(&py), "pytest --no-header -rA --tb=no -p no:cacheprovider 'tests/t.py'");
        let sympy = Instance {
            repo: "sympy/sympy".into(),
            fail_to_pass: vec!["test_sparse_matrix".into()],
            test_patch: "diff --git a/sympy/matrices/tests/test_sparse.py b/sympy/matrices/tests/test_sparse.py\n".into(),
            ..inst.clone()
        };
        assert_eq!(
            test_command(&sympy),
            "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose 'sympy/matrices/tests/test_sparse.py'"
        );
        let ut = Instance { repo: "harness-s/textkit".into(), fail_to_pass: vec!["test_a (tests.test_x.T)".into()], ..inst };
        assert_eq!(test_command(&ut), "python3 -m unittest -v 'tests.test_x.T.test_a'");
    }
}
