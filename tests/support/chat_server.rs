//! A loopback OpenAI-compatible chat-completions server for tests.
//!
//! Include it from a test file with
//! ```ignore
//! #[path = "support/chat_server.rs"]
//! mod chat_server;
//! use chat_server::{ChatServer, Script, Reply};
//! ```
//! and script it:
//! ```ignore
//! let server = ChatServer::start(
//!     Script::new()
//!         .reply(429, "slow down")
//!         .reply(200, chat_server::tool_call_reply(&[("execute_sql", json!({"query": "SELECT 1"}))]))
//!         .always(|_req| (200, chat_server::text_reply("done"))),
//! );
//! let base_url = server.url(); // http://127.0.0.1:<port>/v1
//! // ... run the client ...
//! let sent = server.requests(); // every request, in arrival order
//! ```
//!
//! Routing: `GET …/models` answers the script's model list (default `["test-model"]`); every
//! other request (any `POST`: chat completions, `load_lora_adapter`, ...) takes the next scripted
//! reply, or the `always` fallback once the queue is empty (default: 500 "script exhausted").
//! All requests are recorded. The server runs on its own thread and runtime, binds
//! 127.0.0.1 on a random port, and stops when the `ChatServer` is dropped.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};

type ReplyFn = Arc<dyn Fn(&Value) -> (u16, String) + Send + Sync>;

/// One scripted reply: status, body, extra headers, and a delay before answering.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub headers: Vec<(String, String)>,
    pub delay: Duration,
}

impl Reply {
    pub fn new(status: u16, body: impl Into<String>) -> Self {
        Reply { status, body: body.into(), headers: Vec::new(), delay: Duration::ZERO }
    }
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
}

enum Step {
    Fixed(Reply),
    Func(ReplyFn),
}

/// What the server answers, in order.
pub struct Script {
    queue: VecDeque<Step>,
    always: Option<ReplyFn>,
    delay: Duration,
    models: Vec<String>,
    /// Answer `load_lora_adapter` / `unload_lora_adapter` (with or without `/v1`) as vLLM does,
    /// adding and removing the adapter in the model list (`Some(false)`: answer 200 but never
    /// list it, a server that loses its adapters).
    lora: Option<bool>,
}

impl Default for Script {
    fn default() -> Self {
        Script::new()
    }
}

impl Script {
    pub fn new() -> Self {
        Script { queue: VecDeque::new(), always: None, delay: Duration::ZERO, models: vec!["test-model".into()], lora: None }
    }
    /// Queue a fixed reply (used once).
    pub fn reply(self, status: u16, body: impl Into<String>) -> Self {
        self.reply_full(Reply::new(status, body))
    }
    /// Queue a reply with headers and/or a delay (used once).
    pub fn reply_full(mut self, reply: Reply) -> Self {
        self.queue.push_back(Step::Fixed(reply));
        self
    }
    /// Queue a reply computed from the request body (used once).
    pub fn reply_with(mut self, f: impl Fn(&Value) -> (u16, String) + Send + Sync + 'static) -> Self {
        self.queue.push_back(Step::Func(Arc::new(f)));
        self
    }
    /// The answer to every request once the queue is empty.
    pub fn always(mut self, f: impl Fn(&Value) -> (u16, String) + Send + Sync + 'static) -> Self {
        self.always = Some(Arc::new(f));
        self
    }
    /// A delay before every answer (on top of a reply's own delay).
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
    /// Serve runtime LoRA loading like vLLM: loaded adapters are listed by `GET /v1/models`.
    pub fn lora(mut self) -> Self {
        self.lora = Some(true);
        self
    }
    /// Accept LoRA loading but never list the adapter.
    pub fn lora_never_listed(mut self) -> Self {
        self.lora = Some(false);
        self
    }
    /// The ids `GET /v1/models` lists.
    pub fn models(mut self, ids: &[&str]) -> Self {
        self.models = ids.iter().map(|s| s.to_string()).collect();
        self
    }
}

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    /// Path and query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body text as received.
    pub body_text: String,
    /// The body parsed as JSON (`Value::Null` if empty or not JSON).
    pub body: Value,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }
}

struct ServerState {
    script: Mutex<Script>,
    requests: Mutex<Vec<RecordedRequest>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

struct InFlight<'a>(&'a ServerState);

impl<'a> InFlight<'a> {
    fn enter(st: &'a ServerState) -> Self {
        let now = st.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        st.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(st)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A running server; dropping it stops the server.
pub struct ChatServer {
    addr: SocketAddr,
    state: Arc<ServerState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ChatServer {
    pub fn start(script: Script) -> ChatServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(ServerState {
            script: Mutex::new(script),
            requests: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        let thread = std::thread::Builder::new()
            .name("chat-server".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("server runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    let app = Router::new().fallback(handle).with_state(st);
                    let serve = std::future::IntoFuture::into_future(axum::serve(listener, app));
                    tokio::select! {
                        r = serve => { if let Err(e) = r { eprintln!("chat server: {e}"); } }
                        _ = rx => {}
                    }
                });
                // Dropping the runtime cancels connections still open (e.g. a sleeping reply).
                rt.shutdown_background();
            })
            .expect("spawn server thread");
        ChatServer { addr, state, shutdown: Some(tx), thread: Some(thread) }
    }

    /// Base URL ending in `/v1`, e.g. `http://127.0.0.1:41234/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
    /// Root URL without `/v1`.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests.lock().unwrap().clone()
    }
    pub fn request_count(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }
    /// The most requests that were being answered at the same time.
    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for ChatServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn handle(State(st): State<Arc<ServerState>>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let _guard = InFlight::enter(&st);
    let body_text = String::from_utf8_lossy(&body).into_owned();
    let body_json: Value = serde_json::from_str(&body_text).unwrap_or(Value::Null);
    let path = uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| uri.path().to_string());
    st.requests.lock().unwrap().push(RecordedRequest {
        method: method.to_string(),
        path: path.clone(),
        headers: headers.iter().map(|(k, v)| (k.as_str().to_ascii_lowercase(), String::from_utf8_lossy(v.as_bytes()).into_owned())).collect(),
        body_text,
        body: body_json.clone(),
    });

    if method == Method::GET && uri.path().ends_with("/models") {
        let models = st.script.lock().unwrap().models.clone();
        let data: Vec<Value> = models.iter().map(|m| json!({"id": m, "object": "model", "owned_by": "test"})).collect();
        return json_response(Reply::new(200, json!({"object": "list", "data": data}).to_string()));
    }

    if method == Method::POST && uri.path().ends_with("load_lora_adapter") {
        let mut script = st.script.lock().unwrap();
        if let Some(listed) = script.lora {
            let name = body_json.get("lora_name").and_then(Value::as_str).unwrap_or_default().to_string();
            if uri.path().ends_with("unload_lora_adapter") {
                script.models.retain(|m| m != &name);
                return json_response(Reply::new(200, format!("Success: LoRA adapter '{name}' removed successfully.")));
            }
            if script.models.contains(&name) {
                return json_response(Reply::new(400, format!("The lora adapter '{name}' has already been loaded.")));
            }
            if listed {
                script.models.push(name.clone());
            }
            return json_response(Reply::new(200, format!("Success: LoRA adapter '{name}' added successfully.")));
        }
    }

    let (reply, global_delay) = {
        let mut script = st.script.lock().unwrap();
        let step = script.queue.pop_front();
        let reply = match step {
            Some(Step::Fixed(r)) => r,
            Some(Step::Func(f)) => {
                let (s, b) = f(&body_json);
                Reply::new(s, b)
            }
            None => match &script.always {
                Some(f) => {
                    let (s, b) = f(&body_json);
                    Reply::new(s, b)
                }
                None => Reply::new(500, "script exhausted"),
            },
        };
        (reply, script.delay)
    };
    let wait = global_delay + reply.delay;
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
    json_response(reply)
}

fn json_response(reply: Reply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let is_json = serde_json::from_str::<Value>(&reply.body).is_ok();
    let mut resp = (status, reply.body).into_response();
    let h = resp.headers_mut();
    let ctype = if is_json { "application/json" } else { "text/plain; charset=utf-8" };
    h.insert(axum::http::header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    for (k, v) in reply.headers {
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k.as_str()), HeaderValue::try_from(v.as_str())) {
            h.insert(k, v);
        }
    }
    resp
}

/// Token counts the reply helpers report.
pub const PROMPT_TOKENS: u32 = 11;
pub const COMPLETION_TOKENS: u32 = 7;

fn completion(message: Value, finish_reason: &str) -> String {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": COMPLETION_TOKENS,
            "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
        },
    })
    .to_string()
}

/// A standard reply with plain assistant text.
pub fn text_reply(content: &str) -> String {
    completion(json!({"role": "assistant", "content": content}), "stop")
}

/// A standard native tool-call reply; `calls` = (name, arguments object). Ids are `call_srv_<i>`,
/// content is null, arguments are encoded as JSON strings as the protocol requires.
pub fn tool_call_reply(calls: &[(&str, Value)]) -> String {
    let raw: Vec<(&str, String)> = calls.iter().map(|(n, a)| (*n, a.to_string())).collect();
    let raw_refs: Vec<(&str, &str)> = raw.iter().map(|(n, a)| (*n, a.as_str())).collect();
    tool_call_reply_raw(&raw_refs)
}

/// Like [`tool_call_reply`] with the arguments string given verbatim (e.g. malformed JSON).
pub fn tool_call_reply_raw(calls: &[(&str, &str)]) -> String {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| json!({"id": format!("call_srv_{i}"), "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    completion(json!({"role": "assistant", "content": null, "tool_calls": tool_calls}), "tool_calls")
}
