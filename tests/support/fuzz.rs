//! A small mutational fuzzer for the workbench's input parsers, run inside `cargo test` for a
//! bounded time.
//!
//! Each target starts from a seed corpus of valid inputs and applies one to six mutations per
//! execution: byte flips, inserts of the target's dictionary tokens and of extreme numbers,
//! deletions, duplications, truncation, splices with another seed, and (for JSON inputs) the
//! replacement of a random node by a value of another kind, a huge string, or deep nesting. A
//! target passes when no input makes it panic (errors are fine: they are the point).
//!
//! - `HARNESS_S_FUZZ_SECS`: seconds per target (default 2; the test command sets 30).
//! - `HARNESS_S_FUZZ_SEED`: the generator's seed (default: from the clock; printed).
//!
//! Inputs that panicked are written to `tests/fuzz-cases/<target>/crash-<hash>` and every file in
//! that folder is replayed first, on every run, as a regression test.
#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// What one target run did.
#[derive(Debug)]
pub struct FuzzReport {
    pub target: String,
    pub executions: u64,
    pub regressions: usize,
    pub seconds: f64,
    pub crashes: Vec<PathBuf>,
}

const EXTREMES: &[&str] = &[
    "-1",
    "0",
    "-0",
    "1e309",
    "-1e309",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775809",
    "1000000000000",
    "4294967296",
    "0.5",
    "\"\"",
    "null",
    "true",
    "[]",
    "{}",
    "\u{0}",
    "\u{feff}",
    "\u{10ffff}",
    "\\u0000",
    "\\ud800",
];

fn seconds() -> f64 {
    std::env::var("HARNESS_S_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0)
}

fn cases_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-cases").join(target)
}

fn fnv(data: &[u8]) -> u64 {
    harness_s::seed::fnv1a(data.iter().copied())
}

/// Replace a random node of `v` by something another parser would not expect.
fn mutate_json_node(v: &mut Value, rng: &mut StdRng, depth: usize) {
    let descend = depth < 12 && rng.gen_bool(0.7);
    match v {
        Value::Object(m) if descend && !m.is_empty() => {
            let k = m.keys().nth(rng.gen_range(0..m.len())).cloned().unwrap();
            if rng.gen_bool(0.1) {
                m.remove(&k);
                return;
            }
            mutate_json_node(m.get_mut(&k).unwrap(), rng, depth + 1);
            return;
        }
        Value::Array(a) if descend && !a.is_empty() => {
            let i = rng.gen_range(0..a.len());
            if rng.gen_bool(0.1) {
                a.remove(i);
                return;
            }
            mutate_json_node(&mut a[i], rng, depth + 1);
            return;
        }
        _ => {}
    }
    *v = match rng.gen_range(0..12) {
        0 => Value::Null,
        1 => Value::Bool(rng.gen()),
        2 => serde_json::json!(rng.gen::<i64>()),
        3 => serde_json::json!(rng.gen::<f64>() * 1e300),
        4 => Value::String("x".repeat(rng.gen_range(0..200_000))),
        5 => Value::String(String::new()),
        6 => Value::Array(vec![]),
        7 => serde_json::json!({}),
        8 => {
            let mut n = Value::Null;
            for _ in 0..rng.gen_range(1..200) {
                n = Value::Array(vec![n]);
            }
            n
        }
        9 => serde_json::json!(-1),
        10 => Value::String("\u{0}\u{202e}\u{ffff}'\"\\`;--".into()),
        _ => serde_json::json!(u64::MAX),
    };
}

fn mutate(input: &[u8], corpus: &[Vec<u8>], dict: &[&str], rng: &mut StdRng) -> Vec<u8> {
    // JSON inputs get a structural mutation half of the time
    if rng.gen_bool(0.5) {
        if let Ok(mut v) = serde_json::from_slice::<Value>(input) {
            for _ in 0..rng.gen_range(1..4) {
                mutate_json_node(&mut v, rng, 0);
            }
            return serde_json::to_vec(&v).unwrap();
        }
    }
    let mut d = input.to_vec();
    for _ in 0..rng.gen_range(1..7) {
        let len = d.len();
        let at = if len == 0 { 0 } else { rng.gen_range(0..=len) };
        match rng.gen_range(0..9) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                d[i] ^= 1 << rng.gen_range(0..8);
            }
            1 => {
                let tok = if rng.gen_bool(0.5) && !dict.is_empty() {
                    dict[rng.gen_range(0..dict.len())]
                } else {
                    EXTREMES[rng.gen_range(0..EXTREMES.len())]
                };
                d.splice(at..at, tok.bytes());
            }
            2 if len > 0 => {
                let end = (at + rng.gen_range(1..64)).min(len);
                d.drain(at.min(len)..end.max(at.min(len)));
            }
            3 if len > 0 => {
                let s = rng.gen_range(0..len);
                let e = (s + rng.gen_range(1..256)).min(len);
                let chunk = d[s..e].to_vec();
                for _ in 0..rng.gen_range(1..4) {
                    d.splice(at..at, chunk.iter().copied());
                }
            }
            4 => d.truncate(at),
            5 if !corpus.is_empty() => {
                let other = &corpus[rng.gen_range(0..corpus.len())];
                if !other.is_empty() {
                    let s = rng.gen_range(0..other.len());
                    let e = (s + rng.gen_range(1..512)).min(other.len());
                    d.splice(at..at, other[s..e].iter().copied());
                }
            }
            6 if len > 0 => {
                // a number nearby becomes an extreme one
                let i = rng.gen_range(0..len);
                if let Some(p) = d[i..].iter().position(|b| b.is_ascii_digit()) {
                    let s = i + p;
                    let e = s + d[s..].iter().take_while(|b| b.is_ascii_digit() || **b == b'.').count();
                    let tok = EXTREMES[rng.gen_range(0..10)];
                    d.splice(s..e, tok.bytes());
                }
            }
            7 => {
                let n = rng.gen_range(1..300);
                let (open, close) = if rng.gen_bool(0.5) { ("[", "]") } else { ("{\"a\":", "}") };
                let mut s = open.repeat(n);
                s.push_str(&close.repeat(n));
                d.splice(at..at, s.bytes());
            }
            _ => d.insert(at, rng.gen()),
        }
        if d.len() > 1 << 20 {
            d.truncate(1 << 20);
        }
    }
    d
}

thread_local! {
    static FUZZING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Panics a target raises while fuzzing are expected and counted, not printed; any other panic
/// (a failing assertion) is reported as usual.
fn quiet_panics_while_fuzzing() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !FUZZING.with(|f| f.get()) {
                default(info);
            }
        }));
    });
}

/// Fuzz `target` from `seeds` for the configured time; panics (fails the test) if any input
/// made it panic, after saving each such input.
pub fn fuzz(name: &str, seeds: &[Vec<u8>], dict: &[&str], target: impl Fn(&[u8])) -> FuzzReport {
    let started = Instant::now();
    let dir = cases_dir(name);
    let mut crashes = Vec::new();
    quiet_panics_while_fuzzing();
    FUZZING.with(|f| f.set(true));
    // saved cases first: every earlier finding stays fixed
    let mut regressions = 0;
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut files: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).unwrap();
            regressions += 1;
            if catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
                crashes.push(f);
            }
        }
    }
    let seed_panics = seeds.iter().filter(|s| catch_unwind(AssertUnwindSafe(|| target(s))).is_err()).count();
    let seed: u64 = std::env::var("HARNESS_S_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1));
    let mut rng = StdRng::seed_from_u64(seed ^ fnv(name.as_bytes()));
    let budget = Duration::from_secs_f64(seconds());
    let mut corpus: Vec<Vec<u8>> = seeds.to_vec();
    let mut executions = 0u64;
    let t0 = Instant::now();
    while t0.elapsed() < budget {
        let base = corpus[rng.gen_range(0..corpus.len())].clone();
        let input = mutate(&base, &corpus, dict, &mut rng);
        executions += 1;
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("crash-{:016x}", fnv(&input)));
            std::fs::write(&path, &input).unwrap();
            crashes.push(path);
            if crashes.len() >= 5 {
                break;
            }
        } else if corpus.len() < 256 && rng.gen_bool(0.02) {
            // keep some mutants as new starting points
            corpus.push(input);
        }
    }
    FUZZING.with(|f| f.set(false));
    assert_eq!(seed_panics, 0, "{name}: a seed input panics");
    let report = FuzzReport { target: name.into(), executions, regressions, seconds: started.elapsed().as_secs_f64(), crashes };
    println!(
        "fuzz {name}: {} executions in {:.1}s (seed {seed}), {} saved cases replayed, {} crashes",
        report.executions,
        report.seconds,
        report.regressions,
        report.crashes.len()
    );
    assert!(report.crashes.is_empty(), "{name}: inputs that panic were saved: {:?}", report.crashes);
    report
}
