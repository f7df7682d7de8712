//! Snapshots of what other tools read: the CLI's `--json` outputs, and the report's
//! report.json and CSV tables for a small run of the demo's design (its arms, split and
//! settings; 2 seeds × 2 iterations). Timestamps are the only fields masked. A change here is a
//! change to a format people and scripts rely on: review the `.new` file the failure leaves,
//! then accept it with `UPDATE_SNAPSHOTS=1 cargo test --test snapshots`.

use std::path::Path;
use std::process::Command;

#[path = "support/snapshot.rs"]
mod snapshot;
use snapshot::assert_snapshot;

fn harness_s(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_harness-s")).args(args).output().expect("harness-s runs");
    assert!(out.status.success(), "harness-s {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The demo's file at the size of this test.
fn small_demo() -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/demo.toml")).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        let replaced = match key {
            "seeds" => "seeds = [1, 2]",
            "iterations" => "iterations = 2",
            "eval_every" => "eval_every = 1",
            "warm_start_demos" => "warm_start_demos = 10",
            "batch_tasks" => "batch_tasks = 8",
            "probe_tasks" => "probe_tasks = 6",
            "train_tasks" => "train_tasks = 16",
            _ => line,
        };
        out.push_str(replaced);
        out.push('\n');
    }
    out
}

/// `text` with the value of every `"<key>": "..."` for a timestamp key replaced by `<time>`.
fn mask_times(text: &str) -> String {
    text.lines()
        .map(|line| {
            let t = line.trim_start();
            if ["\"created_at\":", "\"finished_at\":", "\"generated_at\":", "\"started_at\":"].iter().any(|k| t.starts_with(k)) {
                let (key, rest) = line.split_once(':').unwrap();
                let comma = if rest.trim_end().ends_with(',') { "," } else { "" };
                format!("{key}: \"<time>\"{comma}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if text.ends_with('\n') { "\n" } else { "" }
}

#[test]
fn the_cli_lists_suites_harnesses_tasks_and_coverage_as_before() {
    assert_snapshot("cli/suites.json", &harness_s(&["suites", "--json"]));
    assert_snapshot("cli/harnesses-dbbench.json", &harness_s(&["harnesses", "--suite", "dbbench", "--json"]));
    assert_snapshot("cli/tasks-dbbench-DELETE.json", &harness_s(&["tasks", "--suite", "dbbench", "--family", "DELETE", "--json"]));
    assert_snapshot(
        "cli/coverage-dbbench-DELETE.json",
        &harness_s(&["coverage", "--suite", "dbbench", "--family", "DELETE", "--max-paths", "2000", "--json"]),
    );
}

#[test]
fn a_small_demo_run_gives_the_same_summary_report_json_and_csvs() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("demo-small.toml");
    std::fs::write(&config, small_demo()).unwrap();
    let db = dir.path().join("runs.db");
    let (config, db) = (config.to_str().unwrap(), db.to_str().unwrap());
    let t = std::time::Instant::now();
    let run = Command::new(env!("CARGO_BIN_EXE_harness-s")).args(["experiment", "run", config, "--db", db, "--json"]).output().unwrap();
    let secs = t.elapsed().as_secs();
    let (stdout, stderr) = (String::from_utf8(run.stdout).unwrap(), String::from_utf8(run.stderr).unwrap());
    assert!(run.status.success(), "{stderr}");
    assert_snapshot("cli/experiment-run-demo-small.json", &stdout);
    // off a terminal, progress is a line at most every 10 s and the last one, not one per unit
    let progress: Vec<&str> = stderr.lines().filter(|l| l.contains("] ") || l.contains("  episodes ")).collect();
    assert!(progress.len() as u64 <= 2 + secs / 10, "{} progress lines in {secs} s:\n{stderr}", progress.len());
    assert!(progress.last().is_some_and(|l| l.contains("[##############################]")), "the last progress line is printed:\n{stderr}");
    assert!(stderr.contains("harness-s - policy-only on held-out tasks: "), "the headline names its split:\n{stderr}");
    assert_snapshot("cli/experiment-status.json", &harness_s(&["experiment", "status", "--db", db, "--json"]));

    let out = dir.path().join("report");
    harness_s(&["report", "1", "--db", db, "--out", out.to_str().unwrap()]);
    assert_snapshot("report/report.json", &mask_times(&std::fs::read_to_string(out.join("report.json")).unwrap()));
    let mut csvs: Vec<_> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "csv")).collect();
    csvs.sort();
    assert!(csvs.len() >= 10, "{csvs:?}");
    for csv in csvs {
        let name = csv.file_name().unwrap().to_string_lossy().into_owned();
        assert_snapshot(&format!("report/{name}"), &std::fs::read_to_string(&csv).unwrap());
    }
}

#[test]
fn masking_touches_timestamps_only() {
    let text = "{\n  \"created_at\": \"2026-01-01T00:00:00Z\",\n  \"n\": 1,\n  \"finished_at\": \"x\"\n}\n";
    assert_eq!(mask_times(text), "{\n  \"created_at\": \"<time>\",\n  \"n\": 1,\n  \"finished_at\": \"<time>\"\n}\n");
}
