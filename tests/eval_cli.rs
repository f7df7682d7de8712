//! `harness-s eval` end to end: the real binary, a real chat-completions server on 127.0.0.1,
//! real SQL, and the run store read back afterwards.

#[path = "support/chat_server.rs"]
mod chat_server;

use chat_server::{tool_call_reply, ChatServer, Script};
use harness_s::store::{BlockingStore, EpisodeFilter};
use serde_json::{json, Value};

fn records() -> String {
    let mut out = String::new();
    for (i, n) in [3usize, 5, 2].iter().enumerate() {
        let rows: Vec<Value> = (0..*n).map(|r| json!([format!("Team {r}"), format!("{}", 10 + r)])).collect();
        let rec = json!({
            "id": format!("count-{i}"),
            "family": "counting",
            "description": "How many teams are in the table?",
            "label": [n.to_string()],
            "table": {"table_name": format!("League {i}"), "table_info": {"columns": [{"name": "Team", "type": "TEXT"}, {"name": "Points", "type": "TEXT"}], "rows": rows}},
            "type": ["counting"],
            "add_description": format!("The name of this table is League {i}, and the headers of this table are Team,Points."),
            "source": "test"
        });
        out.push_str(&rec.to_string());
        out.push('\n');
    }
    out
}

/// A "model" that counts the rows of the table named in the prompt, then commits the count.
fn counting_model(req: &Value) -> (u16, String) {
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let last = msgs.last().cloned().unwrap_or_default();
    if last["role"] == "tool" {
        let obs = last["content"].as_str().unwrap_or("");
        let n: String = obs.chars().filter(|c| c.is_ascii_digit()).collect();
        return (200, tool_call_reply(&[("commit_final_answer", json!({"answers": [n]}))]));
    }
    let prompt = msgs.iter().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or("").to_string();
    let table = prompt.split("The name of this table is ").nth(1).and_then(|s| s.split(", and").next()).unwrap_or("x").to_string();
    (200, tool_call_reply(&[("execute_sql", json!({"query": format!("SELECT COUNT(*) FROM `{table}`")}))]))
}

fn harness_s() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_harness-s"))
}

#[test]
fn eval_runs_through_a_chat_server_into_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tasks.jsonl");
    std::fs::write(&data, records()).unwrap();
    let db = dir.path().join("runs.db");
    let server = ChatServer::start(Script::new().always(counting_model));
    let out = harness_s()
        .args(["eval", "--suite", "dbbench", "--harness", "base", "--policy", "openai", "--base-url"])
        .arg(server.url())
        .args(["--model", "counter", "--samples", "2", "--concurrency", "2", "--json", "--file"])
        .arg(&data)
        .arg("--db")
        .arg(&db)
        .env("OPENAI_API_KEY", "sk-test-secret")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).expect("one JSON object");
    assert_eq!(summary["episodes"], 6);
    assert_eq!(summary["infra_errors"], 0);
    assert_eq!(summary["success_rate"], 1.0);
    assert_eq!(summary["metrics"]["counting_accuracy"], 1.0);
    assert!(stderr.contains("6/6"), "progress was shown: {stderr}");
    // every request carried the key as a bearer token, and never in the body
    for r in server.requests().iter().filter(|r| r.method == "POST") {
        assert_eq!(r.header("authorization"), Some("Bearer sk-test-secret"));
        assert!(!r.body_text.contains("sk-test-secret"));
    }
    // the store holds every step
    let store = BlockingStore::open(db.to_str().unwrap()).unwrap();
    let run_id = summary["run_id"].as_i64().unwrap();
    let rows = store.episode_rows(&EpisodeFilter::run(run_id)).unwrap();
    assert_eq!(rows.len(), 6);
    for (_, ep) in store.episodes(&EpisodeFilter::run(run_id)).unwrap() {
        assert_eq!(ep.steps.len(), 2);
        assert_eq!(ep.harness, "base");
        assert_eq!(ep.policy, "openai:counter");
        assert!(ep.steps[0].context.messages[1].content.contains("Question: How many teams"));
        assert!(ep.steps[0].calls[0].observation.starts_with("[("));
        assert_eq!(ep.prompt_tokens, 2 * chat_server::PROMPT_TOKENS as u64);
    }
    let run = store.run(run_id).unwrap().unwrap();
    assert!(!run.config.to_string().contains("sk-test-secret"));
}

#[test]
fn transport_failures_are_infrastructure_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tasks.jsonl");
    std::fs::write(&data, records()).unwrap();
    let db = dir.path().join("runs.db");
    let server = ChatServer::start(Script::new().always(|_| (503, "overloaded".into())));
    let out = harness_s()
        .args(["eval", "--suite", "dbbench", "--policy", "openai", "--base-url"])
        .arg(server.url())
        .args(["--model", "m", "--max-retries", "1", "--json", "--file"])
        .arg(&data)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(summary["episodes"], 3);
    assert_eq!(summary["infra_errors"], 3);
    assert_eq!(summary["completed"], 0);
    let store = BlockingStore::open(db.to_str().unwrap()).unwrap();
    for (_, ep) in store.episodes(&EpisodeFilter::run(summary["run_id"].as_i64().unwrap())).unwrap() {
        assert!(ep.infra_error.as_deref().unwrap_or("").contains("503"), "{:?}", ep.infra_error);
        assert!(ep.score.is_none(), "an infrastructure error is not scored as a task failure");
    }
}

#[test]
fn bad_arguments_get_clear_errors() {
    let out = harness_s().args(["eval", "--suite", "nosuch", "--policy", "openai"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown suite `nosuch` (known: dbbench"));
    let out = harness_s().args(["eval", "--suite", "dbbench", "--harness", "nope", "--policy", "openai"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no harness `nope`"));
}

/// A reader that goes away early (`harness-s tasks ... | head`) ends the command quietly, as it
/// does other Unix tools, rather than with a panic on the closed pipe.
#[test]
fn a_closed_output_pipe_is_not_a_panic() {
    use std::io::Read;
    for args in [&["tasks", "--suite", "dbbench"][..], &["harnesses"][..], &["suites"][..]] {
        let mut child = harness_s().args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        // close the read end before the command has written (it may also have written first:
        // then it ends normally, which is fine too)
        drop(child.stdout.take());
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(status.success() || status.code() == Some(141), "{args:?}: {status} {err}");
    }
}
