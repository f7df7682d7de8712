//! The built-in policy: a small learner that runs on CPU in seconds, so the whole recipe runs
//! offline and deterministically per seed.
//!
//! It reads only the rendered context (the same messages an LLM would get), builds an action
//! through its suite's action [`Grammar`] as a sequence of slot decisions ([`kit`]), each scored
//! by a log-linear model over hashed features ([`model`]), and writes its decisions into its reply
//! text (`kind=query; op=sum; ...`) the way an LLM writes its reasoning. Training reads a target
//! reply back through the same grammar from the context it is paired with, so GRPO updates and
//! distilled examples use one code path.
//!
//! The grammars themselves belong to the suites (`suite/<name>/grammar.rs`): a suite knows what
//! its contexts look like and which actions exist; this module knows only the trait.

pub mod kit;
pub mod model;

use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};

pub use self::kit::{Built, Chooser, Decision};
use self::model::{LinearModel, SparseModel};
use super::{AssistantTurn, CallKind, CallOptions, Context, Policy, PolicyError, Role};
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

/// One training example: a context, the reply to learn (or unlearn), and its weight (a GRPO
/// advantage, or a positive distillation weight).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainExample {
    pub context: Context,
    pub target: AssistantTurn,
    pub weight: f32,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TrainStats {
    pub examples: usize,
    pub decisions: usize,
    /// Examples whose reply could not be read back from their context (e.g. a conversion of a
    /// format only a sibling's injected text showed). They are skipped: a reply the policy could
    /// not have produced from that context teaches nothing it can do there.
    pub partial: usize,
}

pub struct BuiltinPolicy {
    model: RwLock<LinearModel>,
    grammar: Arc<dyn Grammar>,
}

/// Default L2 weight decay of the warm start (relative to the learning rate): habits learned
/// from demonstrations stay bounded, so what the context says (a hint, a visible format) can
/// still move the policy, as it moves an instruction-tuned model.
pub const WEIGHT_DECAY: f32 = 0.05;

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

impl BuiltinPolicy {
    /// A fresh policy (all weights zero) acting through `grammar`.
    pub fn new(grammar: Arc<dyn Grammar>) -> Self {
        BuiltinPolicy { model: RwLock::new(LinearModel::default()), grammar }
    }

    pub fn version(&self) -> u64 {
        self.model.read().map(|m| m.version).unwrap_or(0)
    }

    pub fn snapshot(&self) -> SparseModel {
        self.model.read().unwrap_or_else(|p| p.into_inner()).sparse()
    }

    pub fn restore(&self, s: &SparseModel) {
        *self.model.write().unwrap_or_else(|p| p.into_inner()) = LinearModel::from_sparse(s);
    }

    /// Apply one step of the mean weighted gradient of a batch, with learning rate `lr`.
    pub fn train(&self, examples: &[TrainExample], lr: f32) -> TrainStats {
        self.train_decayed(examples, lr, 0.0)
    }

    /// [`train`](Self::train) with L2 weight decay: every weight shrinks by `lr * decay`.
    pub fn train_decayed(&self, examples: &[TrainExample], lr: f32, decay: f32) -> TrainStats {
        let raw_lr = lr;
        let mut stats = TrainStats::default();
        let n = examples.iter().filter(|e| e.weight != 0.0).count().max(1) as f32;
        let lr = lr / n;
        // gradients are computed against the weights at the start of the batch
        let frozen = self.model.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut updated = frozen.clone();
        for ex in examples {
            if ex.weight == 0.0 {
                continue;
            }
            let Some((built, missed)) = self.grammar.read_back(&ex.context, &ex.target) else { continue };
            if missed {
                stats.partial += 1;
                continue;
            }
            stats.examples += 1;
            for (d, chosen) in &built {
                stats.decisions += 1;
                let p = frozen.probs(&d.options, &d.prior, 1.0);
                let scale = lr * ex.weight;
                for fe in &d.options[*chosen] {
                    updated.weights[fe.slot as usize] += scale * fe.value;
                }
                for (o, po) in d.options.iter().zip(&p) {
                    if *po < 1e-6 {
                        continue;
                    }
                    for fe in o {
                        updated.weights[fe.slot as usize] -= scale * po * fe.value;
                    }
                }
            }
        }
        if decay > 0.0 {
            let keep = (1.0 - raw_lr * decay).clamp(0.0, 1.0);
            for w in updated.weights.iter_mut() {
                *w *= keep;
            }
        }
        updated.version = frozen.version + 1;
        *self.model.write().unwrap_or_else(|p| p.into_inner()) = updated;
        stats
    }

    /// Can the grammar produce `target` from `ctx`? A distilled reply that relied on something
    /// only a sibling showed (a value format, say) cannot be read back in the base context, and
    /// training skips it (see [`TrainStats::partial`]).
    pub fn can_produce(&self, ctx: &Context, target: &AssistantTurn) -> bool {
        can_produce(self.grammar.as_ref(), ctx, target)
    }

    /// Log-probability of a reply given a context (for diagnostics and tests).
    pub fn log_prob(&self, ctx: &Context, target: &AssistantTurn) -> Option<f32> {
        let m = self.model.read().unwrap_or_else(|p| p.into_inner());
        let (built, missed) = self.grammar.read_back(ctx, target)?;
        if missed {
            return None;
        }
        Some(built.iter().map(|(d, i)| m.probs(&d.options, &d.prior, 1.0)[*i].max(1e-12).ln()).sum())
    }
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

impl Policy for BuiltinPolicy {
    fn name(&self) -> String {
        super::Backend::Builtin.as_str().into()
    }

    fn act(&self, ctx: &Context, opts: &CallOptions) -> Result<AssistantTurn, PolicyError> {
        if opts.kind != CallKind::Act {
            return Ok(AssistantTurn { content: self.grammar.note(ctx, opts.kind), ..Default::default() });
        }
        let model = self.model.read().unwrap_or_else(|p| p.into_inner());
        Ok(sample_turn(&model, self.grammar.as_ref(), ctx, opts.seed, opts.temperature))
    }
}
