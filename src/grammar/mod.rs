//! The action grammars the built-in policy acts through: the [`Grammar`] trait a suite
//! implements for its contexts, the decision kit a grammar builds actions with ([`kit`]: slot
//! decisions, choosers, depth-first search) and the log-linear model that scores each decision
//! over hashed features ([`model`]).
//!
//! It sits below both the policies and the suites: a suite writes its grammar with this kit, the
//! built-in policy samples and trains through it, and neither knows the other. A reply carries
//! its decision trace (`kind=query; op=sum; ...`) as its first line, and training reads a target
//! reply back through the same grammar from the context it is paired with.

pub mod kit;
pub mod model;

pub use self::kit::{Built, Chooser, Decision};
use self::model::LinearModel;
use crate::message::{AssistantTurn, CallKind, Context, Role};
use crate::seed::SplitMix;

/// A suite's action grammar for the built-in policy: how an action is built from a context as
/// slot decisions, what the policy writes for the non-acting calls a harness makes (plan,
/// reflect, critique), and how a reply is read back for training.
pub trait Grammar: Send + Sync {
    /// Build one action from `ctx`, letting `ch` make each decision; `None` when the grammar has
    /// nothing to point at.
    fn build(&self, ctx: &Context, ch: &mut dyn Chooser) -> Option<Built>;
    /// The text of a plan / reflect / critique call.
    fn note(&self, ctx: &Context, kind: CallKind) -> String;
    /// The id of the tool call the policy makes in `ctx` (by default, one per assistant turn).
    fn call_id(&self, ctx: &Context) -> String {
        format!("call_{}", ctx.messages.iter().filter(|m| m.role == Role::Assistant).count())
    }
    /// Rebuild the decisions of `target` from `ctx`: the decisions that could be read, and
    /// whether some could not. `None` when the reply carries no decision trace.
    fn read_back(&self, ctx: &Context, target: &AssistantTurn) -> Option<(Vec<(Decision, usize)>, bool)> {
        replay(self, ctx, parse_trace(&target.content))
    }
}

/// Replay `labels` through `grammar` in `ctx`: the decisions made, and whether some label could
/// not be followed (a build that stops half way keeps the decisions made before it stopped).
pub fn replay<G: Grammar + ?Sized>(grammar: &G, ctx: &Context, labels: Vec<(String, String)>) -> Option<(Vec<(Decision, usize)>, bool)> {
    if labels.is_empty() {
        return None;
    }
    Some(read_back_from(replay_with(labels, |ch| grammar.build(ctx, ch))))
}

/// What a replay reads back: the built action's decisions and whether a label was missed, or,
/// when the build did not finish, the decisions made on the way (marked as missed).
pub fn read_back_from((built, collected, missed): (Option<Built>, Vec<(Decision, usize)>, bool)) -> (Vec<(Decision, usize)>, bool) {
    match built {
        Some(b) => (b.decisions, missed),
        None => (collected, true),
    }
}

/// Replay `labels` through `build`: the action built (if the build finished), the decisions made
/// on the way, and whether some label could not be followed.
pub fn replay_with(
    labels: Vec<(String, String)>,
    build: impl FnOnce(&mut dyn Chooser) -> Option<Built>,
) -> (Option<Built>, Vec<(Decision, usize)>, bool) {
    let mut r = Replay { labels, missed: false };
    let mut collected = Vec::new();
    let built = build(&mut Recorder { inner: &mut r, seen: &mut collected });
    (built, collected, r.missed)
}

struct Sampler<'a> {
    model: &'a LinearModel,
    rng: SplitMix,
    temperature: f32,
}

impl Chooser for Sampler<'_> {
    fn choose(&mut self, d: &Decision) -> Option<usize> {
        let p = self.model.probs(&d.options, &d.prior, self.temperature);
        Some(self.rng.pick(&p))
    }
}

/// Replays labels from a trace, slot by slot, in order.
struct Replay {
    labels: Vec<(String, String)>,
    missed: bool,
}

impl Chooser for Replay {
    fn choose(&mut self, d: &Decision) -> Option<usize> {
        let pos = self.labels.iter().position(|(s, _)| s == d.slot)?;
        let (_, label) = self.labels.remove(pos);
        let i = d.labels.iter().position(|l| *l == label);
        if i.is_none() {
            self.missed = true;
        }
        i
    }
}

/// Parse `slot=label; slot=label` from a reply's first line.
pub fn parse_trace(content: &str) -> Vec<(String, String)> {
    content.lines().next().unwrap_or("").split("; ").filter_map(|p| p.split_once('=').map(|(a, b)| (a.to_string(), b.to_string()))).collect()
}

/// Can `grammar` produce `target` from `ctx`? (See [`BuiltinPolicy::can_produce`].)
pub fn can_produce(grammar: &dyn Grammar, ctx: &Context, target: &AssistantTurn) -> bool {
    matches!(grammar.read_back(ctx, target), Some((_, false)))
}

/// Sample one action from `grammar` under `model`; its decision trace is the reply text.
pub fn sample_turn(model: &LinearModel, grammar: &dyn Grammar, ctx: &Context, seed: u64, temperature: f32) -> AssistantTurn {
    let mut sampler = Sampler { model, rng: SplitMix(seed ^ 0x5eed), temperature: temperature.max(0.0) };
    match grammar.build(ctx, &mut sampler) {
        Some(b) => kit::turn(&b, &grammar.call_id(ctx)),
        None => AssistantTurn { content: "no action".into(), raw: "no action".into(), ..Default::default() },
    }
}

/// Passes choices through while keeping a copy of each decision, so a build that stops half way
/// still yields the decisions made before it stopped.
struct Recorder<'a> {
    inner: &'a mut Replay,
    seen: &'a mut Vec<(Decision, usize)>,
}

impl Chooser for Recorder<'_> {
    fn choose(&mut self, d: &Decision) -> Option<usize> {
        let i = self.inner.choose(d)?;
        self.seen.push((Decision { slot: d.slot, labels: d.labels.clone(), options: d.options.clone(), prior: d.prior.clone() }, i));
        Some(i)
    }
}
