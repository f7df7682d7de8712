//! Embeds the built-in harness spec files (`harnesses/<suite>/*.toml`) so the binary runs from
//! any directory; each suite picks its own folder (`suite::embedded_harnesses`).

use std::fmt::Write;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    if let Ok(suites) = std::fs::read_dir(&root) {
        for suite in suites.flatten() {
            println!("cargo:rerun-if-changed={}", suite.path().display());
            let Ok(specs) = std::fs::read_dir(suite.path()) else { continue };
            for spec in specs.flatten() {
                let path = spec.path();
                if path.extension().is_some_and(|e| e == "toml") {
                    let rel = path.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("under the manifest dir");
                    files.push((rel.to_string_lossy().replace('\\', "/"), path.clone()));
                }
            }
        }
    }
    files.sort();
    let mut out = String::from("/// Every `harnesses/<suite>/*.toml`, as (path, text).\nstatic EMBEDDED_HARNESSES: &[(&str, &str)] = &[\n");
    for (rel, path) in &files {
        writeln!(out, "    ({rel:?}, include_str!({:?})),", path.display().to_string()).expect("write to a string");
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo")).join("harnesses.rs");
    std::fs::write(dest, out).expect("write harnesses.rs");
}
