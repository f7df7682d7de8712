//! The run store: round trips, filters, checkpoints, records, durability across reopen and kill,
//! redaction, location errors, concurrency through the blocking facade, and (when
//! Every test that is not about SQLite files runs on both back-ends: SQLite and a real
//! PostgreSQL server (`tests/support/postgres.rs`: `HARNESS_S_TEST_PG_URL`, or a private
//! cluster the tests start on loopback).

use std::path::Path;

use harness_s::episode::{CallRecord, Effect, Episode, EpisodeStatus, HookKind, Intervention, Step, TRAJECTORY_SCHEMA};
use harness_s::policy::{AssistantTurn, CallKind, Context, Message, Origin, Role, ToolCall, ToolSpec};
use harness_s::store::{
    redact_secrets, BlockingStore, EpisodeContext, EpisodeFilter, NewRun, RunStatus, Store, StoreError, KIND_EVAL, KIND_EXPERIMENT, REDACTED,
};
use harness_s::suite::{Score, Signals};
use serde_json::json;

#[path = "support/postgres.rs"]
mod postgres;

/// Where each back-end's store for one test lives: SQLite in memory, and a fresh Postgres
/// database (where a server could be had; under CI it must).
fn locations(label: &str) -> Vec<String> {
    let mut v = vec!["sqlite::memory:".to_string()];
    v.extend(postgres::fresh_database(label));
    v
}

fn sql_call(id: &str, sql: &str) -> ToolCall {
    ToolCall { id: id.into(), name: "execute_sql".into(), arguments: json!({ "sql": sql }) }
}

/// An episode with two steps: a query rewritten by a hook (plus injected feedback) and a
/// submission.
fn episode(task_id: &str, family: &str, harness: &str, sample: u32, success: bool) -> Episode {
    let tools = vec![ToolSpec {
        name: "execute_sql".into(),
        description: "Run one SQL statement".into(),
        parameters: json!({"type": "object", "properties": {"sql": {"type": "string"}}}),
    }];
    let first_context = Context {
        messages: vec![
            Message::system("You are a database agent."),
            Message::user(format!("Task {task_id}: how many rows?"), Origin::Frame),
            Message::user("Schema: t(id INTEGER, \"Name\" TEXT)", Origin::Hook { hook: "schema_card".into(), kind: HookKind::OnInit }),
        ],
        tools: tools.clone(),
    };
    let bad = sql_call("c1", "SELECT Name FROM t");
    let fixed = sql_call("c1", "SELECT \"Name\" FROM t");
    let step0 = Step {
        index: 0,
        context: first_context.clone(),
        output: AssistantTurn {
            content: "Let me look.".into(),
            tool_calls: vec![bad.clone()],
            raw: "{\"tool_calls\": [...]}".into(),
            prompt_tokens: 120,
            completion_tokens: 14,
            logprobs: Some(vec![-0.25, -1.5]),
        },
        calls: vec![CallRecord {
            proposed: bad.clone(),
            executed: Some(fixed.clone()),
            observation: "[(\"a\",), (\"b\",)]".into(),
            signals: Signals { error_kind: None, executed: true, empty_result: false, submitted: false },
            duration_ms: 3.5,
        }],
        interventions: vec![
            Intervention {
                hook: "quote_identifiers".into(),
                kind: HookKind::BeforeAction,
                when: vec!["unquoted_identifier".into()],
                effect: Effect::Rewrite { from: bad, to: fixed },
            },
            Intervention {
                hook: "feedback_on_error".into(),
                kind: HookKind::PostStep,
                when: vec!["always".into()],
                effect: Effect::Inject { text: "Identifiers need quotes.".into() },
            },
        ],
        policy_ms: 812.0,
        env_ms: 3.5,
    };
    let mut second_context = first_context;
    second_context.messages.push(Message {
        role: Role::Tool,
        content: "[(\"a\",), (\"b\",)]".into(),
        tool_calls: vec![],
        tool_call_id: Some("c1".into()),
        origin: Origin::Environment,
    });
    let submit = ToolCall { id: "c2".into(), name: "commit_final_answer".into(), arguments: json!({"answers": ["2"]}) };
    let step1 = Step {
        index: 1,
        context: second_context,
        output: AssistantTurn {
            content: String::new(),
            tool_calls: vec![submit.clone()],
            raw: String::new(),
            prompt_tokens: 150,
            completion_tokens: 9,
            logprobs: None,
        },
        calls: vec![CallRecord {
            proposed: submit.clone(),
            executed: Some(submit),
            observation: "submitted".into(),
            signals: Signals { error_kind: None, executed: false, empty_result: false, submitted: true },
            duration_ms: 0.25,
        }],
        interventions: vec![Intervention {
            hook: "hint_counts".into(),
            kind: HookKind::PostStep,
            when: vec![],
            effect: Effect::Inject { text: "Remember COUNT(*).".into() },
        }],
        policy_ms: 640.5,
        env_ms: 0.25,
    };
    Episode {
        schema: TRAJECTORY_SCHEMA,
        task_id: task_id.into(),
        suite: "dbbench".into(),
        family: family.into(),
        harness: harness.into(),
        policy: "mock-policy".into(),
        sample,
        seed: 0xdead_beef_u64 + u64::from(sample),
        status: EpisodeStatus::Completed,
        steps: vec![step0, step1],
        score: Some(Score { reward: if success { 1.0 } else { 0.0 }, success, details: json!({"answer": ["2"], "ground_truth": ["2"]}) }),
        infra_error: None,
        duration_ms: 1460.0,
        prompt_tokens: 310,
        completion_tokens: 29,
    }
}

fn infra_episode(task_id: &str) -> Episode {
    Episode {
        schema: TRAJECTORY_SCHEMA,
        task_id: task_id.into(),
        suite: "dbbench".into(),
        family: "select".into(),
        harness: "bare".into(),
        policy: "mock-policy".into(),
        sample: 0,
        // A seed above i64::MAX must survive the round trip.
        seed: u64::MAX - 7,
        status: EpisodeStatus::InfraError,
        steps: vec![],
        score: None,
        infra_error: Some("database could not start".into()),
        duration_ms: 12.0,
        prompt_tokens: 0,
        completion_tokens: 0,
    }
}

fn temp_db(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_string()
}

/// The round trip every back-end must pass: run, episodes (single and batch), rows, filters,
/// counts, state and records, finish.
async fn round_trip(store: &Store) {
    let run = store
        .create_run(
            &NewRun::new(KIND_EXPERIMENT, "round trip")
                .suite("dbbench")
                .policy("mock-policy")
                .config(json!({"arms": ["bare", "sibling"], "policy": {"model": "m", "api_key": "sk-123"}})),
        )
        .await
        .unwrap();

    let e1 = episode("t-1", "select", "bare", 0, false);
    let e2 = episode("t-2", "aggregate", "sibling", 1, true);
    let e3 = infra_episode("t-3");
    let ctx1 = EpisodeContext::default().with_arm("bare").with_seed_index(0).with_iteration(0).with_phase("train");
    let id1 = store.insert_episode(run, &e1, &ctx1).await.unwrap();
    let batch = vec![
        (e2.clone(), EpisodeContext::default().with_arm("sibling").with_iteration(1).with_phase("eval").with_split("heldout")),
        (e3.clone(), EpisodeContext::default()),
    ];
    let ids = store.insert_episodes(run, &batch).await.unwrap();
    assert_eq!(ids.len(), 2);
    assert!(ids[0] > id1 && ids[1] > ids[0]);

    assert_eq!(store.episode(id1).await.unwrap().as_ref(), Some(&e1));
    assert_eq!(store.episode(ids[0]).await.unwrap().as_ref(), Some(&e2));
    assert_eq!(store.episode(ids[1]).await.unwrap().as_ref(), Some(&e3));
    assert_eq!(store.episode(ids[1] + 1000).await.unwrap(), None);

    let rows = store.episode_rows(&EpisodeFilter::run(run)).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), vec![id1, ids[0], ids[1]]);
    let r1 = &rows[0];
    assert_eq!((r1.run_id, r1.task_id.as_str(), r1.family.as_str(), r1.harness.as_str()), (run, "t-1", "select", "bare"));
    assert_eq!((r1.n_steps, r1.n_interventions, r1.prompt_tokens, r1.completion_tokens), (2, 3, 310, 29));
    assert_eq!((r1.success, r1.reward, r1.status), (false, Some(0.0), EpisodeStatus::Completed));
    assert_eq!(r1.seed, e1.seed);
    assert_eq!(r1.context, ctx1);
    assert_eq!(r1.schema, TRAJECTORY_SCHEMA);
    assert_eq!(rows[1].context.split.as_deref(), Some("heldout"));
    let r3 = &rows[2];
    assert_eq!((r3.status, r3.success, r3.reward), (EpisodeStatus::InfraError, false, None));
    assert_eq!(r3.infra_error.as_deref(), Some("database could not start"));
    assert_eq!(r3.seed, u64::MAX - 7);
    assert_eq!(r3.context, EpisodeContext::default());

    let f = |f: EpisodeFilter| EpisodeFilter { run_id: Some(run), ..f };
    let ids_of = |rows: Vec<harness_s::store::EpisodeRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let sibling = f(EpisodeFilter { arm: Some("sibling".into()), ..Default::default() });
    assert_eq!(ids_of(store.episode_rows(&sibling).await.unwrap()), vec![ids[0]]);
    let succeeded = f(EpisodeFilter { success: Some(true), ..Default::default() });
    assert_eq!(store.count_episodes(&succeeded).await.unwrap(), 1);
    let train = f(EpisodeFilter { phase: Some("train".into()), ..Default::default() });
    assert_eq!(ids_of(store.episode_rows(&train).await.unwrap()), vec![id1]);
    // Case-insensitive text search over the trajectory.
    let text = f(EpisodeFilter { text: Some("IDENTIFIERS NEED".into()), ..Default::default() });
    assert_eq!(store.count_episodes(&text).await.unwrap(), 2);
    let text_task = f(EpisodeFilter { text: Some("t-3".into()), ..Default::default() });
    assert_eq!(ids_of(store.episode_rows(&text_task).await.unwrap()), vec![ids[1]]);
    let page = f(EpisodeFilter { limit: Some(1), offset: Some(1), ..Default::default() });
    assert_eq!(ids_of(store.episode_rows(&page).await.unwrap()), vec![ids[0]]);
    let tail = f(EpisodeFilter { offset: Some(2), ..Default::default() });
    assert_eq!(ids_of(store.episode_rows(&tail).await.unwrap()), vec![ids[1]]);
    assert_eq!(store.count_episodes(&page).await.unwrap(), 3, "count ignores paging");
    let full = store.episodes(&f(EpisodeFilter { harness: Some("sibling".into()), ..Default::default() })).await.unwrap();
    assert_eq!(full, vec![(ids[0], e2.clone())]);

    store.set_state(run, "progress", &json!({"done": 1})).await.unwrap();
    store.set_state(run, "progress", &json!({"done": 3})).await.unwrap();
    assert_eq!(store.state(run, "progress").await.unwrap(), Some(json!({"done": 3})));
    assert_eq!(store.state(run, "missing").await.unwrap(), None);

    store.put_record(run, "routing", "t-1", &json!({"arm": "bare"})).await.unwrap();
    store.put_record(run, "routing", "t-2", &json!({"arm": "sibling"})).await.unwrap();
    store.put_record(run, "routing", "t-1", &json!({"arm": "sibling"})).await.unwrap();
    store.put_record(run, "behaviour_profile", "bare", &json!([1, 2])).await.unwrap();
    assert_eq!(
        store.records(run, "routing").await.unwrap(),
        vec![("t-1".to_string(), json!({"arm": "sibling"})), ("t-2".to_string(), json!({"arm": "sibling"}))]
    );

    let before = store.run(run).await.unwrap().unwrap();
    assert_eq!(before.status, RunStatus::Running);
    assert_eq!(before.finished_at, None);
    assert_eq!(before.config["policy"]["api_key"], json!(REDACTED));
    assert_eq!(before.config["arms"], json!(["bare", "sibling"]));
    store.finish_run(run, RunStatus::Finished, &json!({"success_rate": 0.5})).await.unwrap();
    let after = store.run(run).await.unwrap().unwrap();
    assert_eq!(after.status, RunStatus::Finished);
    assert_eq!(after.summary, Some(json!({"success_rate": 0.5})));
    assert!(after.finished_at.is_some());
    assert_eq!(store.latest_run(Some(KIND_EXPERIMENT)).await.unwrap().map(|r| r.id), Some(run));

    let err = store.finish_run(i64::MAX - 1, RunStatus::Failed, &json!(null)).await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    let err = store.insert_episode(i64::MAX - 1, &e1, &ctx1).await.unwrap_err();
    assert!(err.to_string().contains("insert episode t-1 into run"), "{err}");
}

#[tokio::test]
async fn file_store_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    // The parent directories do not exist yet.
    let path = temp_db(&dir, "nested/runs/store.db");
    let store = Store::open(&path).await.unwrap();
    round_trip(&store).await;
    assert!(Path::new(&path).exists());
    // WAL mode: the write-ahead log sits beside the open database.
    assert!(Path::new(&format!("{path}-wal")).exists());
}

#[tokio::test]
async fn round_trip_on_each_backend() {
    for location in locations("roundtrip") {
        let store = Store::open(&location).await.unwrap();
        round_trip(&store).await;
        if location.starts_with("postgres") {
            assert_eq!(store.backend(), harness_s::store::BackendKind::Postgres);
            // opening again finds the schema in place
            let again = Store::open(&location).await.unwrap();
            assert!(!again.runs().await.unwrap().is_empty());
        }
    }
}

#[tokio::test]
async fn runs_newest_first_and_latest_by_kind() {
    for location in locations("runs") {
        runs_newest_first_and_latest_by_kind_on(Store::open(&location).await.unwrap()).await;
    }
}

async fn runs_newest_first_and_latest_by_kind_on(store: Store) {
    assert!(store.latest_run(None).await.unwrap().is_none());
    let a = store.create_run(&NewRun::new(KIND_EVAL, "a")).await.unwrap();
    let b = store.create_run(&NewRun::new(KIND_EXPERIMENT, "b")).await.unwrap();
    let c = store.create_run(&NewRun::new(KIND_EVAL, "c").harness("bare")).await.unwrap();
    let runs = store.runs().await.unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![c, b, a]);
    assert_eq!(runs[0].harness.as_deref(), Some("bare"));
    assert_eq!(store.latest_run(None).await.unwrap().unwrap().id, c);
    assert_eq!(store.latest_run(Some(KIND_EXPERIMENT)).await.unwrap().unwrap().id, b);
    assert!(store.latest_run(Some("other")).await.unwrap().is_none());
    assert!(store.run(c + 100).await.unwrap().is_none());
}

#[tokio::test]
async fn filters_and_counts() {
    for location in locations("filters") {
        filters_and_counts_on(Store::open(&location).await.unwrap()).await;
    }
}

async fn filters_and_counts_on(store: Store) {
    let run = store.create_run(&NewRun::new(KIND_EXPERIMENT, "filters")).await.unwrap();
    let other = store.create_run(&NewRun::new(KIND_EXPERIMENT, "other")).await.unwrap();
    let mut batch = Vec::new();
    for i in 0..12u32 {
        let harness = if i % 2 == 0 { "bare" } else { "sibling" };
        let family = ["select", "aggregate", "join"][(i % 3) as usize];
        let e = episode(&format!("task-{i:02}"), family, harness, i, i % 4 == 0);
        let ctx = EpisodeContext::default()
            .with_arm(harness)
            .with_iteration(i / 4)
            .with_phase(if i < 8 { "train" } else { "eval" })
            .with_split(if i < 8 { "train" } else { "heldout" });
        batch.push((e, ctx));
    }
    store.insert_episodes(run, &batch).await.unwrap();
    store.insert_episode(other, &episode("task-00", "select", "bare", 0, true), &EpisodeContext::default()).await.unwrap();

    let count = |f: EpisodeFilter| {
        let store = store.clone();
        async move { store.count_episodes(&EpisodeFilter { run_id: Some(run), ..f }).await.unwrap() }
    };
    assert_eq!(count(EpisodeFilter::default()).await, 12);
    assert_eq!(store.count_episodes(&EpisodeFilter::default()).await.unwrap(), 13);
    assert_eq!(count(EpisodeFilter { harness: Some("bare".into()), ..Default::default() }).await, 6);
    assert_eq!(count(EpisodeFilter { arm: Some("sibling".into()), ..Default::default() }).await, 6);
    assert_eq!(count(EpisodeFilter { family: Some("join".into()), ..Default::default() }).await, 4);
    assert_eq!(count(EpisodeFilter { success: Some(true), ..Default::default() }).await, 3);
    assert_eq!(count(EpisodeFilter { success: Some(false), ..Default::default() }).await, 9);
    assert_eq!(count(EpisodeFilter { phase: Some("eval".into()), ..Default::default() }).await, 4);
    assert_eq!(count(EpisodeFilter { split: Some("heldout".into()), ..Default::default() }).await, 4);
    assert_eq!(count(EpisodeFilter { iteration: Some(1), ..Default::default() }).await, 4);
    assert_eq!(count(EpisodeFilter { status: Some(EpisodeStatus::InfraError), ..Default::default() }).await, 0);
    assert_eq!(count(EpisodeFilter { arm: Some("bare".into()), phase: Some("train".into()), success: Some(true), ..Default::default() }).await, 2);
    // Text search: task ids and trajectory text; LIKE wildcards in the query match literally.
    assert_eq!(count(EpisodeFilter { text: Some("task-1".into()), ..Default::default() }).await, 2);
    assert_eq!(count(EpisodeFilter { text: Some("Remember COUNT(*)".into()), ..Default::default() }).await, 12);
    assert_eq!(count(EpisodeFilter { text: Some("task_0".into()), ..Default::default() }).await, 0);
    assert_eq!(count(EpisodeFilter { text: Some("100%".into()), ..Default::default() }).await, 0);

    let page = store
        .episode_rows(&EpisodeFilter { run_id: Some(run), harness: Some("sibling".into()), limit: Some(2), offset: Some(1), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(page.iter().map(|r| r.task_id.as_str()).collect::<Vec<_>>(), vec!["task-03", "task-05"]);
    assert!(page.iter().all(|r| r.context.arm.as_deref() == Some("sibling")));
}

#[tokio::test]
async fn state_is_upserted_per_run_and_key() {
    for location in locations("state") {
        state_is_upserted_per_run_and_key_on(Store::open(&location).await.unwrap()).await;
    }
}

async fn state_is_upserted_per_run_and_key_on(store: Store) {
    let a = store.create_run(&NewRun::new(KIND_EXPERIMENT, "a")).await.unwrap();
    let b = store.create_run(&NewRun::new(KIND_EXPERIMENT, "b")).await.unwrap();
    store.set_state(a, "cursor", &json!(1)).await.unwrap();
    store.set_state(b, "cursor", &json!(100)).await.unwrap();
    store.set_state(a, "cursor", &json!(2)).await.unwrap();
    store.set_state(a, "arm_weights", &json!({"bare": 0.25, "sibling": 0.75})).await.unwrap();
    assert_eq!(store.state(a, "cursor").await.unwrap(), Some(json!(2)));
    assert_eq!(store.state(b, "cursor").await.unwrap(), Some(json!(100)));
    assert_eq!(
        store.states(a).await.unwrap(),
        vec![("arm_weights".to_string(), json!({"bare": 0.25, "sibling": 0.75})), ("cursor".to_string(), json!(2))]
    );
    // State belongs to a run.
    assert!(store.set_state(b + 10, "cursor", &json!(0)).await.is_err());
}

#[tokio::test]
async fn records_by_kind_in_order() {
    for location in locations("records") {
        records_by_kind_in_order_on(Store::open(&location).await.unwrap()).await;
    }
}

async fn records_by_kind_in_order_on(store: Store) {
    let run = store.create_run(&NewRun::new(KIND_EXPERIMENT, "records")).await.unwrap();
    for (i, key) in ["q3", "q1", "q2"].iter().enumerate() {
        store.put_record(run, "distilled_example", key, &json!({"i": i})).await.unwrap();
    }
    store.put_record(run, "routing", "q1", &json!({"chosen": "sibling", "p": [0.1, 0.9]})).await.unwrap();
    store.put_record(run, "distilled_example", "q1", &json!({"i": 10})).await.unwrap();
    assert_eq!(
        store.records(run, "distilled_example").await.unwrap(),
        vec![("q3".into(), json!({"i": 0})), ("q1".into(), json!({"i": 10})), ("q2".into(), json!({"i": 2}))]
    );
    assert_eq!(store.records(run, "routing").await.unwrap().len(), 1);
    assert!(store.records(run, "none").await.unwrap().is_empty());
    assert_eq!(store.record(run, "routing", "q1").await.unwrap(), Some(json!({"chosen": "sibling", "p": [0.1, 0.9]})));
    assert_eq!(store.record(run, "routing", "q9").await.unwrap(), None);
}

/// A SQLite file in `dir`, and a fresh Postgres database: stores that outlive their handle.
fn persistent_locations(dir: &tempfile::TempDir, file: &str) -> Vec<String> {
    let mut v = vec![temp_db(dir, file)];
    v.extend(postgres::fresh_database(file));
    v
}

#[tokio::test]
async fn file_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    for path in persistent_locations(&dir, "store.db") {
        survives_reopen(&path).await;
    }
}

async fn survives_reopen(path: &str) {
    let path = path.to_string();
    let e = episode("t-1", "select", "bare", 0, true);
    let (run, id) = {
        let store = Store::open(&path).await.unwrap();
        let run = store.create_run(&NewRun::new(KIND_EVAL, "persist")).await.unwrap();
        let id = store.insert_episode(run, &e, &EpisodeContext::default()).await.unwrap();
        store.set_state(run, "cursor", &json!(1)).await.unwrap();
        store.put_record(run, "routing", "t-1", &json!("bare")).await.unwrap();
        store.finish_run(run, RunStatus::Finished, &json!({"n": 1})).await.unwrap();
        store.close().await;
        (run, id)
    };
    // Both the plain path and the `sqlite://` URL name the same file.
    let again = if path.starts_with("postgres") { vec![path.clone()] } else { vec![path.clone(), format!("sqlite://{path}")] };
    for location in again {
        let store = Store::open(&location).await.unwrap();
        assert_eq!(store.episode(id).await.unwrap(), Some(e.clone()));
        let r = store.run(run).await.unwrap().unwrap();
        assert_eq!((r.status, r.summary), (RunStatus::Finished, Some(json!({"n": 1}))));
        assert_eq!(store.state(run, "cursor").await.unwrap(), Some(json!(1)));
        assert_eq!(store.records(run, "routing").await.unwrap(), vec![("t-1".into(), json!("bare"))]);
        assert_eq!(store.count_episodes(&EpisodeFilter::default()).await.unwrap(), 1);
        store.close().await;
    }
}

#[tokio::test]
async fn dropped_store_keeps_finished_episodes() {
    let dir = tempfile::tempdir().unwrap();
    for path in persistent_locations(&dir, "dropped.db") {
        dropped_keeps(&path).await;
    }
}

async fn dropped_keeps(path: &str) {
    let path = path.to_string();
    let run;
    {
        let store = Store::open(&path).await.unwrap();
        run = store.create_run(&NewRun::new(KIND_EVAL, "dropped")).await.unwrap();
        for i in 0..5 {
            store.insert_episode(run, &episode(&format!("t-{i}"), "select", "bare", i, true), &EpisodeContext::default()).await.unwrap();
        }
        store.set_state(run, "cursor", &json!(5)).await.unwrap();
        // Dropped without finishing the run or closing the pool.
    }
    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.count_episodes(&EpisodeFilter::run(run)).await.unwrap(), 5);
    assert_eq!(store.run(run).await.unwrap().unwrap().status, RunStatus::Running);
    assert_eq!(store.state(run, "cursor").await.unwrap(), Some(json!(5)));
}

const CHILD_DB_ENV: &str = "HARNESS_S_STORE_TEST_CHILD_DB";

/// A real kill: a child process writes episodes and checkpoints, says so, and is killed with
/// SIGKILL while idle (no destructors, no close, the run left `running`); everything it wrote is
/// there afterwards.
#[test]
fn killed_process_keeps_finished_episodes() {
    use std::io::Write;

    if let Ok(path) = std::env::var(CHILD_DB_ENV) {
        let store = BlockingStore::open(&path).unwrap();
        let run = store.create_run(&NewRun::new(KIND_EVAL, "killed")).unwrap();
        for i in 0..7 {
            store.insert_episode(run, &episode(&format!("t-{i}"), "select", "bare", i, i % 2 == 0), &EpisodeContext::default()).unwrap();
            store.set_state(run, "cursor", &json!(i + 1)).unwrap();
        }
        let mut out = std::io::stdout();
        writeln!(out, "CHILD-WROTE-ALL").unwrap();
        out.flush().unwrap();
        loop {
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for path in persistent_locations(&dir, "killed.db") {
        killed_child_keeps(&path);
    }
}

fn killed_child_keeps(path: &str) {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["killed_process_keeps_finished_episodes", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB_ENV, path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let wrote = lines.any(|l| l.map(|l| l.contains("CHILD-WROTE-ALL")).unwrap_or(false));
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(wrote, "the child did not finish writing (status {status})");
    assert!(!status.success());
    let store = BlockingStore::open(path).unwrap();
    let run = store.latest_run(Some(KIND_EVAL)).unwrap().expect("the child's run");
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(store.count_episodes(&EpisodeFilter::run(run.id)).unwrap(), 7);
    assert_eq!(store.count_episodes(&EpisodeFilter { success: Some(true), ..EpisodeFilter::run(run.id) }).unwrap(), 4);
    assert_eq!(store.state(run.id, "cursor").unwrap(), Some(json!(7)));
    let (_, first) = store.episodes(&EpisodeFilter { limit: Some(1), ..EpisodeFilter::run(run.id) }).unwrap().remove(0);
    assert_eq!(first, episode("t-0", "select", "bare", 0, true));
}

#[tokio::test]
async fn secrets_are_redacted() {
    let mut v = json!({
        "model": "gpt-x",
        "api_key": "sk-live",
        "OPENAI_API_KEY": "sk-env",
        "max_tokens": 512,
        "backend": {"url": "http://h", "auth_token": "abc", "headers": [{"Authorization": "Bearer x"}]},
        "db": {"password": "hunter2", "user": "u", "secret": {"nested": 1}},
        "token": null,
        "tokenizer": "bpe",
    });
    redact_secrets(&mut v);
    assert_eq!(
        v,
        json!({
            "model": "gpt-x",
            "api_key": REDACTED,
            "OPENAI_API_KEY": REDACTED,
            "max_tokens": 512,
            "backend": {"url": "http://h", "auth_token": REDACTED, "headers": [{"Authorization": REDACTED}]},
            "db": {"password": REDACTED, "user": "u", "secret": REDACTED},
            "token": null,
            "tokenizer": "bpe",
        })
    );

    for location in locations("secrets") {
        secrets_stay_out(Store::open(&location).await.unwrap()).await;
    }
}

async fn secrets_stay_out(store: Store) {
    let run = store.create_run(&NewRun::new(KIND_EVAL, "secrets").config(json!({"policy": {"api_key": "sk-live", "model": "m"}}))).await.unwrap();
    store.finish_run(run, RunStatus::Finished, &json!({"token": "leak", "n": 1})).await.unwrap();
    let row = store.run(run).await.unwrap().unwrap();
    assert_eq!(row.config, json!({"policy": {"api_key": REDACTED, "model": "m"}}));
    assert_eq!(row.summary, Some(json!({"token": REDACTED, "n": 1})));
    assert!(!serde_json::to_string(&row).unwrap().contains("sk-live"));
}

#[tokio::test]
async fn bad_locations_are_clear_errors() {
    for (location, expect) in [
        ("mysql://user:pw@localhost/db", "`mysql://` is not a supported store"),
        ("mariadb://localhost/db", "is not a supported store"),
        ("ftp://example.com/x.db", "unknown scheme `ftp://`"),
        ("", "empty location"),
        ("   ", "empty location"),
    ] {
        let err = Store::open(location).await.unwrap_err();
        assert!(matches!(err, StoreError::UnsupportedLocation { .. }), "{location}: {err}");
        let msg = err.to_string();
        assert!(msg.contains(expect), "{location}: {msg}");
        assert!(!msg.contains("pw@"), "password shown: {msg}");
    }
    // A file that cannot be created names the location.
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let location = blocker.join("store.db").to_str().unwrap().to_string();
    let err = Store::open(&location).await.unwrap_err();
    assert!(err.to_string().contains(&location), "{err}");
}

#[test]
fn concurrent_inserts_through_blocking_store() {
    let dir = tempfile::tempdir().unwrap();
    for path in persistent_locations(&dir, "concurrent.db") {
        concurrent_inserts(BlockingStore::open(&path).unwrap());
    }
}

fn concurrent_inserts(store: BlockingStore) {
    let run = store.create_run(&NewRun::new(KIND_EVAL, "concurrent")).unwrap();
    let per_thread = 25u32;
    let workers: Vec<_> = (0..4u32)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for i in 0..per_thread {
                    let e = episode(&format!("w{t}-{i}"), "select", &format!("h{t}"), i, i % 5 == 0);
                    let ctx = EpisodeContext::default().with_arm(format!("arm{t}"));
                    ids.push(store.insert_episode(run, &e, &ctx).unwrap());
                    if i % 5 == 0 {
                        store.set_state(run, &format!("cursor-{t}"), &json!(i)).unwrap();
                        store.put_record(run, "routing", &format!("w{t}-{i}"), &json!(t)).unwrap();
                    }
                }
                ids
            })
        })
        .collect();
    let mut ids: Vec<i64> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 100);
    assert_eq!(store.count_episodes(&EpisodeFilter::run(run)).unwrap(), 100);
    for t in 0..4 {
        let f = EpisodeFilter { arm: Some(format!("arm{t}")), ..EpisodeFilter::run(run) };
        assert_eq!(store.count_episodes(&f).unwrap(), u64::from(per_thread));
        assert_eq!(store.state(run, &format!("cursor-{t}")).unwrap(), Some(json!(20)));
    }
    assert_eq!(store.records(run, "routing").unwrap().len(), 20);
    let some = store.episode(ids[37]).unwrap().unwrap();
    assert_eq!(some.steps.len(), 2);
}

#[test]
fn blocking_store_on_a_given_runtime() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    for location in locations("given_runtime") {
        let store = BlockingStore::open_with(runtime.handle().clone(), &location).unwrap();
        let run = store.create_run(&NewRun::new(KIND_EVAL, "given runtime")).unwrap();
        let e = episode("t-1", "select", "bare", 0, true);
        let id = store.insert_episode(run, &e, &EpisodeContext::default()).unwrap();
        assert_eq!(store.episode(id).unwrap(), Some(e));
        assert_eq!(store.runs().unwrap().len(), 1);
    }
}

/// An `Effect::Call` intervention (its call kind is written as `call_kind`, apart from the hook's
/// `kind`) survives the round trip.
#[tokio::test]
async fn episode_with_a_policy_call_intervention_round_trips() {
    let mut e = episode("t-call", "select", "bare", 0, true);
    e.steps[0].interventions.push(Intervention {
        hook: "reflect_on_error".into(),
        kind: HookKind::Reflect,
        when: vec!["error".into()],
        effect: Effect::Call {
            kind: CallKind::Reflect,
            prompt: "What went wrong?".into(),
            output: "Identifiers need quotes.".into(),
            prompt_tokens: 40,
            completion_tokens: 6,
        },
    });
    for location in locations("call") {
        let store = Store::open(&location).await.unwrap();
        let run = store.create_run(&NewRun::new(KIND_EVAL, "call")).await.unwrap();
        let id = store.insert_episode(run, &e, &EpisodeContext::default()).await.unwrap();
        assert_eq!(store.episode(id).await.unwrap(), Some(e.clone()));
    }
}

fn wal_size(path: &str) -> u64 {
    std::fs::metadata(format!("{path}-wal")).map(|m| m.len()).unwrap_or(0)
}

/// The last clone of a store dropped merges the write-ahead log: one file of its true size is
/// left, and `store info` counts it.
#[test]
fn dropping_a_store_merges_its_write_ahead_log_and_info_measures_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_db(&dir, "merged.db");
    {
        let store = BlockingStore::open(&path).unwrap();
        let clone = store.clone();
        let run = store.create_run(&NewRun::new(KIND_EVAL, "merged")).unwrap();
        for i in 0..40 {
            clone.insert_episode(run, &episode(&format!("t-{i}"), "select", "bare", i, i % 3 == 0), &EpisodeContext::default()).unwrap();
        }
        drop(clone);
        // a clone still holds the store: nothing merged yet
        assert!(wal_size(&path) > 0, "the writes should be in the log while the store is open");
    }
    assert_eq!(wal_size(&path), 0, "the log was not merged on drop");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let info = rt.block_on(harness_s::store::StoreInfo::of(&path)).unwrap();
    assert_eq!((info.runs, info.episodes, info.wal_bytes), (1, 40, 0));
    assert_eq!(info.bytes, std::fs::metadata(&path).unwrap().len(), "only the main file should be left: {:?}", info.files);
    assert_eq!(info.bytes_per_episode, Some(info.bytes as f64 / 40.0));
    let episodes_part = info.parts.iter().find(|p| p.name == "episodes").expect("the episodes table");
    assert!(episodes_part.bytes > 0 && episodes_part.bytes <= info.bytes);
    // measuring leaves the store as it found it: merged
    assert_eq!(wal_size(&path), 0);
}

/// A process killed with its store open leaves the log; `store info` reports it as found, and
/// a missing file is an error that names it rather than a new empty store.
#[test]
fn info_reports_a_log_left_by_a_killed_writer_and_refuses_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_db(&dir, "left.db");
    let store = BlockingStore::open(&path).unwrap();
    let run = store.create_run(&NewRun::new(KIND_EVAL, "left")).unwrap();
    for i in 0..10 {
        store.insert_episode(run, &episode(&format!("t-{i}"), "select", "bare", i, true), &EpisodeContext::default()).unwrap();
    }
    let left = wal_size(&path);
    assert!(left > 0);
    // what a SIGKILL leaves: no destructor runs
    std::mem::forget(store);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let info = rt.block_on(harness_s::store::StoreInfo::of(&path)).unwrap();
    assert_eq!(info.wal_bytes, left);
    assert_eq!(info.episodes, 10);
    let missing = temp_db(&dir, "missing.db");
    let err = rt.block_on(harness_s::store::StoreInfo::of(&missing)).unwrap_err().to_string();
    assert!(err.contains("missing.db"), "{err}");
    assert!(!std::path::Path::new(&missing).exists());
}

/// `store info` on Postgres (where a server could be had; under CI it must): counts, and the
/// tables' sizes as the database reports them.
#[tokio::test]
async fn info_on_postgres_counts_and_sizes_the_tables() {
    if let Some(location) = postgres::fresh_database("info") {
        let store = Store::open(&location).await.unwrap();
        let run = store.create_run(&NewRun::new(KIND_EVAL, "info")).await.unwrap();
        for i in 0..5 {
            store.insert_episode(run, &episode(&format!("t-{i}"), "select", "bare", i, true), &EpisodeContext::default()).await.unwrap();
        }
        let info = harness_s::store::StoreInfo::of(&location).await.unwrap();
        assert_eq!((info.backend, info.runs, info.episodes, info.wal_bytes), ("postgres", 1, 5, 0));
        let episodes = info.parts.iter().find(|p| p.name == "episodes").expect("the episodes table");
        assert!(episodes.bytes > 0 && info.bytes >= episodes.bytes, "{info:?}");
        assert_eq!(info.bytes, info.parts.iter().map(|p| p.bytes).sum::<u64>());
        assert!(info.files.is_empty());
    }
}

/// An episode with long texts (interned) that vary with `i`, as a suite's would.
fn long_episode(i: u32) -> Episode {
    let mut e = episode(&format!("task-{i:04}"), "select", "bare", i, i.is_multiple_of(3));
    e.steps[0].context.messages[0].content = format!("You are a database agent working on a fixed schema. {}", "Rules. ".repeat(20));
    e.steps[0].calls[0].observation = format!("[{}]", (0..(i % 7 + 3)).map(|k| format!("(\"row {k} of task {i}\",)")).collect::<Vec<_>>().join(", "));
    e
}

#[test]
fn trajectories_are_interned_and_compressed_with_a_dictionary_that_later_processes_use() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_db(&dir, "dict.db");
    let written: Vec<Episode> = (0..700).map(long_episode).collect();
    let ids = {
        let store = BlockingStore::open(&path).unwrap();
        let run = store.create_run(&NewRun::new(KIND_EVAL, "dict")).unwrap();
        // four writers at once, as an experiment's workers write; then one
        let mut ids: Vec<i64> = std::thread::scope(|s| {
            let handles: Vec<_> = written[..600]
                .chunks(150)
                .map(|chunk| {
                    let store = store.clone();
                    s.spawn(move || chunk.iter().map(|e| store.insert_episode(run, e, &EpisodeContext::default()).unwrap()).collect::<Vec<_>>())
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        ids.extend(written[600..].iter().map(|e| store.insert_episode(run, e, &EpisodeContext::default()).unwrap()));
        for (id, e) in ids.iter().zip(&written) {
            assert_eq!(&store.episode(*id).unwrap().unwrap(), e);
        }
        ids
    };
    let conn = rusqlite::Connection::open(&path).unwrap();
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(count("SELECT COUNT(*) FROM dictionaries WHERE suite = 'dbbench'"), 1, "one dictionary, trained once");
    let last = ids[600];
    let with = count(&format!("SELECT COUNT(*) FROM episodes WHERE dictionary IS NOT NULL AND id >= {last}"));
    assert_eq!(with, 100, "the episodes written after training use it");
    // the system prompt is stored once, however many episodes carry it
    assert_eq!(count("SELECT COUNT(*) FROM strings WHERE body LIKE 'You are a database agent working%'"), 1);
    assert!(count("SELECT MAX(LENGTH(trajectory)) FROM episodes WHERE dictionary IS NOT NULL") < 400);
    drop(conn);
    // a later process reads with the stored dictionary and strings, and writes with them
    let store = BlockingStore::open(&path).unwrap();
    for (id, e) in ids.iter().zip(&written) {
        assert_eq!(&store.episode(*id).unwrap().unwrap(), e);
    }
    let more = store.insert_episode(1, &long_episode(9_999), &EpisodeContext::default()).unwrap();
    assert_eq!(store.episode(more).unwrap().unwrap(), long_episode(9_999));
    store.close();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(conn.query_row("SELECT COUNT(*) FROM dictionaries", [], |r| r.get::<_, i64>(0)).unwrap(), 1);
    assert!(conn.query_row("SELECT dictionary FROM episodes WHERE id = ?1", [more], |r| r.get::<_, Option<i64>>(0)).unwrap().is_some());
}

#[test]
fn a_string_whose_hash_is_taken_by_another_text_is_stored_inline() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_db(&dir, "collision.db");
    let e = long_episode(1);
    let prompt = e.steps[0].context.messages[0].content.clone();
    {
        let store = BlockingStore::open(&path).unwrap();
        store.create_run(&NewRun::new(KIND_EVAL, "collision")).unwrap();
        store.close();
    }
    // another text already holds the prompt's content hash (FNV-1a 64, as stored)
    let hash = prompt.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3)) as i64;
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("INSERT INTO strings (hash, body) VALUES (?1, 'some other text')", [hash]).unwrap();
    drop(conn);
    let store = BlockingStore::open(&path).unwrap();
    let id = store.insert_episode(1, &e, &EpisodeContext::default()).unwrap();
    let again = store.insert_episode(1, &e, &EpisodeContext::default()).unwrap();
    assert_eq!(store.episode(id).unwrap().unwrap(), e);
    assert_eq!(store.episode(again).unwrap().unwrap(), e);
    store.close();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(conn.query_row("SELECT COUNT(*) FROM strings WHERE hash = ?1", [hash], |r| r.get::<_, i64>(0)).unwrap(), 1);
}
