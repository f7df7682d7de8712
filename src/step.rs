//! The step vocabulary: what a policy asks an environment to do ([`Action`]), what comes back
//! ([`StepOutcome`], its [`Signals`]), how one call of a step went ([`CallRecord`]) and how a
//! finished episode scores ([`Score`]). Suites, harnesses, policies and records all speak it;
//! it depends on nothing but the message types.

use serde::{Deserialize, Serialize};

use crate::message::ToolCall;

/// What the policy asked the environment to do: one tool call.
pub type Action = ToolCall;

/// Facts about an observation that harness predicates read (`unknown_column_error`,
/// `empty_result`, ...). The suite derives them from its own observation, so the harness engine
/// stays suite-agnostic.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Signals {
    /// A short error class such as `unknown_column`, `unknown_table`, `syntax`, `timeout`,
    /// `bad_arguments`, `unknown_tool`; `None` when the step did not fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// The action ran a query / code / command against the environment.
    #[serde(default)]
    pub executed: bool,
    /// The action returned an empty result set.
    #[serde(default)]
    pub empty_result: bool,
    /// The action was the final answer / submission.
    #[serde(default)]
    pub submitted: bool,
}

/// The result of one environment step.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StepOutcome {
    /// The raw observation text, exactly as the benchmark returns it.
    pub observation: String,
    /// The episode ended (a final answer, a finish call).
    pub done: bool,
    pub signals: Signals,
}

/// Reward and details of a finished episode, as the benchmark scores it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Score {
    pub reward: f64,
    pub success: bool,
    /// Suite-specific details (answer, ground truth, type, hash, failing tests, ...).
    #[ts(type = "unknown")]
    pub details: serde_json::Value,
}

/// One tool call of a step as it went: what the policy proposed, what ran, what came back.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct CallRecord {
    /// The action as the policy proposed it.
    pub proposed: Action,
    /// The action actually executed (after a rewrite), `None` if blocked.
    pub executed: Option<Action>,
    /// The raw observation (environment output, or the block message).
    pub observation: String,
    pub signals: Signals,
    pub duration_ms: f64,
}
