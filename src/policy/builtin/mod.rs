//! The built-in policy: a small learner that runs on CPU in seconds, so the whole recipe runs
//! offline and deterministically per seed.
//!
//! It reads only the rendered context (the same messages an LLM would get), builds an action
//! through its suite's action [`Grammar`] as a sequence of slot decisions, each scored by a
//! log-linear model over hashed features ([`crate::grammar`]), and writes its decisions into its
//! reply text (`kind=query; op=sum; ...`) the way an LLM writes its reasoning. Training reads a
//! target reply back through the same grammar from the context it is paired with, so GRPO
//! updates and distilled examples use one code path.
//!
//! The grammars themselves belong to the suites (`suite/<name>/grammar/`), written with the kit
//! in [`crate::grammar`]; this module is the learner.

use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};

use super::{AssistantTurn, CallKind, CallOptions, Context, Policy, PolicyError};
pub use crate::grammar::model::{LinearModel, SparseModel};
pub use crate::grammar::{can_produce, parse_trace, read_back_from, replay, replay_with, sample_turn, Built, Chooser, Decision, Grammar};

/// One training example: a context, the reply to learn (or unlearn), and its weight (a GRPO
/// advantage, or a positive distillation weight).
#[derive(Clone, Debug, Serialize, Deserialize, ts_rs::TS)]
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
