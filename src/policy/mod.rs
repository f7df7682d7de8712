//! Policies: context in, assistant turn out. Back-ends live in their own files behind [`Policy`].

pub mod builtin;
pub mod openai;
pub mod scripted;

pub use crate::message::*;

/// A policy failure that is the infrastructure's fault, never the task's: it is recorded on the
/// episode as an infrastructure error and the episode is excluded from task metrics.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum PolicyError {
    #[error("transport error: {0}")]
    Transport(String),
    #[error("server error {status}: {message}")]
    Server { status: u16, message: String },
    #[error("malformed reply: {0}")]
    Protocol(String),
    #[error("cancelled")]
    Cancelled,
}

/// Sampling parameters for one call; `seed` makes a call reproducible where the back-end allows.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOptions {
    pub kind: CallKind,
    pub seed: u64,
    pub temperature: f32,
}

/// A policy. Implementations must be callable from many worker threads at once.
///
/// Architecture invariant: a policy sees only the [`Context`] the harness rendered; it never sees
/// the task payload, the environment or the scorer.
pub trait Policy: Send + Sync {
    /// A stable name for the store, e.g. `openai:qwen2.5-7b` or `builtin@v12`.
    fn name(&self) -> String;
    fn act(&self, ctx: &Context, opts: &CallOptions) -> Result<AssistantTurn, PolicyError>;
}
