//! The UI's types come from the workbench's typed responses: `ui/src/api.gen.ts` must be exactly
//! what `workbench::api::typescript()` generates, and `docs/api.md` must name every command with
//! its response type. Run with `HARNESS_S_WRITE_API_TYPES=1` to regenerate the file.

use std::path::Path;

use harness_s::workbench::commands::{responses, typescript};
use harness_s::workbench::Workbench;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_ui_types_are_generated_from_the_responses() {
    let path = root().join("ui/src/api.gen.ts");
    let want = typescript();
    if std::env::var("HARNESS_S_WRITE_API_TYPES").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &want).expect("write ui/src/api.gen.ts");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        let first = have.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "ui/src/api.gen.ts is stale (first difference at line {}: have {:?}, want {:?}); regenerate it with\n  HARNESS_S_WRITE_API_TYPES=1 cargo test --test api_types",
            first + 1,
            have.lines().nth(first).unwrap_or("<end>"),
            want.lines().nth(first).unwrap_or("<end>")
        );
    }
}

#[test]
fn every_command_has_a_response_type_and_docs_name_it() {
    let responses = responses();
    let typed: Vec<&str> = responses.iter().map(|(c, _)| *c).collect();
    assert_eq!(typed, Workbench::COMMANDS, "the registry gives every command a response type, in the order of Workbench::COMMANDS");
    let generated = typescript();
    let docs = std::fs::read_to_string(root().join("docs/api.md")).expect("docs/api.md");
    for (command, ty) in &responses {
        let base = ty.trim_end_matches("[]");
        assert!(generated.contains(&format!("type {base} ")), "`{command}` returns `{ty}`, which api.gen.ts does not declare");
        let line = format!("| `{command}` | `{ty}` |");
        assert!(docs.contains(&line), "docs/api.md has no row `{line}` in its response table");
    }
}
