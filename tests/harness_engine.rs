//! The harness engine on the real DBBench environment: each hook kind, each predicate, spec
//! patches and spec errors. Policies here are scripted so every intervention is exact.

use harness_s::episode::{Effect, EpisodeStatus, HookKind};
use harness_s::harness::engine::fill_template;
use harness_s::harness::predicate::{eval, parse_predicate, EpisodeState, GENERIC_PREDICATES};
use harness_s::harness::{run_episode, EpisodeRequest, HarnessLibrary, HarnessSpec};
use harness_s::policy::scripted::ScriptedPolicy;
use harness_s::policy::{Origin, Role, ToolCall};
use harness_s::suite::dbbench::DbBench;
use harness_s::suite::{Signals, Suite};
use harness_s::task::Task;
use serde_json::json;

fn record() -> serde_json::Value {
    json!({
        "description": "How many points does the club Riverside have?",
        "label": ["12"],
        "table": {"table_name": "Football Standings", "table_info": {
            "columns": [{"name": "Club", "type": "TEXT"}, {"name": "Home team", "type": "TEXT"}, {"name": "Points", "type": "TEXT"}],
            "rows": [["Riverside", "yes", "12"], ["Hilltop", "no", "9"], ["Lakeside", "no", "1,204"]]}},
        "type": ["other"],
        "add_description": "The name of this table is Football Standings, and the headers of this table are Club,Home team,Points.",
        "source": "test",
        "id": "t-1",
        "family": "other"
    })
}

fn task() -> Task {
    Task {
        id: "t-1".into(),
        suite: "dbbench".into(),
        family: "other".into(),
        instruction: "How many points does the club Riverside have?".into(),
        payload: record(),
    }
}

fn lib() -> HarnessLibrary {
    HarnessLibrary::builtin().expect("shipped specs are valid")
}

fn spec(name: &str) -> HarnessSpec {
    lib().get("dbbench", name).unwrap_or_else(|| panic!("no harness {name}")).spec.clone()
}

fn sql(q: &str) -> harness_s::policy::AssistantTurn {
    ScriptedPolicy::call("execute_sql", json!({"query": q}))
}

fn commit(a: &[&str]) -> harness_s::policy::AssistantTurn {
    ScriptedPolicy::call("commit_final_answer", json!({"answers": a}))
}

fn run(spec: &HarnessSpec, policy: &ScriptedPolicy) -> harness_s::episode::Episode {
    let suite = DbBench::new();
    let t = task();
    let req = EpisodeRequest { suite: &suite, harness: spec, task: &t, policy, sample: 0, seed: 7, temperature: 0.0, cancel: None };
    run_episode(&req)
}

#[test]
fn base_runs_sql_and_scores_like_agentbench() {
    let p = ScriptedPolicy::new("script", vec![sql("SELECT Points FROM `Football Standings` WHERE Club = 'Riverside'"), commit(&["12"])]);
    let ep = run(&spec("base"), &p);
    assert_eq!(ep.status, EpisodeStatus::Completed);
    assert!(ep.success(), "{:?}", ep.score);
    assert_eq!(ep.steps.len(), 2);
    assert_eq!(ep.steps[0].calls[0].observation, "[('12',)]");
    assert!(ep.interventions().next().is_none(), "base has no hooks");
    // the first context is the benchmark's own frame
    let first = &ep.steps[0].context.messages;
    assert_eq!(first[0].role, Role::System);
    assert!(first[1].content.contains("Question: How many points"));
    assert!(first[1].content.contains("headers of this table are Club,Home team,Points"));
}

#[test]
fn on_init_injects_the_schema_card() {
    let p = ScriptedPolicy::new("script", vec![commit(&["12"])]);
    let ep = run(&spec("schema-first"), &p);
    let iv: Vec<_> = ep.interventions().collect();
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0].kind, HookKind::OnInit);
    assert_eq!(iv[0].hook, "schema-card");
    let ctx = &ep.steps[0].context.messages;
    let injected = ctx.iter().find(|m| matches!(&m.origin, Origin::Hook { hook, .. } if hook == "schema-card")).expect("card in context");
    assert!(injected.content.contains("Home team"), "{}", injected.content);
    assert!(injected.content.contains("1,204"), "sample rows shown: {}", injected.content);
}

#[test]
fn before_action_rewrite_quotes_identifiers() {
    let p = ScriptedPolicy::new("script", vec![sql("SELECT Points FROM Football Standings WHERE Home team = 'yes'"), commit(&["12"])]);
    let ep = run(&spec("quote-guard"), &p);
    let call = &ep.steps[0].calls[0];
    let executed = call.executed.as_ref().unwrap().arguments["query"].as_str().unwrap().to_string();
    assert!(executed.contains("`Football Standings`") && executed.contains("`Home team`"), "{executed}");
    assert_eq!(call.observation, "[('12',)]");
    let iv = &ep.steps[0].interventions[0];
    assert_eq!(iv.kind, HookKind::BeforeAction);
    assert!(matches!(&iv.effect, Effect::Rewrite { .. }));
    assert!(ep.success());
}

#[test]
fn before_action_block_stops_an_unsupported_commit() {
    let p =
        ScriptedPolicy::new("script", vec![commit(&["7"]), sql("SELECT Points FROM `Football Standings` WHERE Club = 'Riverside'"), commit(&["12"])]);
    let ep = run(&spec("answer-check"), &p);
    assert!(ep.success(), "the blocked commit did not end the episode");
    let c0 = &ep.steps[0].calls[0];
    assert!(c0.executed.is_none());
    assert!(c0.observation.contains("not run any query"));
    assert_eq!(ep.steps[0].interventions[0].hook, "commit-needs-query");
    // the block message went back to the policy as the tool reply, marked as the hook's
    let ctx = &ep.steps[1].context.messages;
    assert!(ctx.iter().any(|m| m.role == Role::Tool && matches!(&m.origin, Origin::Hook { hook, .. } if hook == "commit-needs-query")));
}

#[test]
fn answer_not_in_result_blocks_a_guess() {
    let p = ScriptedPolicy::new(
        "script",
        vec![sql("SELECT Points FROM `Football Standings` WHERE Club = 'Riverside'"), commit(&["13"]), commit(&["12"])],
    );
    let ep = run(&spec("answer-check"), &p);
    assert!(ep.success());
    assert_eq!(ep.steps[1].interventions[0].hook, "answer-from-result");
}

#[test]
fn post_step_explains_an_unknown_column() {
    let p = ScriptedPolicy::new("script", vec![sql("SELECT Pts FROM `Football Standings`"), commit(&["12"])]);
    let ep = run(&spec("error-explainer"), &p);
    let obs = &ep.steps[0].calls[0].observation;
    assert!(obs.starts_with("1054 (42S22): Unknown column 'Pts'"), "{obs}");
    let iv = &ep.steps[0].interventions;
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0].kind, HookKind::PostStep);
    assert_eq!(iv[0].hook, "explain-unknown-column");
    let Effect::Inject { text } = &iv[0].effect else { panic!() };
    assert!(text.contains("\"Home team\"") || text.contains("Home team"), "{text}");
}

#[test]
fn value_probe_fires_on_an_empty_result() {
    let p = ScriptedPolicy::new("script", vec![sql("SELECT Points FROM `Football Standings` WHERE Club = 'Nowhere'"), commit(&["0"])]);
    let ep = run(&spec("value-probe"), &p);
    assert_eq!(ep.steps[0].calls[0].observation, "[]");
    assert!(ep.steps[0].calls[0].signals.empty_result);
    assert_eq!(ep.steps[0].interventions[0].hook, "empty-result-values");
}

#[test]
fn plan_is_an_extra_policy_call_recorded_with_its_output() {
    let mut p = ScriptedPolicy::new("script", vec![commit(&["12"])]);
    p.extra_reply = "use Points".into();
    let ep = run(&spec("plan-then-act"), &p);
    let iv = &ep.steps[0].interventions[0];
    assert_eq!(iv.kind, HookKind::Plan);
    let Effect::Call { output, .. } = &iv.effect else { panic!() };
    assert_eq!(output, "use Points");
    assert!(ep.steps[0].context.messages.iter().any(|m| m.content.contains("Plan:\nuse Points")));
    let seen = p.seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "one plan call and one decision");
}

#[test]
fn loop_monitor_blocks_a_repeat_and_warns_on_budget() {
    let q = "SELECT Points FROM `Football Standings`";
    let p = ScriptedPolicy::new("script", vec![sql(q), sql(q), sql("SELECT 1"), sql("SELECT 2"), commit(&["12"])]);
    let mut s = spec("loop-monitor");
    s.max_steps = 5;
    let ep = run(&s, &p);
    assert!(ep.steps[1].calls[0].executed.is_none(), "the repeat was blocked");
    assert_eq!(ep.steps[1].interventions[0].hook, "no-repeat");
    let warned: Vec<_> = ep.steps.iter().filter(|st| st.interventions.iter().any(|i| i.hook == "budget-warning")).map(|st| st.index).collect();
    assert_eq!(warned, vec![2], "warned once, when 3 rounds were left");
}

fn custom(text: &str) -> HarnessSpec {
    let mut files: Vec<(String, String)> = harness_s::harness::library::builtin_spec_files();
    files.push(("custom.toml".into(), text.into()));
    let lib = HarnessLibrary::from_files(files).expect("valid");
    lib.get("dbbench", "custom").unwrap().spec.clone()
}

#[test]
fn reflect_and_critique_calls() {
    let s = custom(
        r#"
name = "custom"
extends = "base"
[[hooks]]
id = "reflect-on-error"
kind = "reflect"
when = ["last_error"]
prompt = "What went wrong?"
[[hooks]]
id = "critique-commit"
kind = "critique"
when = ["submitting"]
prompt = "Is this answer supported?"
max_fires = 1
"#,
    );
    let mut p = ScriptedPolicy::new("script", vec![sql("SELECT nope FROM `Football Standings`"), commit(&["12"]), commit(&["12"])]);
    p.extra_reply = "REVISE: check first".into();
    let ep = run(&s, &p);
    let kinds: Vec<HookKind> = ep.interventions().map(|i| i.kind).collect();
    assert_eq!(kinds, vec![HookKind::Reflect, HookKind::Critique]);
    // the critique said REVISE: the first commit was not executed; the second (max_fires 1) was
    assert!(ep.steps[1].calls[0].executed.is_none());
    assert!(ep.steps[1].calls[0].observation.starts_with("Critique: REVISE"));
    assert!(ep.success());
    assert!(ep.steps[1].context.messages.iter().any(|m| m.content.starts_with("Reflection:\nREVISE")));
}

#[test]
fn remove_hooks_and_overrides_patch_the_parent() {
    let s = custom(
        r#"
name = "custom"
extends = "error-explainer"
max_steps = 5
system_prompt_append = "Be brief."
remove_hooks = ["explain-syntax"]
[render]
history = "last:2"
"#,
    );
    assert_eq!(s.lineage, vec!["base", "error-explainer", "custom"]);
    assert_eq!(s.max_steps, 5);
    assert!(s.system_prompt.ends_with("Be brief."));
    assert!(s.hook("explain-syntax").is_none());
    assert!(s.hook("explain-unknown-column").is_some());
    assert_eq!(s.render.history, "last:2");
}

#[test]
fn history_rule_keeps_the_frame_and_the_last_turns() {
    let s = custom("name = \"custom\"\nextends = \"base\"\n[render]\nhistory = \"last:1\"\n");
    let p = ScriptedPolicy::new("script", vec![sql("SELECT 1"), sql("SELECT 2"), sql("SELECT 3"), commit(&["12"])]);
    let ep = run(&s, &p);
    let ctx = &ep.steps[3].context.messages;
    // system, task, then only the last policy turn and its observation
    assert_eq!(ctx.len(), 4, "{ctx:#?}");
    assert!(ctx[2].tool_calls[0].arguments["query"] == "SELECT 3");
}

fn spec_err(text: &str) -> String {
    let mut files: Vec<(String, String)> = harness_s::harness::library::builtin_spec_files();
    files.push(("bad.toml".into(), text.into()));
    HarnessLibrary::from_files(files).expect_err("must be refused").to_string()
}

#[test]
fn invalid_specs_name_file_and_field() {
    let e = spec_err("name = \"x\"\nextends = \"base\"\nmax_stepz = 3\n");
    assert!(e.starts_with("bad.toml: max_stepz:"), "{e}");
    let e = spec_err("name = \"x\"\nextends = \"base\"\n[[hooks]]\nid = \"h\"\nkind = \"pre_hint\"\nwhen = [\"no_such_thing\"]\ntext = \"t\"\n");
    assert!(e.contains("bad.toml: hooks[0] (id `h`).when[0]: unknown predicate `no_such_thing`"), "{e}");
    let e = spec_err("name = \"x\"\nextends = \"base\"\n[[hooks]]\nid = \"h\"\nkind = \"pre_hint\"\n");
    assert!(e.contains("hooks[0] (id `h`).text: a `pre_hint` hook needs `text`"), "{e}");
    let e = spec_err("name = \"x\"\nextends = \"base\"\n[[hooks]]\nid = \"h\"\nkind = \"before_action\"\nrewrite = \"nope\"\n");
    assert!(e.contains("has no rewrite named `nope`"), "{e}");
    let e = spec_err("name = \"x\"\nextends = \"nobody\"\n");
    assert!(e.contains("bad.toml: extends: no harness named `nobody`"), "{e}");
    let e = spec_err("name = \"x\"\nextends = \"base\"\n[[hooks]]\nid = \"h\"\nkind = \"teleport\"\n");
    assert!(e.contains("bad.toml: ") && e.contains("teleport"), "{e}");
    let e = spec_err("name = \"x\"\nsuite = \"nosuite\"\nsystem_prompt = \"s\"\n");
    assert!(e.contains("bad.toml: suite: unknown suite `nosuite`"), "{e}");
    let e = spec_err("name = \"x\"\nextends = \"base\"\nremove_hooks = [\"ghost\"]\n");
    assert!(e.contains("remove_hooks[0]: no inherited hook has id `ghost`"), "{e}");
}

#[test]
fn shipped_siblings_each_add_a_distinct_specialty() {
    let lib = lib();
    let sibs = lib.siblings("dbbench", "base");
    assert!(sibs.len() >= 6, "{}", sibs.len());
    let mut kinds = std::collections::BTreeSet::new();
    for s in &sibs {
        assert!(s.spec.specialty.is_some(), "{} has a specialty line", s.spec.name);
        assert!(!s.spec.hooks.is_empty(), "{} adds hooks", s.spec.name);
        assert!(s.source.contains("extends = \"base\""), "{} is written as a patch", s.spec.name);
        kinds.insert(s.spec.hooks.iter().map(|h| h.kind.as_str()).collect::<Vec<_>>().join("+") + &s.spec.name);
    }
    assert_eq!(kinds.len(), sibs.len());
}

fn state(calls: Vec<(&str, Signals)>) -> EpisodeState {
    EpisodeState {
        step: calls.len(),
        max_steps: 15,
        calls: calls
            .into_iter()
            .map(|(q, s)| {
                (
                    ToolCall { id: "c".into(), name: "execute_sql".into(), arguments: json!({"query": q}) },
                    s,
                    if s_is_err(q) { "1054 (42S22): x".into() } else { "[('12',)]".into() },
                )
            })
            .collect(),
        last_turn_without_call: false,
    }
}

fn s_is_err(q: &str) -> bool {
    q.contains("bad")
}

fn err(kind: &str) -> Signals {
    Signals { error_kind: Some(kind.into()), executed: true, ..Default::default() }
}

fn ok() -> Signals {
    Signals { executed: true, ..Default::default() }
}

#[test]
fn every_generic_predicate_evaluates() {
    let suite = DbBench::new();
    let env = suite.make_env(&task()).unwrap();
    let holds =
        |name: &str, st: &EpisodeState, proposed: Option<&ToolCall>| eval(&parse_predicate(name).unwrap(), st, proposed, &suite, env.as_ref());
    let empty = state(vec![]);
    let commit_call = ToolCall { id: "c".into(), name: "commit_final_answer".into(), arguments: json!({"answers": ["12"]}) };
    let guess = ToolCall { id: "c".into(), name: "commit_final_answer".into(), arguments: json!({"answers": ["99"]}) };
    assert!(holds("always", &empty, None));
    assert!(holds("first_step", &empty, None));
    assert!(holds("no_sql_yet", &empty, None) && holds("no_query_yet", &empty, None));
    let one_err = state(vec![("bad1", err("unknown_column"))]);
    assert!(!holds("first_step", &one_err, None));
    assert!(!holds("no_sql_yet", &one_err, None));
    assert!(holds("last_error", &one_err, None));
    assert!(holds("unknown_column_error", &one_err, None));
    assert!(!holds("syntax_error", &one_err, None));
    assert!(holds("syntax_error", &state(vec![("bad", err("syntax"))]), None));
    assert!(holds("unknown_table_error", &state(vec![("bad", err("unknown_table"))]), None));
    assert!(holds("timeout_error", &state(vec![("bad", err("timeout"))]), None));
    let streak = state(vec![("bad1", err("syntax")), ("bad2", err("syntax"))]);
    assert!(holds("error_streak", &streak, None));
    assert!(!holds("error_streak:3", &streak, None));
    assert!(holds("!error_streak:3", &streak, None));
    let empty_res = state(vec![("q", Signals { empty_result: true, executed: true, ..Default::default() })]);
    assert!(holds("empty_result", &empty_res, None));
    assert!(holds("commit_after_empty", &empty_res, Some(&commit_call)));
    let rep = state(vec![("q", ok()), ("q", ok())]);
    assert!(holds("repeated_action", &rep, None));
    assert!(!holds("loop", &rep, None));
    assert!(holds("loop:2", &rep, None));
    let q_call = ToolCall { id: "c".into(), name: "execute_sql".into(), arguments: json!({"query": "q"}) };
    assert!(holds("loop", &rep, Some(&q_call)), "a third identical action is a loop");
    let mut late = state(vec![("q", ok())]);
    late.step = 13;
    assert!(holds("steps_left_low", &late, None));
    assert!(!holds("steps_left_low:1", &late, None));
    let mut nocall = empty.clone();
    nocall.last_turn_without_call = true;
    assert!(holds("no_tool_call", &nocall, None));
    assert!(holds("submitting", &empty, Some(&commit_call)));
    assert!(holds("commit_without_query", &empty, Some(&commit_call)));
    assert!(holds("commit_after_error", &one_err, Some(&commit_call)));
    let good = state(vec![("q", ok())]);
    assert!(!holds("answer_not_in_result", &good, Some(&commit_call)));
    assert!(holds("answer_not_in_result", &good, Some(&guess)));
    // every documented generic name is understood
    for (name, _) in GENERIC_PREDICATES {
        let _ = holds(name, &good, Some(&commit_call));
    }
    // a suite predicate through the suite
    let unquoted = ToolCall { id: "c".into(), name: "execute_sql".into(), arguments: json!({"query": "SELECT Points FROM Football Standings"}) };
    assert!(holds("unquoted_identifier", &empty, Some(&unquoted)));
}

#[test]
fn templates_fill_from_state_and_resources() {
    let suite = DbBench::new();
    let t = task();
    let env = suite.make_env(&t).unwrap();
    let st = state(vec![("bad", err("unknown_column"))]);
    let s = fill_template("{steps_left}/{max_steps} {resource:table_name} {last_error} {question} {unknown}", &st, &t, env.as_ref());
    assert_eq!(s, "14/15 Football Standings 1054 (42S22): x How many points does the club Riverside have? {unknown}");
}
