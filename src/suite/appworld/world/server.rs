//! The bundled world's environment server: the protocol of `appworld serve environment`
//! (`/initialize`, `/execute`, `/task_completed`, `/evaluate`, `/close`, `GET /tasks/{id}`),
//! replies `{"output": ...}`, errors as plain-text 500s, one task at a time per server.
//!
//! It serves only the workbench that started it: it listens on 127.0.0.1, answers only requests
//! whose `Host` is its own `127.0.0.1:PORT` (421 otherwise: a web page that rebinds its DNS name
//! to 127.0.0.1 sends its own name) and that carry the per-start access token as a bearer token
//! (401 otherwise), so no other process on the machine can run, grade or close an episode.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use super::apps::World;
use super::forkserver::ForkSlot;
use super::sandbox::Sandbox;
use super::tasks::{self, WorldTask};

/// How the bundled servers run code.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldOptions {
    pub python: String,
    /// Per-cell limit (AppWorld's `timeout_seconds`, unless `/initialize` asks for less).
    pub time_limit: Duration,
    /// The runner program, when not the bundled [`DRIVER`](super::python::DRIVER): the
    /// containment and integrity tests give it one without the cell filter, to stand for code
    /// that got past it.
    pub driver: Option<String>,
}

impl Default for WorldOptions {
    fn default() -> Self {
        WorldOptions { python: "python3".into(), time_limit: Duration::from_secs(10), driver: None }
    }
}

impl WorldOptions {
    fn driver(&self) -> &str {
        self.driver.as_deref().unwrap_or(super::python::DRIVER)
    }
}

struct Session {
    task: WorldTask,
    world: World,
    sandbox: Sandbox,
}

struct ServerState {
    options: WorldOptions,
    session: Mutex<Option<Session>>,
    /// This server's fork server: its episodes come one at a time, so one sandbox never holds
    /// two episodes' code.
    forks: Arc<ForkSlot>,
}

type Shared = Arc<ServerState>;

fn error(message: impl Into<String>) -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, message.into()).into_response()
}

fn output(v: Value) -> Response {
    Json(json!({ "output": v })).into_response()
}

fn task_info(t: &WorldTask) -> Value {
    json!({"task_id": t.task_id, "instruction": t.instruction, "supervisor": t.supervisor(), "datetime": tasks::datetime(), "family": t.family})
}

#[allow(clippy::result_large_err)] // an axum handler's early return: the error is the response
fn field<'a>(body: &'a Value, name: &str) -> Result<&'a str, Response> {
    body.get(name).and_then(Value::as_str).ok_or_else(|| error(format!("Field `{name}` is required and must be a string.")))
}

/// The router of one server, without the access guard [`start`] puts in front of it (tests may
/// drive it directly, without a socket).
pub fn router(options: WorldOptions) -> Router {
    let forks = Arc::new(ForkSlot::new(&options.python, options.driver()));
    let state = Arc::new(ServerState { options, session: Mutex::new(None), forks });
    Router::new()
        .route("/", get(|| async { output(json!("Harness-S bundled app world")) }))
        .route("/tasks/{task_id}", get(show_task))
        .route("/initialize", post(initialize))
        .route("/execute", post(execute))
        .route("/task_completed", post(task_completed))
        .route("/evaluate", post(evaluate))
        .route("/close", post(close))
        .route("/close_all", post(close_all))
        .with_state(state)
}

async fn show_task(Path(task_id): Path<String>) -> Response {
    match tasks::find(&task_id) {
        Some(t) => output(task_info(&t)),
        None => error(format!("Task `{task_id}` does not exist in the bundled world.")),
    }
}

async fn initialize(State(st): State<Shared>, Json(body): Json<Value>) -> Response {
    let task_id = match field(&body, "task_id") {
        Ok(t) => t.to_string(),
        Err(r) => return r,
    };
    if body.get("ground_truth_mode").is_some() {
        return error("ground_truth_mode is not available: the bundled world never shows ground truth to a run.");
    }
    let Some(task) = tasks::find(&task_id) else { return error(format!("Task `{task_id}` does not exist in the bundled world.")) };
    let mut limit = st.options.time_limit;
    if let Some(s) = body.get("timeout_seconds").and_then(Value::as_f64) {
        if s > 0.0 {
            limit = limit.min(Duration::from_secs_f64(s));
        }
    }
    let info = task_info(&task);
    let session = Session {
        world: World::new(task.data()),
        task,
        sandbox: Sandbox::new(&st.options.python, limit).with_driver(st.options.driver()).with_fork_server(st.forks.clone()),
    };
    // one task at a time: a new initialize replaces the old task, as in AppWorld
    *st.session.lock().unwrap_or_else(|p| p.into_inner()) = Some(session);
    output(info)
}

/// Run `f` on the session of `task_id` on a blocking thread (cells run Python).
async fn with_session<F>(st: Shared, task_id: String, f: F) -> Response
where
    F: FnOnce(&mut Session) -> Response + Send + 'static,
{
    let join = tokio::task::spawn_blocking(move || {
        let mut guard = st.session.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_mut() {
            Some(s) if s.task.task_id == task_id => f(s),
            Some(s) => error(format!("Task `{task_id}` is not initialized on this server (it holds `{}`).", s.task.task_id)),
            None => error(format!("Task `{task_id}` is not initialized on this server.")),
        }
    })
    .await;
    join.unwrap_or_else(|e| error(format!("internal error: {e}")))
}

async fn execute(State(st): State<Shared>, Json(body): Json<Value>) -> Response {
    let (task_id, code) = match (field(&body, "task_id"), field(&body, "code")) {
        (Ok(t), Ok(c)) => (t.to_string(), c.to_string()),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    with_session(st, task_id, move |s| match s.sandbox.execute(&code, &mut s.world) {
        Ok(r) => output(json!(r.output)),
        Err(e) => error(format!("The code runner failed: {e}")),
    })
    .await
}

async fn task_completed(State(st): State<Shared>, Json(body): Json<Value>) -> Response {
    let task_id = match field(&body, "task_id") {
        Ok(t) => t.to_string(),
        Err(r) => return r,
    };
    with_session(st, task_id, |s| output(json!(s.world.completion.is_some()))).await
}

async fn evaluate(State(st): State<Shared>, Json(body): Json<Value>) -> Response {
    let task_id = match field(&body, "task_id") {
        Ok(t) => t.to_string(),
        Err(r) => return r,
    };
    let report = body.get("report").and_then(Value::as_bool).unwrap_or(false);
    with_session(st, task_id, move |s| {
        let results = tasks::grade(&s.task, &s.world);
        if report {
            // AppWorld's server answers `report` with the report's text instead of the result
            let lines: Vec<String> = results.iter().map(|t| format!("{} {}", if t.passed { "PASS" } else { "FAIL" }, t.requirement)).collect();
            return output(json!(lines.join("\n")));
        }
        // AppWorld labels each test by what doing nothing gets: `no_op_pass` for one the
        // untouched world passes ("nothing else changed"), `no_op_fail` for the rest
        let untouched = tasks::grade(&s.task, &World::new(s.task.data()));
        let label = |i: usize| if untouched.get(i).is_some_and(|t| t.passed) { "no_op_pass" } else { "no_op_fail" };
        let passes: Vec<Value> =
            results.iter().enumerate().filter(|(_, t)| t.passed).map(|(i, t)| json!({"requirement": t.requirement, "label": label(i)})).collect();
        let failures: Vec<Value> = results
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.passed)
            .map(|(i, t)| json!({"requirement": t.requirement, "trace": t.detail, "label": label(i)}))
            .collect();
        let success = failures.is_empty();
        output(json!({"success": success, "difficulty": 1, "num_tests": results.len(), "passes": passes, "failures": failures, "api_calls": s.world.api_calls}))
    })
    .await
}

async fn close(State(st): State<Shared>, Json(body): Json<Value>) -> Response {
    let task_id = match field(&body, "task_id") {
        Ok(t) => t.to_string(),
        Err(r) => return r,
    };
    let mut guard = st.session.lock().unwrap_or_else(|p| p.into_inner());
    if guard.as_ref().is_some_and(|s| s.task.task_id == task_id) {
        *guard = None;
    }
    output(Value::Null)
}

async fn close_all(State(st): State<Shared>) -> Response {
    *st.session.lock().unwrap_or_else(|p| p.into_inner()) = None;
    output(Value::Null)
}

/// Servers [`start`]ed: their base URLs and the token every request to them must carry
/// (`Authorization: Bearer <token>`).
#[derive(Clone, Debug, PartialEq)]
pub struct Started {
    pub urls: Vec<String>,
    pub token: String,
}

/// Who may talk to one server: requests for its own host, with the token.
#[derive(Clone)]
struct Access {
    host: String,
    token: Arc<str>,
}

/// Refuse a request for another host (421) or without the token (401), before any handler runs.
async fn guard(State(access): State<Access>, req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    use axum::http::header;
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if host != access.host {
        return (StatusCode::MISDIRECTED_REQUEST, format!("This server answers only requests for {}.", access.host)).into_response();
    }
    let given = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or("");
    // a full comparison of equal lengths: the time taken says nothing about a prefix
    let ok = given.len() == access.token.len() && given.bytes().zip(access.token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if !ok {
        return (StatusCode::UNAUTHORIZED, "This server serves only the workbench that started it.").into_response();
    }
    next.run(req).await
}

/// A fresh random token: 128 bits as hex.
fn new_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bundled world's servers could not open their loopback ports.
#[derive(Debug, thiserror::Error)]
#[error("cannot open a loopback port for the bundled world: {0}")]
pub struct PortError(#[from] std::io::Error);

/// Start `n` servers on loopback ports on `rt`, guarded by one fresh token. Safe to call from
/// inside another runtime: the ports are bound synchronously and served by tasks on `rt`.
pub fn start(rt: &tokio::runtime::Handle, n: usize, options: &WorldOptions) -> Result<Started, PortError> {
    let token: Arc<str> = Arc::from(new_token());
    let mut urls = Vec::new();
    for _ in 0..n.max(1) {
        let listener = std::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let access = Access { host: addr.to_string(), token: token.clone() };
        let app = router(options.clone()).layer(axum::middleware::from_fn_with_state(access, guard));
        rt.spawn(async move {
            if let Ok(l) = tokio::net::TcpListener::from_std(listener) {
                let _ = axum::serve(l, app).await;
            }
        });
        urls.push(format!("http://{addr}"));
    }
    Ok(Started { urls, token: token.to_string() })
}
