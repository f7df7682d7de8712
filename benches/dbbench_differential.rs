//! `cargo bench --bench dbbench_differential`: the embedded DBBench executor against a real
//! MariaDB on every official and bundled gold query and on generated queries (10,000 by default,
//! `HARNESS_S_BENCH_QUERIES` to change; `HARNESS_S_DIFF_SEED` picks the generator's seed). Prints
//! the agreement per source and per kind of query, how agreeing results still differ in form,
//! and every disagreement class with its count and an example of each unexplained one
//! (`HARNESS_S_DIFF_SHOW=<class id>` also prints every disagreement of one allow-listed class).
//!
//! The server: `HARNESS_S_TEST_MYSQL_URL` if set, else a private MariaDB started as the tests
//! start it (`tests/support/mariadb.rs`).

#[path = "../tests/support/dbbench_diff.rs"]
mod dbbench_diff;
#[path = "../tests/support/mariadb.rs"]
mod mariadb;
#[path = "../tests/support/shared_data.rs"]
mod shared_data;

use std::time::Instant;

use dbbench_diff::{bundled_cases, official_cases, run_case, schemas, Generator, Tally, ALLOWED};

fn main() {
    let Some(url) = mariadb::server_url() else {
        eprintln!("no MariaDB server: nothing measured");
        return;
    };
    let n: usize = std::env::var("HARNESS_S_BENCH_QUERIES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let seed: u64 = std::env::var("HARNESS_S_DIFF_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let official = official_cases(shared_data::shared_data("dbbench/dev.jsonl").as_deref());
    if official.is_none() {
        println!("note: dev.jsonl not found next to the checkout: no official queries");
    }
    let bundled = bundled_cases();
    let mut all = official.unwrap_or_default();
    all.extend(bundled);
    let generated = Generator::new(schemas(&all), seed).cases(n);
    all.extend(generated);
    let t0 = Instant::now();
    let mut tally = Tally::default();
    for case in &all {
        match run_case(&url, case) {
            Ok(outcomes) => outcomes.into_iter().for_each(|o| tally.add(o)),
            Err(e) => eprintln!("skipped a case: {e}"),
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    println!("DBBench differential: embedded executor vs {url} (generator seed {seed}), {secs:.1} s");
    println!("\n{:<10} {:>8} {:>8} {:>8}", "source", "agree", "total", "%");
    for (source, (agree, total)) in &tally.per_source {
        println!("{:<10} {agree:>8} {total:>8} {:>7.2}%", source.as_str(), 100.0 * *agree as f64 / (*total).max(1) as f64);
    }
    println!("\nper kind of query:");
    for ((source, kind), (agree, total)) in &tally.per_kind {
        println!("  {:<10} {kind:<16} {agree:>6}/{total:<6}", source.as_str());
    }
    println!("\nagreeing results, by form: {:?}", tally.likeness);
    println!("\ndisagreements, by class:");
    for a in ALLOWED {
        let count = tally.allowed.get(a.id).copied().unwrap_or(0);
        println!("  {:<28} {count:>6}  ({:?}) {}", a.id, a.kind, a.reason);
    }
    // HARNESS_S_DIFF_SHOW=<class id> prints every disagreement of that class (to work on a gap).
    if let Ok(show) = std::env::var("HARNESS_S_DIFF_SHOW") {
        for o in tally.explained.iter().filter(|o| o.class.is_some_and(|c| c.id == show)) {
            println!("{}", o.describe());
        }
    }
    println!("  {:<28} {:>6}", "unexplained", tally.unexplained.len());
    for o in &tally.unexplained {
        println!("{}", o.describe());
    }
}
