//! The real desktop window under Xvfb, driven over W3C WebDriver (tauri-driver in front of
//! WebKitGTK's WebKitWebDriver, both on 127.0.0.1): launch, open the demo's results, export the
//! report (then offered to open; nothing outside reports/ can be opened), open a rescue
//! trajectory with its three columns. Screenshots go to `target/test-artifacts/desktop/`.
//!
//! Needs `Xvfb`, `tauri-driver` and `WebKitWebDriver` (`./scripts/install-deps` installs them);
//! without them the test says so and passes, unless `HARNESS_S_REQUIRE_DESKTOP` is set (CI).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use base64_decode::decode;
use serde_json::{json, Value};

/// A small experiment named like the demo, so the app's first-run page links its results.
const DEMO_LIKE: &str = r#"
name = "demo"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG"]
arms = ["policy-only", "harness-s"]
seeds = [1]
iterations = 2
eval_every = 1
reanchor_every = 1
[policy]
warm_start_demos = 10
[budget]
batch_tasks = 16
base_tries = 2
rescue_siblings = 2
rescue_tries = 2
probe_tasks = 8
[eval]
train_tasks = 20
"#;

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join(tool)).find(|p| p.is_file())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-artifacts/desktop");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Base64 (standard alphabet) for WebDriver screenshots, without another dependency.
mod base64_decode {
    pub fn decode(s: &str) -> Vec<u8> {
        let val = |c: u8| match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        };
        let mut out = Vec::with_capacity(s.len() * 3 / 4);
        let (mut acc, mut bits) = (0u32, 0u32);
        for v in s.bytes().filter_map(val) {
            acc = (acc << 6) | u32::from(v);
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
            }
        }
        out
    }
}

struct Driver {
    http: reqwest::Client,
    base: String,
    session: String,
}

impl Driver {
    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{}", self.base, self.session, path);
        let mut req = self.http.request(method, &url);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
        let v: Value = r.json().await.unwrap();
        v["value"].clone()
    }

    async fn find(&self, css: &str) -> Option<String> {
        let v = self.cmd(reqwest::Method::POST, "/element", Some(json!({"using": "css selector", "value": css}))).await;
        v.get(ELEMENT).and_then(|e| e.as_str()).map(String::from)
    }

    async fn wait_for(&self, css: &str, timeout: Duration) -> String {
        let t = Instant::now();
        loop {
            if let Some(e) = self.find(css).await {
                return e;
            }
            if t.elapsed() > timeout {
                self.screenshot("timeout").await;
                let body = self.script("return document.body ? document.body.innerText.slice(0, 2000) : ''").await;
                panic!("no element `{css}` after {timeout:?}; the page shows: {body}");
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    async fn click(&self, element: &str) {
        self.cmd(reqwest::Method::POST, &format!("/element/{element}/click"), Some(json!({}))).await;
    }

    async fn text(&self, element: &str) -> String {
        self.cmd(reqwest::Method::GET, &format!("/element/{element}/text"), None).await.as_str().unwrap_or("").to_string()
    }

    async fn script(&self, js: &str) -> Value {
        self.cmd(reqwest::Method::POST, "/execute/sync", Some(json!({"script": js, "args": []}))).await
    }

    async fn screenshot(&self, name: &str) -> PathBuf {
        let v = self.cmd(reqwest::Method::GET, "/screenshot", None).await;
        let png = decode(v.as_str().unwrap_or(""));
        let path = artifacts().join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }
}

fn seed_store(db: &Path) -> i64 {
    let store = harness_s::store::BlockingStore::open(&db.display().to_string()).unwrap();
    let cfg = harness_s::experiment::ExperimentConfig::parse("demo-like", DEMO_LIKE).unwrap();
    let out = harness_s::experiment::run_experiment(&cfg, &store, &harness_s::events::NullSink, &AtomicBool::new(false)).unwrap();
    assert!(out.finished);
    out.run_id
}

#[tokio::test(flavor = "multi_thread")]
async fn the_desktop_window_opens_the_demo_results_and_a_rescue() {
    let required = std::env::var_os("HARNESS_S_REQUIRE_DESKTOP").is_some();
    let tools: Vec<(&str, Option<PathBuf>)> = ["Xvfb", "tauri-driver", "WebKitWebDriver"].into_iter().map(|t| (t, which(t))).collect();
    let missing: Vec<&str> = tools.iter().filter(|(_, p)| p.is_none()).map(|(t, _)| *t).collect();
    if !missing.is_empty() {
        let msg = format!("desktop window test needs {} (./scripts/install-deps installs them)", missing.join(", "));
        if required {
            panic!("{msg}");
        }
        eprintln!("skipped: {msg}");
        return;
    }
    let tool = |name: &str| tools.iter().find(|(t, _)| *t == name).and_then(|(_, p)| p.clone()).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("desktop.db");
    let run_id = tokio::task::spawn_blocking({
        let db = db.clone();
        move || seed_store(&db)
    })
    .await
    .unwrap();

    // A display of our own.
    let display = (90..190)
        .find(|n| !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() && !Path::new(&format!("/tmp/.X{n}-lock")).exists())
        .expect("a free X display number");
    let _xvfb = Killed(
        Command::new(tool("Xvfb"))
            .args([format!(":{display}"), "-screen".into(), "0".into(), "1440x900x24".into(), "-nolisten".into(), "tcp".into()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let t = Instant::now();
    while !Path::new(&format!("/tmp/.X11-unix/X{display}")).exists() {
        assert!(t.elapsed() < Duration::from_secs(20), "Xvfb did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let port = free_port();
    let native = free_port();
    let _driver = Killed(
        Command::new(tool("tauri-driver"))
            .args(["--port", &port.to_string(), "--native-port", &native.to_string(), "--native-driver"])
            .arg(tool("WebKitWebDriver"))
            .env("DISPLAY", format!(":{display}"))
            .env("HARNESS_S_DB", &db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let t = Instant::now();
    while http.get(format!("{base}/status")).send().await.is_err() {
        assert!(t.elapsed() < Duration::from_secs(30), "tauri-driver did not start");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let app = env!("CARGO_BIN_EXE_harness-s-desktop");
    let r: Value = http
        .post(format!("{base}/session"))
        .json(&json!({"capabilities": {"alwaysMatch": {"tauri:options": {"application": app}}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let session = r["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no WebDriver session: {r}")).to_string();
    let d = Driver { http: http.clone(), base: base.clone(), session };

    // Launch: the first-run workspace, with the demo offered and the finished demo linked.
    let run_demo = d.wait_for("#run-demo", Duration::from_secs(60)).await;
    assert!(d.text(&run_demo).await.to_lowercase().contains("demo"));
    let title = d.script("return document.title").await;
    assert!(title.as_str().unwrap_or("").contains("Harness-S"), "{title}");
    d.screenshot("1-workspace").await;
    let x_shot = artifacts().join("1-workspace-window.png");
    let _ = Command::new("import").args(["-display", &format!(":{display}"), "-window", "root"]).arg(&x_shot).status();

    // The demo's results: charts drawn as SVG.
    let link = d.wait_for(&format!("a[href='#/results?id={run_id}']"), Duration::from_secs(20)).await;
    d.click(&link).await;
    d.wait_for(".view.results svg", Duration::from_secs(60)).await;
    let charts = d.script("return document.querySelectorAll('.view.results svg').length").await;
    assert!(charts.as_u64().unwrap_or(0) >= 3, "charts drawn: {charts}");
    d.screenshot("2-demo-results").await;

    // Export the report: written under the workspace's reports/, then offered to open.
    let export = d.wait_for("#export-report", Duration::from_secs(20)).await;
    d.click(&export).await;
    d.wait_for("#open-report", Duration::from_secs(60)).await;
    let folder = d.wait_for("#show-report-folder", Duration::from_secs(5)).await;
    let shown = d.script("return document.querySelector('#show-report-folder').title").await;
    let reports = dir.path().join("reports");
    assert!(shown.as_str().unwrap_or("").starts_with(&reports.display().to_string()), "{shown}");
    assert!(d.text(&folder).await.contains("Show in folder"));
    assert!(reports.join(format!("report-{run_id}")).join("report.html").is_file());
    d.screenshot("2-demo-results-exported").await;
    // the opener reaches nothing outside reports/
    let refused = d
        .script(
            "return window.__TAURI_INTERNALS__.invoke('plugin:opener|open_path', { path: '/etc/hostname' }).then(() => 'opened', (e) => 'refused: ' + String(e))",
        )
        .await;
    assert!(refused.as_str().unwrap_or("").starts_with("refused"), "{refused}");

    // A rescued task: base failure, sibling rescue, distilled example side by side.
    d.script(&format!("location.hash = '#/inspector?run={run_id}&rescued=true'; return 1")).await;
    let row = d.wait_for(".episode-list .ep-row:not(.placeholder)", Duration::from_secs(30)).await;
    d.click(&row).await;
    let tab = d.wait_for("#rescue-tab", Duration::from_secs(30)).await;
    d.click(&tab).await;
    // Each column has loaded its trajectory (steps) or its examples.
    for (col, want) in [("base", "step 0"), ("rescue", "step 0"), ("distilled", "example 1")] {
        let c = d.wait_for(&format!(".three-cols [data-col='{col}']"), Duration::from_secs(30)).await;
        let t = Instant::now();
        loop {
            let text = d.text(&c).await;
            if text.contains(want) && !text.contains("Loading") {
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(30), "column {col} shows: {text}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    d.screenshot("3-rescue").await;

    let _ = http.delete(format!("{base}/session/{}", d.session)).send().await;
}
