//! An episode read as JSON without being built (`Store::episode_json`, what the `episode`
//! command sends) is exactly the episode serialised, on both back-ends, for packed rows with
//! interned strings and a dictionary, and for long episodes.

use harness_s::episode::{CallRecord, Episode, EpisodeStatus, Step, TRAJECTORY_SCHEMA};
use harness_s::policy::{AssistantTurn, Context, Message, Origin, ToolCall};
use harness_s::store::{EpisodeContext, EpisodeFilter, NewRun, Store, KIND_EXPERIMENT};
use harness_s::suite::{Score, Signals};
use serde_json::json;

#[path = "support/postgres.rs"]
mod postgres;

/// An episode of `n` steps whose contexts grow by a call and its observation each step; the
/// long texts recur across episodes, so they are interned once the store has seen them.
fn episode(task: &str, n: usize) -> Episode {
    let mut context = Context {
        messages: vec![
            Message::system("You are a database agent. Answer with SQL; every statement is run on the task's database."),
            Message::user(format!("Task {task}: how many rows does the table hold? Look before you answer."), Origin::Frame),
        ],
        tools: vec![],
    };
    let mut steps = Vec::new();
    for i in 0..n {
        let call =
            ToolCall { id: format!("c{i}"), name: "execute_sql".into(), arguments: json!({"sql": format!("SELECT COUNT(*) FROM t WHERE id > {i}")}) };
        let observation = format!("[({},)] -- the result of the statement, long enough to be interned in the store", 1000 - i);
        steps.push(Step {
            index: i,
            context: context.clone(),
            output: AssistantTurn {
                content: String::new(),
                tool_calls: vec![call.clone()],
                raw: String::new(),
                prompt_tokens: 10,
                completion_tokens: 3,
                logprobs: None,
            },
            calls: vec![CallRecord {
                proposed: call.clone(),
                executed: Some(call.clone()),
                observation: observation.clone(),
                signals: Signals { error_kind: None, executed: true, empty_result: false, submitted: false },
                duration_ms: 0.5,
            }],
            interventions: vec![],
            policy_ms: 1.0,
            env_ms: 0.5,
        });
        context.messages.push(Message::user(observation, Origin::Environment));
    }
    Episode {
        schema: TRAJECTORY_SCHEMA,
        task_id: task.into(),
        suite: "dbbench".into(),
        family: "select".into(),
        harness: "base".into(),
        policy: "builtin".into(),
        sample: 0,
        seed: 3,
        status: EpisodeStatus::Completed,
        steps,
        score: Some(Score { reward: 1.0, success: true, details: json!({"answer": ["100"]}) }),
        infra_error: None,
        duration_ms: 2.0,
        prompt_tokens: 10 * n as u64,
        completion_tokens: 3 * n as u64,
    }
}

#[tokio::test]
async fn the_stored_json_is_the_episode_serialised() {
    let mut locations = vec!["sqlite::memory:".to_string()];
    locations.extend(postgres::fresh_database("episodejson"));
    for location in locations {
        let store = Store::open(&location).await.unwrap();
        let run = store.create_run(&NewRun::new(KIND_EXPERIMENT, "json")).await.unwrap();
        // enough episodes for strings to be interned and the suite's dictionary to be trained
        let mut written = Vec::new();
        for i in 0..210 {
            let e = episode(&format!("t{}", i % 7), if i == 209 { 300 } else { 1 + i % 5 });
            written.push((store.insert_episode(run, &e, &EpisodeContext::default()).await.unwrap(), e));
        }
        for (id, e) in written.iter().step_by(23).chain(written.last()) {
            let json = store.episode_json(*id).await.unwrap().expect("stored");
            let built = store.episode(*id).await.unwrap().expect("stored");
            assert_eq!(&built, e, "{location}: episode {id} reads back as written");
            assert_eq!(json, serde_json::to_value(&built).unwrap(), "{location}: episode {id}'s stored JSON is the episode serialised");
        }
        assert_eq!(store.episode_json(written.last().unwrap().0 + 1000).await.unwrap(), None);
        assert_eq!(store.count_episodes(&EpisodeFilter::run(run)).await.unwrap(), 210);
    }
}
