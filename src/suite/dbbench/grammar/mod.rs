//! The built-in policy's action grammar for DBBench.
//!
//! Reading only the rendered context, it finds the table name and headers, the question's value
//! spans (quoted text, numbers, capitalised names), format evidence (text numbers with thousands
//! separators, units, currency or percent signs) wherever the context shows table values, earlier
//! results and errors, and any feedback text. An action is built by a sequence of slot decisions
//! — kind, operation, columns, filter, numeric conversion, quoting, answer — each a softmax over
//! options scored by the log-linear model. Features describe options generically (how well a
//! column name matches the question, whether a name needs quoting, what the context shows), never
//! the identity of a particular column or task, so what is learned on one family can transfer.
//!
//! By role: `view.rs` reads the context, `lexicon.rs` holds the question's cue words, `sql.rs`
//! writes SQL, `builder.rs` makes the slot decisions and `search.rs` searches the grammar; this
//! file is the `Grammar` implementation and the tests.

mod builder;
mod lexicon;
mod search;
mod sql;
mod view;

pub use builder::*;
pub use lexicon::*;
pub use search::*;
pub use sql::*;
pub use view::*;

use crate::grammar::kit::{decide_into, f, id_by_tool_calls, innate, push_call, turn, Built, Chooser, Decision, Dfs, Solution};
use crate::grammar::model::Feature;
use crate::grammar::{parse_trace, read_back_from, replay_with, Grammar};
use crate::message::ToolCall;
use crate::message::{AssistantTurn, CallKind, Context, Role};
use crate::suite::{SearchFrame, Suite};
use crate::task::Task;

/// DBBench's grammar as the built-in policy uses it.
pub struct DbBenchGrammar;

impl Grammar for DbBenchGrammar {
    fn build(&self, ctx: &Context, ch: &mut dyn Chooser) -> Option<Built> {
        build(&DbView::parse(ctx), ch)
    }

    fn note(&self, ctx: &Context, kind: CallKind) -> String {
        let view = DbView::parse(ctx);
        match kind {
            CallKind::Plan => {
                let mut cols: Vec<(f32, &String)> = view.columns.iter().map(|c| (col_match(c, &view.q_tokens), c)).collect();
                cols.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
                let named: Vec<String> = cols.iter().filter(|c| c.0 > 0.0).take(3).map(|c| format!("`{}`", c.1)).collect();
                format!("Use columns {} of `{}`.", named.join(", "), view.table)
            }
            CallKind::Reflect => {
                let last = view.history.last().map(|h| h.observation.lines().next().unwrap_or("").to_string()).unwrap_or_default();
                format!("The last statement failed: {last}")
            }
            CallKind::Critique | CallKind::Act => "OK".into(),
        }
    }

    /// One id per earlier tool call (the view's history).
    fn call_id(&self, ctx: &Context) -> String {
        id_by_tool_calls(ctx)
    }

    /// A reply whose executed SQL was rewritten by a harness (identifiers quoted) is read as the
    /// rewritten statement.
    fn read_back(&self, ctx: &Context, target: &AssistantTurn) -> Option<(Vec<(Decision, usize)>, bool)> {
        let trace = parse_trace(&target.content);
        if trace.is_empty() {
            return None;
        }
        let view = DbView::parse(ctx);
        let want_sql = target.tool_calls.first().and_then(|c| c.arguments.get("query")).and_then(|q| q.as_str()).map(|s| s.to_string());
        let attempt = |labels: Vec<(String, String)>| replay_with(labels, |ch| build(&view, ch));
        let first = attempt(trace.clone());
        if let (Some(b), Some(want)) = (&first.0, &want_sql) {
            let got = b.arguments.get("query").and_then(|q| q.as_str()).unwrap_or("");
            if got != want && want.contains('`') && trace.iter().any(|(s, l)| s == "quote" && l == "bare") {
                let fixed: Vec<(String, String)> =
                    trace.iter().map(|(s, l)| if s == "quote" { (s.clone(), "backquote".into()) } else { (s.clone(), l.clone()) }).collect();
                let (b2, _, m2) = attempt(fixed);
                if let Some(b2) = b2 {
                    if b2.arguments.get("query").and_then(|q| q.as_str()) == Some(want.as_str()) {
                        return Some((b2.decisions, m2));
                    }
                }
            }
        }
        Some(read_back_from(first))
    }
}

/// The grammar, as the suite hands it to the built-in policy.
pub const GRAMMAR: DbBenchGrammar = DbBenchGrammar;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Origin, ToolCall};

    #[test]
    fn reads_rows_with_decimals_and_quotes() {
        let rows = parse_rows("[('74', Decimal('16.00')), ('It''s', None), (\"a, b\", Decimal('-0.5'))]").unwrap();
        assert_eq!(rows[0], vec!["74".to_string(), "16.00".to_string()]);
        assert_eq!(rows[2], vec!["a, b".to_string(), "-0.5".to_string()]);
        assert_eq!(parse_rows("[(Decimal('3'),)]").unwrap(), vec![vec!["3".to_string()]]);
    }

    /// Chooses what the innate priors alone prefer (an untrained model scores every option 0).
    struct ByPrior;
    impl Chooser for ByPrior {
        fn choose(&mut self, d: &Decision) -> Option<usize> {
            (0..d.prior.len()).max_by(|&a, &b| d.prior[a].partial_cmp(&d.prior[b]).unwrap().then(b.cmp(&a)))
        }
    }

    /// Records the decisions of one slot and otherwise chooses by prior.
    struct Watch(&'static str, Vec<(Vec<String>, Vec<f32>)>);
    impl Chooser for Watch {
        fn choose(&mut self, d: &Decision) -> Option<usize> {
            if d.slot == self.0 {
                self.1.push((d.labels.clone(), d.prior.clone()));
            }
            ByPrior.choose(d)
        }
    }

    fn task(question: &str) -> Vec<Message> {
        vec![
            Message::system("You are a database agent."),
            Message::user(
                format!("The name of this table is Stores, and the headers of this table are Store,City,Revenue.\nQuestion: {question}"),
                Origin::Frame,
            ),
        ]
    }

    fn ran(msgs: &mut Vec<Message>, sql: &str, observation: &str) {
        let id = format!("c{}", msgs.len());
        let mut a = Message::new(Role::Assistant, "", Origin::Policy);
        a.tool_calls.push(ToolCall { id: id.clone(), name: "execute_sql".into(), arguments: serde_json::json!({"query": sql}) });
        msgs.push(a);
        let mut t = Message::new(Role::Tool, observation, Origin::Environment);
        t.tool_call_id = Some(id);
        msgs.push(t);
    }

    fn hint(msgs: &mut Vec<Message>, text: &str) {
        msgs.push(Message::user(text, Origin::Hook { hook: "hint".into(), kind: crate::message::HookKind::PreHint }));
    }

    fn view(msgs: Vec<Message>) -> DbView {
        DbView::parse(&Context { messages: msgs, tools: Vec::new() })
    }

    fn kind_chosen(msgs: Vec<Message>) -> String {
        let b = build(&view(msgs), &mut ByPrior).unwrap();
        let (d, i) = &b.decisions[0];
        assert_eq!(d.slot, "kind");
        d.labels[*i].clone()
    }

    #[test]
    fn reads_whether_the_request_asks_for_a_change() {
        assert_eq!(asked_mutation("delete the row for store 12."), Some("delete"));
        assert_eq!(asked_mutation("remove every store in oslo."), Some("delete"));
        assert_eq!(asked_mutation("add this row: store 9, bergen, 100."), Some("insert"));
        assert_eq!(asked_mutation("add up the revenue of every store?"), None);
        assert_eq!(asked_mutation("store 4 should have its city changed to oslo."), Some("update"));
        assert_eq!(asked_mutation("which store should i delete?"), None);
        assert_eq!(asked_mutation("what is the total revenue?"), None);
    }

    #[test]
    fn reads_which_operation_the_request_asks_for() {
        let asked = |q: &str| {
            ["select", "count", "sum", "avg", "min", "max", "argmin", "argmax"].into_iter().filter(|o| asked_op_prior(q, o) > 0.0).collect::<Vec<_>>()
        };
        assert_eq!(asked("how many stores are in oslo?"), vec!["count"]);
        assert_eq!(asked("what is the average revenue?"), vec!["avg"]);
        assert_eq!(asked("what is the largest revenue?"), vec!["max"]);
        assert_eq!(asked("which store has the largest revenue?"), vec!["argmax"]);
        assert_eq!(asked("which city is store 4 in?"), vec!["select"]);
    }

    #[test]
    fn a_question_is_answered_by_a_query_and_a_delete_request_by_a_delete() {
        assert_eq!(kind_chosen(task("What is the total Revenue of stores in Oslo?")), "query");
        assert_eq!(kind_chosen(task("Delete the row for store Nord.")), "delete");
    }

    #[test]
    fn follows_a_hint_to_look_at_the_rows_once() {
        let mut m = task("What is the total Revenue of stores in Oslo?");
        hint(&mut m, "Before your first query, run SELECT * FROM `Stores` LIMIT 5 to see how the values are written.");
        assert_eq!(kind_chosen(m.clone()), "inspect");
        let b = build(&view(m.clone()), &mut ByPrior).unwrap();
        assert_eq!(b.arguments["query"], "SELECT * FROM `Stores` LIMIT 5");
        // once looked at, the hint has been followed
        ran(&mut m, "SELECT * FROM `Stores` LIMIT 5", "[('Nord', 'Oslo', '1,200')]");
        assert_ne!(kind_chosen(m), "inspect");
    }

    #[test]
    fn a_replace_exists_only_once_the_context_shows_a_format() {
        let q = "What is the total Revenue of stores in Oslo?";
        let convs = |m: Vec<Message>| {
            let mut w = Watch("conv", Vec::new());
            build(&view(m), &mut w);
            w.1
        };
        // blind: only none or a cast
        let blind = convs(task(q));
        assert!(!blind.is_empty());
        assert!(blind.iter().all(|(labels, _)| labels == &vec!["none".to_string(), "cast".to_string()]), "{blind:?}");
        // the rows show thousands separators: stripping them is offered and preferred
        let mut m = task(q);
        ran(&mut m, "SELECT * FROM `Stores` LIMIT 5", "[('Nord', 'Oslo', '1,200'), ('Sud', 'Bergen', '950')]");
        let seen = convs(m);
        let (labels, prior) = &seen[0];
        let i = labels.iter().position(|l| l == "strip_commas").expect("strip_commas offered");
        assert!(prior[i] > prior[0] && prior[i] > prior[1], "{seen:?}");
    }

    #[test]
    fn the_same_statement_twice_is_answered_not_run_again() {
        let mut m = task("What is the total Revenue of stores in Oslo?");
        ran(&mut m, "SELECT SUM(`Revenue`) FROM `Stores` WHERE `City` = 'Oslo'", "[(None,)]");
        assert!(!view(m.clone()).repeated_last());
        ran(&mut m, "SELECT SUM(`Revenue`) FROM `Stores` WHERE `City` = 'Oslo'", "[(None,)]");
        assert!(view(m.clone()).repeated_last());
        assert_eq!(kind_chosen(m), "commit");
    }

    #[test]
    fn a_hint_to_redo_the_query_is_followed() {
        let mut m = task("What is the total Revenue of stores in Oslo?");
        ran(&mut m, "SELECT SUM(`Revenue`) FROM `Stores` WHERE `City` = 'Oslo'", "[(0,)]");
        let before = view(m.clone());
        assert!(!before.asked_to_requery());
        hint(&mut m, "That result looks wrong: check the filter and query again.");
        let v = view(m.clone());
        assert!(v.asked_to_requery());
        assert_eq!(kind_chosen(m), "query");
    }
}

/// The built-in policy trained through this grammar.
#[cfg(test)]
mod policy_tests {
    use super::*;
    use crate::message::{Message, Origin, Role};
    use crate::policy::builtin::{BuiltinPolicy, TrainExample};
    use std::sync::Arc;

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
            Message::user(
                "The name of this table is Stores, and the headers of this table are Store,City,Revenue.\nQuestion: What is the total Revenue?",
                Origin::Frame,
            ),
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
        let b = build(&DbView::parse(&shown), &mut StripCommas).expect("an action");
        assert!(b.trace().contains("conv=strip_commas"), "{}", b.trace());
        let target = AssistantTurn {
            content: b.trace(),
            tool_calls: vec![ToolCall { id: "c1".into(), name: b.tool.clone(), arguments: b.arguments.clone() }],
            ..Default::default()
        };

        let p = BuiltinPolicy::new(Arc::new(GRAMMAR));
        // where the rows were shown, the reply reads back and is learned from
        let s = p.train(&[TrainExample { context: shown, target: target.clone(), weight: 1.0 }], 1.0);
        assert_eq!((s.examples, s.partial), (1, 0));
        assert!(s.decisions >= 3);
        let before = p.snapshot();
        // without them, no REPLACE can be pointed at: skipped, and the weights do not move
        let s = p.train(&[TrainExample { context: ctx(false), target: target.clone(), weight: 1.0 }], 1.0);
        assert_eq!((s.examples, s.partial, s.decisions), (0, 1, 0));
        assert!(!p.can_produce(&ctx(false), &target));
        assert!(p.can_produce(&ctx(true), &target));
        assert_eq!(p.snapshot().entries, before.entries);
    }

    #[test]
    fn weight_decay_shrinks_every_weight() {
        let shown = ctx(true);
        let b = build(&DbView::parse(&shown), &mut StripCommas).unwrap();
        let target = AssistantTurn {
            content: b.trace(),
            tool_calls: vec![ToolCall { id: "c1".into(), name: b.tool.clone(), arguments: b.arguments.clone() }],
            ..Default::default()
        };
        let p = BuiltinPolicy::new(Arc::new(GRAMMAR));
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
