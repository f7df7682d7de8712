//! Policies: context in, assistant turn out. Back-ends live in their own files behind [`Policy`].

pub mod builtin;
pub mod openai;
pub mod scripted;

pub use crate::message::*;

/// Where an experiment's policy runs: the workbench's own learning policy, trained in process,
/// or a model behind an OpenAI-compatible endpoint (vLLM, SGLang, ...), trained by an external
/// trainer. Configs and stored runs spell it `builtin` / `openai`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Backend {
    #[default]
    Builtin,
    OpenAi,
}

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::Builtin, Backend::OpenAi];

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Builtin => "builtin",
            Backend::OpenAi => "openai",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A back-end name that is not one of [`Backend::ALL`].
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("unknown back-end `{0}` (allowed: builtin, openai)")]
pub struct UnknownBackend(pub String);

impl std::str::FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        Backend::ALL.into_iter().find(|b| b.as_str() == s).ok_or_else(|| UnknownBackend(s.to_string()))
    }
}

impl TryFrom<String> for Backend {
    type Error = UnknownBackend;
    fn try_from(s: String) -> Result<Backend, UnknownBackend> {
        s.parse()
    }
}

impl From<Backend> for String {
    fn from(b: Backend) -> String {
        b.as_str().to_string()
    }
}

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

#[cfg(test)]
mod backend_tests {
    use super::*;

    #[test]
    fn backends_are_spelled_as_configs_and_records_spell_them() {
        for b in Backend::ALL {
            assert_eq!(b.as_str().parse::<Backend>(), Ok(b));
            assert_eq!(serde_json::to_value(b).unwrap(), serde_json::json!(b.as_str()));
        }
        let e = serde_json::from_value::<Backend>(serde_json::json!("vllm")).unwrap_err();
        assert!(e.to_string().contains("unknown back-end `vllm` (allowed: builtin, openai)"), "{e}");
    }
}
