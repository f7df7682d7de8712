//! The crate's layers point one way. Each top-level module of `src/` belongs to a layer, and
//! may use only modules of lower layers (`use crate::…` and `crate::…` paths, read from the
//! whole source outside comments and `#[cfg(test)]` items). Within each module folder, no two
//! files import each other in a circle. ARCHITECTURE.md's layer table is this file's `LAYERS`,
//! and every source file opens with a module doc.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom first. A module may use any module of a lower layer, none of its own or a higher one.
const LAYERS: &[(&str, &[&str])] = &[
    ("vocabulary and utilities", &["message", "seed", "fault", "events", "files"]),
    ("step vocabulary, arms, statistics, tasks, sandbox, grammar kit", &["step", "arm", "stats", "task", "sandbox", "grammar"]),
    ("policies and suites (peers: neither imports the other)", &["policy", "suite"]),
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

/// The code of a file without comments and without the items under `#[cfg(test)]` (unit tests
/// may reach up to build fixtures), wherever in the file they are. String and character literals
/// are kept whole, so a brace inside one never ends an item early.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("read a source file");
    strip_tests(&strip_comments(&text))
}

/// `text` with `//` and `/* */` comments replaced by spaces (literals untouched).
fn strip_comments(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = literal_end(&b, i) {
            out.extend(&b[i..end]);
            i = end;
        } else if b[i] == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if b[i] == '/' && b.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Where a string or character literal starting at `i` ends (`None` if none starts there).
fn literal_end(b: &[char], i: usize) -> Option<usize> {
    let prev_ident = i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_');
    match b[i] {
        '"' => {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                j += if b[j] == '\\' { 2 } else { 1 };
            }
            Some((j + 1).min(b.len()))
        }
        'r' if !prev_ident && matches!(b.get(i + 1), Some('"' | '#')) => {
            let hashes = b[i + 1..].iter().take_while(|c| **c == '#').count();
            if b.get(i + 1 + hashes) != Some(&'"') {
                return None;
            }
            let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let mut j = i + 2 + hashes;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            Some((j + close.len()).min(b.len()))
        }
        // a character literal ('x', '\n', '\''), not a lifetime ('a)
        '\'' if b.get(i + 1) == Some(&'\\') => b[i + 2..].iter().position(|c| *c == '\'').map(|p| i + 3 + p),
        '\'' if b.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// `code` without each item that follows `#[cfg(test)]`: a block item up to its matching brace,
/// anything else up to its `;`.
fn strip_tests(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let b: Vec<char> = code.chars().collect();
    let mark: Vec<char> = MARK.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = literal_end(&b, i) {
            out.extend(&b[i..end]);
            i = end;
            continue;
        }
        if !b[i..].starts_with(&mark) {
            out.push(b[i]);
            i += 1;
            continue;
        }
        // skip the item: to the `;` before any brace, or to the brace that closes the first one
        let mut j = i + mark.len();
        let mut depth = 0;
        while j < b.len() {
            if let Some(end) = literal_end(&b, j) {
                j = end;
                continue;
            }
            match b[j] {
                ';' if depth == 0 => {
                    j += 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        i = j;
    }
    out
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

/// The crate's `use` statements may name several modules at once, nested:
/// `crate::{a, b::{c, d}, e}` names `a`, `b` and `e`.
fn crate_modules(code: &str) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = paths_after(code, "crate::").into_iter().map(str::to_string).collect();
    let mut rest = code;
    while let Some(i) = rest.find("crate::{") {
        rest = &rest[i + "crate::{".len()..];
        let mut depth = 0;
        let mut item_start = true;
        for (k, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if item_start && !c.is_whitespace() => {
                    item_start = false;
                    let name: String = rest[k..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
                _ => {}
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

#[test]
fn reading_the_source_skips_comments_and_test_items_only() {
    let src = "use crate::a; // crate::b\n/* crate::c */\n#[cfg(test)]\nmod tests { fn f() { let s = \"}\"; let c = '}'; } use crate::d; }\nfn g<'x>() { crate::e::f() }\n#[cfg(test)]\nuse crate::h;\nuse crate::{i, j::{k, l}, m};\nconst S: &str = r#\"crate::n\"#;\n";
    let code = strip_tests(&strip_comments(src));
    let found: Vec<String> = crate_modules(&code).into_iter().collect();
    // `crate::n` sits in a string: still read, as a path written in a string is rare and harmless
    assert_eq!(found, ["a", "e", "i", "j", "m", "n"]);
}

#[test]
fn architecture_states_the_same_layers() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let rows: Vec<(String, Vec<String>)> = doc
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            // | # | layer | modules |
            (cells.len() == 5 && cells[1].parse::<usize>().is_ok())
                .then(|| (cells[2].to_string(), cells[3].split(',').map(|m| m.trim().trim_matches('`').to_string()).collect()))
        })
        .collect();
    let ours: Vec<(String, Vec<String>)> = LAYERS.iter().map(|(n, m)| (n.to_string(), m.iter().map(|s| s.to_string()).collect())).collect();
    assert_eq!(rows, ours, "ARCHITECTURE.md's layer table and LAYERS in tests/layers.rs differ");
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "src-tauri/src", "tests", "benches"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a `//!` module doc saying what they are: {missing:?}");
}

/// Library code says why it failed with a type (a `thiserror` enum or struct), so callers can
/// match on the cause; a bare `String` error is only text.
#[test]
fn library_code_has_no_string_errors() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let code = code(f);
        for (n, line) in code.lines().enumerate() {
            let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            // the error type is the last argument of `Result<...>`: `, String>` closing it
            if let Some(at) = squeezed.find("Result<") {
                if squeezed[at..].contains(",String>") {
                    found.push(format!("{}:{}: {}", f.strip_prefix(src()).unwrap_or(f).display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "`Result<_, String>` in library code (give the error a type):\n{}", found.join("\n"));
}

/// The UI's files: `ui/src/**/*.ts(x)` (without the generated declarations' consumers' tests).
fn ui_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read ui/src").flatten() {
        let p = e.path();
        if p.is_dir() {
            ui_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ts" || x == "tsx") {
            out.push(p);
        }
    }
}

/// The relative modules a TypeScript file imports or re-exports (`from "./x"`), as files.
fn ts_imports(file: &Path, text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("from \"") {
        let rest = &text[i + 6..];
        let Some(end) = rest.find('"') else { continue };
        let spec = &rest[..end];
        if !spec.starts_with('.') {
            continue;
        }
        let base = file.parent().expect("a folder").join(spec);
        let found =
            ["", ".ts", ".tsx", "/index.ts", "/index.tsx"].iter().map(|ext| PathBuf::from(format!("{}{ext}", base.display()))).find(|p| p.is_file());
        if let Some(p) = found {
            out.push(p.canonicalize().expect("an existing file"));
        }
    }
    out
}

#[test]
fn no_two_ui_files_import_each_other_in_a_circle_and_types_ts_declares_no_server_shape() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src");
    let mut files = Vec::new();
    ui_files(&ui, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let name =
        |p: &Path| p.canonicalize().expect("a file").strip_prefix(ui.canonicalize().expect("ui/src")).expect("under ui/src").display().to_string();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read a UI file");
        let deps = ts_imports(f, &text).iter().map(|d| name(d)).collect();
        graph.insert(name(f), deps);
    }
    assert!(graph.len() >= 10, "expected the UI's files, found {:?}", graph.keys().collect::<Vec<_>>());
    assert!(graph.get("types.ts").is_some_and(|d| d.contains("api.gen.ts")), "types.ts re-exports the generated shapes: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("files of ui/src import each other in a circle: {}", cycle.join(" -> "));
    }
    // what the server sends is generated from the Rust types; types.ts keeps only UI-local ones
    let types = std::fs::read_to_string(ui.join("types.ts")).expect("ui/src/types.ts");
    let generated = std::fs::read_to_string(ui.join("api.gen.ts")).expect("ui/src/api.gen.ts");
    for line in types.lines().map(str::trim) {
        for kw in ["export interface ", "export type ", "interface ", "type "] {
            let Some(rest) = line.strip_prefix(kw) else { continue };
            let declared: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if declared.is_empty() {
                continue;
            }
            assert!(
                !generated.contains(&format!("export type {declared} ")),
                "ui/src/types.ts declares `{declared}`, a shape the server sends: use the generated one from api.gen.ts"
            );
            break;
        }
    }
}
