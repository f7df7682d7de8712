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
    /// When `built` repeats an action already taken in the context (the same decision trace),
    /// the decision to choose differently at: the policy does not repeat itself where a repeat
    /// cannot show anything new. `None` (the default): repeats are allowed.
    fn repeat_decision(&self, _built: &Built) -> Option<usize> {
        None
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

/// Sample one action from `grammar` under `model`; its decision trace is the reply text. For a
/// grammar that avoids repeats ([`Grammar::repeat_decision`]), an action whose trace an earlier
/// reply in `ctx` has is drawn again with that choice ruled out, and so is a redraw that reaches a
/// decision with nothing left to choose, up to [`MAX_REPEAT_BANS`] times; after that the first
/// draw stands.
pub fn sample_turn(model: &LinearModel, grammar: &dyn Grammar, ctx: &Context, seed: u64, temperature: f32) -> AssistantTurn {
    let mut sampler = Sampler { model, rng: SplitMix(seed ^ 0x5eed), temperature: temperature.max(0.0) };
    let id = grammar.call_id(ctx);
    let Some(first) = grammar.build(ctx, &mut sampler) else {
        return AssistantTurn { content: "no action".into(), raw: "no action".into(), ..Default::default() };
    };
    let first_turn = kit::turn(&first, &id);
    let Some(at) = grammar.repeat_decision(&first) else { return first_turn };
    let earlier: std::collections::BTreeSet<&str> =
        ctx.messages.iter().filter(|m| m.role == Role::Assistant).filter_map(|m| m.content.lines().next()).collect();
    if !earlier.contains(first_turn.content.as_str()) {
        return first_turn;
    }
    let mut bans: Vec<Ban> = Vec::new();
    // what to move away from: a repeated action's choices up to the decision its grammar names,
    // or the choices of a redraw that came to a dead end
    let mut path = path_of(&first);
    path.truncate(at + 1);
    while bans.len() < MAX_REPEAT_BANS {
        let Some(ban) = Ban::on(&path, &bans) else { break };
        bans.push(ban);
        let mut banning = Banning { inner: &mut sampler, bans: &bans, made: Vec::new() };
        match grammar.build(ctx, &mut banning) {
            Some(b) if !earlier.contains(b.trace().as_str()) => return kit::turn(&b, &id),
            Some(b) => {
                path = path_of(&b);
                path.truncate(grammar.repeat_decision(&b).unwrap_or(path.len()) + 1);
            }
            None => path = banning.made,
        }
    }
    first_turn
}

/// How many choices one turn rules out before the first draw stands, repeat or not.
pub const MAX_REPEAT_BANS: usize = 16;

/// The choices made, in order: each decision's slot, the label chosen and how many options it had.
type Path = Vec<(&'static str, String, usize)>;

fn path_of(b: &Built) -> Path {
    b.decisions.iter().map(|(d, i)| (d.slot, d.labels[*i].clone(), d.options.len())).collect()
}

/// An option ruled out: `label` at decision `slot` after the choices `prefix`.
struct Ban {
    prefix: Vec<(&'static str, String)>,
    slot: &'static str,
    label: String,
}

impl Ban {
    /// The ban that moves away from `path`: its last choice, or, where every other option of
    /// that decision is ruled out already (or it had only one), the nearest earlier choice that
    /// still has another option.
    fn on(path: &Path, bans: &[Ban]) -> Option<Ban> {
        (0..path.len()).rev().find_map(|j| {
            let (slot, label, options) = &path[j];
            let prefix: Vec<(&'static str, String)> = path[..j].iter().map(|(s, l, _)| (*s, l.clone())).collect();
            let ruled_out = bans.iter().filter(|x| x.slot == *slot && x.prefix == prefix).count();
            (ruled_out + 1 < *options).then(|| Ban { prefix, slot, label: label.clone() })
        })
    }
}

/// A chooser that passes each decision on without the options `bans` rule out there, keeping
/// the choices it made.
struct Banning<'a> {
    inner: &'a mut dyn Chooser,
    bans: &'a [Ban],
    made: Path,
}

impl Banning<'_> {
    fn prefix_is(&self, prefix: &[(&'static str, String)]) -> bool {
        self.made.len() == prefix.len() && self.made.iter().zip(prefix).all(|((s, l, _), (ps, pl))| s == ps && l == pl)
    }
}

impl Chooser for Banning<'_> {
    fn choose(&mut self, d: &Decision) -> Option<usize> {
        let out: Vec<&str> = self.bans.iter().filter(|b| b.slot == d.slot && self.prefix_is(&b.prefix)).map(|b| b.label.as_str()).collect();
        let keep: Vec<usize> = (0..d.options.len()).filter(|&i| !out.contains(&d.labels[i].as_str())).collect();
        let i = if keep.len() == d.options.len() || keep.is_empty() {
            self.inner.choose(d)?
        } else {
            let fewer = Decision {
                slot: d.slot,
                labels: keep.iter().map(|&i| d.labels[i].clone()).collect(),
                options: keep.iter().map(|&i| d.options[i].clone()).collect(),
                prior: keep.iter().map(|&i| d.prior[i]).collect(),
            };
            keep[self.inner.choose(&fewer)?]
        };
        self.made.push((d.slot, d.labels[i].clone(), d.options.len()));
        Some(i)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    /// One decision: `pick` among `a` (strongly preferred), `b` and `c`; with `b_dead_ends`,
    /// `b` leads to a decision with no options (the grammar has nothing to point at).
    struct Pick {
        avoid_repeats: bool,
        b_dead_ends: bool,
    }

    impl Grammar for Pick {
        fn build(&self, _ctx: &Context, ch: &mut dyn Chooser) -> Option<Built> {
            let mut d = Decision { slot: "pick", labels: vec![], options: vec![], prior: vec![] };
            for (label, prior) in [("a", 6.0), ("b", 1.0), ("c", 0.0)] {
                d.push(label, vec![], prior);
            }
            let mut decisions = Vec::new();
            let i = kit::decide_into(&mut decisions, d, ch)?;
            if i == 1 && self.b_dead_ends {
                kit::decide_into(&mut decisions, Decision { slot: "then", labels: vec![], options: vec![], prior: vec![] }, ch)?;
            }
            Some(Built { tool: "t".into(), arguments: serde_json::json!({ "pick": i }), decisions })
        }
        fn note(&self, _ctx: &Context, _kind: CallKind) -> String {
            String::new()
        }
        fn repeat_decision(&self, built: &Built) -> Option<usize> {
            self.avoid_repeats.then(|| built.decisions.len() - 1)
        }
    }

    fn after(replies: &[&str]) -> Context {
        Context {
            messages: replies.iter().map(|r| Message::new(Role::Assistant, r.to_string(), crate::message::Origin::Policy)).collect(),
            tools: vec![],
        }
    }

    #[test]
    fn a_grammar_that_avoids_repeats_never_takes_an_action_it_took_and_others_may() {
        let model = LinearModel::default();
        let avoiding = Pick { avoid_repeats: true, b_dead_ends: false };
        let dead_end = Pick { avoid_repeats: true, b_dead_ends: true };
        for temperature in [0.0, 1.0] {
            for seed in 0..30 {
                let t = |ctx: &Context, g: &Pick| sample_turn(&model, g, ctx, seed, temperature).content;
                // nothing taken yet: greedy takes the preferred option
                if temperature == 0.0 {
                    assert_eq!(t(&after(&[]), &avoiding), "pick=a");
                }
                assert_ne!(t(&after(&["pick=a"]), &avoiding), "pick=a");
                assert_eq!(t(&after(&["pick=a", "pick=b"]), &avoiding), "pick=c");
                // every option taken: a repeat after all, never "no action"
                assert!(t(&after(&["pick=a", "pick=b", "pick=c"]), &avoiding).starts_with("pick="));
                // a redraw that comes to a dead end is drawn again without it
                assert_eq!(t(&after(&["pick=a"]), &dead_end), "pick=c");
                assert!(t(&after(&["pick=a", "pick=c"]), &dead_end).starts_with("pick="));
            }
        }
        // a grammar that allows repeats takes the preferred option again (greedy)
        assert_eq!(sample_turn(&model, &Pick { avoid_repeats: false, b_dead_ends: false }, &after(&["pick=a"]), 0, 0.0).content, "pick=a");
    }
}
