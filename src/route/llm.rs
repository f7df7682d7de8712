//! The LLM voter: an OpenAI-compatible model reads the behaviour profiles' evidence lines and
//! the failure summary, and answers a JSON ranking of the siblings.
//!
//! It is one more [`Voter`]: its ranking enters the same Borda count as the statistical voters'.
//! A voter that cannot answer (the endpoint fails, the reply is not a ranking) abstains for that
//! decision, and the decision records why; routing never stops for it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::profile::BehaviorProfile;
use super::voter::{Abstention, RouteQuery, Voter};
use crate::message::{CallKind, Context, Message, Origin, Role};
use crate::policy::openai::{OpenAiConfig, OpenAiPolicy};
use crate::policy::{CallOptions, Policy};
use crate::seed::SplitMix;

/// An LLM voter that cannot be set up (its endpoint's client, its key).
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
#[error("{voter}: {message}")]
pub struct LlmVoterError {
    pub voter: String,
    pub message: String,
}

/// One LLM voter of an experiment file:
///
/// ```toml
/// [[router.llm]]
/// name = "qwen"                          # the voter is called `llm:qwen`
/// base_url = "http://127.0.0.1:8000/v1"
/// model = "Qwen/Qwen2.5-7B-Instruct"
/// api_key_env = "OPENAI_API_KEY"         # optional; the key itself is never written anywhere
/// temperature = 0.0
/// ```
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct LlmVoterConfig {
    /// Short name; the voter is `llm:<name>` (default: the model name).
    #[serde(default)]
    pub name: Option<String>,
    pub base_url: String,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub temperature: f32,
    /// Per-request timeout in seconds (default 60).
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
    /// Retries after the first attempt (default 2).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
}

fn default_timeout() -> u64 {
    60
}
fn default_retries() -> u32 {
    2
}

impl LlmVoterConfig {
    pub fn voter_name(&self) -> String {
        format!("llm:{}", self.name.clone().unwrap_or_else(|| self.model.clone()))
    }
}

pub struct LlmVoter {
    name: String,
    client: OpenAiPolicy,
    temperature: f32,
    /// Consecutive failed requests, and decisions still to skip: an endpoint that keeps failing
    /// is asked again only every [`PAUSE_DECISIONS`] decisions, so a dead server costs neither
    /// hours of timeouts nor a warning per task.
    health: std::sync::Mutex<(u32, u32)>,
}

/// Failures in a row after which the voter pauses.
pub const FAILURES_BEFORE_PAUSE: u32 = 3;
/// Decisions the voter sits out once paused, before it asks the endpoint again.
pub const PAUSE_DECISIONS: u32 = 50;

const SYSTEM: &str = "You route an agent's failed task to repair harnesses. Each candidate is the \
agent's base harness plus one repair specialty. Using the measured evidence of where each \
candidate fixed or broke the agent before, rank every candidate from most to least likely to \
make the agent succeed on this task. Answer with JSON only, in this shape: \
{\"ranking\": [\"name\", \"name\", ...]}";

impl LlmVoter {
    pub fn new(cfg: &LlmVoterConfig) -> Result<LlmVoter, LlmVoterError> {
        let mut oc = OpenAiConfig::new(cfg.base_url.clone(), cfg.model.clone());
        oc.api_key_env = cfg.api_key_env.clone();
        oc.timeout = std::time::Duration::from_secs(cfg.timeout_s.max(1));
        oc.max_retries = cfg.max_retries;
        let client = OpenAiPolicy::new(oc).map_err(|e| LlmVoterError { voter: cfg.voter_name(), message: e.to_string() })?;
        Ok(LlmVoter { name: cfg.voter_name(), client, temperature: cfg.temperature, health: std::sync::Mutex::new((0, 0)) })
    }

    /// The request's messages: what the model is told about the failure and the candidates.
    pub fn prompt(q: &RouteQuery, profiles: &[BehaviorProfile]) -> Context {
        let mut user = format!(
            "Failed task {} (family `{}`), failure signature `{}`.\nWhat the agent did under the base harness:\n{}\n\nCandidates:\n",
            q.task_id, q.family, q.signature, q.summary
        );
        for p in profiles {
            let specialty = if p.specialty.is_empty() { String::new() } else { format!(" — {}", p.specialty) };
            user.push_str(&format!("- {}{specialty}\n", p.sibling));
            for line in &p.evidence {
                user.push_str(&format!("    {line}\n"));
            }
        }
        Context {
            messages: vec![Message::new(Role::System, SYSTEM, Origin::Frame), Message::new(Role::User, user, Origin::Frame)],
            tools: Vec::new(),
        }
    }
}

/// Read a ranking from a reply: a JSON object with `ranking` (or a bare JSON array), possibly in
/// a code fence or after some prose. Unknown names are dropped, repeats ignored; siblings the
/// reply leaves out follow in the given fallback order. `Err` if no ranking can be read.
pub fn parse_ranking(reply: &str, known: &[String]) -> Result<Vec<String>, Abstention> {
    let candidates = [reply.find('{').zip(reply.rfind('}')), reply.find('[').zip(reply.rfind(']'))];
    let mut list: Option<Vec<Value>> = None;
    for (s, e) in candidates.into_iter().flatten() {
        if e <= s {
            continue;
        }
        match serde_json::from_str::<Value>(&reply[s..=e]) {
            Ok(Value::Object(o)) => {
                if let Some(Value::Array(a)) = o.get("ranking") {
                    list = Some(a.clone());
                    break;
                }
            }
            Ok(Value::Array(a)) => {
                list = Some(a);
                break;
            }
            _ => {}
        }
    }
    let list = list.ok_or_else(|| Abstention::NoRanking(format!("no JSON ranking in the reply: {}", reply.chars().take(160).collect::<String>())))?;
    let mut out: Vec<String> = Vec::new();
    for v in list {
        if let Some(name) = v.as_str().map(str::trim) {
            if let Some(k) = known.iter().find(|k| k.eq_ignore_ascii_case(name)) {
                if !out.contains(k) {
                    out.push(k.clone());
                }
            }
        }
    }
    if out.is_empty() {
        return Err(Abstention::NoRanking("the reply ranks none of the candidates".into()));
    }
    for k in known {
        if !out.contains(k) {
            out.push(k.clone());
        }
    }
    Ok(out)
}

impl Voter for LlmVoter {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn rank(&self, q: &RouteQuery, profiles: &[BehaviorProfile], rng: &mut SplitMix) -> Result<Vec<String>, Abstention> {
        // the seed is drawn whether or not the endpoint is asked, so the other voters' draws
        // do not depend on the endpoint's health
        let seed = rng.next_u64();
        {
            let mut h = self.health.lock().unwrap_or_else(|p| p.into_inner());
            if h.1 > 0 {
                h.1 -= 1;
                return Err(Abstention::Paused(h.0));
            }
        }
        let ctx = Self::prompt(q, profiles);
        let opts = CallOptions { kind: CallKind::Act, seed, temperature: self.temperature };
        let turn = match self.client.act(&ctx, &opts) {
            Ok(t) => {
                let mut h = self.health.lock().unwrap_or_else(|p| p.into_inner());
                if h.0 >= FAILURES_BEFORE_PAUSE {
                    tracing::info!(voter = %self.name, "the endpoint answers again");
                }
                *h = (0, 0);
                t
            }
            Err(e) => {
                let mut h = self.health.lock().unwrap_or_else(|p| p.into_inner());
                h.0 += 1;
                if h.0 >= FAILURES_BEFORE_PAUSE {
                    h.1 = PAUSE_DECISIONS;
                    tracing::warn!(voter = %self.name, "{} requests in a row failed (last: {e}); sitting out the next {PAUSE_DECISIONS} decisions", h.0);
                }
                return Err(Abstention::Endpoint(e.to_string()));
            }
        };
        // candidates the reply leaves out follow by their overall fix rate
        let mut known: Vec<&BehaviorProfile> = profiles.iter().collect();
        known.sort_by(|a, b| {
            let r = |p: &BehaviorProfile| (p.total.fix as f64 + 1.0) / (p.total.base_failures() as f64 + 2.0);
            r(b).partial_cmp(&r(a)).unwrap_or(std::cmp::Ordering::Equal).then(a.sibling.cmp(&b.sibling))
        });
        let names: Vec<String> = known.iter().map(|p| p.sibling.clone()).collect();
        parse_ranking(&turn.content, &names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_rankings_in_their_usual_wrappings() {
        let known = names(&["schema-first", "inspect-first", "loop-monitor"]);
        assert_eq!(
            parse_ranking(r#"{"ranking": ["inspect-first", "schema-first"]}"#, &known).unwrap(),
            names(&["inspect-first", "schema-first", "loop-monitor"])
        );
        assert_eq!(
            parse_ranking("Sure:\n```json\n{\"ranking\": [\"Loop-Monitor\", \"nope\", \"loop-monitor\"]}\n```", &known).unwrap(),
            names(&["loop-monitor", "schema-first", "inspect-first"])
        );
        assert_eq!(parse_ranking(r#"["schema-first"]"#, &known).unwrap()[0], "schema-first");
        assert!(parse_ranking("I think schema-first is best.", &known).is_err());
        assert!(parse_ranking(r#"{"ranking": ["other"]}"#, &known).is_err());
    }
}
