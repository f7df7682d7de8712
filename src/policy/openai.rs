//! placeholder
use super::*;
#[derive(Clone, Debug, serde::Serialize, Default)]
pub enum ToolMode { Native, Text, #[default] Auto }
#[derive(Clone, Debug, serde::Serialize)]
pub struct OpenAiConfig { pub base_url: String, pub model: String, pub api_key_env: Option<String>, pub timeout: std::time::Duration, pub max_retries: u32, pub concurrency: usize, pub tool_mode: ToolMode }
impl Default for OpenAiConfig { fn default() -> Self { OpenAiConfig { base_url: String::new(), model: String::new(), api_key_env: None, timeout: std::time::Duration::from_secs(1), max_retries: 0, concurrency: 1, tool_mode: ToolMode::Auto } } }
pub struct OpenAiPolicy;
impl OpenAiPolicy { pub fn new(_: OpenAiConfig) -> Result<Self, PolicyError> { Ok(OpenAiPolicy) } }
impl Policy for OpenAiPolicy { fn name(&self) -> String { "x".into() } fn act(&self, _: &Context, _: &CallOptions) -> Result<AssistantTurn, PolicyError> { Err(PolicyError::Cancelled) } }
