//! The LLM voter against a loopback OpenAI-compatible server: its ranking enters the Borda count,
//! it abstains (and says why) when the endpoint fails or the reply is not a ranking, and an
//! experiment with an LLM voter stores its rankings beside the statistical voters'.

use std::sync::atomic::AtomicBool;

use harness_s::events::NullSink;
use harness_s::experiment::{run_experiment, ExperimentConfig};
use harness_s::route::{BehaviorProfile, LlmVoterConfig, RouteQuery, Router};
use harness_s::seed::SplitMix;
use harness_s::store::BlockingStore;
use serde_json::Value;

#[path = "support/chat_server.rs"]
mod chat_server;
use chat_server::{text_reply, ChatServer, Script};

fn profile(name: &str, fix: u32, both_fail: u32) -> BehaviorProfile {
    let mut p = BehaviorProfile { sibling: name.into(), specialty: format!("{name} specialty"), ..Default::default() };
    for _ in 0..fix {
        p.record("sum", "wrong_answer", false, true);
    }
    for _ in 0..both_fail {
        p.record("sum", "wrong_answer", false, false);
    }
    p.summarise();
    p
}

fn query() -> RouteQuery {
    RouteQuery {
        task_id: "t7".into(),
        family: "sum".into(),
        signature: "wrong_answer".into(),
        summary: "ran SELECT SUM(x) FROM t; answered 12".into(),
    }
}

fn voter(url: &str) -> LlmVoterConfig {
    LlmVoterConfig {
        name: Some("judge".into()),
        base_url: url.into(),
        model: "test-model".into(),
        api_key_env: None,
        temperature: 0.0,
        timeout_s: 10,
        max_retries: 0,
    }
}

#[test]
fn the_llm_ranking_is_read_from_the_reply_and_the_prompt_carries_the_evidence() {
    let server = ChatServer::start(Script::new().always(|_| (200, text_reply("```json\n{\"ranking\": [\"weak\", \"strong\"]}\n```"))));
    let ps = vec![profile("strong", 8, 2), profile("weak", 1, 9)];
    let router = Router::with_llm(&[], 1.0, &[voter(&server.url())]).unwrap();
    let d = router.route(&query(), &ps, 1, &mut SplitMix(3));
    // the only voter is the model, and it prefers `weak` against the statistics
    assert_eq!(d.rankings, vec![("llm:judge".to_string(), vec!["weak".to_string(), "strong".to_string()])]);
    assert_eq!(d.chosen, vec!["weak"]);
    assert!(d.abstained.is_empty());

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].path.ends_with("/chat/completions"), "{}", reqs[0].path);
    assert_eq!(reqs[0].body["model"], "test-model");
    let text: String = reqs[0].body["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap_or("").to_string()).collect();
    for needle in [
        "t7",
        "`sum`",
        "wrong_answer",
        "ran SELECT SUM(x) FROM t; answered 12",
        "strong specialty",
        "strong: fixed 8 of 10 base failures",
        "\"ranking\"",
    ] {
        assert!(text.contains(needle), "prompt lacks {needle:?}:\n{text}");
    }

    // beside the statistical voters it is one Borda vote among four
    let router = Router::with_llm(&["posterior".into(), "thompson".into(), "ucb".into()], 1.0, &[voter(&server.url())]).unwrap();
    let d = router.route(&query(), &ps, 1, &mut SplitMix(3));
    assert_eq!(d.rankings.len(), 4);
    assert_eq!(d.chosen, vec!["strong"]);
}

#[test]
fn a_failing_or_unreadable_endpoint_abstains_and_routing_goes_on() {
    let server = ChatServer::start(Script::new().reply(500, "model crashed").reply(200, text_reply("I would try the strong one.")));
    let ps = vec![profile("weak", 1, 9), profile("strong", 8, 2)];
    let router = Router::with_llm(&["posterior".into()], 1.0, &[voter(&server.url())]).unwrap();
    for _ in 0..2 {
        let d = router.route(&query(), &ps, 1, &mut SplitMix(1));
        assert_eq!(d.chosen, vec!["strong"], "the statistical voter decides");
        assert_eq!(d.rankings.len(), 1);
        assert_eq!(d.abstained.len(), 1);
        assert_eq!(d.abstained[0].0, "llm:judge");
        assert!(!d.abstained[0].1.is_empty());
    }
    // with no other voter, the profiles' order stands
    let server = ChatServer::start(Script::new().always(|_| (200, text_reply("{\"ranking\": []}"))));
    let router = Router::with_llm(&[], 1.0, &[voter(&server.url())]).unwrap();
    let d = router.route(&query(), &ps, 2, &mut SplitMix(1));
    assert_eq!(d.chosen, vec!["weak", "strong"]);
    assert!(d.abstained[0].1.contains("none of the candidates"), "{:?}", d.abstained);
}

#[test]
fn an_endpoint_that_keeps_failing_is_paused_then_asked_again() {
    use harness_s::route::llm::{FAILURES_BEFORE_PAUSE, PAUSE_DECISIONS};
    let server = ChatServer::start(Script::new().always(|_| (500, "down".into())));
    let ps = vec![profile("weak", 1, 9), profile("strong", 8, 2)];
    let router = Router::with_llm(&["posterior".into()], 1.0, &[voter(&server.url())]).unwrap();
    let mut rng = SplitMix(5);
    let decisions = FAILURES_BEFORE_PAUSE + PAUSE_DECISIONS + 1;
    for i in 0..decisions {
        let d = router.route(&query(), &ps, 1, &mut rng);
        assert_eq!(d.chosen, vec!["strong"]);
        assert_eq!(d.abstained.len(), 1);
        if (FAILURES_BEFORE_PAUSE..FAILURES_BEFORE_PAUSE + PAUSE_DECISIONS).contains(&i) {
            assert!(d.abstained[0].1.contains("paused after"), "{:?}", d.abstained);
        }
    }
    // three failures, a pause, then one more try
    assert_eq!(server.request_count() as u32, FAILURES_BEFORE_PAUSE + 1);
}

#[test]
fn an_experiment_with_an_llm_voter_stores_its_rankings() {
    // The model always ranks inspect-first, then schema-first, first; the rest follow.
    let server = ChatServer::start(Script::new().always(|_| (200, text_reply("{\"ranking\": [\"inspect-first\", \"schema-first\"]}"))));
    let toml = format!(
        r#"
name = "llm-voter"
suites = ["dbbench"]
heldout_families = ["DELETE"]
arms = ["harness-s"]
seeds = [1]
iterations = 1
eval_every = 1
workers = 1

[policy]
warm_start_demos = 8

[budget]
batch_tasks = 8
base_tries = 2
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 4

[eval]
train_tasks = 6

[router]
voters = ["posterior"]

[[router.llm]]
name = "judge"
base_url = "{}"
model = "test-model"
max_retries = 0
"#,
        server.url()
    );
    let cfg = ExperimentConfig::parse("llm.toml", &toml).expect("valid config");
    let dir = tempfile::tempdir().unwrap();
    let st = BlockingStore::open(dir.path().join("x.db").to_str().unwrap()).unwrap();
    let out = run_experiment(&cfg, &st, &NullSink, &AtomicBool::new(false)).expect("runs");
    assert!(out.finished);
    let routes = st.records(out.run_id, "route").unwrap();
    assert!(!routes.is_empty(), "some all-fail task was routed");
    for (_, r) in &routes {
        let rankings = r["rankings"].as_array().unwrap();
        let llm = rankings.iter().find(|x| x[0] == "llm:judge").unwrap_or_else(|| panic!("no llm ranking in {r}"));
        assert_eq!(llm[1][0], "inspect-first");
        assert_eq!(llm[1][1], "schema-first");
        assert!(rankings.iter().any(|x| x[0] == "posterior"));
        assert!(r.get("abstained").map(Value::is_null).unwrap_or(true) || r["abstained"].as_array().unwrap().is_empty());
    }
    assert!(server.request_count() >= routes.len());
}

#[test]
fn llm_voter_config_errors_name_the_key() {
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[[router.llm]]\nbase_url = \"\"\nmodel = \"m\"\n").unwrap_err().to_string();
    assert!(e.contains("router.llm[0].base_url"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[[router.llm]]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \" \"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("router.llm[0].model"), "{e}");
    let e = ExperimentConfig::parse("x.toml", "name = \"x\"\n[router]\nvoters = []\n").unwrap_err().to_string();
    assert!(e.contains("router.voters") && e.contains("at least one voter"), "{e}");
}
