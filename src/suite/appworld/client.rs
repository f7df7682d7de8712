//! The client of an AppWorld environment server (`appworld serve environment`, or the bundled
//! world, which speaks the same protocol): `POST /initialize`, `/execute`, `/task_completed`,
//! `/evaluate`, `/close`, each answered `{"output": ...}`; any other status is an error: plain
//! text from the bundled world, a bare 500 or FastAPI's 422 `{"detail": ...}` from AppWorld's
//! own server (`tests/appworld_contract.rs` runs this client against that server's code).
//!
//! A server holds one task at a time, so a run is given a [`ServerPool`] and each episode leases
//! one URL for its whole life ([`Lease`]). Requests run on a runtime the suite owns; callers block
//! on a channel, so the client works from plain threads and from inside other runtimes alike.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::Value;

/// A failed request: names the URL and what happened.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ClientError {
    #[error("AppWorld server {url} answered {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("request to AppWorld server {url} timed out after {secs} s")]
    Timeout { url: String, secs: f64 },
    #[error("request to AppWorld server {url} failed: {message}")]
    Transport { url: String, message: String },
    #[error("AppWorld server {url} sent a reply without `output`: {body}")]
    Protocol { url: String, body: String },
    #[error("cannot make the AppWorld HTTP client: {message}")]
    Setup { message: String },
}

/// Server URLs, each used by one episode at a time.
pub struct ServerPool {
    urls: Vec<String>,
    busy: Mutex<Vec<bool>>,
    freed: Condvar,
}

impl ServerPool {
    pub fn new(urls: Vec<String>) -> Arc<ServerPool> {
        let n = urls.len();
        Arc::new(ServerPool { urls, busy: Mutex::new(vec![false; n]), freed: Condvar::new() })
    }

    pub fn urls(&self) -> &[String] {
        &self.urls
    }

    /// Wait for a free server and take it.
    pub fn lease(self: &Arc<Self>) -> Lease {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(i) = busy.iter().position(|b| !*b) {
                busy[i] = true;
                return Lease { pool: self.clone(), index: i };
            }
            busy = self.freed.wait(busy).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// One server, held until dropped.
pub struct Lease {
    pool: Arc<ServerPool>,
    index: usize,
}

impl Lease {
    pub fn url(&self) -> &str {
        &self.pool.urls[self.index]
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut busy = self.pool.busy.lock().unwrap_or_else(|p| p.into_inner());
        busy[self.index] = false;
        self.pool.freed.notify_one();
    }
}

/// HTTP access to AppWorld servers.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    rt: tokio::runtime::Handle,
    timeout: Duration,
    /// The bundled world's access token, sent as `Authorization: Bearer`; never sent to a
    /// server of the user's.
    bearer: Option<String>,
}

impl Client {
    /// A client whose requests run on `rt`, each limited to `timeout` (which should exceed the
    /// server's own execution limit, 100 s for AppWorld).
    pub fn new(rt: tokio::runtime::Handle, timeout: Duration) -> Result<Client, ClientError> {
        // A fresh connection per request: AppWorld's server (uvicorn) closes a connection after
        // any 500 without saying so (no `Connection: close`) and drops idle ones after 5 s, so a
        // reused connection fails the next request with a transport error. Loopback connections
        // cost far less than the Python each request runs.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| ClientError::Setup { message: e.to_string() })?;
        Ok(Client { http, rt, timeout, bearer: None })
    }

    /// Send `token` with every request (to the bundled world's servers, which refuse requests
    /// without it).
    pub fn with_bearer(mut self, token: impl Into<String>) -> Client {
        self.bearer = Some(token.into());
        self
    }

    fn authorized(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.bearer {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// `POST {base}/{path}` with a JSON body; the reply's `output`.
    pub fn post(&self, base: &str, path: &str, body: &Value) -> Result<Value, ClientError> {
        let url = format!("{}/{}", base.trim_end_matches('/'), path);
        let req = self.authorized(self.http.post(&url).json(body));
        self.run(url, req)
    }

    /// `GET {base}/{path}`; the reply's `output`.
    pub fn get(&self, base: &str, path: &str) -> Result<Value, ClientError> {
        let url = format!("{}/{}", base.trim_end_matches('/'), path);
        let req = self.authorized(self.http.get(&url));
        self.run(url, req)
    }

    fn run(&self, url: String, req: reqwest::RequestBuilder) -> Result<Value, ClientError> {
        let secs = self.timeout.as_secs_f64();
        let (tx, rx) = std::sync::mpsc::channel();
        let u = url.clone();
        self.rt.spawn(async move {
            let result = async {
                let resp = req.send().await.map_err(|e| failure(&u, secs, e))?;
                let status = resp.status();
                let text = resp.text().await.map_err(|e| failure(&u, secs, e))?;
                if status != reqwest::StatusCode::OK {
                    return Err(ClientError::Status { url: u.clone(), status: status.as_u16(), body: error_body(&text) });
                }
                let v: Value =
                    serde_json::from_str(&text).map_err(|_| ClientError::Protocol { url: u.clone(), body: text.chars().take(500).collect() })?;
                match v {
                    Value::Object(mut o) if o.contains_key("output") => Ok(o.remove("output").unwrap_or(Value::Null)),
                    _ => Err(ClientError::Protocol { url: u.clone(), body: text.chars().take(500).collect() }),
                }
            }
            .await;
            let _ = tx.send(result);
        });
        rx.recv().unwrap_or_else(|_| Err(ClientError::Transport { url, message: "the client runtime stopped".into() }))
    }
}

/// What an error reply says, readably. AppWorld's server (FastAPI) answers a request it cannot
/// parse with 422 and `{"detail": [{"loc": [...], "msg": ...}, ...]}`, and any failure of its
/// world (an unknown task, another task than the one it holds, an exception) with a bare
/// `Internal Server Error`, the cause only in its own log; the bundled world answers plain text.
fn error_body(text: &str) -> String {
    let text = text.trim();
    let readable = match serde_json::from_str::<Value>(text).ok().and_then(|v| v.get("detail").cloned()) {
        Some(Value::String(s)) => s,
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let at: Vec<String> = item
                    .get("loc")
                    .and_then(Value::as_array)
                    .map(|l| l.iter().map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_string)).collect())
                    .unwrap_or_default();
                let msg = item.get("msg").and_then(Value::as_str).unwrap_or("invalid");
                if at.is_empty() {
                    msg.to_string()
                } else {
                    format!("{}: {msg}", at.join("."))
                }
            })
            .collect::<Vec<_>>()
            .join("; "),
        _ if text == "Internal Server Error" => "Internal Server Error (AppWorld's server gives no cause: its own log has the traceback)".to_string(),
        _ => text.to_string(),
    };
    readable.chars().take(2000).collect()
}

fn failure(url: &str, secs: f64, e: reqwest::Error) -> ClientError {
    if e.is_timeout() {
        ClientError::Timeout { url: url.to_string(), secs }
    } else {
        // reqwest's own message ("error sending request for url ...") leaves out why
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            message.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        ClientError::Transport { url: url.to_string(), message }
    }
}
