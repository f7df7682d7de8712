//! Deleting a run: the store removes the run and everything recorded for it (episodes, records,
//! state) in one transaction on both back-ends, leaves other runs alone, refuses a run marked
//! running unless forced, and keeps everything when the deletion fails half-way; the workbench
//! command `run_delete` and `harness-s store delete-run` on top of it.

use harness_s::episode::{Episode, EpisodeStatus, TRAJECTORY_SCHEMA};
use harness_s::store::{BlockingStore, EpisodeContext, EpisodeFilter, NewRun, RunStatus, Store, StoreError, KIND_EXPERIMENT};
use harness_s::suite::Score;
use harness_s::workbench::Workbench;
use serde_json::json;

#[path = "support/postgres.rs"]
mod postgres;

fn locations(label: &str) -> Vec<String> {
    let mut v = vec!["sqlite::memory:".to_string()];
    v.extend(postgres::fresh_database(label));
    v
}

fn episode(task: &str, success: bool) -> Episode {
    Episode {
        schema: TRAJECTORY_SCHEMA,
        task_id: task.into(),
        suite: "dbbench".into(),
        family: "select".into(),
        harness: "base".into(),
        policy: "builtin".into(),
        sample: 0,
        seed: 7,
        status: EpisodeStatus::Completed,
        steps: vec![],
        score: Some(Score { reward: f64::from(u8::from(success)), success, details: json!({}) }),
        infra_error: None,
        duration_ms: 1.0,
        prompt_tokens: 0,
        completion_tokens: 0,
    }
}

/// A run with `n` episodes, two records and one state entry; finished unless `running`.
async fn filled_run(store: &Store, name: &str, n: usize, running: bool) -> i64 {
    let run = store.create_run(&NewRun::new(KIND_EXPERIMENT, name).suite("dbbench")).await.unwrap();
    let ctx = EpisodeContext::default().with_arm("harness-s").with_seed_index(0).with_iteration(0).with_phase("train");
    let eps: Vec<(Episode, EpisodeContext)> = (0..n).map(|i| (episode(&format!("{name}-{i}"), i % 2 == 0), ctx.clone())).collect();
    store.insert_episodes(run, &eps).await.unwrap();
    store.put_record(run, "distilled", "k1", &json!({"examples": []})).await.unwrap();
    store.put_record(run, "batch", "k2", &json!({"lines": 3})).await.unwrap();
    store.set_state(run, "job", &json!({"iteration": 1})).await.unwrap();
    if !running {
        store.finish_run(run, RunStatus::Finished, &json!({})).await.unwrap();
    }
    run
}

async fn what_is_left(store: &Store, run: i64) -> (bool, u64, usize, usize) {
    (
        store.run(run).await.unwrap().is_some(),
        store.count_episodes(&EpisodeFilter::run(run)).await.unwrap(),
        store.records(run, "distilled").await.unwrap().len() + store.records(run, "batch").await.unwrap().len(),
        store.states(run).await.unwrap().len(),
    )
}

#[tokio::test]
async fn a_run_goes_with_everything_recorded_for_it_on_each_backend() {
    for location in locations("rundelete") {
        let store = Store::open(&location).await.unwrap();
        let a = filled_run(&store, "a", 5, false).await;
        let b = filled_run(&store, "b", 3, false).await;
        let d = store.delete_run(a, false).await.unwrap();
        assert_eq!((d.run_id, d.episodes, d.records, d.states), (a, 5, 2, 1), "{location}");
        assert_eq!(what_is_left(&store, a).await, (false, 0, 0, 0), "{location}: nothing of the run is left");
        assert_eq!(what_is_left(&store, b).await, (true, 3, 2, 1), "{location}: the other run is untouched");
        assert_eq!(store.runs().await.unwrap().iter().map(|r| r.id).collect::<Vec<_>>(), vec![b]);
        // deleting it again: no such run
        let err = store.delete_run(a, false).await.unwrap_err();
        assert!(matches!(err, StoreError::NotFound { .. }), "{location}: {err}");
    }
}

#[tokio::test]
async fn a_running_run_is_refused_unless_forced() {
    for location in locations("rundeleterunning") {
        let store = Store::open(&location).await.unwrap();
        let r = filled_run(&store, "live", 4, true).await;
        let err = store.delete_run(r, false).await.unwrap_err();
        assert!(matches!(err, StoreError::RunRunning { id, .. } if id == r), "{location}: {err}");
        assert!(err.to_string().contains("is running; cancel it first"), "{err}");
        assert_eq!(what_is_left(&store, r).await, (true, 4, 2, 1), "{location}: a refused deletion removes nothing");
        // a run killed before finishing stays `running`: forced, it goes
        let d = store.delete_run(r, true).await.unwrap();
        assert_eq!(d.episodes, 4);
        assert_eq!(what_is_left(&store, r).await, (false, 0, 0, 0));
    }
}

/// A deletion that fails at its last statement leaves every row in place: one transaction.
#[tokio::test]
async fn a_failed_deletion_removes_nothing() {
    // SQLite, in a file a second connection can reach
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let store = Store::open(path.to_str().unwrap()).await.unwrap();
    let run = filled_run(&store, "kept", 6, false).await;
    {
        use sqlx::Connection;
        let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display())).await.unwrap();
        sqlx::raw_sql("CREATE TRIGGER keep_runs BEFORE DELETE ON runs BEGIN SELECT RAISE(ABORT, 'runs are kept'); END;")
            .execute(&mut c)
            .await
            .unwrap();
    }
    let err = store.delete_run(run, false).await.unwrap_err();
    assert!(err.to_string().contains("runs are kept"), "{err}");
    assert_eq!(what_is_left(&store, run).await, (true, 6, 2, 1));

    // Postgres
    if let Some(url) = postgres::fresh_database("rundeletefail") {
        let store = Store::open(&url).await.unwrap();
        let run = filled_run(&store, "kept", 6, false).await;
        {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
            sqlx::raw_sql(
                "CREATE FUNCTION keep_runs() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'runs are kept'; END $$ LANGUAGE plpgsql; \
                 CREATE TRIGGER keep_runs BEFORE DELETE ON runs FOR EACH ROW EXECUTE FUNCTION keep_runs();",
            )
            .execute(&mut c)
            .await
            .unwrap();
        }
        let err = store.delete_run(run, false).await.unwrap_err();
        assert!(err.to_string().contains("runs are kept"), "{err}");
        assert_eq!(what_is_left(&store, run).await, (true, 6, 2, 1));
    }
}

#[test]
fn the_workbench_command_deletes_a_finished_run_and_refuses_a_running_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wb.db");
    let db = db.to_str().unwrap();
    let (done, live) = {
        let store = BlockingStore::open(db).unwrap();
        let rt = store.handle().clone();
        let s = store.store().clone();
        let ids = rt.block_on(async { (filled_run(&s, "done", 5, false).await, filled_run(&s, "live", 2, true).await) });
        store.close();
        ids
    };
    let wb = Workbench::open(db, dir.path()).unwrap();
    let v = wb.call("run_delete", json!({"id": done})).unwrap();
    assert_eq!(v, json!({"run_id": done, "episodes": 5, "records": 2, "states": 1}));
    assert!(wb.store().run(done).unwrap().is_none());
    assert_eq!(wb.store().count_episodes(&EpisodeFilter::run(done)).unwrap(), 0);
    let experiments = wb.call("experiments", json!({})).unwrap();
    assert!(experiments.as_array().unwrap().iter().all(|e| e["id"] != done), "{experiments}");

    let err = wb.call("run_delete", json!({"id": live})).unwrap_err();
    assert_eq!(err.kind(), "conflict", "{err}");
    assert!(err.to_string().contains("marked running"), "{err}");
    assert_eq!(wb.store().count_episodes(&EpisodeFilter::run(live)).unwrap(), 2);

    assert_eq!(wb.call("run_delete", json!({"id": done})).unwrap_err().kind(), "not_found");
    assert_eq!(wb.call("run_delete", json!({})).unwrap_err().kind(), "bad_arguments");
    wb.shutdown();
}

#[test]
fn the_cli_deletes_a_run_when_told_to() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let db = db.to_str().unwrap().to_string();
    let (done, live) = {
        let store = BlockingStore::open(&db).unwrap();
        let s = store.store().clone();
        let ids = store.handle().block_on(async { (filled_run(&s, "done", 3, false).await, filled_run(&s, "live", 2, true).await) });
        store.close();
        ids
    };
    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_harness-s"))
            .args(["store", "delete-run"])
            .args(args)
            .args(["--db", &db])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    // not a terminal and no --yes: nothing is deleted
    let out = cli(&[&done.to_string()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --yes"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli(&[&done.to_string(), "--yes"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("deleted run {done}: 3 episodes, 2 records, 1 state entries"));
    // a run marked running needs --force
    let out = cli(&[&live.to_string(), "--yes"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is running"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli(&[&live.to_string(), "--yes", "--force"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = BlockingStore::open(&db).unwrap();
    assert!(store.runs().unwrap().is_empty());
}
