//! `harness-s serve`: the workbench UI at `/` and the command set under `/api/` over HTTP, with
//! server-sent events, for a workbench on a remote GPU box. A thin adapter: every `/api/<command>`
//! goes to [`Workbench::call`]. Bound to 127.0.0.1; every API request needs the access token
//! printed at start (reach it remotely through an SSH tunnel).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::Value;
use tokio_stream::StreamExt;

use harness_s::workbench::api::ErrorBody;
use harness_s::workbench::{CommandError, Workbench};

struct App {
    workbench: Arc<Workbench>,
    token: String,
    ui_dir: Option<PathBuf>,
    /// The `Host` values this server answers: `127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`.
    hosts: Vec<String>,
}

/// What every response carries: the UI loads only its own scripts and styles, talks only to
/// this server and may not be framed; the token in a URL never leaves in a `Referer`.
const SECURITY_HEADERS: &[(&str, &str)] = &[
    (
        "content-security-policy",
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
];

/// Refuse a request whose `Host` is not this loopback server (a page of another site that
/// rebinds its DNS name to 127.0.0.1 sends its own name), and add [`SECURITY_HEADERS`].
async fn guard(State(app): State<Arc<App>>, req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let mut res = if app.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        next.run(req).await
    } else {
        error_reply(
            StatusCode::MISDIRECTED_REQUEST,
            "misdirected_request",
            format!("this workbench answers only requests for {} (the request was for host `{host}`)", app.hosts.join(", ")),
        )
    };
    for (k, v) in SECURITY_HEADERS {
        res.headers_mut().insert(*k, header::HeaderValue::from_static(v));
    }
    res
}

/// A fresh random token: 128 bits as hex.
fn new_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Where the built UI is: `--ui`, else `HARNESS_S_UI_DIR`, else `ui/dist` beside the source tree
/// the binary was built from, else `ui/dist` under the working directory.
pub fn find_ui_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = explicit {
        candidates.push(p.to_path_buf());
    }
    if let Ok(p) = std::env::var("HARNESS_S_UI_DIR") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/dist"));
    candidates.push(PathBuf::from("ui/dist"));
    candidates.into_iter().find(|p| p.join("index.html").is_file())
}

fn authorized(app: &App, headers: &HeaderMap, query: &HashMap<String, String>) -> bool {
    let bearer = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
    let given = bearer.or(query.get("token").map(String::as_str));
    match given {
        // Same length and a full comparison, so the time taken says nothing about the prefix.
        Some(t) => t.len() == app.token.len() && t.bytes().zip(app.token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0,
        None => false,
    }
}

/// A failed request: its status and the same `ErrorBody` the desktop app rejects with.
fn error_reply(status: StatusCode, kind: &str, message: String) -> Response {
    (status, axum::Json(ErrorBody { error: message, kind: kind.to_string() })).into_response()
}

fn command_error(e: &CommandError) -> Response {
    let status = match e {
        CommandError::BadArguments(_) => StatusCode::BAD_REQUEST,
        CommandError::NotFound(_) => StatusCode::NOT_FOUND,
        CommandError::Conflict(_) => StatusCode::CONFLICT,
        CommandError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, axum::Json(e.body())).into_response()
}

fn unauthorized() -> Response {
    error_reply(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "missing or wrong access token: send `Authorization: Bearer <token>` (printed when `harness-s serve` started) or `?token=<token>`".into(),
    )
}

/// Query-string values as JSON: numbers, booleans and null as such, the rest as strings.
fn query_args(query: &HashMap<String, String>) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in query {
        if k == "token" {
            continue;
        }
        let parsed = match serde_json::from_str::<Value>(v) {
            Ok(x @ (Value::Number(_) | Value::Bool(_) | Value::Null)) => x,
            _ => Value::String(v.clone()),
        };
        m.insert(k.clone(), parsed);
    }
    Value::Object(m)
}

async fn run_command(app: Arc<App>, command: String, args: Value) -> Response {
    let wb = app.workbench.clone();
    let result = tokio::task::spawn_blocking(move || wb.call(&command, args)).await;
    match result {
        Ok(Ok(v)) => axum::Json(v).into_response(),
        Ok(Err(e)) => command_error(&e),
        Err(e) => error_reply(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("the command failed: {e}")),
    }
}

async fn api_get(
    State(app): State<Arc<App>>,
    UrlPath(command): UrlPath<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&app, &headers, &query) {
        return unauthorized();
    }
    if command == "events" {
        return events(app).await;
    }
    let args = query_args(&query);
    run_command(app, command, args).await
}

async fn api_post(
    State(app): State<Arc<App>>,
    UrlPath(command): UrlPath<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !authorized(&app, &headers, &query) {
        return unauthorized();
    }
    let args = if body.iter().all(|b| b.is_ascii_whitespace()) {
        query_args(&query)
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(v) => v,
            Err(e) => return error_reply(StatusCode::BAD_REQUEST, "bad_arguments", format!("{command}: the request body is not JSON: {e}")),
        }
    };
    run_command(app, command, args).await
}

/// Server-sent events: every workbench event as one `data:` line of JSON.
async fn events(app: Arc<App>) -> Response {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let sub = app.workbench.subscribe(move |v| {
        let _ = tx.send(v.clone());
    });
    let stream = tokio_stream::wrappers::UnboundedReceiverStream::new(rx).map(move |v| {
        // The subscription lives as long as the stream: the client going away drops both.
        let _keep = &sub;
        Ok::<_, std::convert::Infallible>(SseEvent::default().data(v.to_string()))
    });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

fn mime(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" => "application/json",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The built UI; unknown paths get `index.html` so the UI's own routes load directly.
async fn static_file(State(app): State<Arc<App>>, uri: Uri) -> Response {
    let Some(dir) = &app.ui_dir else {
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "The workbench UI is not built: run `npm --prefix ui ci && npm --prefix ui run build` (or ./scripts/start), or pass --ui DIR. The API is at /api/.",
        )
            .into_response();
    };
    let rel = uri.path().trim_start_matches('/');
    let safe = !rel.split('/').any(|seg| seg == ".." || seg.starts_with('.'));
    let mut path = if rel.is_empty() || !safe { dir.join("index.html") } else { dir.join(rel) };
    if !path.is_file() {
        path = dir.join("index.html");
    }
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, mime(&path)), (header::CACHE_CONTROL, "no-cache")], bytes).into_response(),
        Err(e) => error_reply(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("reading {}: {e}", path.display())),
    }
}

/// The whole HTTP surface (API, events, UI files, the Host and token checks, the security
/// headers), built without a socket so it can be driven in-process.
fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/api/{command}", get(api_get).post(api_post))
        .fallback(static_file)
        .layer(axum::middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

/// Serve until `stop` is set (Ctrl-C, SIGTERM); running experiments are stopped cleanly (resumable) on the way out.
pub fn serve(port: u16, db: &str, ui: Option<&Path>, stop: Arc<std::sync::atomic::AtomicBool>) -> Result<()> {
    let workspace = harness_s::workbench::workspace_for(db);
    let workbench = Arc::new(Workbench::open(db, &workspace).map_err(|e| anyhow::anyhow!("{e}"))?);
    let ui_dir = find_ui_dir(ui);
    let token = std::env::var("HARNESS_S_SERVE_TOKEN").ok().filter(|t| t.len() >= 16).unwrap_or_else(new_token);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the server runtime")?;
    let served = workbench.clone();
    rt.block_on(async move {
        let workbench = served;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("binding 127.0.0.1:{port}"))?;
        let local = listener.local_addr()?;
        let hosts = ["127.0.0.1", "localhost", "[::1]"].iter().map(|h| format!("{h}:{}", local.port())).collect();
        let app = Arc::new(App { workbench: workbench.clone(), token: token.clone(), ui_dir: ui_dir.clone(), hosts });
        let router = router(app);
        println!("serving http://{local}/?token={token}");
        match &ui_dir {
            Some(d) => eprintln!("ui: {}", d.display()),
            None => eprintln!("ui: not built (the API is served; build it with `npm --prefix ui run build`)"),
        }
        eprintln!("store: {db}   workspace: {}", workspace.display());
        use std::io::Write;
        let _ = std::io::stdout().flush();
        // Not a graceful shutdown: open event streams never end by themselves.
        tokio::select! {
            r = axum::serve(listener, router) => r.context("serving")?,
            _ = async {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            } => match workbench.running().as_slice() {
                [] => eprintln!("stopping"),
                [run] => eprintln!("stopping: experiment run {run} stops after the work in flight and can be resumed"),
                runs => {
                    let ids: Vec<String> = runs.iter().map(i64::to_string).collect();
                    eprintln!("stopping: experiment runs {} stop after the work in flight and can be resumed", ids.join(", "))
                }
            },
        }
        Ok::<_, anyhow::Error>(())
    })?;
    workbench.shutdown();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    /// The router and the workbench behind it (kept by the caller, so its last reference, which
    /// closes the store, is dropped outside the runtime that drives the requests).
    fn app(dir: &Path) -> (Router, Arc<Workbench>) {
        let db = dir.join("store.db");
        let workbench = Arc::new(Workbench::open(db.to_str().expect("utf-8 path"), &dir.join("workspace")).expect("workbench"));
        let hosts = vec!["127.0.0.1:8080".to_string()];
        let app = App { workbench: workbench.clone(), token: "0123456789abcdef0123456789abcdef".into(), ui_dir: None, hosts };
        (router(Arc::new(app)), workbench)
    }

    async fn send(router: Router, host: &str, uri: &str, token: Option<&str>) -> (StatusCode, HeaderMap, Value) {
        let mut req = Request::builder().uri(uri).header(header::HOST, host);
        if let Some(t) = token {
            req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        let res = router.oneshot(req.body(Body::empty()).expect("request")).await.expect("response");
        let (parts, body) = res.into_parts();
        let bytes = axum::body::to_bytes(body, 1 << 20).await.expect("body");
        (parts.status, parts.headers, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    #[test]
    fn the_router_answers_in_process_with_its_checks() {
        // the workbench owns runtimes of its own: open and drop it outside the one driving requests
        let dir = tempfile::tempdir().expect("temp dir");
        let (router, workbench) = app(dir.path());
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        rt.block_on(check_router(router));
        drop(rt);
        workbench.shutdown();
    }

    async fn check_router(router: Router) {
        let token = "0123456789abcdef0123456789abcdef";
        // a command with the token: the command set's answer, with the security headers
        let (status, headers, body) = send(router.clone(), "127.0.0.1:8080", "/api/suites", Some(token)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.as_array().is_some_and(|a| !a.is_empty()), "{body}");
        assert_eq!(headers.get("x-frame-options").map(|v| v.as_bytes()), Some(&b"DENY"[..]));
        // no token, a wrong token, another host, an unknown command
        let (status, _, body) = send(router.clone(), "127.0.0.1:8080", "/api/suites", None).await;
        assert_eq!((status, body["kind"].as_str()), (StatusCode::UNAUTHORIZED, Some("unauthorized")));
        let (status, _, _) = send(router.clone(), "127.0.0.1:8080", "/api/suites", Some("ffffffffffffffffffffffffffffffff")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _, body) = send(router.clone(), "evil.example:8080", "/api/suites", Some(token)).await;
        assert_eq!((status, body["kind"].as_str()), (StatusCode::MISDIRECTED_REQUEST, Some("misdirected_request")));
        let (status, _, _) = send(router, "127.0.0.1:8080", "/api/no_such_command", Some(token)).await;
        assert!(status.is_client_error(), "{status}");
    }
}
