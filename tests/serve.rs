//! `harness-s serve` over a real socket: the token is required, commands map onto HTTP status
//! codes, server-sent events carry an experiment's progress, and the UI is served at `/`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

struct Server {
    child: Child,
    base: String,
    token: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(ui: Option<&std::path::Path>) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness-s"));
    cmd.args(["serve", "--port", "0", "--db"]).arg(dir.path().join("wb.db"));
    if let Some(u) = ui {
        cmd.arg("--ui").arg(u);
    }
    let mut child = cmd.env_remove("HARNESS_S_SERVE_TOKEN").stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("serving ").unwrap_or_else(|| panic!("unexpected first line {line:?}")).to_string();
    let (base, token) = url.split_once("/?token=").unwrap();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    assert_eq!(token.len(), 32);
    Server { child, base: base.to_string(), token: token.to_string(), _dir: dir }
}

const SMALL: &str = "name = \"served\"\nsuites = [\"dbbench\"]\narms = [\"policy-only\", \"harness-s\"]\nseeds = [1]\niterations = 1\neval_every = 1\nreanchor_every = 1\n[policy]\nwarm_start_demos = 5\n[budget]\nbatch_tasks = 6\nbase_tries = 2\nrescue_siblings = 1\nrescue_tries = 1\nprobe_tasks = 4\n[eval]\ntrain_tasks = 10\n";

#[tokio::test(flavor = "multi_thread")]
async fn the_api_needs_the_token_and_maps_errors_onto_status_codes() {
    let s = start(None);
    let http = reqwest::Client::new();
    let r = http.get(format!("{}/api/experiments", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("token"));
    assert_eq!(body["kind"], "unauthorized", "errors carry their kind, as the desktop app's do");
    let r = http.get(format!("{}/api/experiments", s.base)).bearer_auth("0".repeat(32)).send().await.unwrap();
    assert_eq!(r.status(), 401, "a wrong token is refused");
    let r = http.get(format!("{}/api/events", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 401, "the event stream needs the token too");

    let r = http.get(format!("{}/api/experiments", s.base)).bearer_auth(&s.token).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!([]));
    let r = http.get(format!("{}/api/tasks?suite=dbbench&family=counting&token={}", s.base, s.token)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap().as_array().unwrap().len(), 40);
    let r = http.get(format!("{}/api/nothing", s.base)).bearer_auth(&s.token).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.json::<Value>().await.unwrap()["kind"], "not_found");
    let r = http.get(format!("{}/api/episode?id=abc", s.base)).bearer_auth(&s.token).send().await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("`id`"));
    assert_eq!(body["kind"], "bad_arguments");
    let r = http.post(format!("{}/api/config_check", s.base)).bearer_auth(&s.token).body("{not json").send().await.unwrap();
    assert_eq!(r.status(), 400);
    // Without a built UI the root says how to build it; the API still answers.
    let r = http.get(format!("{}/", s.base)).send().await.unwrap();
    assert!(r.status() == 200 || r.status() == 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn events_stream_an_experiment_started_over_http() {
    let s = start(None);
    let http = reqwest::Client::new();
    let mut stream = http.get(format!("{}/api/events?token={}", s.base, s.token)).send().await.unwrap();
    assert_eq!(stream.status(), 200);
    assert!(stream.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let r = http.post(format!("{}/api/experiment_start", s.base)).bearer_auth(&s.token).json(&json!({"toml": SMALL})).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let run_id = r.json::<Value>().await.unwrap()["run_id"].as_i64().unwrap();
    let mut seen = Vec::new();
    let mut buf = String::new();
    let t = Instant::now();
    'outer: while t.elapsed() < Duration::from_secs(300) {
        let chunk = tokio::time::timeout(Duration::from_secs(120), stream.chunk()).await.expect("events keep coming").unwrap();
        let Some(chunk) = chunk else { break };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(i) = buf.find("\n\n") {
            let frame: String = buf.drain(..i + 2).collect();
            for line in frame.lines() {
                if let Some(data) = line.strip_prefix("data:") {
                    let v: Value = serde_json::from_str(data.trim()).unwrap();
                    let done = v["event"] == "run_finished";
                    seen.push(v);
                    if done {
                        break 'outer;
                    }
                }
            }
        }
    }
    assert!(seen.iter().any(|e| e["event"] == "progress" && e["run_id"] == run_id && e["unit"]["arm"].is_string()), "{seen:?}");
    assert_eq!(seen.last().unwrap()["status"], "finished", "{seen:?}");
    let r = http.get(format!("{}/api/experiment?id={run_id}", s.base)).bearer_auth(&s.token).send().await.unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["status"], "finished");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ui_is_served_at_the_root_with_its_assets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("assets")).unwrap();
    std::fs::write(dir.path().join("index.html"), "<!doctype html><title>Harness-S Workbench</title><script src=\"/assets/app.js\"></script>")
        .unwrap();
    std::fs::write(dir.path().join("assets/app.js"), "console.log('ok')").unwrap();
    let s = start(Some(dir.path()));
    let http = reqwest::Client::new();
    let r = http.get(format!("{}/", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(r.text().await.unwrap().contains("Harness-S Workbench"));
    let r = http.get(format!("{}/assets/app.js", s.base)).send().await.unwrap();
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    // The UI's own routes load the page; nothing outside the directory is reachable.
    let r = http.get(format!("{}/results/3", s.base)).send().await.unwrap();
    assert!(r.text().await.unwrap().contains("Harness-S Workbench"));
    let r = http.get(format!("{}/../Cargo.toml", s.base)).send().await.unwrap();
    assert!(!r.text().await.unwrap().contains("[package]"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_host_is_refused_and_every_answer_forbids_framing() {
    let s = start(None);
    let port = s.base.rsplit(':').next().unwrap().to_string();
    let http = reqwest::Client::new();
    // A page whose DNS name was rebound to 127.0.0.1 sends its own name as the Host: refused
    // before the token is even looked at, with a clear message.
    for host in ["evil.example:".to_string() + &port, "127.0.0.1".into(), "127.0.0.1:1".into(), "localhost.evil.example".into()] {
        let r = http.get(format!("{}/api/experiments", s.base)).header("host", &host).bearer_auth(&s.token).send().await.unwrap();
        assert_eq!(r.status(), 421, "Host {host}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["kind"], "misdirected_request");
        assert!(body["error"].as_str().unwrap().contains(&format!("127.0.0.1:{port}")), "{body}");
        assert!(body["error"].as_str().unwrap().contains(&host), "{body}");
    }
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("LOCALHOST:{port}"), format!("[::1]:{port}")] {
        let r = http.get(format!("{}/api/experiments", s.base)).header("host", &host).bearer_auth(&s.token).send().await.unwrap();
        assert_eq!(r.status(), 200, "Host {host}");
        let h = r.headers();
        assert_eq!(h["x-frame-options"], "DENY");
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'self'") && csp.contains("script-src 'self'"), "{csp}");
        assert_eq!(h["referrer-policy"], "no-referrer");
    }
    // refusals and the UI's pages carry the same headers
    let r = http.get(format!("{}/api/experiments", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.headers()["x-frame-options"], "DENY");
    let r = http.get(format!("{}/", s.base)).send().await.unwrap();
    assert!(r.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
}

#[test]
fn ctrl_c_on_an_idle_server_stops_it_without_promising_work_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness-s"))
        .args(["serve", "--port", "0", "--db"])
        .arg(dir.path().join("wb.db"))
        .env_remove("HARNESS_S_SERVE_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("serving "), "{line}");
    // SAFETY: kill(2) on the child this test started and still owns
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "serve did not stop on Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{status}: {err}");
    assert!(err.lines().any(|l| l == "stopping"), "{err}");
    assert!(!err.contains("work in flight"), "nothing was running: {err}");
}
