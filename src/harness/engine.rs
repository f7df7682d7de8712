//! The one harness engine: runs an episode of any suite under any harness spec.
//!
//! Per round: `pre_hint` and `plan` hooks, one policy decision, then for each tool call the
//! `before_action` hooks (block / rewrite / critique) and the environment step, then `post_step`
//! and `reflect` hooks. Every hook that fires is recorded as an [`Intervention`] on the step, and
//! every message it adds carries [`Origin::Hook`] so distillation can remove it again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::episode::{CallRecord, Effect, Episode, EpisodeStatus, HookKind, Intervention, Step, TRAJECTORY_SCHEMA};
use crate::harness::predicate::{self, EpisodeState, PredicateRef};
use crate::harness::spec::{HarnessSpec, HookSpec};
use crate::message::{AssistantTurn, CallKind, Context, Message, Origin, Role, ToolSpec};
use crate::policy::{CallOptions, Policy};
use crate::suite::{Action, EnvError, Environment, Score, Signals, Suite};
use crate::task::Task;

/// Everything needed to run one episode.
pub struct EpisodeRequest<'a> {
    pub suite: &'a dyn Suite,
    pub harness: &'a HarnessSpec,
    pub task: &'a Task,
    pub policy: &'a dyn Policy,
    /// Which try at this task (0-based).
    pub sample: u32,
    pub seed: u64,
    pub temperature: f32,
    pub cancel: Option<&'a AtomicBool>,
}

struct Run<'a> {
    req: &'a EpisodeRequest<'a>,
    env: Box<dyn Environment>,
    messages: Vec<Message>,
    state: EpisodeState,
    fires: std::collections::HashMap<String, u32>,
    prompt_tokens: u64,
    completion_tokens: u64,
    calls_made: u64,
    /// Set when an action broke the environment ([`EnvError::Action`]): the episode ends there
    /// as the agent's failure, with this reason.
    action_fault: Option<String>,
}

/// Run one episode to the end. Never panics on policy or environment failure. The status follows
/// the cause: a policy call or an environment that fails by itself ends the episode with
/// [`EpisodeStatus::InfraError`]; an action that breaks its environment ([`EnvError::Action`])
/// ends it with [`EpisodeStatus::ActionError`], a failed try scored 0 with the reason.
pub fn run_episode(req: &EpisodeRequest<'_>) -> Episode {
    let started = Instant::now();
    let mut episode = Episode {
        schema: TRAJECTORY_SCHEMA,
        task_id: req.task.id.clone(),
        suite: req.suite.name().to_string(),
        family: req.task.family.clone(),
        harness: req.harness.name.clone(),
        policy: req.policy.name(),
        sample: req.sample,
        seed: req.seed,
        status: EpisodeStatus::Completed,
        steps: Vec::new(),
        score: None,
        infra_error: None,
        duration_ms: 0.0,
        prompt_tokens: 0,
        completion_tokens: 0,
    };
    let env = match req.suite.make_env(req.task) {
        Ok(e) => e,
        Err(e) => {
            episode.status = EpisodeStatus::InfraError;
            episode.infra_error = Some(format!("environment could not start: {e}"));
            episode.duration_ms = ms(started);
            return episode;
        }
    };
    let mut run = Run {
        req,
        env,
        messages: Vec::new(),
        state: EpisodeState { max_steps: req.harness.max_steps, ..Default::default() },
        fires: Default::default(),
        prompt_tokens: 0,
        completion_tokens: 0,
        calls_made: 0,
        action_fault: None,
    };
    let result = run.drive(&mut episode);
    episode.prompt_tokens = run.prompt_tokens;
    episode.completion_tokens = run.completion_tokens;
    match result {
        Ok(_) if run.action_fault.is_some() => {
            fail_by_action(&mut episode, run.action_fault.take().unwrap_or_default());
        }
        Ok(submitted) => {
            if episode.status != EpisodeStatus::Cancelled {
                if submitted.is_none() {
                    episode.status = EpisodeStatus::TaskLimitReached;
                }
                match run.env.score(submitted.as_ref()) {
                    Ok(s) => episode.score = Some(s),
                    Err(EnvError::Action(reason)) => fail_by_action(&mut episode, format!("scoring failed: {reason}")),
                    Err(e) => {
                        episode.status = EpisodeStatus::InfraError;
                        episode.infra_error = Some(format!("scoring failed: {e}"));
                    }
                }
            }
        }
        Err(e) => {
            episode.status = EpisodeStatus::InfraError;
            episode.infra_error = Some(e.to_string());
        }
    }
    episode.duration_ms = ms(started);
    episode
}

/// End `episode` as the agent's own failure: [`EpisodeStatus::ActionError`], reward 0, the reason
/// in the score's details.
fn fail_by_action(episode: &mut Episode, reason: String) {
    episode.status = EpisodeStatus::ActionError;
    episode.score = Some(Score { reward: 0.0, success: false, details: serde_json::json!({ "reason": reason, "action_error": true }) });
}

/// Why an episode ended as an infrastructure error (its stored `infra_error` is this message):
/// the machinery failed, not the agent.
#[derive(Debug, thiserror::Error)]
pub enum InfraError {
    #[error("policy call failed: {0}")]
    Policy(#[from] crate::policy::PolicyError),
    #[error("environment step failed: {0}")]
    Environment(#[from] crate::suite::EnvError),
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

impl<'a> Run<'a> {
    fn spec(&self) -> &'a HarnessSpec {
        self.req.harness
    }

    fn tools(&self) -> Vec<ToolSpec> {
        self.spec().offered_tools(self.req.suite.tools())
    }

    /// Drive the episode; returns the submitted action, if any. `Err` is an infrastructure error.
    fn drive(&mut self, episode: &mut Episode) -> Result<Option<Action>, InfraError> {
        let spec = self.spec();
        self.messages = spec.frame(&self.env.task_prompt());
        let first = self.fill(&self.messages[1].content);
        self.messages[1].content = first;

        let mut pending: Vec<Intervention> = Vec::new();
        for hook in self.hooks_of(HookKind::OnInit) {
            if self.holds(hook, None) {
                let text = self.fill(hook.text.as_deref().unwrap_or(""));
                self.push_hook_message(Role::User, &text, hook);
                pending.push(self.intervention(hook, Effect::Inject { text }));
            }
        }

        let tools = self.tools();
        for round in 0..spec.max_steps {
            if self.req.cancel.map(|c| c.load(Ordering::Relaxed)).unwrap_or(false) {
                episode.status = EpisodeStatus::Cancelled;
                return Ok(None);
            }
            self.state.step = round;
            let mut interventions = std::mem::take(&mut pending);
            for hook in self.hooks_of(HookKind::PreHint) {
                if self.holds(hook, None) {
                    let text = self.fill(hook.text.as_deref().unwrap_or(""));
                    self.push_hook_message(Role::User, &text, hook);
                    interventions.push(self.intervention(hook, Effect::Inject { text }));
                }
            }
            for hook in self.hooks_of(HookKind::Plan) {
                if self.holds(hook, None) {
                    let iv = self.extra_call(hook, CallKind::Plan, None, &tools)?;
                    let output = match &iv.effect {
                        Effect::Call { output, .. } => output.clone(),
                        _ => String::new(),
                    };
                    self.push_hook_message(Role::User, &format!("Plan:\n{output}"), hook);
                    interventions.push(iv);
                }
            }

            let context = self.render(&tools);
            let t0 = Instant::now();
            let turn = self.call_policy(&context, CallKind::Act)?;
            let policy_ms = ms(t0);
            let mut assistant = Message::new(Role::Assistant, turn.content.clone(), Origin::Policy);
            assistant.tool_calls = turn.tool_calls.clone();
            self.messages.push(assistant);

            let mut step = Step { index: round, context, output: turn.clone(), calls: Vec::new(), interventions, policy_ms, env_ms: 0.0 };
            self.state.last_turn_without_call = turn.tool_calls.is_empty();
            let mut submitted = None;
            if turn.tool_calls.is_empty() {
                self.messages.push(Message::user(self.req.suite.no_tool_call_message(), Origin::Environment));
            }
            for call in &turn.tool_calls {
                let record = self.one_call(call, &tools, &mut step)?;
                step.env_ms += record.duration_ms;
                let done = record.signals.submitted;
                let executed = record.executed.clone();
                step.calls.push(record);
                if self.action_fault.is_some() {
                    episode.steps.push(step);
                    return Ok(None);
                }
                if done {
                    submitted = executed;
                    break;
                }
            }
            if submitted.is_none() {
                for hook in self.hooks_of(HookKind::PostStep) {
                    if self.holds(hook, None) {
                        let text = self.fill(hook.text.as_deref().unwrap_or(""));
                        self.push_hook_message(Role::User, &text, hook);
                        step.interventions.push(self.intervention(hook, Effect::Inject { text }));
                    }
                }
                for hook in self.hooks_of(HookKind::Reflect) {
                    if self.holds(hook, None) {
                        let iv = self.extra_call(hook, CallKind::Reflect, None, &tools)?;
                        if let Effect::Call { output, .. } = &iv.effect {
                            let text = format!("Reflection:\n{output}");
                            self.push_hook_message(Role::User, &text, hook);
                        }
                        step.interventions.push(iv);
                    }
                }
            }
            episode.steps.push(step);
            if submitted.is_some() {
                return Ok(submitted);
            }
        }
        Ok(None)
    }

    /// Hooks, critique, then the environment, for one tool call.
    fn one_call(&mut self, call: &Action, tools: &[ToolSpec], step: &mut Step) -> Result<CallRecord, InfraError> {
        let mut action = call.clone();
        // (message shown instead of the observation, the hook that blocked)
        let mut blocked: Option<(String, &HookSpec)> = None;
        for hook in self.hooks_of(HookKind::BeforeAction) {
            if !self.holds(hook, Some(&action)) {
                continue;
            }
            if let Some(name) = &hook.rewrite {
                if let Some(f) = self.req.suite.rewrite(name) {
                    if let Some(new) = f(&action, self.env.as_ref()) {
                        if new != action {
                            step.interventions.push(self.intervention(hook, Effect::Rewrite { from: action.clone(), to: new.clone() }));
                            action = new;
                        }
                    }
                }
            } else if let Some(msg) = &hook.block {
                let message = self.fill(msg);
                step.interventions.push(self.intervention(hook, Effect::Block { message: message.clone() }));
                blocked = Some((message, hook));
                break;
            }
        }
        if blocked.is_none() {
            for hook in self.hooks_of(HookKind::Critique) {
                if !self.holds(hook, Some(&action)) {
                    continue;
                }
                let iv = self.extra_call(hook, CallKind::Critique, Some(&action), tools)?;
                let revise_on = hook.revise_on.clone().unwrap_or_else(|| "REVISE".into());
                let verdict = match &iv.effect {
                    Effect::Call { output, .. } if output.contains(&revise_on) => Some(output.clone()),
                    _ => None,
                };
                step.interventions.push(iv);
                if let Some(out) = verdict {
                    blocked = Some((format!("Critique: {out}"), hook));
                    break;
                }
            }
        }
        let t0 = Instant::now();
        if let Some((message, hook)) = blocked {
            let mut m = Message::new(Role::Tool, message.clone(), Origin::Hook { hook: hook.id.clone(), kind: hook.kind });
            m.tool_call_id = Some(call.id.clone());
            self.messages.push(m);
            // a blocked call never reached the environment: it is not an environment error
            let signals = Signals::default();
            self.state.calls.push((action.clone(), signals.clone(), message.clone()));
            return Ok(CallRecord { proposed: call.clone(), executed: None, observation: message, signals, duration_ms: ms(t0) });
        }
        let outcome = match self.env.step(&action) {
            Ok(o) => o,
            Err(EnvError::Action(reason)) => {
                // the agent broke its own environment: what it sees is the reason, and the
                // episode ends after this call (see `run_episode`)
                let signals = Signals { error_kind: Some("action_error".into()), ..Signals::default() };
                let mut m = Message::new(Role::Tool, format!("ERROR: {reason}"), Origin::Environment);
                m.tool_call_id = Some(call.id.clone());
                self.messages.push(m);
                self.state.calls.push((action.clone(), signals.clone(), reason.clone()));
                self.action_fault = Some(reason.clone());
                return Ok(CallRecord {
                    proposed: call.clone(),
                    executed: Some(action),
                    observation: format!("ERROR: {reason}"),
                    signals,
                    duration_ms: ms(t0),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let shown = self.cut(&outcome.observation);
        let mut m = Message::new(Role::Tool, shown, Origin::Environment);
        m.tool_call_id = Some(call.id.clone());
        self.messages.push(m);
        let mut signals = outcome.signals.clone();
        signals.submitted = signals.submitted || outcome.done;
        self.state.calls.push((action.clone(), signals.clone(), outcome.observation.clone()));
        Ok(CallRecord { proposed: call.clone(), executed: Some(action), observation: outcome.observation, signals, duration_ms: ms(t0) })
    }

    fn cut(&self, obs: &str) -> String {
        let n = self.spec().render.max_observation_chars;
        if n == 0 || obs.chars().count() <= n {
            obs.to_string()
        } else {
            let mut s: String = obs.chars().take(n).collect();
            s.push_str("[TRUNCATED]");
            s
        }
    }

    fn call_policy(&mut self, ctx: &Context, kind: CallKind) -> Result<AssistantTurn, InfraError> {
        let opts = CallOptions { kind, seed: self.req.seed.wrapping_mul(1_000_003).wrapping_add(self.calls_made), temperature: self.req.temperature };
        self.calls_made += 1;
        let turn = self.req.policy.act(ctx, &opts)?;
        self.prompt_tokens += turn.prompt_tokens as u64;
        self.completion_tokens += turn.completion_tokens as u64;
        Ok(turn)
    }

    /// An extra `plan` / `reflect` / `critique` call: the rendered context plus the hook's prompt.
    fn extra_call(&mut self, hook: &HookSpec, kind: CallKind, proposed: Option<&Action>, tools: &[ToolSpec]) -> Result<Intervention, InfraError> {
        let mut prompt = self.fill(hook.prompt.as_deref().unwrap_or(""));
        if let Some(a) = proposed {
            prompt.push_str(&format!("\nProposed action: {}({})", a.name, a.arguments));
        }
        let mut ctx = self.render(tools);
        ctx.messages.push(Message::user(prompt.clone(), Origin::Hook { hook: hook.id.clone(), kind: hook.kind }));
        let turn = self.call_policy(&ctx, kind)?;
        let output = turn.content.clone();
        Ok(self
            .intervention(hook, Effect::Call { kind, prompt, output, prompt_tokens: turn.prompt_tokens, completion_tokens: turn.completion_tokens }))
    }

    fn hooks_of(&self, kind: HookKind) -> Vec<&'a HookSpec> {
        self.spec().hooks.iter().filter(|h| h.kind == kind).collect()
    }

    /// All of the hook's predicates hold and it has not used up its firings.
    fn holds(&self, hook: &HookSpec, proposed: Option<&Action>) -> bool {
        if let Some(max) = hook.max_fires {
            if self.fires.get(&hook.id).copied().unwrap_or(0) >= max {
                return false;
            }
        }
        hook.when.iter().all(|w| match predicate::parse_predicate(w) {
            Ok(p) => self.eval(&p, proposed),
            Err(_) => false,
        })
    }

    fn eval(&self, p: &PredicateRef, proposed: Option<&Action>) -> bool {
        predicate::eval(p, &self.state, proposed, self.req.suite, self.env.as_ref())
    }

    fn intervention(&mut self, hook: &HookSpec, effect: Effect) -> Intervention {
        *self.fires.entry(hook.id.clone()).or_insert(0) += 1;
        Intervention { hook: hook.id.clone(), kind: hook.kind, when: hook.when.clone(), effect }
    }

    fn push_hook_message(&mut self, role: Role, text: &str, hook: &HookSpec) {
        self.messages.push(Message::new(role, text, Origin::Hook { hook: hook.id.clone(), kind: hook.kind }));
    }

    /// Fill a template from the episode state and the environment's resources.
    fn fill(&self, template: &str) -> String {
        fill_template(template, &self.state, self.req.task, self.env.as_ref())
    }

    /// The context the policy sees now, after the harness's history rule.
    fn render(&self, tools: &[ToolSpec]) -> Context {
        Context { messages: apply_history(&self.messages, &self.spec().render.history), tools: tools.to_vec() }
    }
}

/// Replace `{resource:NAME}`, `{steps_left}`, `{max_steps}`, `{step}`, `{last_error}`,
/// `{last_observation}` and `{question}` in a hook's text.
pub fn fill_template(template: &str, state: &EpisodeState, task: &Task, env: &dyn Environment) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                let key = &after[..end];
                let value = match key {
                    "steps_left" => Some(state.steps_left().to_string()),
                    "max_steps" => Some(state.max_steps.to_string()),
                    "step" => Some((state.step + 1).to_string()),
                    "question" => Some(task.instruction.clone()),
                    "last_observation" => Some(state.last().map(|c| c.2.clone()).unwrap_or_default()),
                    "last_error" => Some(state.last().filter(|c| c.1.error_kind.is_some()).map(|c| c.2.clone()).unwrap_or_default()),
                    k if k.starts_with("resource:") => Some(env.resource(&k["resource:".len()..]).unwrap_or_default()),
                    _ => None,
                };
                match value {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push('{');
                        out.push_str(key);
                        out.push('}');
                    }
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// `full` keeps everything; `last:N` keeps the frame (everything before the first policy turn)
/// and the last N policy turns with what followed them.
pub fn apply_history(messages: &[Message], rule: &str) -> Vec<Message> {
    let n = match rule.strip_prefix("last:").and_then(|v| v.parse::<usize>().ok()) {
        Some(n) => n,
        None => return messages.to_vec(),
    };
    let first_policy = messages.iter().position(|m| m.origin == Origin::Policy).unwrap_or(messages.len());
    let policy_idx: Vec<usize> = messages.iter().enumerate().filter(|(_, m)| m.origin == Origin::Policy).map(|(i, _)| i).collect();
    if policy_idx.len() <= n {
        return messages.to_vec();
    }
    let keep_from = policy_idx[policy_idx.len() - n];
    let mut out: Vec<Message> = messages[..first_policy].to_vec();
    out.extend_from_slice(&messages[keep_from..]);
    out
}
