//! HTTP with retries: exponential backoff with jitter on 429, 5xx, connect errors and timeouts;
//! `Retry-After` (seconds) honoured up to the configured cap; other 4xx fail at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::policy::PolicyError;

/// Longest server error body quoted in a [`PolicyError::Server`] message.
const MAX_ERROR_BODY: usize = 600;

#[derive(Clone, Debug)]
pub(crate) struct Retry {
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

pub(crate) struct HttpRequest {
    pub method: Method,
    pub url: String,
    pub body: Option<Value>,
    /// The bearer token, if any. Never logged, never put in an error.
    pub key: Option<String>,
    pub timeout: Duration,
}

/// Sends `req`, retrying as configured; returns the body of a 2xx reply. A permit of
/// `limit` (if given) is held for each attempt, not across backoff sleeps.
pub(crate) async fn send(client: &reqwest::Client, req: &HttpRequest, retry: &Retry, limit: Option<&Arc<Semaphore>>) -> Result<String, PolicyError> {
    let mut attempt: u32 = 0;
    loop {
        let outcome = {
            let _permit = match limit {
                Some(sem) => Some(sem.acquire().await.map_err(|_| PolicyError::Cancelled)?),
                None => None,
            };
            attempt_once(client, req).await
        };
        let (err, retry_after) = match outcome {
            Attempt::Ok(body) => return Ok(body),
            Attempt::Fatal(e) => return Err(e),
            Attempt::Retryable(e, after) => (e, after),
        };
        if attempt >= retry.max_retries {
            tracing::debug!(url = %req.url, attempts = attempt + 1, error = %err, "giving up");
            return Err(err);
        }
        let delay = backoff(retry, attempt, retry_after);
        tracing::debug!(url = %req.url, attempt = attempt + 1, error = %err, delay_ms = delay.as_millis() as u64, "retrying");
        tokio::time::sleep(delay).await;
        attempt += 1;
    }
}

enum Attempt {
    Ok(String),
    Fatal(PolicyError),
    Retryable(PolicyError, Option<Duration>),
}

async fn attempt_once(client: &reqwest::Client, req: &HttpRequest) -> Attempt {
    let started = Instant::now();
    let mut rb = client.request(req.method.clone(), &req.url).timeout(req.timeout);
    if let Some(key) = &req.key {
        rb = rb.bearer_auth(key);
    }
    if let Some(body) = &req.body {
        rb = rb.json(body);
    }
    let resp = match rb.send().await {
        Ok(r) => r,
        Err(e) => return transport_failure(e, req),
    };
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64);
    let text = match resp.text().await {
        Ok(t) => t,
        Err(e) => return transport_failure(e, req),
    };
    tracing::debug!(
        url = %req.url, status = status.as_u16(), ms = started.elapsed().as_millis() as u64,
        bytes = text.len(), "http reply"
    );
    if status.is_success() {
        return Attempt::Ok(text);
    }
    let err = PolicyError::Server { status: status.as_u16(), message: shorten(&text) };
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        Attempt::Retryable(err, retry_after)
    } else {
        Attempt::Fatal(err)
    }
}

fn transport_failure(e: reqwest::Error, req: &HttpRequest) -> Attempt {
    let kind = if e.is_timeout() {
        format!("timed out after {:.3}s", req.timeout.as_secs_f64())
    } else if e.is_connect() {
        "cannot connect".to_string()
    } else {
        "request failed".to_string()
    };
    let mut msg = format!("{} {}: {kind}", req.method, req.url);
    let mut src: Option<&dyn std::error::Error> = Some(&e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    let err = PolicyError::Transport(msg);
    if e.is_builder() {
        Attempt::Fatal(err)
    } else {
        Attempt::Retryable(err, None)
    }
}

/// `base * 2^attempt`, capped, with jitter in [50%, 100%]; a server's `Retry-After` wins (capped).
fn backoff(retry: &Retry, attempt: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(after) = retry_after {
        return after.min(retry.max_delay);
    }
    let exp = retry.base_delay.saturating_mul(2u32.saturating_pow(attempt.min(20)));
    let capped = exp.min(retry.max_delay);
    capped.mul_f64(rand::thread_rng().gen_range(0.5..=1.0))
}

fn shorten(s: &str) -> String {
    let s = s.trim();
    if s.len() <= MAX_ERROR_BODY {
        return s.to_string();
    }
    let mut end = MAX_ERROR_BODY;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// Replicas of one endpoint that chat requests are spread over: each request goes to the healthy
/// replica with the fewest requests in flight; a replica whose attempt fails with a retryable
/// error (connect, timeout, 429, 5xx) sits out `cooldown` and the request moves on to another.
pub(crate) struct Pool {
    pub replicas: Vec<Replica>,
    pub cooldown: Duration,
}

pub(crate) struct Replica {
    /// The API root (`…/v1`), without a trailing `/`.
    pub base: String,
    pub outstanding: std::sync::atomic::AtomicUsize,
    pub requests: std::sync::atomic::AtomicU64,
    pub failures: std::sync::atomic::AtomicU64,
    pub down_until: std::sync::Mutex<Option<Instant>>,
}

/// A replica's figures, for live progress.
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct ReplicaStats {
    pub base_url: String,
    pub healthy: bool,
    pub in_flight: usize,
    pub requests: u64,
    pub failures: u64,
}

impl Pool {
    pub fn new(bases: Vec<String>, cooldown: Duration) -> Pool {
        use std::sync::atomic::{AtomicU64, AtomicUsize};
        let replicas = bases
            .into_iter()
            .map(|base| Replica {
                base,
                outstanding: AtomicUsize::new(0),
                requests: AtomicU64::new(0),
                failures: AtomicU64::new(0),
                down_until: Default::default(),
            })
            .collect();
        Pool { replicas, cooldown }
    }

    fn down_until(&self, i: usize) -> Option<Instant> {
        *self.replicas[i].down_until.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The replica to try next: healthy with the fewest in flight (ties: the least used), else
    /// the one back soonest.
    fn pick(&self) -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        let now = Instant::now();
        let healthy = (0..self.replicas.len()).filter(|&i| self.down_until(i).is_none_or(|t| t <= now));
        healthy
            .min_by_key(|&i| (self.replicas[i].outstanding.load(Relaxed), self.replicas[i].requests.load(Relaxed)))
            .unwrap_or_else(|| (0..self.replicas.len()).min_by_key(|&i| self.down_until(i)).unwrap_or(0))
    }

    pub fn stats(&self) -> Vec<ReplicaStats> {
        use std::sync::atomic::Ordering::Relaxed;
        let now = Instant::now();
        (0..self.replicas.len())
            .map(|i| {
                let r = &self.replicas[i];
                ReplicaStats {
                    base_url: r.base.clone(),
                    healthy: self.down_until(i).is_none_or(|t| t <= now),
                    in_flight: r.outstanding.load(Relaxed),
                    requests: r.requests.load(Relaxed),
                    failures: r.failures.load(Relaxed),
                }
            })
            .collect()
    }
}

/// Sends `req` (its `url` a path below the API root, e.g. `/chat/completions`) to the pool's
/// replicas: up to `retry.max_retries + 1` attempts, each on the replica [`Pool::pick`] chooses;
/// a backoff sleep only when the next replica is one that just failed.
pub(crate) async fn send_pooled(
    client: &reqwest::Client,
    pool: &Pool,
    req: &HttpRequest,
    retry: &Retry,
    limit: Option<&Arc<Semaphore>>,
) -> Result<String, PolicyError> {
    use std::sync::atomic::Ordering::Relaxed;
    let mut attempt: u32 = 0;
    let mut last_failed: Option<usize> = None;
    loop {
        let i = pool.pick();
        let r = &pool.replicas[i];
        let one = HttpRequest {
            method: req.method.clone(),
            url: format!("{}{}", r.base, req.url),
            body: req.body.clone(),
            key: req.key.clone(),
            timeout: req.timeout,
        };
        let outcome = {
            let _permit = match limit {
                Some(sem) => Some(sem.acquire().await.map_err(|_| PolicyError::Cancelled)?),
                None => None,
            };
            r.outstanding.fetch_add(1, Relaxed);
            r.requests.fetch_add(1, Relaxed);
            let o = attempt_once(client, &one).await;
            r.outstanding.fetch_sub(1, Relaxed);
            o
        };
        let (err, retry_after) = match outcome {
            Attempt::Ok(body) => {
                *r.down_until.lock().unwrap_or_else(|p| p.into_inner()) = None;
                return Ok(body);
            }
            Attempt::Fatal(e) => return Err(e),
            Attempt::Retryable(e, after) => (e, after),
        };
        r.failures.fetch_add(1, Relaxed);
        *r.down_until.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now() + pool.cooldown);
        tracing::warn!(replica = %r.base, error = %err, "replica failed; it sits out {:?}", pool.cooldown);
        if attempt >= retry.max_retries {
            return Err(err);
        }
        let next = pool.pick();
        if next == i || Some(next) == last_failed {
            tokio::time::sleep(backoff(retry, attempt, retry_after)).await;
        }
        last_failed = Some(i);
        attempt += 1;
    }
}
