//! The built-in policy: a small learner that runs on CPU in seconds, so the whole recipe runs
//! offline and deterministically per seed.
//!
//! It reads only the rendered context (the same messages an LLM would get), builds an action
//! through the suite's action grammar ([`dbbench`]) as a sequence of slot decisions, each scored by
//! a log-linear model over hashed features ([`model`]), and writes its decisions into its reply
//! text (`kind=query; op=sum; ...`) the way an LLM writes its reasoning. Training reads a target
//! reply back through the same grammar from the context it is paired with, so GRPO updates and
//! distilled examples use one code path.

pub mod appworld;
pub mod coverage;
pub mod dbbench;
pub mod model;
pub mod swegym;

use std::sync::RwLock;

use serde::{Deserialize, Serialize};

use self::dbbench::{Built, Chooser, DbView, Decision};
use self::model::{LinearModel, SparseModel};
use crate::seed::SplitMix;
use super::{AssistantTurn, CallKind, CallOptions, Context, Policy, PolicyError, ToolCall};

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
}

/// Default L2 weight decay of the warm start (relative to the learning rate): habits learned
/// from demonstrations stay bounded, so what the context says (a hint, a visible format) can
/// still move the policy, as it moves an instruction-tuned model.
pub const WEIGHT_DECAY: f32 = 0.05;

impl Default for BuiltinPolicy {
    fn default() -> Self {
        Self::new()
    }
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
    content
        .lines()
        .next()
        .unwrap_or("")
        .split("; ")
        .filter_map(|p| p.split_once('=').map(|(a, b)| (a.to_string(), b.to_string())))
        .collect()
}

impl BuiltinPolicy {
    pub fn new() -> Self {
        BuiltinPolicy { model: RwLock::new(LinearModel::default()) }
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
            let Some((built, missed)) = read_back(&ex.context, &ex.target) else { continue };
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

    /// One turn from a suite grammar: `build` for actions, `note` for plan / reflect / critique.
    fn act_with(
        &self,
        ctx: &Context,
        opts: &CallOptions,
        build: impl Fn(&Context, &mut dyn Chooser) -> Option<Built>,
        note: impl Fn(&Context, CallKind) -> String,
    ) -> AssistantTurn {
        if opts.kind != CallKind::Act {
            return AssistantTurn { content: note(ctx, opts.kind), ..Default::default() };
        }
        let model = self.model.read().unwrap_or_else(|p| p.into_inner());
        sample_turn(&model, ctx, opts.seed, opts.temperature, build)
    }

    /// Can the grammar produce `target` from `ctx`? A distilled reply that relied on something
    /// only a sibling showed (a value format, say) cannot be read back in the base context, and
    /// training skips it (see [`TrainStats::partial`]).
    pub fn can_produce(ctx: &Context, target: &AssistantTurn) -> bool {
        matches!(read_back(ctx, target), Some((_, false)))
    }

    /// Log-probability of a reply given a context (for diagnostics and tests).
    pub fn log_prob(&self, ctx: &Context, target: &AssistantTurn) -> Option<f32> {
        let m = self.model.read().unwrap_or_else(|p| p.into_inner());
        let (built, missed) = read_back(ctx, target)?;
        if missed {
            return None;
        }
        Some(built.iter().map(|(d, i)| m.probs(&d.options, &d.prior, 1.0)[*i].max(1e-12).ln()).sum())
    }
}

/// Sample one action from a grammar under `model`; its decision trace is the reply text.
pub fn sample_turn(model: &LinearModel, ctx: &Context, seed: u64, temperature: f32, build: impl Fn(&Context, &mut dyn Chooser) -> Option<Built>) -> AssistantTurn {
    let mut sampler = Sampler { model, rng: SplitMix(seed ^ 0x5eed), temperature: temperature.max(0.0) };
    match build(ctx, &mut sampler) {
        Some(b) => {
            let trace = b.trace();
            let n = ctx.messages.iter().filter(|m| m.role == super::Role::Assistant).count();
            AssistantTurn { content: trace.clone(), tool_calls: vec![ToolCall { id: format!("call_{n}"), name: b.tool.clone(), arguments: b.arguments.clone() }], raw: trace, ..Default::default() }
        }
        None => AssistantTurn { content: "no action".into(), raw: "no action".into(), ..Default::default() },
    }
}

/// Rebuild the decisions of `target` from `ctx`: the decisions that could be read (and whether
/// some could not). A reply whose executed SQL was rewritten by a harness (identifiers quoted) is
/// read as the rewritten statement.
fn read_back(ctx: &Context, target: &AssistantTurn) -> Option<(Vec<(Decision, usize)>, bool)> {
    let trace = parse_trace(&target.content);
    if trace.is_empty() {
        return None;
    }
    // AppWorld: one grammar, one view (see `appworld`)
    if appworld::applies(ctx) || target.tool_calls.iter().any(|c| c.name == appworld::TOOL) {
        let mut r = Replay { labels: trace, missed: false };
        let mut collected = Vec::new();
        let built = appworld::build(&appworld::AwView::parse(ctx), &mut Recorder { inner: &mut r, seen: &mut collected });
        return Some(match built {
            Some(b) => (b.decisions, r.missed),
            None => (collected, true),
        });
    }
    // SWE tasks: their own grammar (swegym.rs)
    if swegym::is_swe(ctx) {
        let view = swegym::SweView::parse(ctx);
        let mut r = Replay { labels: trace, missed: false };
        let mut collected = Vec::new();
        let built = swegym::build(&view, &mut Recorder { inner: &mut r, seen: &mut collected });
        return Some(match built {
            Some(b) => (b.decisions, r.missed),
            None => (collected, true),
        });
    }
    let view = DbView::parse(ctx);
    let want_sql = target.tool_calls.first().and_then(|c| c.arguments.get("query")).and_then(|q| q.as_str()).map(|s| s.to_string());
    let attempt = |labels: Vec<(String, String)>| {
        let mut r = Replay { labels, missed: false };
        let mut collected = Vec::new();
        let built = dbbench::build(&view, &mut Recorder { inner: &mut r, seen: &mut collected });
        (built, collected, r.missed)
    };
    let (built, collected, missed) = attempt(trace.clone());
    if let (Some(b), Some(want)) = (&built, &want_sql) {
        let got = b.arguments.get("query").and_then(|q| q.as_str()).unwrap_or("");
        if got != want && want.contains('`') && trace.iter().any(|(s, l)| s == "quote" && l == "bare") {
            let fixed: Vec<(String, String)> = trace.iter().map(|(s, l)| if s == "quote" { (s.clone(), "backquote".into()) } else { (s.clone(), l.clone()) }).collect();
            let (b2, c2, m2) = attempt(fixed);
            if let Some(b2) = b2 {
                if b2.arguments.get("query").and_then(|q| q.as_str()) == Some(want.as_str()) {
                    return Some((b2.decisions, m2));
                }
            }
            let _ = c2;
        }
    }
    match built {
        Some(b) => Some((b.decisions, missed)),
        None => Some((collected, true)),
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
        "builtin".into()
    }

    fn act(&self, ctx: &Context, opts: &CallOptions) -> Result<AssistantTurn, PolicyError> {
        // AppWorld: one grammar, one view (see `appworld`)
        if appworld::applies(ctx) {
            return Ok(self.act_with(ctx, opts, |ctx, ch| appworld::build(&appworld::AwView::parse(ctx), ch), |ctx, kind| appworld::note(&appworld::AwView::parse(ctx), kind)));
        }
        // SWE tasks: their own grammar (swegym.rs)
        if swegym::is_swe(ctx) {
            let view = swegym::SweView::parse(ctx);
            if opts.kind != CallKind::Act {
                return Ok(AssistantTurn { content: swegym::extra_call(&view, opts.kind), ..Default::default() });
            }
            let model = self.model.read().unwrap_or_else(|p| p.into_inner());
            let mut sampler = Sampler { model: &model, rng: SplitMix(opts.seed ^ 0x5eed), temperature: opts.temperature.max(0.0) };
            return Ok(swegym::reply(swegym::build(&view, &mut sampler), &view));
        }
        let view = DbView::parse(ctx);
        match opts.kind {
            CallKind::Act => {}
            CallKind::Plan => {
                let mut cols: Vec<(f32, &String)> = view.columns.iter().map(|c| (dbbench::col_match(c, &view.q_tokens), c)).collect();
                cols.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
                let named: Vec<String> = cols.iter().filter(|c| c.0 > 0.0).take(3).map(|c| format!("`{}`", c.1)).collect();
                return Ok(AssistantTurn { content: format!("Use columns {} of `{}`.", named.join(", "), view.table), ..Default::default() });
            }
            CallKind::Reflect => {
                let last = view.history.last().map(|h| h.observation.lines().next().unwrap_or("").to_string()).unwrap_or_default();
                return Ok(AssistantTurn { content: format!("The last statement failed: {last}"), ..Default::default() });
            }
            CallKind::Critique => return Ok(AssistantTurn { content: "OK".into(), ..Default::default() }),
        }
        let model = self.model.read().unwrap_or_else(|p| p.into_inner());
        let mut sampler = Sampler { model: &model, rng: SplitMix(opts.seed ^ 0x5eed), temperature: opts.temperature.max(0.0) };
        let built: Option<Built> = dbbench::build(&view, &mut sampler);
        let turn = match built {
            Some(b) => {
                let trace = b.trace();
                AssistantTurn {
                    content: trace.clone(),
                    tool_calls: vec![ToolCall { id: format!("call_{}", view.history.len()), name: b.tool.clone(), arguments: b.arguments.clone() }],
                    raw: trace,
                    ..Default::default()
                }
            }
            None => AssistantTurn { content: "no action".into(), raw: "no action".into(), ..Default::default() },
        };
        Ok(turn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Origin, Role};

    /// Takes `conv=strip_commas` wherever it is offered, otherwise the first option.
    struct StripCommas;
    impl Chooser for StripCommas {
        fn choose(&mut self, d: &Decision) -> Option<usize> {
            let pick = |l: &str| d.labels.iter().position(|x| x == l);
            Some(match d.slot {
                "kind" => pick("query")?,
                "op" => pick("sum")?,
                "conv" => pick("strip_commas")?,
                _ => 0,
            })
        }
    }

    fn ctx(show_rows: bool) -> Context {
        let mut messages = vec![
            Message::system("You are a database agent."),
            Message::user("The name of this table is Stores, and the headers of this table are Store,City,Revenue.\nQuestion: What is the total Revenue?", Origin::Frame),
        ];
        if show_rows {
            // what a schema-first sibling injects: sample rows that show the format
            messages.push(Message::user(
                "Sample rows of Stores: [('Nord', 'Oslo', '1,200'), ('Sud', 'Bergen', '950')]",
                Origin::Hook { hook: "schema".into(), kind: crate::message::HookKind::OnInit },
            ));
        }
        assert!(messages.iter().all(|m| m.role != Role::Tool));
        Context { messages, tools: Vec::new() }
    }

    #[test]
    fn a_reply_the_context_cannot_produce_is_skipped_in_training() {
        let shown = ctx(true);
        let b = dbbench::build(&DbView::parse(&shown), &mut StripCommas).expect("an action");
        assert!(b.trace().contains("conv=strip_commas"), "{}", b.trace());
        let target = AssistantTurn { content: b.trace(), tool_calls: vec![ToolCall { id: "c1".into(), name: b.tool.clone(), arguments: b.arguments.clone() }], ..Default::default() };

        let p = BuiltinPolicy::new();
        // where the rows were shown, the reply reads back and is learned from
        let s = p.train(&[TrainExample { context: shown, target: target.clone(), weight: 1.0 }], 1.0);
        assert_eq!((s.examples, s.partial), (1, 0));
        assert!(s.decisions >= 3);
        let before = p.snapshot();
        // without them, no REPLACE can be pointed at: skipped, and the weights do not move
        let s = p.train(&[TrainExample { context: ctx(false), target: target.clone(), weight: 1.0 }], 1.0);
        assert_eq!((s.examples, s.partial, s.decisions), (0, 1, 0));
        assert!(!BuiltinPolicy::can_produce(&ctx(false), &target));
        assert!(BuiltinPolicy::can_produce(&ctx(true), &target));
        assert_eq!(p.snapshot().entries, before.entries);
    }

    #[test]
    fn weight_decay_shrinks_every_weight() {
        let shown = ctx(true);
        let b = dbbench::build(&DbView::parse(&shown), &mut StripCommas).unwrap();
        let target = AssistantTurn { content: b.trace(), tool_calls: vec![ToolCall { id: "c1".into(), name: b.tool.clone(), arguments: b.arguments.clone() }], ..Default::default() };
        let p = BuiltinPolicy::new();
        p.train(&[TrainExample { context: shown, target, weight: 1.0 }], 1.0);
        let w0 = p.snapshot();
        // an empty batch with decay 0.1 at lr 1: every weight times 0.9
        p.train_decayed(&[], 1.0, 0.1);
        let w1 = p.snapshot();
        assert!(!w0.entries.is_empty());
        for ((i0, a), (i1, b)) in w0.entries.iter().zip(&w1.entries) {
            assert_eq!(i0, i1);
            assert!((b - a * 0.9).abs() < 1e-6, "{a} -> {b}");
        }
    }
}
