//! `cargo bench --bench queue`: the episode queue's ceiling. For 1, 2, 4, 8, 16 and 32
//! `harness-s worker` processes (one slot each) against one local Postgres server, queues jobs
//! that cost nothing to run and prints the jobs claimed and completed per second: what one
//! Postgres serves before the workers' episodes cost anything.
//!
//! Postgres: `HARNESS_S_TEST_PG_URL` if set, else a private cluster from Debian's binaries (as
//! the tests start). `HARNESS_S_BENCH_WORKERS=1,4,16` chooses the counts, `HARNESS_S_BENCH_JOBS`
//! the jobs per count (default 4,000).

#[path = "../tests/support/postgres.rs"]
mod postgres;
#[path = "../tests/support/workers.rs"]
mod workers;

use std::process::{Command, Stdio};

use std::time::{Duration, Instant};
use workers::Workers;

use harness_s::experiment::distributed::NOOP_REQUEST;
use harness_s::store::{BlockingStore, NewRun};

fn main() {
    if postgres::fresh_database("queuebench").is_none() {
        eprintln!("no PostgreSQL server: nothing measured");
        return;
    }
    let counts: Vec<usize> = std::env::var("HARNESS_S_BENCH_WORKERS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 4, 8, 16, 32]);
    let jobs: usize = std::env::var("HARNESS_S_BENCH_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(4000);
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("episode queue: {jobs} zero-cost jobs per row, workers of one slot, one Postgres on this machine ({cores} cores)");
    println!("{:>8} {:>12} {:>14} {:>16}", "workers", "seconds", "jobs/s", "jobs/s/worker");
    for n in counts {
        let url = postgres::fresh_database("queuebench").expect("a database");
        let store = BlockingStore::open(&url).unwrap();
        let run = store.create_run(&NewRun::new("experiment", "queue bench")).unwrap();
        let mut workers = Workers(Vec::new());
        for i in 0..n {
            workers.0.push(
                Command::new(env!("CARGO_BIN_EXE_harness-s"))
                    .args(["worker", "--db", &url, "--slots", "1", "--name", &format!("bench-{i}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::inherit()) // a worker that fails says why
                    .spawn()
                    .expect("start a worker"),
            );
        }
        // every worker registered (and polling) before the clock starts
        let t0 = Instant::now();
        while store.workers().unwrap().len() < n {
            assert!(t0.elapsed() < Duration::from_secs(60), "the workers did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(600));
        let rows: Vec<(String, String)> = (0..jobs).map(|i| (format!("bench/{i}"), NOOP_REQUEST.to_string())).collect();
        let t = Instant::now();
        store.enqueue_jobs(run, &rows).unwrap();
        loop {
            let c = store.queue_counts(run).unwrap();
            if c.done as usize >= jobs {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let secs = t.elapsed().as_secs_f64();
        let rate = jobs as f64 / secs;
        println!("{n:>8} {secs:>12.2} {rate:>14.0} {:>16.0}", rate / n as f64);
        drop(workers);
    }
}
