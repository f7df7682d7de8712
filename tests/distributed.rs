//! One experiment on several processes: a coordinator queues the episodes in a real Postgres
//! store, three `harness-s worker` processes on loopback run them, and one of them is killed
//! with SIGKILL in the middle of an episode. The numbers must be those of the same experiment
//! run in one process, with no episode lost or run twice into the store.

#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/workers.rs"]
mod workers;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use workers::Workers;

use harness_s::events::NullSink;
use harness_s::experiment::{run_experiment, run_experiment_with, Execution, ExperimentConfig};
use harness_s::store::{BlockingStore, EpisodeFilter};
use harness_s::workbench::cluster_status;

fn worker(url: &str, name: &str, fault: Option<&str>) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness-s"));
    cmd.args(["worker", "--db", url, "--slots", "1", "--lease-s", "2", "--name", name]).stdout(Stdio::null()).stderr(Stdio::null());
    cmd.env_remove("HARNESS_S_FAULT");
    if let Some(f) = fault {
        cmd.env("HARNESS_S_FAULT", f);
    }
    cmd.spawn().expect("start a worker")
}

fn reduced_demo() -> ExperimentConfig {
    let demo = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/demo.toml")).unwrap();
    let mut c = ExperimentConfig::parse("demo.toml", &demo).unwrap();
    c.name = "demo-distributed".into();
    c.seeds = vec![1, 2];
    c.iterations = 2;
    c.budget.batch_tasks = 8;
    c.budget.probe_tasks = 6;
    c.eval.train_tasks = 16;
    c.policy.warm_start_demos = 10;
    c
}

/// Every stored episode of a run as what determines it and how it ended, counted.
fn episodes(store: &BlockingStore, run_id: i64) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for r in store.episode_rows(&EpisodeFilter::run(run_id)).unwrap() {
        let x = &r.context;
        let k = format!(
            "{:?}/{:?}/{:?}/{:?}/{:?}/{}/{}/{}/{}/{}/{}",
            x.arm, x.seed_index, x.iteration, x.phase, x.split, r.task_id, r.harness, r.sample, r.seed, r.success, r.n_steps
        );
        *out.entry(k).or_default() += 1;
    }
    out
}

#[test]
fn a_distributed_run_survives_a_killed_worker_with_the_numbers_of_one_process() {
    let Some(url) = postgres::fresh_database("distributed") else { return };
    let c = reduced_demo();
    let dir = tempfile::tempdir().unwrap();
    let local = BlockingStore::open(dir.path().join("local.db").to_str().unwrap()).unwrap();
    let a = run_experiment(&c, &local, &NullSink, &AtomicBool::new(false)).unwrap();

    let pg = BlockingStore::open(&url).unwrap();
    // a lost job would leave the coordinator waiting for ever: fail instead
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(900));
        eprintln!("the distributed run did not finish in 15 minutes");
        std::process::exit(101);
    });
    // the third worker dies (SIGKILL) after its 12th episode, before writing it back
    let mut workers = Workers(vec![worker(&url, "w1", None), worker(&url, "w2", None), worker(&url, "w3", Some("rollout:12"))]);
    // what `experiment status` and the app's Workers panel see while the run goes
    let finished = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (url, finished) = (url.clone(), finished.clone());
        std::thread::spawn(move || {
            let store = BlockingStore::open(&url).unwrap();
            let mut seen = Vec::new();
            while !finished.load(Ordering::Relaxed) {
                seen.push(cluster_status(&store).unwrap());
                std::thread::sleep(Duration::from_millis(300));
            }
            seen
        })
    };
    let t0 = Instant::now();
    let b = run_experiment_with(&c, &pg, &NullSink, &AtomicBool::new(false), Execution::Distributed).unwrap();
    let wall = t0.elapsed();
    finished.store(true, Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    let live =
        seen.iter().find(|s| s.running.iter().any(|r| r.queue.is_some()) && s.workers.len() == 3).expect("a status with the queue and three workers");
    assert_eq!(live.backend, "postgres");
    let r = live.running.iter().find(|r| r.run_id == b.run_id).expect("the run is listed while it runs");
    let q = r.queue.as_ref().unwrap();
    assert!(q.queued + q.running + q.done > 0, "{q:?}");
    assert!(live.workers.iter().all(|w| w.slots == 1 && w.stopped_at.is_none() && w.since_heartbeat_ms >= 0), "{:?}", live.workers);
    let most_done = seen.iter().flat_map(|s| s.workers.iter().map(|w| w.jobs_done)).max().unwrap();
    assert!(most_done > 0, "jobs done counted while the run goes");
    let killed = workers.0[2].try_wait().unwrap();
    assert!(killed.is_some(), "the faulty worker should have died during the run");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(killed.unwrap().signal(), Some(9), "killed by SIGKILL");
    }
    assert!(a.finished && b.finished);
    assert_eq!(a.arms, b.arms);
    assert_eq!(a.heldout_delta, b.heldout_delta);
    assert_eq!(a.deltas, b.deltas);
    assert_eq!(a.rollouts_detail, b.rollouts_detail);
    assert_eq!(a.executor_rollouts, b.executor_rollouts);
    assert_eq!(a.rank_one, b.rank_one);
    assert_eq!(a.curves, b.curves);
    assert_eq!(a.all_fail_tasks, b.all_fail_tasks);
    // the same episodes, each once
    let (ea, eb) = (episodes(&local, a.run_id), episodes(&pg, b.run_id));
    assert_eq!(ea.values().sum::<usize>(), eb.values().sum::<usize>(), "as many episodes stored");
    assert!(ea == eb, "the stored episodes differ");
    // the queue is empty once the run is finished, and the workers did the work
    let q = pg.queue_counts(b.run_id).unwrap();
    assert_eq!((q.queued, q.running, q.done, q.failed), (0, 0, 0, 0));
    let ws = pg.workers().unwrap();
    assert_eq!(ws.len(), 3, "{ws:?}");
    let done: i64 = ws.iter().map(|w| w.jobs_done).sum();
    assert!(done > 0);
    let dead = ws.iter().find(|w| w.name == "w3").unwrap();
    assert!(dead.stopped_at.is_none(), "a killed worker never says it stopped");
    assert!(ws.iter().filter(|w| w.name != "w3").all(|w| w.jobs_done > 0), "both live workers took jobs: {ws:?}");
    // the command line says the same after the run: no run running, three workers, w3's heartbeat aging
    let out = Command::new(env!("CARGO_BIN_EXE_harness-s")).args(["experiment", "status", "--db", &url, "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["running"].as_array().unwrap().len(), 0, "{status}");
    assert_eq!(status["workers"].as_array().unwrap().len(), 3, "{status}");
    let text = Command::new(env!("CARGO_BIN_EXE_harness-s")).args(["experiment", "status", "--db", &url]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("no experiment is running") && text.contains("w3") && text.contains("s ago"), "{text}");
    println!("distributed reduced demo: {:.1} s with 3 workers (one killed); {} episode jobs done", wall.as_secs_f64(), done);

    // a worker stops cleanly on SIGTERM and says so
    let w1 = &workers.0[0];
    // SAFETY: kill sends a signal to a child process this test started.
    unsafe { libc::kill(w1.id() as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = workers.0[0].try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "the worker did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert!(pg.workers().unwrap().iter().find(|w| w.name == "w1").unwrap().stopped_at.is_some());
}

#[test]
fn a_distributed_run_needs_a_postgres_store() {
    let dir = tempfile::tempdir().unwrap();
    let lite = BlockingStore::open(dir.path().join("x.db").to_str().unwrap()).unwrap();
    let err = run_experiment_with(&reduced_demo(), &lite, &NullSink, &AtomicBool::new(false), Execution::Distributed).unwrap_err();
    assert!(err.to_string().contains("needs a Postgres store"), "{err}");
}

#[test]
fn a_worker_with_no_postgres_store_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let out = Command::new(env!("CARGO_BIN_EXE_harness-s")).args(["worker", "--db", db.to_str().unwrap(), "--slots", "1"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs a Postgres store"), "{err}");
}
