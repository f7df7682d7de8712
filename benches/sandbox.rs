//! Cost of containment per command: the same commands through SWE-Gym's local runtime in the
//! bubblewrap sandbox and with process-level limits only, and the AppWorld runner's start-up in
//! each, and an AppWorld episode's first cell with a runner of its own and with one forked by the
//! fork server. Prints milliseconds per command (median and mean).
//!
//! Run: `cargo bench --bench sandbox` (the unsandboxed figures come from a second process that
//! is told bubblewrap is missing).

use std::time::{Duration, Instant};

use harness_s::suite::appworld::world::apps::World;
use harness_s::suite::appworld::world::forkserver::ForkSlot;
use harness_s::suite::appworld::world::python::contained_python;
use harness_s::suite::appworld::world::sandbox::Sandbox;
use harness_s::suite::swegym::runtime::{run_process, Limits, LocalRuntime, Runtime};

fn stats(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (ms[ms.len() / 2], ms.iter().sum::<f64>() / ms.len() as f64)
}

fn measure(label: &str, n: usize, mut f: impl FnMut()) {
    f();
    let ms: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let (median, mean) = stats(ms);
    println!("{label:<56} {median:>9.2} {mean:>9.2}");
}

fn main() {
    let mode = if harness_s::sandbox::availability().usable() { "sandbox" } else { "no sandbox" };
    if std::env::var_os("HARNESS_S_BENCH_CHILD").is_none() {
        println!("{:<56} {:>9} {:>9}", "ms per command", "median", "mean");
    }
    let mut rt = LocalRuntime::empty().expect("a runtime");
    let limits = Limits { timeout: Duration::from_secs(30), max_output: 1 << 20 };
    measure(&format!("true ({mode})"), 100, || {
        rt.exec("true", None, &limits).unwrap();
    });
    measure(&format!("python3 -c pass ({mode})"), 50, || {
        rt.exec("python3 -c pass", None, &limits).unwrap();
    });
    measure(&format!("cat > file with stdin ({mode})"), 100, || {
        rt.exec("cat > f.txt", Some(b"hello\n"), &limits).unwrap();
    });
    measure(&format!("appworld runner start + exit ({mode})"), 30, || {
        let (cmd, lifeline) = contained_python("python3", &["-I", "-c", "pass"]).unwrap();
        run_process(cmd, None, &limits).unwrap();
        drop(lifeline);
    });
    let task = &harness_s::suite::appworld::world::all_tasks()[0];
    let mut world = World::new(task.data());
    measure(&format!("appworld episode, first cell, own runner ({mode})"), 30, || {
        let mut sb = Sandbox::new("python3", Duration::from_secs(10));
        assert_eq!(sb.execute("print(1)", &mut world).unwrap().output, "1");
    });
    let forks = std::sync::Arc::new(ForkSlot::new("python3", harness_s::suite::appworld::world::python::DRIVER));
    measure(&format!("appworld episode, first cell, fork server ({mode})"), 100, || {
        let mut sb = Sandbox::new("python3", Duration::from_secs(10)).with_fork_server(forks.clone());
        assert_eq!(sb.execute("print(1)", &mut world).unwrap().output, "1");
    });
    if std::env::var_os("HARNESS_S_BENCH_CHILD").is_none() && mode == "sandbox" {
        let exe = std::env::current_exe().unwrap();
        let status = std::process::Command::new(exe).env("HARNESS_S_BENCH_CHILD", "1").env("HARNESS_S_BWRAP", "/nonexistent/bwrap").status().unwrap();
        assert!(status.success());
    }
}
