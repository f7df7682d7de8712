//! Episodes and trajectories: the versioned record of one task attempt, step by step.
//!
//! Schema version [`TRAJECTORY_SCHEMA`]; the store keeps it with every episode so readers can
//! tell old records from new ones.

use serde::{Deserialize, Serialize};

use crate::message::{AssistantTurn, CallKind, Context};
pub use crate::step::CallRecord;
use crate::step::{Action, Score};

pub const TRAJECTORY_SCHEMA: u32 = 1;

pub use crate::message::HookKind;

/// What a hook did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Context injected into the conversation (schema card, API list, repo map, a hint, feedback).
    Inject { text: String },
    /// The proposed action was not executed; the message was shown instead.
    Block { message: String },
    /// The proposed action was replaced before execution.
    Rewrite { from: Action, to: Action },
    /// An extra policy call; its output was added to the context.
    Call {
        #[serde(rename = "call_kind")]
        kind: CallKind,
        prompt: String,
        output: String,
        prompt_tokens: u32,
        completion_tokens: u32,
    },
}

/// One harness intervention, with the hook that fired and the predicates that held.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Intervention {
    pub hook: String,
    pub kind: HookKind,
    pub when: Vec<String>,
    #[serde(flatten)]
    pub effect: Effect,
}

/// One policy decision and everything around it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Step {
    pub index: usize,
    /// The rendered context the policy saw for this decision.
    pub context: Context,
    /// The policy's turn (text, tool calls, raw reply, token counts).
    pub output: AssistantTurn,
    pub calls: Vec<CallRecord>,
    /// Every intervention made before, during or after this step.
    pub interventions: Vec<Intervention>,
    pub policy_ms: f64,
    pub env_ms: f64,
}

/// How an episode ended.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum EpisodeStatus {
    /// The agent submitted an answer (or finished).
    Completed,
    /// The round limit was reached without a submission.
    TaskLimitReached,
    /// The machinery failed; not a task failure, excluded from task metrics.
    InfraError,
    Cancelled,
    /// The agent's own action broke its environment (see [`crate::suite::EnvError::Action`]):
    /// a failed try, scored 0 with the reason in its score's `details.reason`, counted in
    /// metrics and training groups like any other.
    ActionError,
}

impl EpisodeStatus {
    pub const ALL: [EpisodeStatus; 5] =
        [EpisodeStatus::Completed, EpisodeStatus::TaskLimitReached, EpisodeStatus::InfraError, EpisodeStatus::Cancelled, EpisodeStatus::ActionError];

    /// Its name in the store and in JSON (the serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            EpisodeStatus::Completed => "completed",
            EpisodeStatus::TaskLimitReached => "task_limit_reached",
            EpisodeStatus::InfraError => "infra_error",
            EpisodeStatus::Cancelled => "cancelled",
            EpisodeStatus::ActionError => "action_error",
        }
    }

    /// The status named `s`; `None` for anything else (a reader reports it as corrupt).
    pub fn parse(s: &str) -> Option<EpisodeStatus> {
        EpisodeStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// One attempt at one task under one harness with one policy (`StoredEpisode` in the UI's
/// types: its steps as stored).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[ts(rename = "StoredEpisode")]
pub struct Episode {
    pub schema: u32,
    pub task_id: String,
    pub suite: String,
    pub family: String,
    pub harness: String,
    pub policy: String,
    /// Which of the n tries at this task this is.
    pub sample: u32,
    pub seed: u64,
    pub status: EpisodeStatus,
    /// Stored compactly: each step's context is written as the messages it adds to the previous
    /// step's context (see [`compact_steps`]); readers always see full contexts.
    #[serde(with = "compact_steps")]
    #[ts(as = "Vec<compact_steps::StoredStep>")]
    pub steps: Vec<Step>,
    pub score: Option<Score>,
    /// The infrastructure error, if any; kept apart from task failures.
    pub infra_error: Option<String>,
    pub duration_ms: f64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Whether a try that ended with `status` (and `infra_error`, if any) counts as a try: in task
/// metrics, success rates and training groups. Every try counts but an infrastructure error and a
/// cancelled one: what the agent's action caused, however it ended, is the agent's result (see
/// [`crate::suite::EnvError`]). The one statement of that rule; everything that counts tries asks
/// here.
pub fn counts(status: EpisodeStatus, infra_error: Option<&str>) -> bool {
    infra_error.is_none() && !matches!(status, EpisodeStatus::InfraError | EpisodeStatus::Cancelled)
}

impl Episode {
    /// This try counts in metrics and training groups ([`counts`]).
    pub fn counts(&self) -> bool {
        counts(self.status, self.infra_error.as_deref())
    }

    pub fn reward(&self) -> f64 {
        self.score.as_ref().map(|s| s.reward).unwrap_or(0.0)
    }
    pub fn success(&self) -> bool {
        self.score.as_ref().map(|s| s.success).unwrap_or(false)
    }
    pub fn interventions(&self) -> impl Iterator<Item = &Intervention> {
        self.steps.iter().flat_map(|s| s.interventions.iter())
    }
}

/// Serialises a trajectory's steps with each context written as a delta on the previous one:
/// `{"keep": n, "add": [...]}` means the first `n` messages of the previous step's context
/// followed by `add`. A step whose context is not an extension of the previous one is written in
/// full (`keep` = 0). Contexts grow by a few messages per step, so this keeps a stored
/// trajectory linear in its length instead of quadratic.
pub mod compact_steps {
    use super::*;
    use crate::message::{Message, ToolSpec};
    use serde::{Deserializer, Serializer};

    /// A step as stored: its context is the first `keep` messages of the previous step's
    /// context, then `add`.
    #[derive(Serialize, Deserialize, ts_rs::TS)]
    pub struct StoredStep {
        pub index: usize,
        pub keep: usize,
        pub add: Vec<Message>,
        /// Tools are written on the first step only, and where they change.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tools: Option<Vec<ToolSpec>>,
        pub output: AssistantTurn,
        pub calls: Vec<CallRecord>,
        pub interventions: Vec<Intervention>,
        pub policy_ms: f64,
        pub env_ms: f64,
    }

    pub fn serialize<S: Serializer>(steps: &[Step], s: S) -> Result<S::Ok, S::Error> {
        let mut out = Vec::with_capacity(steps.len());
        let mut prev: Option<&Context> = None;
        for st in steps {
            let (keep, add) = match prev {
                Some(p) if st.context.messages.len() >= p.messages.len() && st.context.messages[..p.messages.len()] == p.messages[..] => {
                    (p.messages.len(), st.context.messages[p.messages.len()..].to_vec())
                }
                _ => (0, st.context.messages.clone()),
            };
            let tools = match prev {
                Some(p) if p.tools == st.context.tools => None,
                _ => Some(st.context.tools.clone()),
            };
            out.push(StoredStep {
                index: st.index,
                keep,
                add,
                tools,
                output: st.output.clone(),
                calls: st.calls.clone(),
                interventions: st.interventions.clone(),
                policy_ms: st.policy_ms,
                env_ms: st.env_ms,
            });
            prev = Some(&st.context);
        }
        out.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Step>, D::Error> {
        let stored = Vec::<StoredStep>::deserialize(d)?;
        let mut steps: Vec<Step> = Vec::with_capacity(stored.len());
        for st in stored {
            let (mut messages, prev_tools) = match steps.last() {
                Some(p) => {
                    if st.keep > p.context.messages.len() {
                        return Err(serde::de::Error::custom(format!(
                            "step {}: keeps {} messages but the previous step has {}",
                            st.index,
                            st.keep,
                            p.context.messages.len()
                        )));
                    }
                    (p.context.messages[..st.keep].to_vec(), p.context.tools.clone())
                }
                None => (Vec::new(), Vec::new()),
            };
            messages.extend(st.add);
            steps.push(Step {
                index: st.index,
                context: Context { messages, tools: st.tools.unwrap_or(prev_tools) },
                output: st.output,
                calls: st.calls,
                interventions: st.interventions,
                policy_ms: st.policy_ms,
                env_ms: st.env_ms,
            });
        }
        Ok(steps)
    }
}

#[cfg(test)]
mod tests {
    use super::EpisodeStatus;

    #[test]
    fn a_status_has_one_name_everywhere() {
        for s in EpisodeStatus::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str(), "the store's name is the serde name");
            assert_eq!(EpisodeStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(EpisodeStatus::parse("done"), None);
    }
}
