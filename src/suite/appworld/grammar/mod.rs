//! The built-in policy's action grammar for AppWorld.
//!
//! Reading only the rendered context, it finds the supervisor's email and the instruction (its
//! quoted texts, names, numbers, dates and emails), the apps, APIs and API parameters that docs
//! outputs (or injected docs) have shown, the logins made, and the values earlier outputs
//! returned. One code cell is built per turn by slot decisions: the kind of cell (list apps, list
//! an app's APIs, read an API's doc, log in, call an API, complete the task), then the app, the
//! API, each documented parameter's value (a span of the instruction, a value an output showed,
//! the access token, a value the doc lists, each item of the last listing), whether to read every
//! page, and the answer. Features describe options generically (where a value comes from, how an
//! API's name relates to the instruction), never a particular app or task.
//!
//! By role: `view.rs` reads the context, `lexicon.rs` relates APIs and values to the
//! instruction, `builder.rs` makes the slot decisions and `search.rs` searches the grammar; this
//! file is the `Grammar` implementation and the tests.

mod builder;
mod lexicon;
mod search;
mod view;

pub use builder::*;
pub use lexicon::*;
pub use search::*;
pub use view::*;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::grammar::kit::{decide_into, f, push_call, Built, Chooser, Decision, Solution};
use crate::grammar::model::{Feature, LinearModel};
use crate::grammar::{sample_turn, Grammar};
use crate::message::{CallKind, Context, Role};
use crate::suite::{SearchFrame, Suite};
use crate::task::Task;

/// The tool the grammar writes cells for.
/// A loop over a listing: its variable, the items it visits, and the filter it applies.
type Loop = (String, Vec<Map<String, Value>>, String);

pub const TOOL: &str = "execute_python";

/// Does this context belong to AppWorld (the grammar's tool is offered or was called)?
pub fn applies(ctx: &Context) -> bool {
    ctx.tools.iter().any(|t| t.name == TOOL) || ctx.messages.iter().any(|m| m.tool_calls.iter().any(|c| c.name == TOOL))
}

/// Innate preferences: what any instruction-following model does with what it is shown.
mod innate {
    /// Doing the next thing the context makes possible (docs before calls, a login before a
    /// call that needs its token, completing after a successful call).
    pub const NEXT_STEP: f32 = 1.5;
    pub const FOLLOW_HINT: f32 = 2.0;
    /// Reading only the first page of a listing unless told there are more: the commonest
    /// AppWorld failure of instruction-following models.
    pub const ONE_PAGE: f32 = -1.5;
    /// "How many" asks for a count, "how much ... in total" for a sum.
    pub const ANSWER_SHAPE: f32 = 2.0;
}

/// AppWorld's grammar as the built-in policy uses it: one view of the context per call.
pub struct AppWorldGrammar;

impl Grammar for AppWorldGrammar {
    fn build(&self, ctx: &Context, ch: &mut dyn Chooser) -> Option<Built> {
        build(&AwView::parse(ctx), ch)
    }

    fn note(&self, ctx: &Context, kind: CallKind) -> String {
        note(&AwView::parse(ctx), kind)
    }

    /// The world is deterministic: a cell run again shows what it showed. A call already made
    /// is not made again this turn (another API, or another kind of cell); any other repeated
    /// cell changes its last choice.
    fn repeat_decision(&self, built: &Built) -> Option<usize> {
        built.decisions.iter().position(|(d, _)| d.slot == "api").or(built.decisions.len().checked_sub(1))
    }
}

/// The grammar, as the suite hands it to the built-in policy.
pub const GRAMMAR: AppWorldGrammar = AppWorldGrammar;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::{parse_trace, replay};
    use crate::message::{Message, Origin, ToolCall};

    #[test]
    fn python_literals_parse() {
        let v = py_literal("[{'a': 'it\\'s', 'b': True, 'c': None, 'd': [1, 2.5]}, {\"e\": -3}]").unwrap();
        assert_eq!(v, serde_json::json!([{"a": "it's", "b": true, "c": null, "d": [1, 2.5]}, {"e": -3}]));
        assert!(py_literal("Execution successful.").is_none());
    }

    #[test]
    fn the_view_reads_the_prompt_docs_logins_and_listings() {
        let mut ctx = Context {
            messages: vec![
                Message::system("s"),
                Message::user("My name is: A B. My personal email is a.b@example.com and phone number is 1.\nTask: Send $12.50 to my friend Ava Garcia with my wallet app, with the description 'taxi'.", Origin::Frame),
            ],
            tools: vec![],
        };
        let mut push = |code: &str, out: &str| {
            let id = format!("c{}", ctx.messages.len());
            let mut a = Message::new(Role::Assistant, String::new(), Origin::Policy);
            a.tool_calls = vec![ToolCall { id: id.clone(), name: TOOL.into(), arguments: serde_json::json!({ "code": code }) }];
            ctx.messages.push(a);
            let mut t = Message::new(Role::Tool, out, Origin::Environment);
            t.tool_call_id = Some(id);
            ctx.messages.push(t);
        };
        push("print(apis.api_docs.show_app_descriptions())", "[{'description': 'x', 'name': 'wallet'}, {'description': 'y', 'name': 'contacts'}]");
        push(
            "print(apis.api_docs.show_api_descriptions(app_name=\"wallet\"))",
            "[{'description': 'x', 'name': 'login'}, {'description': 'y', 'name': 'send_money'}]",
        );
        push(
            "print(apis.api_docs.show_api_doc(app_name=\"wallet\", api_name=\"send_money\"))",
            "{'api_name': 'send_money', 'app_name': 'wallet', 'parameters': [{'name': 'access_token', 'type': 'string', 'required': True, 'description': 'd'}, {'name': 'amount', 'type': 'number', 'required': True, 'description': 'Dollars.'}]}",
        );
        push("pw = {}\ntok_wallet = apis.wallet.login(username='a', password='b')['access_token']\nprint('ok')", "ok");
        push(
            "r5 = apis.contacts.search_contacts(access_token=tok_contacts)\nprint(r5)",
            "[{'first_name': 'Ava', 'last_name': 'Garcia', 'email': 'ava@x.com'}]",
        );
        let v = AwView::parse(&ctx);
        assert_eq!(v.email, "a.b@example.com");
        assert_eq!(v.apps, vec!["wallet", "contacts"]);
        assert_eq!(v.apis["wallet"], vec!["login", "send_money"]);
        assert_eq!(v.docs[&("wallet".to_string(), "send_money".to_string())].len(), 2);
        assert!(v.logged_in.contains("wallet"));
        assert!(
            v.spans.contains(&("12.50".into(), "number"))
                && v.spans.contains(&("Ava Garcia".into(), "name"))
                && v.spans.contains(&("taxi".into(), "quoted")),
            "{:?}",
            v.spans
        );
        assert_eq!(v.last_list.as_ref().map(|l| l.0.as_str()), Some("r5"));
        assert!(v.named("wallet") && !v.named("music"));
        assert!(relevance("send_money", &v) >= 1.0 && relevance("show_balance", &v) < 1.0);
    }

    fn ctx_with(instruction: &str, cells: &[(&str, &str)], hint: Option<&str>) -> Context {
        let mut ctx = Context {
            messages: vec![
                Message::system("s"),
                Message::user(
                    format!("My name is: A B. My personal email is a.b@example.com and phone number is 1.\nTask: {instruction}"),
                    Origin::Frame,
                ),
            ],
            tools: vec![],
        };
        for (i, (code, out)) in cells.iter().enumerate() {
            let id = format!("c{i}");
            let mut a = Message::new(Role::Assistant, String::new(), Origin::Policy);
            a.tool_calls = vec![ToolCall { id: id.clone(), name: TOOL.into(), arguments: serde_json::json!({ "code": code }) }];
            ctx.messages.push(a);
            let mut t = Message::new(Role::Tool, *out, Origin::Environment);
            t.tool_call_id = Some(id);
            ctx.messages.push(t);
        }
        if let Some(h) = hint {
            ctx.messages.push(Message::user(h, Origin::Frame));
        }
        ctx
    }

    #[test]
    fn cue_words_name_the_parameter_a_span_is_for() {
        let q = "Create a note in my notes app titled 'Call Omar' with the content 'water the keys before 2023-05-21.'.";
        let v = AwView::parse(&ctx_with(q, &[], None));
        assert!(v.spans.contains(&("water the keys before 2023-05-21.".into(), "quoted")), "{:?}", v.spans);
        assert!(cue_names(&cue_word(q, "Call Omar"), "title") && !cue_names(&cue_word(q, "Call Omar"), "content"));
        assert!(cue_names(&cue_word(q, "water the keys before 2023-05-21."), "content"));
        assert!(!cue_names("my", "query") && !cue_names("friend", "receiver_email"));
    }

    #[test]
    fn writes_the_instruction_does_not_ask_for_are_never_relevant_and_hyphens_do_not_hide_an_app() {
        let q = "Mark every open item in my to-do app that is due on or before 2023-05-12 as completed.";
        let cells = [(
            "print(apis.api_docs.show_api_descriptions(app_name=\"todo\"))",
            "[{'name': 'login'}, {'name': 'show_items'}, {'name': 'add_item'}, {'name': 'complete_item'}, {'name': 'delete_item'}]",
        )];
        let v = AwView::parse(&ctx_with(q, &cells, None));
        assert!(v.named("todo"));
        let r: Vec<String> = v.relevant().into_iter().map(|(_, a)| a).collect();
        assert!(r.contains(&"complete_item".to_string()) && r.contains(&"show_items".to_string()), "{r:?}");
        assert!(!r.contains(&"delete_item".to_string()) && !r.contains(&"add_item".to_string()), "{r:?}");
    }

    #[test]
    fn a_hint_of_more_pages_after_a_one_page_listing_asks_for_that_listing_again() {
        let q = "How much money in total have I received from Nina Novak (nina.novak@example.com) in my wallet app?";
        let call = ("r5 = apis.wallet.show_transactions(access_token=tok_wallet)\nprint(r5)", "[{'amount': 1.0}]");
        let hinted = AwView::parse(&ctx_with(q, &[call], Some("That listing returned a full page, so there may be more pages.")));
        assert_eq!(hinted.repage, Some(("wallet".to_string(), "show_transactions".to_string())));
        // no hint, or another cell after it: nothing to read again
        assert_eq!(AwView::parse(&ctx_with(q, &[call], None)).repage, None);
        let later = ctx_with(q, &[call, ("print(1)", "1")], None);
        assert_eq!(AwView::parse(&later).repage, None);
    }

    /// The loop the policy fell into: the same search, empty every time, until the step limit
    /// (`kind=call; app=music; api=search_songs; arg=query=span:Morning Run` twenty times). A
    /// repeated call is redrawn at its API; a repeated docs cell at its last choice.
    #[test]
    fn a_repeated_call_is_redrawn_at_its_api() {
        let q = "How many songs are in my 'Morning Run' playlist in my music app?";
        let doc = "{'app_name': 'music', 'api_name': 'search_songs', 'parameters': [{'name': 'query', 'type': 'string', 'required': True, 'description': 'x'}]}";
        let cells = [
            ("print(apis.api_docs.show_app_descriptions())", "[{'description': 'x', 'name': 'music'}]"),
            (
                "print(apis.api_docs.show_api_descriptions(app_name=\"music\"))",
                "[{'name': 'search_songs', 'description': 'x'}, {'name': 'show_playlists', 'description': 'x'}]",
            ),
            ("print(apis.api_docs.show_api_doc(app_name=\"music\", api_name=\"search_songs\"))", doc),
            (
                "pw = 1\ntok_music = apis.music.login(username=\"a\", password=pw[\"music\"])['access_token']\nprint('logged in to music')",
                "logged in to music",
            ),
        ];
        let ctx = ctx_with(q, &cells, None);
        let call = replay(&GRAMMAR, &ctx, parse_trace("kind=call; app=music; api=search_songs; arg=query=span:Morning Run")).unwrap().0;
        let built = Built { tool: TOOL.into(), arguments: Value::Null, decisions: call };
        assert_eq!(built.decisions[GRAMMAR.repeat_decision(&built).unwrap()].0.slot, "api");
        let doc_cell = replay(&GRAMMAR, &ctx, parse_trace("kind=doc; app=music; doc_api=show_playlists")).unwrap().0;
        let built = Built { tool: TOOL.into(), arguments: Value::Null, decisions: doc_cell };
        assert_eq!(GRAMMAR.repeat_decision(&built), Some(built.decisions.len() - 1));
    }

    #[test]
    fn a_hint_to_narrow_an_unfiltered_listing_calls_it_again_with_the_tasks_values_as_filters() {
        let q = "How much money in total have I received from Nina Novak (nina.novak@example.com) in my wallet app? Answer in dollars as a number.";
        let doc = "{'app_name': 'wallet', 'api_name': 'show_transactions', 'parameters': [\
            {'name': 'access_token', 'type': 'string', 'required': True, 'description': 'x'}, \
            {'name': 'direction', 'type': 'string', 'required': False, 'description': '`sent`, `received` or `all`.'}, \
            {'name': 'email', 'type': 'string', 'required': False, 'description': 'Only transactions with this person.'}, \
            {'name': 'page_index', 'type': 'integer', 'required': False, 'description': 'x'}]}";
        let page = "[{'amount': 1.0, 'sender_email': 'x@example.com'}, {'amount': 2.0, 'sender_email': 'y@example.com'}]";
        let cells = [
            ("print(apis.api_docs.show_app_descriptions())", "[{'description': 'x', 'name': 'wallet'}]"),
            ("print(apis.api_docs.show_api_descriptions(app_name=\"wallet\"))", "[{'name': 'show_transactions', 'description': 'x'}]"),
            ("print(apis.api_docs.show_api_doc(app_name=\"wallet\", api_name=\"show_transactions\"))", doc),
            (
                "pw = 1\ntok_wallet = apis.wallet.login(username=\"a\", password=pw[\"wallet\"])['access_token']\nprint('logged in to wallet')",
                "logged in to wallet",
            ),
            ("r4 = apis.wallet.show_transactions(access_token=tok_wallet)\nprint(r4)", page),
        ];
        let hint = "That listing was read without any filter and came back full. Narrow it: call it again with the values the task gives as filters.";
        let narrowed = AwView::parse(&ctx_with(q, &cells, Some(hint)));
        assert_eq!(narrowed.narrow, Some(("wallet".to_string(), "show_transactions".to_string())));
        assert_eq!(narrowed.repage, None, "narrowing is not paging");
        // the innate model follows it: the same listing, the direction the task says and its email
        let t = sample_turn(&LinearModel::default(), &GRAMMAR, &ctx_with(q, &cells, Some(hint)), 0, 0.0);
        let code = t.tool_calls[0].arguments["code"].as_str().unwrap().to_string();
        assert!(
            code.contains("apis.wallet.show_transactions(access_token=tok_wallet, direction=\"received\", email=\"nina.novak@example.com\")"),
            "{code}"
        );
        // without the hint it completes from the page it has
        let t = sample_turn(&LinearModel::default(), &GRAMMAR, &ctx_with(q, &cells, None), 0, 0.0);
        assert!(t.tool_calls[0].arguments["code"].as_str().unwrap().contains("complete_task"), "{:?}", t.tool_calls);
    }
}
