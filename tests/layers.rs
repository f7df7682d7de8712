//! The crate's layers point one way. Each top-level module of `src/` belongs to a layer, and
//! may use only modules of lower layers (`use crate::…` and `crate::…` paths, read from the
//! source outside comments and unit tests). Within each module folder, no two files import each
//! other in a circle. ARCHITECTURE.md states the same order.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom first. A module may use any module of a lower layer, none of its own or a higher one.
const LAYERS: &[(&str, &[&str])] = &[
    ("vocabulary and utilities", &["message", "seed", "fault", "events", "files"]),
    ("statistics, tasks, sandbox", &["stats", "task", "sandbox"]),
    ("policies", &["policy"]),
    ("suites (environments, scorers, grammars)", &["suite"]),
    ("episode records", &["episode"]),
    ("harness engine, run store", &["harness", "store"]),
    ("distillation, grammar search, routing", &["distil", "search", "route"]),
    ("stored records", &["records"]),
    ("evaluation, experiments", &["eval", "experiment"]),
    ("analyses", &["analysis"]),
    ("charts", &["chart"]),
    ("reports", &["report"]),
    ("workbench commands", &["workbench"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without its unit tests (`#[cfg(test)]` onwards:
/// tests may reach up to build fixtures).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("read a source file");
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Every `<prefix>name` in `code`, as `name`.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric() && rest.as_bytes()[i - 1] != b'_';
        rest = &rest[i + prefix.len()..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if before_ok && end > 0 {
            out.push(&rest[..end]);
        }
    }
    out
}

/// The crate's `use` statements may name several modules at once: `crate::{a, b::c}`.
fn crate_modules(code: &str) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = paths_after(code, "crate::").into_iter().map(str::to_string).collect();
    let mut rest = code;
    while let Some(i) = rest.find("crate::{") {
        rest = &rest[i + "crate::{".len()..];
        let group = &rest[..rest.find('}').unwrap_or(rest.len())];
        for item in group.split(',') {
            let name: String = item.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn top_module(rel: &Path) -> String {
    let first = rel.components().next().expect("a path under src").as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn lower_layers_never_import_higher_ones() {
    let layer_of: BTreeMap<&str, usize> = LAYERS.iter().enumerate().flat_map(|(i, (_, mods))| mods.iter().map(move |m| (*m, i))).collect();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut violations = Vec::new();
    let mut unplaced = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(src()).expect("under src");
        let top = top_module(rel);
        if matches!(top.as_str(), "lib" | "main" | "serve") {
            continue; // the crate root and the binary's adapters sit above every layer
        }
        let Some(&mine) = layer_of.get(top.as_str()) else {
            unplaced.insert(top);
            continue;
        };
        for used in crate_modules(&code(f)) {
            if used == top {
                continue;
            }
            match layer_of.get(used.as_str()) {
                Some(&theirs) if theirs < mine => {}
                Some(&theirs) => {
                    violations.push(format!("{} ({}: {}) uses crate::{used} ({}: {})", rel.display(), mine, LAYERS[mine].0, theirs, LAYERS[theirs].0))
                }
                None => {
                    unplaced.insert(used);
                }
            }
        }
    }
    let order: Vec<String> = LAYERS.iter().enumerate().map(|(i, (name, mods))| format!("{i} {name}: {}", mods.join(", "))).collect();
    assert!(unplaced.is_empty(), "modules without a layer: {unplaced:?}; place them in LAYERS:\n{}", order.join("\n"));
    assert!(
        violations.is_empty(),
        "imports against the layer order:\n{}\n\nlayer order (bottom first):\n{}",
        violations.join("\n"),
        order.join("\n")
    );
}

/// Depth-first search for a circle in a file graph.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(n: &str, g: &BTreeMap<String, BTreeSet<String>>, stack: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut c = stack[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_two_files_of_a_module_import_each_other_in_a_circle() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    // folder -> its files (without mod.rs, which only declares and re-exports its children)
    let mut folders: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for f in files {
        if f.file_name().is_some_and(|n| n != "mod.rs" && n != "lib.rs" && n != "main.rs") {
            folders.entry(f.parent().expect("a folder").to_path_buf()).or_default().push(f);
        }
    }
    let mut checked = Vec::new();
    for (dir, files) in &folders {
        let names: BTreeSet<String> = files.iter().map(|f| f.file_stem().expect("a name").to_string_lossy().to_string()).collect();
        let module_path = dir.strip_prefix(src()).expect("under src").to_string_lossy().replace('/', "::");
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in files {
            let me = f.file_stem().expect("a name").to_string_lossy().to_string();
            let c = code(f);
            let mut uses: Vec<&str> = paths_after(&c, "super::");
            let full = format!("crate::{module_path}::");
            if !module_path.is_empty() {
                uses.extend(paths_after(&c, &full));
            }
            let deps = graph.entry(me.clone()).or_default();
            for u in uses {
                if u != me && names.contains(u) {
                    deps.insert(u.to_string());
                }
            }
        }
        if let Some(cycle) = find_cycle(&graph) {
            panic!("files of src/{} import each other in a circle: {}", dir.strip_prefix(src()).unwrap_or(dir).display(), cycle.join(" -> "));
        }
        checked.push(format!("src/{} ({} files)", dir.strip_prefix(src()).unwrap_or(dir).display(), files.len()));
    }
    eprintln!("checked for circles: {}", checked.join(", "));
    assert!(checked.len() >= 10, "expected the crate's module folders, found {checked:?}");
}
