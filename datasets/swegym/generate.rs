//! Generator of the bundled SWE-Gym dataset of Harness-S Workbench.
//!
//! Writes `datasets/swegym/bundled.jsonl`: seeded-bug instances over the small Python
//! repositories in `datasets/swegym/repos/<name>/`, in the official SWE-Gym instance schema.
//!
//! For each repository, every line edit the shared operators
//! (`harness_s::suite::swegym::operators`) can make to its source is a candidate bug; candidates
//! are tried in a seeded order, each by really running the repository's tests with
//! `python3 -m unittest -v` on the mutated copy. A candidate becomes an instance when it makes
//! one to three tests fail (those are its FAIL_TO_PASS; every other test is PASS_TO_PASS) on a
//! line no earlier instance used. The instance's base is the clean repository with the bug in
//! it and the revealing tests removed; `patch` is the fix and `test_patch` restores the tests,
//! both as `git diff` output. The issue text is written from what the bug really does: a snippet
//! built from a revealing test, its actual output (or traceback) under the bug, and the expected
//! value from the test.
//!
//! `base_commit` is the git commit of the base, made with a fixed identity and date by
//! `harness_s::suite::swegym::prepare_bundled` — the same function the local runtime uses, which
//! checks it.
//!
//! Regenerate with `cargo run --release --bin gen-swegym`. The output is deterministic: a fixed
//! seed, sorted directory walks, and no hash-map iteration.

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness_s::seed::SplitMix;
use harness_s::suite::swegym::instance::{Instance, BUNDLED_OWNER};
use harness_s::suite::swegym::operators::edits;
use harness_s::suite::swegym::prepare_bundled;
use harness_s::suite::swegym::runtime::{Limits, LocalRuntime, Runtime};
use harness_s::suite::swegym::score::{parse_log, Framework, TestStatus};

const SEED: u64 = 0x5357_4547_594d_2101;
const PER_FAMILY: usize = 20;
const MAX_TRIES: usize = 400;

fn dataset_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/swegym"))
}

fn files_of(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir.join(rel)).expect("read repo").map(|e| e.unwrap()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') || name == "__pycache__" {
            continue;
        }
        let r = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        if e.file_type().unwrap().is_dir() {
            files_of(dir, &r, out);
        } else {
            out.push(r);
        }
    }
}

fn sh(rt: &mut LocalRuntime, cmd: &str) -> String {
    let out = rt.exec(cmd, None, &Limits { timeout: Duration::from_secs(30), max_output: 4 << 20 }).expect("runtime");
    assert!(out.ok(), "`{cmd}` failed: {}", out.output);
    out.output
}

fn run_tests(rt: &mut LocalRuntime) -> Option<std::collections::BTreeMap<String, TestStatus>> {
    let out = rt.exec("python3 -m unittest -v 2>&1", None, &Limits { timeout: Duration::from_secs(20), max_output: 4 << 20 }).expect("runtime");
    if out.timed_out {
        return None;
    }
    Some(parse_log(Framework::Unittest, &out.output))
}

/// A test method: its class, name, and the line range of its `def` block in the test file.
struct Method {
    file: String,
    class: String,
    name: String,
    start: usize,
    end: usize,
}

fn methods(file: &str, text: &str) -> Vec<Method> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Method> = Vec::new();
    let mut class = String::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(rest) = l.strip_prefix("class ") {
            class = rest.split(['(', ':']).next().unwrap_or("").to_string();
        }
        if let Some(rest) = l.strip_prefix("    def test") {
            let name = format!("test{}", rest.split('(').next().unwrap_or(""));
            let mut end = i + 1;
            while end < lines.len() && (lines[end].trim().is_empty() || lines[end].starts_with("        ")) {
                end += 1;
            }
            // trailing blank lines belong to what follows
            while end > i + 1 && lines[end - 1].trim().is_empty() {
                end -= 1;
            }
            out.push(Method { file: file.to_string(), class: class.clone(), name, start: i, end });
        }
    }
    out
}

fn module_of(file: &str) -> String {
    file.trim_end_matches(".py").replace('/', ".")
}

fn test_name(m: &Method) -> String {
    format!("{} ({}.{})", m.name, module_of(&m.file), m.class)
}

/// The test file without the given methods (and the blank line before each).
fn without(text: &str, remove: &[&Method]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = vec![false; lines.len()];
    for m in remove {
        for d in drop.iter_mut().take(m.end).skip(m.start) {
            *d = true;
        }
        if m.start > 0 && lines[m.start - 1].trim().is_empty() {
            drop[m.start - 1] = true;
        }
    }
    let mut out: Vec<&str> = lines.iter().zip(&drop).filter(|(_, d)| !**d).map(|(l, _)| *l).collect();
    while out.last().map(|l| l.trim().is_empty()).unwrap_or(false) {
        out.pop();
    }
    out.join("\n") + "\n"
}

/// One assertion of a test, turned into something a bug report can show.
struct Check {
    /// The expression whose value is wrong.
    expr: String,
    /// What the test expects, as written in the test.
    expected: String,
    /// `Some(exception)` when the test expects `expr` to raise.
    raises: Option<String>,
}

fn checks(body: &[&str]) -> (Vec<String>, Vec<Check>) {
    let mut setup = Vec::new();
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let t = body[i].trim();
        let inner = |prefix: &str| t.strip_prefix(prefix).and_then(|r| r.strip_suffix(')')).map(str::to_string);
        if let Some(args) = inner("self.assertEqual(") {
            if let Some((a, b)) = split_top(&args) {
                out.push(Check { expr: a, expected: b, raises: None });
            }
        } else if let Some(a) = inner("self.assertTrue(") {
            out.push(Check { expr: a, expected: "True".into(), raises: None });
        } else if let Some(a) = inner("self.assertFalse(") {
            out.push(Check { expr: a, expected: "False".into(), raises: None });
        } else if let Some(a) = inner("self.assertIsNone(") {
            out.push(Check { expr: a, expected: "None".into(), raises: None });
        } else if let Some(e) = t.strip_prefix("with self.assertRaises(").and_then(|r| r.strip_suffix("):")) {
            if i + 1 < body.len() {
                out.push(Check { expr: body[i + 1].trim().to_string(), expected: String::new(), raises: Some(e.to_string()) });
                i += 1;
            }
        } else if out.is_empty() && !t.is_empty() {
            setup.push(t.to_string());
        }
        i += 1;
    }
    (setup, out)
}

/// Split `a, b` at the last top-level comma.
fn split_top(s: &str) -> Option<(String, String)> {
    let (mut depth, mut quote, mut at) = (0i32, None::<char>, None);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => at = Some(i),
            _ => {}
        }
    }
    let i = at?;
    Some((s[..i].trim().to_string(), s[i + 1..].trim().to_string()))
}

/// What the snippet shows under the bug: the first check that goes wrong, its actual value (or
/// the traceback), and the snippet's script.
struct Observed {
    check: usize,
    actual: String,
    traceback: Option<String>,
}

fn observe(rt: &mut LocalRuntime, header: &str, setup: &[String], cks: &[Check]) -> Option<Observed> {
    let mut script = String::from("import sys, traceback\n");
    script.push_str(header);
    script.push('\n');
    for s in setup {
        script.push_str(s);
        script.push('\n');
    }
    for (i, c) in cks.iter().enumerate() {
        let expr = c.expr.trim_start_matches("self.");
        match &c.raises {
            Some(e) => script.push_str(&format!(
                "try:\n    __v = {expr}\n    print('@@{i}|bad|' + repr(__v))\n    raise SystemExit(0)\nexcept {e}:\n    print('@@{i}|ok|')\n"
            )),
            None => script.push_str(&format!(
                "try:\n    __v = {expr}\nexcept Exception:\n    print('@@{i}|raised')\n    traceback.print_exc(file=sys.stdout)\n    raise SystemExit(0)\nprint('@@{i}|' + ('ok' if __v == ({expected}) else 'bad') + '|' + repr(__v))\n",
                expected = c.expected
            )),
        }
    }
    std::fs::write(rt.root().join("tmp/repro.py"), &script).unwrap();
    let out = rt
        .exec("PYTHONPATH=/testbed python3 \"$TMPDIR/repro.py\" 2>&1", None, &Limits { timeout: Duration::from_secs(20), max_output: 1 << 20 })
        .ok()?;
    let text = out.output;
    if std::env::var_os("GEN_SWEGYM_DEBUG").is_some() {
        eprintln!("--- repro\n{script}\n--- output\n{text}");
    }
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        let Some(rest) = l.strip_prefix("@@") else { continue };
        let mut parts = rest.splitn(3, '|');
        let i: usize = parts.next()?.parse().ok()?;
        match parts.next()? {
            "raised" => {
                let tb: Vec<&str> = lines.collect();
                // as the reporter's own script would show it: the call itself, no caret lines
                let tb: Vec<String> = tb
                    .iter()
                    .filter(|l| !l.trim().chars().all(|c| c == '^' || c == '~') || l.trim().is_empty())
                    .map(|l| l.replace("\"/tmp/repro.py\"", "\"repro.py\"").replace("__v = ", ""))
                    .collect();
                let tb = tb.join("\n");
                let last = tb.lines().last().unwrap_or("").to_string();
                return Some(Observed { check: i, actual: last, traceback: Some(tb) });
            }
            "bad" => return Some(Observed { check: i, actual: parts.next()?.to_string(), traceback: None }),
            _ => {}
        }
    }
    None
}

/// The names a test module's header imports with `from ... import`.
fn imported_names(header: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = header;
    while let Some(i) = rest.find(" import ") {
        let after = &rest[i + " import ".len()..];
        let list = if let Some(inner) = after.strip_prefix('(') { inner.split(')').next().unwrap_or("") } else { after.lines().next().unwrap_or("") };
        out.extend(list.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()));
        rest = after;
    }
    out
}

fn docstring_of(src: &str, func: &str) -> Option<String> {
    let lines: Vec<&str> = src.lines().collect();
    let at = lines.iter().position(|l| l.trim_start().starts_with(&format!("def {func}(")))?;
    let next = lines.get(at + 1)?.trim();
    let d = next.strip_prefix("\"\"\"")?;
    Some(d.trim_end_matches("\"\"\"").trim().to_string())
}

fn function_at(src: &str, line: usize) -> Option<(String, Option<String>)> {
    let lines: Vec<&str> = src.lines().collect();
    let mut method = None;
    for l in lines[..=line].iter().rev() {
        let t = l.trim_start();
        if let Some(rest) = t.strip_prefix("def ") {
            if method.is_none() {
                method = Some(rest.split('(').next()?.to_string());
                if !l.starts_with(' ') {
                    return Some((method?, None));
                }
            }
        } else if let Some(rest) = t.strip_prefix("class ") {
            if !l.starts_with(' ') {
                return Some((method?, Some(rest.split(['(', ':']).next()?.to_string())));
            }
        }
    }
    method.map(|m| (m, None))
}

fn pick<'a>(rng: &mut SplitMix, xs: &[&'a str]) -> &'a str {
    xs[(rng.next_u64() % xs.len() as u64) as usize]
}

struct Issue<'a> {
    package: &'a str,
    version: &'a str,
    module: String,
    func: String,
    class: Option<String>,
    doc: Option<String>,
    helpers: String,
    /// Names the test module imports from the package, and its one-line constants.
    imported: Vec<String>,
    constants: Vec<(String, String)>,
    setup: Vec<String>,
    check: &'a Check,
    observed: &'a Observed,
}

fn issue_text(rng: &mut SplitMix, is: &Issue) -> String {
    let name = match &is.class {
        Some(c) => format!("{c}.{}", is.func),
        None => is.func.clone(),
    };
    let expr = is.check.expr.trim_start_matches("self.").to_string();
    let used = |name: &str| {
        is.setup.iter().chain(std::iter::once(&expr)).chain(std::iter::once(&is.helpers)).any(|s| {
            s.match_indices(name).any(|(i, _)| {
                let before = s[..i].chars().last().map(|c| c.is_alphanumeric() || c == '_').unwrap_or(false);
                let after = s[i + name.len()..].chars().next().map(|c| c.is_alphanumeric() || c == '_').unwrap_or(false);
                !before && !after
            })
        })
    };
    let mut names: Vec<&str> = is.imported.iter().map(|s| s.as_str()).filter(|n| used(n)).collect();
    let own = is.class.clone().unwrap_or_else(|| is.func.clone());
    if !names.contains(&own.as_str()) {
        names.insert(0, &own);
    }
    let import = format!("from {} import {}", is.module, names.join(", "));
    let mut snippet = vec![format!(">>> {import}")];
    for (name, line) in &is.constants {
        if used(name) {
            snippet.push(format!(">>> {line}"));
        }
    }
    for l in is.helpers.lines().filter(|l| !l.trim().is_empty()) {
        snippet.push(if l.starts_with(' ') { format!("... {l}") } else { format!(">>> {l}") });
    }
    if !is.helpers.trim().is_empty() {
        snippet.push("...".into());
    }
    for s in &is.setup {
        snippet.push(format!(">>> {s}"));
    }
    snippet.push(format!(">>> {expr}"));
    let wanted = match &is.check.raises {
        Some(e) => format!("a `{e}`"),
        None => format!("`{}`", is.check.expected),
    };
    let title = match (&is.observed.traceback, &is.check.raises) {
        (Some(_), _) => {
            let exc = is.observed.actual.split(':').next().unwrap_or("an exception");
            pick(
                rng,
                &[&format!("`{name}` raises {exc}"), &format!("Unexpected {exc} from `{name}`"), &format!("{exc} in {}.{}", is.module, is.func)],
            )
            .to_string()
        }
        (None, Some(e)) => format!("`{name}` does not raise {e} for invalid input"),
        (None, None) => pick(
            rng,
            &[
                &format!("`{name}` returns the wrong result"),
                &format!("Wrong output from `{}.{}`", is.module, is.func),
                &format!("`{expr}` gives {} instead of {}", is.observed.actual, is.check.expected),
                &format!("{name}: unexpected return value"),
            ],
        )
        .to_string(),
    };
    let mut body = String::new();
    body.push_str(&title);
    body.push_str("\n\n");
    let intro = match &is.doc {
        Some(d) if rng.next_u64().is_multiple_of(2) => {
            format!("The docstring of `{name}` in `{}` says \"{d}\", but that is not what happens.", is.module)
        }
        _ => pick(
            rng,
            &[
                &format!("I ran into this while using `{name}` from `{}` ({} {}).", is.module, is.package, is.version),
                &format!("After upgrading to {} {}, `{name}` behaves differently from what I expect.", is.package, is.version),
                &format!("`{name}` (in `{}`) does not do what it should for the input below.", is.module),
            ],
        )
        .to_string(),
    };
    body.push_str(&intro);
    body.push_str("\n\n");
    match &is.observed.traceback {
        Some(tb) => {
            body.push_str("Reproduction:\n\n```python\n");
            body.push_str(&snippet.join("\n"));
            body.push_str("\n```\n\nOutput:\n\n```\n");
            body.push_str(tb.trim_end());
            body.push_str(&format!("\n```\n\nI expected {wanted}.\n"));
        }
        None => {
            let style = rng.next_u64() % 2;
            if style == 0 {
                body.push_str("Minimal example:\n\n```python\n");
                body.push_str(&snippet.join("\n"));
                body.push_str(&format!("\n{}\n```\n\nI expected {wanted}.\n", is.observed.actual));
            } else {
                body.push_str("Steps to reproduce:\n\n```python\n");
                body.push_str(&snippet.join("\n"));
                body.push_str(&format!("\n```\n\nExpected: {wanted}\nActual: `{}`\n", is.observed.actual));
            }
        }
    }
    body.push_str(pick(
        rng,
        &[
            "",
            "\nThis breaks a report we generate every night.\n",
            "\nHappy to send a PR if someone points me in the right direction.\n",
            "\nPython 3.11 on Linux.\n",
        ],
    ));
    body
}

fn version_of(repo_dir: &Path, package: &str) -> String {
    let init = std::fs::read_to_string(repo_dir.join(package).join("__init__.py")).unwrap_or_default();
    init.lines()
        .find_map(|l| l.strip_prefix("__version__ = \"").and_then(|r| r.strip_suffix('"')).map(str::to_string))
        .unwrap_or_else(|| "0.1".into())
}

fn family(name: &str, repo_dir: &Path, out: &mut Vec<serde_json::Value>) {
    let mut files = Vec::new();
    files_of(repo_dir, "", &mut files);
    let test_files: Vec<String> = files.iter().filter(|f| f.starts_with("tests/test_") && f.ends_with(".py")).cloned().collect();
    let src_files: Vec<String> =
        files.iter().filter(|f| f.ends_with(".py") && !f.starts_with("tests/") && !f.ends_with("__init__.py")).cloned().collect();
    let package = src_files[0].split('/').next().unwrap().to_string();
    let version = version_of(repo_dir, &package);
    let mut rt = LocalRuntime::from_dir(repo_dir).expect("copy");
    let git_env = "GIT_AUTHOR_NAME=gen GIT_AUTHOR_EMAIL=gen@invalid GIT_COMMITTER_NAME=gen GIT_COMMITTER_EMAIL=gen@invalid";
    sh(&mut rt, &format!("git init -q -b main . && printf '__pycache__/\\n' > .git/info/exclude && git add -A && {git_env} git commit -q -m clean"));
    let clean = run_tests(&mut rt).expect("clean tests run");
    assert!(!clean.is_empty() && clean.values().all(|s| *s == TestStatus::Passed), "{name}: the clean repository's tests must all pass: {clean:?}");
    let all_methods: Vec<Method> = test_files.iter().flat_map(|f| methods(f, &std::fs::read_to_string(repo_dir.join(f)).unwrap())).collect();
    assert_eq!(all_methods.len(), clean.len(), "{name}: every test is a method the generator can read");

    let mut candidates: Vec<(String, usize, String)> = Vec::new();
    for f in &src_files {
        let text = std::fs::read_to_string(repo_dir.join(f)).unwrap();
        for (i, l) in text.lines().enumerate() {
            for e in edits(l) {
                candidates.push((f.clone(), i, e.after));
            }
        }
    }
    // seeded Fisher-Yates
    let mut rng = SplitMix(SEED ^ harness_s::seed::hash_str(name));
    for i in (1..candidates.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        candidates.swap(i, j);
    }
    let mut used_lines: Vec<(String, usize)> = Vec::new();
    let mut made = 0;
    for (tries, (file, line, after)) in candidates.iter().enumerate() {
        if made >= PER_FAMILY || tries >= MAX_TRIES {
            break;
        }
        if used_lines.contains(&(file.clone(), *line)) {
            continue;
        }
        let clean_src = std::fs::read_to_string(repo_dir.join(file)).unwrap();
        let mut lines: Vec<&str> = clean_src.lines().collect();
        lines[*line] = after;
        let buggy = lines.join("\n") + "\n";
        std::fs::write(rt.repo().join(file), &buggy).unwrap();
        let result = run_tests(&mut rt);
        sh(&mut rt, "git checkout -q -- .");
        let Some(result) = result else { continue };
        let killed: Vec<&Method> = all_methods.iter().filter(|m| result.get(&test_name(m)) != Some(&TestStatus::Passed)).collect();
        if killed.is_empty() || killed.len() > 3 || result.len() != clean.len() {
            if std::env::var_os("GEN_SWEGYM_DEBUG").is_some() {
                eprintln!("skip {file}:{line}: {} killed, {} results", killed.len(), result.len());
            }
            continue;
        }
        // a class must keep one method at the base
        let empties = killed.iter().any(|k| {
            all_methods
                .iter()
                .filter(|m| m.class == k.class && m.file == k.file)
                .all(|m| killed.iter().any(|x| x.name == m.name && x.class == m.class))
        });
        if empties {
            continue;
        }
        // what the bug looks like from a revealing test
        let first = killed[0];
        let test_src = std::fs::read_to_string(repo_dir.join(&first.file)).unwrap();
        let tl: Vec<&str> = test_src.lines().collect();
        let header: String =
            tl.iter().take_while(|l| !l.starts_with("class ")).filter(|l| !l.starts_with("import unittest")).cloned().collect::<Vec<_>>().join("\n");
        let helpers: String = {
            let start = tl.iter().position(|l| l.starts_with("def ")).unwrap_or(tl.len());
            tl[start..].iter().take_while(|l| !l.starts_with("class ")).cloned().collect::<Vec<_>>().join("\n")
        };
        let (setup, cks) = checks(&tl[first.start + 1..first.end]);
        std::fs::write(rt.repo().join(file), &buggy).unwrap();
        let observed = observe(&mut rt, &header, &setup, &cks);
        sh(&mut rt, "git checkout -q -- .");
        let Some(observed) = observed else { continue };
        let Some((func, class)) = function_at(&clean_src, *line) else { continue };
        used_lines.push((file.clone(), *line));
        made += 1;

        // base = bug in, revealing tests out; the patches are the way back to clean
        std::fs::write(rt.repo().join(file), &buggy).unwrap();
        let mut touched_tests: Vec<String> = killed.iter().map(|m| m.file.clone()).collect();
        touched_tests.dedup();
        for tf in &touched_tests {
            let text = std::fs::read_to_string(repo_dir.join(tf)).unwrap();
            let mine: Vec<&Method> = killed.iter().filter(|m| &m.file == tf).cloned().collect();
            std::fs::write(rt.repo().join(tf), without(&text, &mine)).unwrap();
        }
        let patch = sh(&mut rt, &format!("git diff -R --src-prefix=b/ --dst-prefix=a/ --no-color -- {file}"));
        let test_patch = sh(&mut rt, &format!("git diff -R --src-prefix=b/ --dst-prefix=a/ --no-color -- {}", touched_tests.join(" ")));
        sh(&mut rt, "git checkout -q -- .");

        let module = module_of(file);
        let issue =
            Issue {
                package: &package,
                version: &version,
                module: module.clone(),
                doc: docstring_of(&clean_src, &func),
                func,
                class,
                helpers: if setup.iter().chain(cks.iter().map(|c| &c.expr)).any(|s| {
                    helpers.lines().any(|h| h.strip_prefix("def ").and_then(|r| r.split('(').next()).map(|n| s.contains(n)).unwrap_or(false))
                }) {
                    helpers.clone()
                } else {
                    String::new()
                },
                imported: imported_names(&header),
                constants: header
                    .lines()
                    .filter_map(|l| {
                        l.split_once(" = ")
                            .filter(|(n, _)| n.chars().all(|c| c.is_ascii_uppercase() || c == '_') && !n.is_empty())
                            .map(|(n, _)| (n.to_string(), l.to_string()))
                    })
                    .collect(),
                setup: setup.clone(),
                check: &cks[observed.check],
                observed: &observed,
            };
        let problem = issue_text(&mut rng, &issue);
        let fail_to_pass: Vec<String> = killed.iter().map(|m| test_name(m)).collect();
        let pass_to_pass: Vec<String> = all_methods.iter().map(test_name).filter(|t| !fail_to_pass.contains(t)).collect();
        let id = format!("{BUNDLED_OWNER}__{name}-{:04}", 101 + made);
        let day = 1 + (harness_s::seed::hash_str(&id) % 28) as usize;
        let month = 1 + (harness_s::seed::hash_str(&format!("{id}m")) % 12) as usize;
        let mut inst = Instance {
            instance_id: id,
            repo: format!("{BUNDLED_OWNER}/{name}"),
            base_commit: String::new(),
            problem_statement: problem,
            patch,
            test_patch,
            hints_text: String::new(),
            created_at: format!("2024-{month:02}-{day:02}T09:30:00Z"),
            version: version.clone(),
            fail_to_pass,
            pass_to_pass,
        };
        let (_, sha) = prepare_bundled(&inst).expect("the base can be rebuilt from the patches");
        inst.base_commit = sha;
        out.push(serde_json::to_value(&inst).unwrap());
    }
    eprintln!("{name}: {made} instances from {} candidates", candidates.len());
    assert!(made >= 10, "{name}: only {made} instances");
}

fn main() {
    let dir = dataset_dir();
    let mut names: Vec<String> =
        std::fs::read_dir(dir.join("repos")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    names.sort();
    let mut out = Vec::new();
    for n in &names {
        family(n, &dir.join("repos").join(n), &mut out);
    }
    let text: String = out.iter().map(|v| serde_json::to_string(v).unwrap() + "\n").collect();
    std::fs::write(dir.join("bundled.jsonl"), &text).unwrap();
    eprintln!("wrote {} instances over {} repositories to {}", out.len(), names.len(), dir.join("bundled.jsonl").display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tests_and_assertions() {
        let src = "import unittest\n\nclass A(unittest.TestCase):\n    def test_x(self):\n        c = f(1)\n        self.assertEqual(g(c, [1, 2]), (3, 4))\n\n    def test_y(self):\n        with self.assertRaises(E):\n            h()\n";
        let ms = methods("tests/test_a.py", src);
        assert_eq!(ms.len(), 2);
        assert_eq!(test_name(&ms[0]), "test_x (tests.test_a.A)");
        let lines: Vec<&str> = src.lines().collect();
        let (setup, cks) = checks(&lines[ms[0].start + 1..ms[0].end]);
        assert_eq!(setup, vec!["c = f(1)"]);
        assert_eq!((cks[0].expr.as_str(), cks[0].expected.as_str()), ("g(c, [1, 2])", "(3, 4)"));
        let (_, cks) = checks(&lines[ms[1].start + 1..ms[1].end]);
        assert_eq!(cks[0].raises.as_deref(), Some("E"));
        let rest = without(src, &[&ms[1]]);
        assert!(!rest.contains("test_y") && rest.contains("test_x"), "{rest}");
    }
}
