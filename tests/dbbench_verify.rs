//! The official DBBench dev set (AgentBench, 60 records) through the loader, executor and scorer.
//!
//! The file is read from `$CARGO_MANIFEST_DIR/../shared/data/dbbench/dev.jsonl` (or one level
//! further up, for checkouts in a worktree folder); it is never copied into the project. When it
//! is absent the test prints a skip line and passes.

use std::path::PathBuf;

use harness_s::suite::dbbench::DbBench;
use harness_s::suite::Suite;

#[path = "support/shared_data.rs"]
mod shared_data;
use shared_data::shared_data;

fn dev_path() -> Option<PathBuf> {
    shared_data("dbbench/dev.jsonl")
}

#[test]
fn dev_set_gold_agrees() {
    let Some(path) = dev_path() else {
        println!("skip: dev.jsonl not found next to the checkout");
        return;
    };
    let suite = DbBench::new();
    let tasks = suite.load_file(&path).expect("dev.jsonl loads");
    assert_eq!(tasks.len(), 60);
    assert_eq!(tasks[0].id, "dbbench-dev-0001");
    let report = suite.verify(&tasks);
    for d in &report.disagreements {
        println!("disagree: {} [{}] {}", d.task_id, d.group, d.reason);
    }
    for (g, c) in &report.groups {
        println!("{g}: {}/{}", c.agree, c.total);
    }
    let mutation = ["INSERT", "UPDATE", "DELETE"];
    let (mut sel_total, mut sel_agree, mut mut_total, mut mut_agree) = (0, 0, 0, 0);
    for (g, c) in &report.groups {
        if mutation.contains(&g.as_str()) {
            mut_total += c.total;
            mut_agree += c.agree;
        } else {
            sel_total += c.total;
            sel_agree += c.agree;
        }
    }
    assert_eq!(sel_total, 20);
    assert_eq!(sel_agree, sel_total, "every select record must agree");
    assert_eq!(mut_total, 40);
    // Every mutation record's hash matches the one MySQL 8 computed.
    assert!(mut_agree * 100 >= mut_total * 95, "mutations: {mut_agree}/{mut_total}");
    assert_eq!(mut_agree, mut_total);
}
