//! The `openai` back-end: any OpenAI-compatible chat-completions endpoint (vLLM, SGLang,
//! llama.cpp server, Ollama, hosted APIs).
//!
//! # URLs
//! `base_url` is the API root *including* its version prefix, e.g. `http://127.0.0.1:8000/v1` or
//! `https://api.openai.com/v1`; a trailing `/` is ignored and nothing else is added, so
//! `POST {base_url}/chat/completions` and `GET {base_url}/models`. (No `/v1` is guessed, because
//! some servers use other prefixes.) The vLLM admin calls are the exception:
//! [`OpenAiPolicy::load_lora_adapter`] posts to `{root}/v1/load_lora_adapter`, where `root` is
//! `base_url` with one trailing `/v1` removed, so it works whether or not `base_url` ends in `/v1`.
//!
//! # API key
//! Read at each request from the environment variable named by `api_key_env` (default
//! `OPENAI_API_KEY`) and sent as `Authorization: Bearer <key>` only when set and non-empty. The key
//! is never stored in the config, never logged, and scrubbed from every error message.
//!
//! # Threads
//! [`Policy::act`] is blocking and is meant to be called from plain worker threads, any number at
//! once. The policy owns a small tokio runtime that drives the HTTP requests, and a semaphore
//! bounds in-flight requests across all callers (`concurrency`). Do not call it from inside an
//! async task: it would block that executor thread for the whole request.
//!
//! # Errors
//! Every failure is a [`PolicyError`] (an infrastructure error, never a task failure): 429, 5xx,
//! connect errors and timeouts are retried `max_retries` times with exponential backoff and jitter
//! (honouring `Retry-After` seconds up to `retry_max_delay`), then surface as
//! [`PolicyError::Server`] or [`PolicyError::Transport`]; other 4xx are [`PolicyError::Server`] at
//! once; a 200 reply that is not JSON or has no `choices` is [`PolicyError::Protocol`], not retried.

pub mod text_tools;
mod transport;
pub mod wire;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::{CallOptions, Policy, PolicyError};
use crate::message::{AssistantTurn, Context};
pub use transport::ReplicaStats;
use transport::{HttpRequest, Pool, Retry};
use wire::{RequestParams, WireMode};

/// How tools are offered to the model.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ToolMode {
    /// OpenAI function calling: `tools` + `tool_choice: "auto"`, calls read from `tool_calls`.
    Native,
    /// Tools described in the system prompt, calls parsed from the reply text
    /// (see [`text_tools`]).
    Text,
    /// Native; if the server answers 400 saying tools are unsupported, switch this policy to
    /// text mode for the rest of the run (the failed call is re-sent in text mode at once).
    #[default]
    Auto,
}

/// Configuration of an [`OpenAiPolicy`]; lives in TOML, e.g.
///
/// ```toml
/// base_url = "http://127.0.0.1:8000/v1"
/// model = "Qwen/Qwen2.5-7B-Instruct"
/// timeout = 120          # seconds
/// concurrency = 8
/// tool_mode = "auto"     # native | text | auto
/// ```
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OpenAiConfig {
    /// API root including the version prefix; `/chat/completions` is appended.
    pub base_url: String,
    /// Model name sent in each request (and used in [`Policy::name`]).
    pub model: String,
    /// Name of the environment variable holding the API key (default `OPENAI_API_KEY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Per-request timeout (whole request, body included), in seconds in TOML. Default 120 s.
    #[serde(default = "defaults::timeout", with = "secs")]
    pub timeout: Duration,
    /// Retries after the first attempt, for 429/5xx/connect/timeout. Default 4.
    #[serde(default = "defaults::max_retries")]
    pub max_retries: u32,
    /// Maximum in-flight requests across all threads using this policy. Default 8.
    #[serde(default = "defaults::concurrency")]
    pub concurrency: usize,
    /// When set, overrides the per-call `CallOptions::temperature` (for endpoints that need a
    /// fixed temperature); when unset, the call's temperature is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub tool_mode: ToolMode,
    /// Ask for token log-probabilities (`"logprobs": true`). Default off.
    #[serde(default)]
    pub logprobs: bool,
    /// A JSON object merged into every chat request body last (its keys override), e.g.
    /// `{"top_p": 0.95, "chat_template_kwargs": {"enable_thinking": false}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<Value>,
    /// More replicas of the same endpoint (API roots). With them, chat requests are spread over
    /// `base_url` and these (fewest in flight first), a failing replica sits out
    /// `replica_cooldown` while its requests go elsewhere, and LoRA adapters are loaded on all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_urls: Vec<String>,
    /// How long a failed replica sits out, in seconds in TOML. Default 30 s.
    #[serde(default = "defaults::replica_cooldown", with = "secs")]
    pub replica_cooldown: Duration,
    /// First retry delay (doubled each retry, with jitter), in seconds in TOML. Default 0.5 s.
    #[serde(default = "defaults::retry_base_delay", with = "secs")]
    pub retry_base_delay: Duration,
    /// Cap on a retry delay, also on a server's `Retry-After`. Default 30 s.
    #[serde(default = "defaults::retry_max_delay", with = "secs")]
    pub retry_max_delay: Duration,
}

mod defaults {
    use std::time::Duration;
    pub fn timeout() -> Duration {
        Duration::from_secs(120)
    }
    pub fn max_retries() -> u32 {
        4
    }
    pub fn concurrency() -> usize {
        8
    }
    pub fn retry_base_delay() -> Duration {
        Duration::from_millis(500)
    }
    pub fn retry_max_delay() -> Duration {
        Duration::from_secs(30)
    }
    pub fn replica_cooldown() -> Duration {
        Duration::from_secs(30)
    }
}

/// `Duration` as (possibly fractional) seconds.
mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let x = f64::deserialize(d)?;
        Duration::try_from_secs_f64(x).map_err(|_| serde::de::Error::custom(format!("invalid duration: {x} s")))
    }
}

impl OpenAiConfig {
    /// A config with every optional field at its default.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            timeout: defaults::timeout(),
            max_retries: defaults::max_retries(),
            concurrency: defaults::concurrency(),
            temperature: None,
            max_tokens: None,
            tool_mode: ToolMode::default(),
            logprobs: false,
            extra_body: None,
            base_urls: Vec::new(),
            replica_cooldown: defaults::replica_cooldown(),
            retry_base_delay: defaults::retry_base_delay(),
            retry_max_delay: defaults::retry_max_delay(),
        }
    }

    /// The environment variable the key is read from.
    pub fn key_env(&self) -> &str {
        self.api_key_env.as_deref().filter(|s| !s.is_empty()).unwrap_or("OPENAI_API_KEY")
    }
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig::new("http://127.0.0.1:8000/v1", "")
    }
}

/// Why an [`OpenAiPolicy`] could not be created.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum OpenAiSetupError {
    #[error("invalid openai config: {0}")]
    InvalidConfig(String),
    #[error("cannot start the openai client: {0}")]
    Client(String),
}

/// Owns the runtime; shuts it down without blocking, so the policy may be dropped anywhere
/// (even inside another runtime).
struct RuntimeHolder(Option<tokio::runtime::Runtime>);

impl Drop for RuntimeHolder {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// What all checkpoints of one endpoint share: runtime, connection pool, concurrency limit.
struct Shared {
    rt: RuntimeHolder,
    client: reqwest::Client,
    limit: Arc<Semaphore>,
    /// Set when the endpoint has more than one replica.
    pool: Option<Pool>,
}

impl Shared {
    fn handle(&self) -> &tokio::runtime::Handle {
        self.rt.0.as_ref().expect("runtime present until drop").handle()
    }
}

/// A [`Policy`] backed by an OpenAI-compatible chat-completions endpoint. Cheap to share across
/// threads (`&self` everywhere); see the module docs for URLs, keys, threads and errors.
#[derive(Clone)]
pub struct OpenAiPolicy {
    config: OpenAiConfig,
    base: String,
    shared: Arc<Shared>,
    /// Auto mode: set once the server said it cannot do native tools.
    text_fallback: Arc<AtomicBool>,
}

impl fmt::Debug for OpenAiPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiPolicy")
            .field("base_url", &self.base)
            .field("model", &self.config.model)
            .field("tool_mode", &self.effective_mode_name())
            .finish_non_exhaustive()
    }
}

impl OpenAiPolicy {
    pub fn new(config: OpenAiConfig) -> Result<Self, OpenAiSetupError> {
        let base = config.base_url.trim().trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(OpenAiSetupError::InvalidConfig(format!("base_url must start with http:// or https://, got {:?}", config.base_url)));
        }
        if config.model.trim().is_empty() {
            return Err(OpenAiSetupError::InvalidConfig("model must not be empty".into()));
        }
        if let Some(extra) = &config.extra_body {
            if !extra.is_object() {
                return Err(OpenAiSetupError::InvalidConfig("extra_body must be a JSON object".into()));
            }
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("openai-policy")
            .enable_all()
            .build()
            .map_err(|e| OpenAiSetupError::Client(e.to_string()))?;
        let client = reqwest::Client::builder()
            .connect_timeout(config.timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| OpenAiSetupError::Client(e.to_string()))?;
        let mut bases = vec![base.clone()];
        for u in &config.base_urls {
            let u = u.trim().trim_end_matches('/').to_string();
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(OpenAiSetupError::InvalidConfig(format!("base_urls must start with http:// or https://, got {u:?}")));
            }
            if !bases.contains(&u) {
                bases.push(u);
            }
        }
        let pool = (bases.len() > 1).then(|| Pool::new(bases, config.replica_cooldown));
        let shared = Shared { rt: RuntimeHolder(Some(rt)), client, limit: Arc::new(Semaphore::new(config.concurrency.max(1))), pool };
        Ok(OpenAiPolicy { config, base, shared: Arc::new(shared), text_fallback: Arc::new(AtomicBool::new(false)) })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// The same endpoint under another model name (e.g. a LoRA adapter loaded with
    /// [`load_lora_adapter`](Self::load_lora_adapter)). Shares the runtime, connection pool and
    /// concurrency limit with `self`; the Auto-mode text fallback is tracked per model.
    pub fn with_model(&self, model: impl Into<String>) -> OpenAiPolicy {
        let mut config = self.config.clone();
        config.model = model.into();
        OpenAiPolicy { config, base: self.base.clone(), shared: self.shared.clone(), text_fallback: Arc::new(AtomicBool::new(false)) }
    }

    /// True once Auto mode has switched to text tool calls.
    pub fn uses_text_tools(&self) -> bool {
        self.effective_mode() == WireMode::Text
    }

    /// `GET {base_url}/models` → the model ids (a connection test; one attempt, no retries).
    /// With replicas: the ids every replica lists.
    pub fn list_models(&self) -> Result<Vec<String>, PolicyError> {
        let mut common: Option<Vec<String>> = None;
        for base in self.bases() {
            let req = self.http(Method::GET, format!("{base}/models"), None);
            let body = self.run_admin(req, 0)?;
            let v: Value = serde_json::from_str(&body).map_err(|e| self.scrub(PolicyError::Protocol(format!("models reply is not JSON: {e}"))))?;
            let data = v.get("data").and_then(Value::as_array).ok_or_else(|| PolicyError::Protocol("models reply has no `data` array".into()))?;
            let ids: Vec<String> = data.iter().filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string)).collect();
            common = Some(match common {
                None => ids,
                Some(c) => c.into_iter().filter(|m| ids.contains(m)).collect(),
            });
        }
        Ok(common.unwrap_or_default())
    }

    /// Every replica's API root (just `base_url` without replicas).
    fn bases(&self) -> Vec<String> {
        match &self.shared.pool {
            Some(p) => p.replicas.iter().map(|r| r.base.clone()).collect(),
            None => vec![self.base.clone()],
        }
    }

    /// Each replica's health and request counts (empty without replicas).
    pub fn replica_stats(&self) -> Vec<ReplicaStats> {
        match &self.shared.pool {
            Some(p) => p.stats(),
            None => Vec::new(),
        }
    }

    /// `POST {root}{path} body` on every replica (an adapter must be loaded everywhere); a 400
    /// whose message contains `ok_if` counts as success.
    fn admin_everywhere(&self, path: &str, body: Value, ok_if: Option<&str>) -> Result<(), PolicyError> {
        for base in self.bases() {
            let root = base.strip_suffix("/v1").unwrap_or(&base).to_string();
            let req = self.http(Method::POST, format!("{root}{path}"), Some(body.clone()));
            match self.run_admin(req, self.config.max_retries) {
                Ok(_) => {}
                Err(PolicyError::Server { status: 400, message }) if ok_if.is_some_and(|t| message.contains(t)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// vLLM runtime LoRA loading: `POST {root}/v1/load_lora_adapter {lora_name, lora_path}`
    /// (`root` = `base_url` without a trailing `/v1`). The server needs
    /// `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`. A 400 saying the adapter is already loaded counts
    /// as success. Afterwards, `with_model(lora_name)` talks to the adapter.
    pub fn load_lora_adapter(&self, lora_name: &str, lora_path: &str) -> Result<(), PolicyError> {
        self.admin_everywhere("/v1/load_lora_adapter", json!({"lora_name": lora_name, "lora_path": lora_path}), Some("already been loaded"))
    }

    /// vLLM runtime LoRA unloading: `POST {root}/v1/unload_lora_adapter {lora_name}`.
    pub fn unload_lora_adapter(&self, lora_name: &str) -> Result<(), PolicyError> {
        self.admin_everywhere("/v1/unload_lora_adapter", json!({"lora_name": lora_name}), None)
    }

    /// SGLang runtime LoRA loading: `POST {root}/load_lora_adapter {lora_name, lora_path}` (no
    /// `/v1`). A reply saying the adapter is already loaded counts as success.
    pub fn load_lora_adapter_sglang(&self, lora_name: &str, lora_path: &str) -> Result<(), PolicyError> {
        self.admin_everywhere("/load_lora_adapter", json!({"lora_name": lora_name, "lora_path": lora_path}), Some("already"))
    }

    /// SGLang runtime LoRA unloading: `POST {root}/unload_lora_adapter {lora_name}`.
    pub fn unload_lora_adapter_sglang(&self, lora_name: &str) -> Result<(), PolicyError> {
        self.admin_everywhere("/unload_lora_adapter", json!({"lora_name": lora_name}), None)
    }

    /// The endpoint this policy talks to (`base_url` without a trailing `/`).
    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn key(&self) -> Option<String> {
        std::env::var(self.config.key_env()).ok().filter(|k| !k.trim().is_empty())
    }

    fn http(&self, method: Method, url: String, body: Option<Value>) -> HttpRequest {
        HttpRequest { method, url, body, key: self.key(), timeout: self.config.timeout }
    }

    fn retry(&self, max_retries: u32) -> Retry {
        Retry { max_retries, base_delay: self.config.retry_base_delay, max_delay: self.config.retry_max_delay }
    }

    /// Removes the API key from an error message, whatever the server echoed back.
    fn scrub(&self, e: PolicyError) -> PolicyError {
        let Some(key) = self.key() else { return e };
        let clean = |s: String| s.replace(&key, "[REDACTED]");
        match e {
            PolicyError::Transport(m) => PolicyError::Transport(clean(m)),
            PolicyError::Server { status, message } => PolicyError::Server { status, message: clean(message) },
            PolicyError::Protocol(m) => PolicyError::Protocol(clean(m)),
            PolicyError::Cancelled => PolicyError::Cancelled,
        }
    }

    /// Runs `fut` on the policy's runtime and waits for it on this (plain) thread.
    fn block<T: Send + 'static>(&self, fut: impl std::future::Future<Output = Result<T, PolicyError>> + Send + 'static) -> Result<T, PolicyError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.shared.handle().spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv().unwrap_or_else(|_| Err(PolicyError::Transport("request task ended unexpectedly".into())))
    }

    /// A request outside the concurrency limit (admin and connection-test calls).
    fn run_admin(&self, req: HttpRequest, max_retries: u32) -> Result<String, PolicyError> {
        let shared = self.shared.clone();
        let retry = self.retry(max_retries);
        self.block(async move { transport::send(&shared.client, &req, &retry, None).await }).map_err(|e| self.scrub(e))
    }

    /// A chat request inside the concurrency limit (spread over the replicas, if any).
    fn run_chat(&self, body: Value) -> Result<String, PolicyError> {
        let shared = self.shared.clone();
        let retry = self.retry(self.config.max_retries);
        if shared.pool.is_some() {
            let req = self.http(Method::POST, "/chat/completions".into(), Some(body));
            return self
                .block(async move {
                    let pool = shared.pool.as_ref().expect("checked above");
                    transport::send_pooled(&shared.client, pool, &req, &retry, Some(&shared.limit)).await
                })
                .map_err(|e| self.scrub(e));
        }
        let req = self.http(Method::POST, format!("{}/chat/completions", self.base), Some(body));
        self.block(async move { transport::send(&shared.client, &req, &retry, Some(&shared.limit)).await }).map_err(|e| self.scrub(e))
    }

    fn effective_mode(&self) -> WireMode {
        match self.config.tool_mode {
            ToolMode::Native => WireMode::Native,
            ToolMode::Text => WireMode::Text,
            ToolMode::Auto if self.text_fallback.load(Ordering::Relaxed) => WireMode::Text,
            ToolMode::Auto => WireMode::Native,
        }
    }

    fn effective_mode_name(&self) -> &'static str {
        match self.effective_mode() {
            WireMode::Native => "native",
            WireMode::Text => "text",
        }
    }

    fn act_in(&self, ctx: &Context, opts: &CallOptions, mode: WireMode) -> Result<AssistantTurn, PolicyError> {
        let params = RequestParams {
            model: &self.config.model,
            temperature: self.config.temperature.unwrap_or(opts.temperature),
            max_tokens: self.config.max_tokens,
            logprobs: self.config.logprobs,
            extra_body: self.config.extra_body.as_ref(),
        };
        let body = wire::request_body(ctx, opts, &params, mode);
        tracing::debug!(
            model = %self.config.model, mode = ?mode, kind = ?opts.kind, messages = ctx.messages.len(),
            tools = ctx.tools.len(), "chat request"
        );
        let text = self.run_chat(body)?;
        let text_tools = mode == WireMode::Text && !ctx.tools.is_empty();
        wire::parse_reply(&text, text_tools, wire::prior_call_count(ctx)).map_err(|e| self.scrub(e))
    }
}

impl Policy for OpenAiPolicy {
    fn name(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    /// Blocking; call from plain threads, never from inside an async task.
    fn act(&self, ctx: &Context, opts: &CallOptions) -> Result<AssistantTurn, PolicyError> {
        let mode = self.effective_mode();
        match self.act_in(ctx, opts, mode) {
            Err(PolicyError::Server { status: 400, message })
                if self.config.tool_mode == ToolMode::Auto
                    && mode == WireMode::Native
                    && !ctx.tools.is_empty()
                    && wire::says_tools_unsupported(&message) =>
            {
                if !self.text_fallback.swap(true, Ordering::Relaxed) {
                    tracing::warn!(model = %self.config.model, "server does not support native tool calls; using text tool calls from now on");
                }
                self.act_in(ctx, opts, WireMode::Text)
            }
            other => other,
        }
    }
}
