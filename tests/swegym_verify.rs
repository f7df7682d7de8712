//! Every bundled SWE-Gym instance agrees: its reference patch resolves it and no patch does not,
//! by really running its tests; and `harness-s verify-dataset --suite swegym FILE --json` prints
//! the DBBench JSON shape (groups = repositories).

use std::collections::BTreeSet;
use std::process::Command;

use harness_s::suite::swegym::instance::bundled_dir;

#[test]
fn every_bundled_instance_agrees() {
    let suite = harness_s::suite::by_name("swegym").unwrap();
    let tasks = suite.bundled_tasks().expect("bundled dataset");
    let families: BTreeSet<&str> = tasks.iter().map(|t| t.family.as_str()).collect();
    assert!(tasks.len() >= 60, "{} instances", tasks.len());
    assert!(families.len() >= 6, "{families:?}");
    let t0 = std::time::Instant::now();
    let report = suite.verify(&tasks);
    println!("verified {} instances in {:.1} s", tasks.len(), t0.elapsed().as_secs_f64());
    for d in &report.disagreements {
        println!("disagrees: {} [{}] {}", d.task_id, d.group, d.reason);
    }
    assert_eq!(report.total, tasks.len());
    assert_eq!(report.agree, report.total);
    assert_eq!(report.groups.len(), families.len());
    for (g, c) in &report.groups {
        assert!(g.starts_with("harness-s/") && c.agree == c.total && c.total >= 10, "{g}: {c:?}");
    }
}

#[test]
fn verify_dataset_cli_prints_the_json_shape() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(bundled_dir().join("bundled.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().take(2).collect();
    // an instance whose "fix" changes nothing the tests see disagrees, and is named
    let mut broken: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    broken["instance_id"] = serde_json::json!("harness-s__broken-0001");
    broken["patch"] = serde_json::json!("");
    let broken = broken.to_string();
    lines.push(&broken);
    let file = dir.path().join("three.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness-s")).args(["verify-dataset", "--suite", "swegym"]).arg(&file).arg("--json").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["suite"], "swegym");
    assert_eq!(v["total"], 3);
    assert_eq!(v["agree"], 2);
    let (g, c) = v["groups"].as_object().unwrap().iter().next().unwrap();
    assert!(g.starts_with("harness-s/"));
    assert_eq!(c["total"], 3);
    assert_eq!(v["disagreements"][0]["task_id"], "harness-s__broken-0001");
}
