//! Nothing outlives the workbench: a SWE-Gym experiment is killed (SIGKILL, and SIGTERM) while
//! its sandboxed commands run; afterwards no process it started remains, and its scratch folders
//! are gone (at once after SIGTERM; at the next start after SIGKILL).
//!
//! This file holds one test on purpose: the test process makes itself a child subreaper, so every
//! orphan of the killed workbench becomes its child and can be counted, which other tests'
//! children running in the same process would confuse.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const EXPERIMENT: &str = r#"
name = "swe-kill"
suites = ["swegym"]
heldout_families = ["harness-s/urlkit"]
arms = ["policy-only", "harness-s"]
seeds = [1, 2]
iterations = 4
eval_every = 2
reanchor_every = 2
workers = 2

[policy]
warm_start_demos = 3

[budget]
batch_tasks = 4
base_tries = 2
probe_tasks = 2

[eval]
train_tasks = 3
"#;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_harness-s"))
}

/// Processes whose parent is `pid`, with their command lines.
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(n) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // the command name may hold spaces and parentheses: fields start after the last ')'
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 1 && fields[1] == pid.to_string() && fields[0] != "Z" {
            let cmd = std::fs::read(e.path().join("cmdline")).map(|b| String::from_utf8_lossy(&b).replace('\0', " ")).unwrap_or_default();
            out.push((n, cmd));
        }
    }
    out
}

fn descendants(pid: u32) -> Vec<(u32, String)> {
    let mut all = Vec::new();
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        for (c, cmd) in children_of(p) {
            queue.push(c);
            all.push((c, cmd));
        }
    }
    all
}

/// The scratch roots under the temporary folder `tmp` and the memory base beside it (`mem`,
/// given to the workbench in place of /dev/shm so that its roots there are seen too).
fn scratch_roots(tmp: &Path) -> Vec<PathBuf> {
    [tmp.to_path_buf(), memory_base(tmp)]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with("harness-s-"))
        .map(|e| e.path())
        .collect()
}

fn memory_base(tmp: &Path) -> PathBuf {
    tmp.with_file_name("mem")
}

fn start(dir: &Path, tmp: &Path, name: &str) -> Child {
    let config = dir.join(format!("{name}.toml"));
    std::fs::write(&config, EXPERIMENT).unwrap();
    Command::new(bin())
        .args(["experiment", "run"])
        .arg(&config)
        .arg("--db")
        .arg(dir.join(format!("{name}.db")))
        .env("TMPDIR", tmp)
        .env(harness_s::sandbox::scratch::ENV_MEMORY_SCRATCH, memory_base(tmp))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Wait until the workbench runs sandboxed commands (a `bwrap` among its descendants).
fn wait_for_sandboxes(child: &Child) {
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        if descendants(child.id()).iter().any(|(_, cmd)| cmd.contains("bwrap")) {
            return;
        }
        assert!(Instant::now() < deadline, "no sandboxed command started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_no_orphans(me: u32, what: &str) {
    std::thread::sleep(Duration::from_secs(5));
    let left: Vec<_> = descendants(me).into_iter().filter(|(_, cmd)| !cmd.is_empty()).collect();
    assert!(left.is_empty(), "{what}: processes outlived the workbench: {left:?}");
}

#[test]
fn a_killed_workbench_leaves_no_process_and_no_scratch_folder() {
    assert!(harness_s::sandbox::availability().usable(), "bubblewrap must work here");
    // SAFETY: prctl(2) on this process only; orphans of our descendants now become our children.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }, 0);
    let me = std::process::id();
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::create_dir(memory_base(&tmp)).unwrap();

    // SIGKILL mid-run: no destructor runs, the kernel must clean up. Once as the first sandbox
    // is being set up, once in the thick of the run.
    for (i, delay) in [Duration::ZERO, Duration::from_millis(1500)].into_iter().enumerate() {
        let mut child = start(dir.path(), &tmp, &format!("killed-{i}"));
        wait_for_sandboxes(&child);
        std::thread::sleep(delay);
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        child.wait().unwrap();
        assert_no_orphans(me, &format!("after SIGKILL {i}"));
        let left = scratch_roots(&tmp);
        assert!(left.iter().any(|r| r.starts_with(memory_base(&tmp))), "the workspaces should be in the memory base: {left:?}");
        assert!(!left.is_empty(), "a killed workbench cannot remove its scratch folder itself");
        // the next start removes it
        let out = Command::new(bin())
            .arg("suites")
            .env("TMPDIR", &tmp)
            .env(harness_s::sandbox::scratch::ENV_MEMORY_SCRATCH, memory_base(&tmp))
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(scratch_roots(&tmp).is_empty(), "left after the next start: {:?}", scratch_roots(&tmp));
    }

    // SIGTERM mid-run: the workbench stops, and removes its scratch folder on the way out
    let mut child = start(dir.path(), &tmp, "terminated");
    wait_for_sandboxes(&child);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t0.elapsed() > Duration::from_secs(120) {
            // a second signal quits at once
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_no_orphans(me, "after SIGTERM");
    assert!(scratch_roots(&tmp).is_empty(), "left after SIGTERM: {:?}", scratch_roots(&tmp));
}
