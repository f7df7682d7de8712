//! The integrity suite: what a model being trained could do to the run's records and rewards
//! rather than to the machine (the escape suite, `tests/escape.rs`, covers containment). Each
//! test is an attack; `docs/security.md` lists them with the guarantee each checks:
//! - no episode sets another's grade (the pure-command cache is keyed by all it depends on);
//! - no model hides a failure as an infrastructure error (an episode's status follows its
//!   cause), and a slow model keeps its runner;
//! - the bundled AppWorld servers serve only the workbench that started them, and AppWorld
//!   episodes share no files or IPC objects;
//! - quotas count every byte and entry however deep, and one action cannot take gigabytes of the
//!   workbench's memory;
//! - one coordinator per run, enforced in the store.
//!
//! The sandbox is required here, as in the escape suite.

#[path = "support/postgres.rs"]
mod postgres;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness_s::episode::{Episode, EpisodeStatus};
use harness_s::harness::{run_episode, EpisodeRequest, HarnessLibrary, HarnessSpec};
use harness_s::message::Context;
use harness_s::policy::scripted::ScriptedPolicy;
use harness_s::policy::{AssistantTurn, CallOptions, Policy, PolicyError, ToolCall};
use harness_s::store::{BlockingStore, EpisodeContext, EpisodeFilter, NewRun, StoreError};
use harness_s::suite::appworld::world::python::DRIVER;
use harness_s::suite::appworld::world::WorldOptions;
use harness_s::suite::appworld::{AppWorld, AppWorldConfig};
use harness_s::suite::dbbench::DbBench;
use harness_s::suite::swegym::instance::{bundled_tasks, instance_of};
use harness_s::suite::swegym::{SweGym, SweGymConfig};
use harness_s::suite::{Action, Environment, Suite};
use harness_s::task::Task;
use serde_json::json;

fn sandbox_required() {
    assert!(harness_s::sandbox::availability().usable(), "bubblewrap must work here: {:?}", harness_s::sandbox::availability());
}

fn spec(suite: &str, name: &str) -> HarnessSpec {
    HarnessLibrary::builtin().unwrap().get(suite, name).unwrap().spec.clone()
}

fn episode(suite: &dyn Suite, task: &Task, policy: &dyn Policy) -> Episode {
    let base = spec(suite.name(), "base");
    run_episode(&EpisodeRequest { suite, harness: &base, task, policy, sample: 0, seed: 1, temperature: 0.0, cancel: None })
}

/// A scripted policy that thinks: it waits `pause` before the turns `slow` names.
struct Paced {
    script: ScriptedPolicy,
    pause: Duration,
    slow: Vec<usize>,
    turn: std::sync::atomic::AtomicUsize,
}

impl Paced {
    fn new(turns: Vec<AssistantTurn>, pause: Duration, slow: Vec<usize>) -> Paced {
        Paced { script: ScriptedPolicy::new("paced", turns), pause, slow, turn: Default::default() }
    }
}

impl Policy for Paced {
    fn name(&self) -> String {
        "paced".into()
    }
    fn act(&self, ctx: &Context, opts: &CallOptions) -> Result<AssistantTurn, PolicyError> {
        let i = self.turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if self.slow.contains(&i) {
            std::thread::sleep(self.pause);
        }
        self.script.act(ctx, opts)
    }
}

fn call(name: &str, args: serde_json::Value) -> Action {
    ToolCall { id: "c".into(), name: name.into(), arguments: args }
}

// ------------------------------------------------------------------------------------------------
// SWE-Gym: one episode never sets another's grade.
// ------------------------------------------------------------------------------------------------

fn textkit() -> (Task, harness_s::suite::swegym::instance::Instance) {
    let tasks = bundled_tasks().unwrap();
    let task = tasks.iter().find(|t| t.family == "harness-s/textkit").unwrap().clone();
    let inst = instance_of(&task).unwrap();
    (task, inst)
}

fn bash(env: &mut Box<dyn Environment>, cmd: &str) -> String {
    env.step(&call("execute_bash", json!({ "command": cmd }))).unwrap().observation
}

/// The files a patch changes.
fn patched_files(patch: &str) -> Vec<String> {
    patch.lines().filter_map(|l| l.strip_prefix("diff --git a/")).map(|l| l.split(" b/").next().unwrap().to_string()).collect()
}

#[test]
fn swegym_a_forged_git_index_grades_neither_its_episode_nor_a_later_one() {
    sandbox_required();
    let suite = SweGym::with_config(SweGymConfig::default());
    let (task, inst) = textkit();
    let files = patched_files(&inst.patch);
    assert!(!files.is_empty());
    // the attacker stages the reference fix, hides it from the work tree with --skip-worktree
    // and puts the files back as they were: the files are the base's, the index holds the fix
    let mut a = suite.make_env(&task).unwrap();
    a.step(&call("str_replace_editor", json!({"command": "create", "path": "/tmp/fix.patch", "file_text": inst.patch}))).ok();
    bash(&mut a, &format!("cat > /tmp/fix.patch <<'EOF'\n{}EOF", inst.patch));
    let out = bash(&mut a, "git apply /tmp/fix.patch && git add -A && echo STAGED");
    assert!(out.contains("STAGED"), "{out}");
    for f in &files {
        let out = bash(&mut a, &format!("git update-index --skip-worktree {f} && git show HEAD:{f} > {f} && echo HIDDEN"));
        assert!(out.contains("HIDDEN"), "{out}");
    }
    let forged = bash(&mut a, "git diff --cached HEAD --stat");
    assert!(files.iter().all(|f| forged.contains(f.as_str())), "the index holds the fix: {forged}");
    let score = a.score(None).unwrap();
    assert!(!score.success, "the forged index graded its own episode: {}", score.details);
    assert_eq!(score.details["diff"], "", "{}", score.details);
    drop(a);
    // a later episode with the same files (no change at all) is graded on its own work
    let mut b = suite.make_env(&task).unwrap();
    let score = b.score(None).unwrap();
    assert!(!score.success, "an earlier episode set this one's grade: {}", score.details);
    assert_eq!(score.details["diff"], "", "{}", score.details);
    // and the reference fix, made for real, still resolves
    bash(&mut b, &format!("cat > /tmp/fix.patch <<'EOF'\n{}EOF\ngit apply /tmp/fix.patch && rm /tmp/fix.patch", inst.patch));
    assert!(b.score(None).unwrap().success);
}

#[test]
fn swegym_a_planted_python_cache_never_poisons_a_later_episode() {
    sandbox_required();
    let suite = SweGym::with_config(SweGymConfig::default());
    let (task, _) = textkit();
    // exactly the instance's test command: the one whose output the workbench caches
    let tests = "python3 -m unittest";
    let mut clean = suite.make_env(&task).unwrap();
    let baseline = bash(&mut clean, tests);
    assert!(baseline.contains("Ran "), "{baseline}");
    drop(clean);
    // an unchecked-hash .pyc of a poisoned core.py, with the source put back: the interpreter
    // loads the cache without looking at the source
    let mut a = suite.make_env(&task).unwrap();
    let plant = "cp textkit/core.py /tmp/core.py && echo 'raise RuntimeError(\"poisoned by an earlier episode\")' > textkit/core.py && \
                 python3 -c \"import py_compile, importlib.util as u; py_compile.compile('textkit/core.py', cfile=u.cache_from_source('textkit/core.py'), \
                 invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\" && cp /tmp/core.py textkit/core.py && echo PLANTED";
    assert!(bash(&mut a, plant).contains("PLANTED"));
    let poisoned = bash(&mut a, tests);
    assert!(poisoned.contains("poisoned by an earlier episode"), "the plant did not take: {poisoned}");
    drop(a);
    // a later episode with the same sources runs its tests for real
    let mut b = suite.make_env(&task).unwrap();
    let out = bash(&mut b, tests);
    assert!(!out.contains("poisoned"), "an earlier episode's cache poisoned this one: {out}");
    assert_eq!(out, baseline);
}

/// The quota in force for a bundled workspace: (bytes, entries).
fn quotas() -> (u64, u64) {
    use harness_s::suite::swegym::runtime::{DISK_INODE_QUOTA, DISK_QUOTA, MEMORY_INODE_QUOTA, MEMORY_QUOTA};
    if harness_s::sandbox::scratch::memory_base().is_some() {
        (MEMORY_QUOTA, MEMORY_INODE_QUOTA)
    } else {
        (DISK_QUOTA, DISK_INODE_QUOTA)
    }
}

#[test]
fn swegym_the_disk_quota_counts_deep_paths_and_empty_files() {
    sandbox_required();
    let suite = SweGym::with_config(SweGymConfig { bundled_timeout: Duration::from_secs(120), ..SweGymConfig::default() });
    let (task, _) = textkit();
    let (bytes, inodes) = quotas();
    // 1.2 times the byte quota in three files under a path of over 5,000 characters
    let chunk_mb = bytes * 2 / 5 / (1 << 20);
    let mut env = suite.make_env(&task).unwrap();
    let deep = format!(
        "n=$(printf 'd%.0s' $(seq 200)); for i in $(seq 25); do mkdir $n && cd $n || exit 1; done; \
         for j in 1 2 3; do head -c {chunk_mb}M /dev/zero > f$j || exit 1; done; echo WRITTEN"
    );
    let out = env.step(&call("execute_bash", json!({ "command": deep }))).unwrap();
    assert!(out.observation.contains("WRITTEN"), "{}", out.observation);
    assert!(out.done && out.signals.error_kind.as_deref() == Some("disk_quota"), "{}", out.observation);
    let score = env.score(None).unwrap();
    assert!(!score.success && score.details["reason"].as_str().unwrap().contains("disk quota"), "{}", score.details);
    // empty files: no block, but an inode each
    let mut env = suite.make_env(&task).unwrap();
    let n = inodes + 1_000;
    let empty = format!("python3 -c \"import os\nos.makedirs('e', exist_ok=True)\nfor i in range({n}): open(f'e/{{i}}', 'w').close()\" && echo MADE");
    let out = env.step(&call("execute_bash", json!({ "command": empty }))).unwrap();
    assert!(out.observation.contains("MADE"), "{}", out.observation);
    assert!(out.done && out.signals.error_kind.as_deref() == Some("disk_quota"), "{}", out.observation);
    assert!(out.observation.contains("entries"), "{}", out.observation);
}

// ------------------------------------------------------------------------------------------------
// An episode's status follows its cause.
// ------------------------------------------------------------------------------------------------

fn swe_turn(name: &str, args: serde_json::Value) -> AssistantTurn {
    ScriptedPolicy::call(name, args)
}

#[test]
fn swegym_bytes_no_command_can_carry_and_oversized_commands_are_the_model_s_failure() {
    sandbox_required();
    let suite = SweGym::with_config(SweGymConfig::default());
    let (task, inst) = textkit();
    let attempts = [
        (swe_turn("execute_bash", json!({"command": "echo a\u{0}b"})), "NUL byte"),
        (swe_turn("execute_bash", json!({"command": format!("echo {}", "x".repeat(200_000))})), "too long"),
        (swe_turn("str_replace_editor", json!({"command": "view", "path": "/testbed/te\u{0}xtkit"})), "NUL"),
        (
            swe_turn("str_replace_editor", json!({"command": "create", "path": format!("/testbed/{}", "n".repeat(300)), "file_text": "x"})),
            "name too long",
        ),
    ];
    let mut turns: Vec<AssistantTurn> = attempts.iter().map(|(t, _)| t.clone()).collect();
    turns.push(swe_turn("finish", json!({})));
    let bad = episode(&suite, &task, &ScriptedPolicy::new("bad-bytes", turns));
    assert_eq!(bad.status, EpisodeStatus::Completed, "{:?}", bad.infra_error);
    assert!(bad.infra_error.is_none() && bad.counts() && !bad.success());
    for (step, (_, what)) in bad.steps.iter().zip(&attempts) {
        let obs = &step.calls[0].observation;
        assert!(obs.contains("ERROR") && obs.contains(what), "{what}: {obs}");
    }
    // the same try with the reference fix resolves; together they are 1 of 2, and both are in
    // the training group (one with a positive advantage, one with a negative)
    let fix = vec![
        swe_turn("str_replace_editor", json!({"command": "create", "path": "/testbed/fix.patch", "file_text": inst.patch})),
        swe_turn("execute_bash", json!({"command": "git apply fix.patch && rm fix.patch"})),
        swe_turn("finish", json!({})),
    ];
    let good = episode(&suite, &task, &ScriptedPolicy::new("fixer", fix));
    assert!(good.success(), "{:?}", good.score);
    assert_both_count(&suite, &task, good, bad);
}

#[test]
fn swegym_a_repository_the_model_broke_ends_its_episode_as_its_failure() {
    sandbox_required();
    let suite = SweGym::with_config(SweGymConfig::default());
    let (task, _) = textkit();
    let turns = vec![swe_turn("execute_bash", json!({"command": "rm -rf .git"})), swe_turn("finish", json!({}))];
    let ep = episode(&suite, &task, &ScriptedPolicy::new("breaker", turns));
    assert_eq!(ep.status, EpisodeStatus::ActionError, "{:?} {:?}", ep.infra_error, ep.score);
    assert!(ep.infra_error.is_none() && ep.counts() && ep.reward() == 0.0);
    let reason = ep.score.as_ref().unwrap().details["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("computing the diff failed"), "{reason}");
}

/// `good` succeeded and `bad` failed by its own doing: both count, in the success rate (1 of 2)
/// and in the GRPO group (both members, advantages of opposite sign).
fn assert_both_count(suite: &dyn Suite, task: &Task, good: Episode, bad: Episode) {
    let summary = harness_s::eval::summarise(0, suite, std::slice::from_ref(task), &[good.clone(), bad.clone()], false, 0.0);
    assert_eq!((summary.completed, summary.infra_errors), (2, 0));
    assert!((summary.success_rate - 0.5).abs() < 1e-9, "{}", summary.success_rate);
    let members = harness_s::experiment::group_members(&[good, bad]);
    assert_eq!(members.len(), 2, "{members:?}");
    assert!(members[0].1 > 0.0 && members[1].1 < 0.0, "{members:?}");
}

/// The AppWorld runner program without its cell filter: code that got past it.
fn unfiltered_driver() -> String {
    let d = DRIVER.replace("            problem = unsafe(tree)\n", "            problem = None\n");
    assert_ne!(d, DRIVER);
    d
}

fn appworld(driver: Option<String>, servers: usize) -> AppWorld {
    AppWorld::with_config(AppWorldConfig {
        world: WorldOptions { python: "python3".into(), time_limit: Duration::from_secs(10), driver },
        bundled_servers: servers,
        ..AppWorldConfig::default()
    })
}

fn cell(code: &str) -> AssistantTurn {
    ScriptedPolicy::call("execute_python", json!({ "code": code }))
}

/// What each call of `ep` observed, in order (a scripted policy past its script makes none).
fn observations(ep: &Episode) -> Vec<&str> {
    ep.steps.iter().flat_map(|s| s.calls.iter()).map(|c| c.observation.as_str()).collect()
}

fn appworld_task(suite: &AppWorld, family: &str) -> Task {
    suite.bundled_tasks().unwrap().into_iter().find(|t| t.family == family).unwrap()
}

#[test]
fn appworld_a_runner_its_own_code_ended_is_the_model_s_failure() {
    sandbox_required();
    let suite = appworld(Some(unfiltered_driver()), 1);
    let task = appworld_task(&suite, "todo_complete");
    let turns = vec![
        // killed while its cell runs
        cell("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"),
        cell("x = 1\nprint('alive', x)"),
        // killed by a timer it left behind, after its cell ended; the next cell finds it gone
        cell("import os, signal, threading\nthreading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()\nprint('armed')"),
        cell("print('after')"),
        cell("print('fresh')"),
    ];
    let ep = episode(&suite, &task, &Paced::new(turns, Duration::from_secs(2), vec![3]));
    assert_ne!(ep.status, EpisodeStatus::InfraError, "{:?}", ep.infra_error);
    assert!(ep.infra_error.is_none() && ep.counts() && !ep.success());
    let obs = observations(&ep);
    assert!(obs[0].contains("ended unexpectedly"), "{obs:?}");
    assert!(obs[1].contains("alive 1"), "{obs:?}");
    assert!(obs[2].contains("armed"), "{obs:?}");
    assert!(obs[3].contains("has ended") && obs[3].contains("did not run"), "{obs:?}");
    assert!(obs[4].contains("fresh"), "{obs:?}");
    // beside a try that solves the task, it is one failed try of two
    let reference = harness_s::suite::appworld::world::tasks::find(&task.id).unwrap().requirement().1.reference;
    let good = episode(&suite, &task, &ScriptedPolicy::new("solver", vec![cell(&reference)]));
    assert!(good.success(), "{:?}", good.score);
    assert_both_count(&suite, &task, good, ep);
}

#[test]
fn appworld_a_model_that_thinks_30_s_between_cells_keeps_its_runner() {
    sandbox_required();
    let suite = appworld(None, 1);
    let task = appworld_task(&suite, "todo_complete");
    let turns = vec![cell("x = 41\nprint('set')"), cell("print(x + 1)")];
    let ep = episode(&suite, &task, &Paced::new(turns, Duration::from_secs(30), vec![1]));
    assert_ne!(ep.status, EpisodeStatus::InfraError, "{:?}", ep.infra_error);
    let obs = observations(&ep);
    assert_eq!(obs[1], "42", "the runner (and its variables) did not survive the wait: {obs:?}");
}

#[test]
fn appworld_the_filter_refuses_star_imports_and_modules_reached_through_modules() {
    sandbox_required();
    let suite = appworld(None, 1);
    let task = appworld_task(&suite, "todo_complete");
    let attempts = [
        ("from operator import *\nprint(attrgetter('__self__')(print))", "import *"),
        ("from typing import *\nprint(get_type_hints)", "import *"),
        ("import typing\nprint(typing.sys)", "sys"),
        ("import typing\nos = typing.sys.modules['os']\nos.kill(os.getpid(), 9)", "modules"),
        ("import dataclasses\nprint(dataclasses.inspect)", "inspect"),
        ("import dataclasses\nprint(dataclasses.inspect.os.listdir('/'))", "os"),
    ];
    let ep = episode(&suite, &task, &ScriptedPolicy::new("star", attempts.iter().map(|(c, _)| cell(c)).collect()));
    for (step, (code, what)) in ep.steps.iter().zip(&attempts) {
        let obs = &step.calls[0].observation;
        assert!(obs.contains("not allowed") && obs.contains(what), "{code}: {obs}");
    }
}

// ------------------------------------------------------------------------------------------------
// AppWorld: the bundled servers serve only their workbench; episodes share nothing.
// ------------------------------------------------------------------------------------------------

/// A request from another process (Python's urllib): the status it got.
fn foreign_request(url: &str, body: &str, headers: &[(&str, &str)]) -> u16 {
    let script = r#"
import json, sys, urllib.request, urllib.error
url, body, headers = sys.argv[1], sys.argv[2].encode(), json.loads(sys.argv[3])
req = urllib.request.Request(url, data=body, method="POST", headers=headers)
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
"#;
    let headers: serde_json::Map<String, serde_json::Value> = headers.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let out = Command::new("python3").args(["-c", script, url, body, &serde_json::Value::Object(headers).to_string()]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn appworld_world_servers_refuse_every_other_process() {
    sandbox_required();
    let suite = appworld(None, 1);
    let task = appworld_task(&suite, "todo_complete");
    let mut env = suite.make_env(&task).unwrap();
    let env_url = suite.server_urls().unwrap()[0].clone();
    let port = env_url.rsplit(':').next().unwrap().to_string();
    let reference = harness_s::suite::appworld::world::tasks::find(&task.id).unwrap().requirement().1.reference;
    let solve = json!({"task_id": task.id, "code": reference}).to_string();
    let json_type = ("Content-Type", "application/json");
    for path in ["execute", "evaluate", "task_completed", "close", "close_all", "initialize"] {
        let url = format!("{env_url}/{path}");
        assert_eq!(foreign_request(&url, &solve, &[json_type]), 401, "{path} without the token");
        assert_eq!(foreign_request(&url, &solve, &[json_type, ("Authorization", "Bearer 0123456789abcdef0123456789abcdef")]), 401, "{path}");
        // a web page that rebinds its DNS name to 127.0.0.1 sends its own name
        assert_eq!(foreign_request(&url, &solve, &[json_type, ("Host", &format!("attacker.example:{port}"))]), 421, "{path} rebinding");
    }
    // a plain cross-origin form POST
    assert_eq!(foreign_request(&format!("{env_url}/close_all"), "a=b", &[("Content-Type", "application/x-www-form-urlencoded")]), 401);
    // nothing of it ran: the task is not solved and the episode goes on
    assert!(!env.score(None).unwrap().success);
    let out = env.step(&call("execute_python", json!({ "code": reference }))).unwrap();
    assert!(!out.observation.contains("Traceback"), "{}", out.observation);
    assert!(env.score(None).unwrap().success);
}

#[test]
fn appworld_each_episode_has_its_own_tmp_dev_shm_and_ipc() {
    sandbox_required();
    // one server: both episodes are forked by the same fork server, in the same sandbox
    let suite = appworld(Some(unfiltered_driver()), 1);
    let task = appworld_task(&suite, "todo_complete");
    // code past the filter: the real builtins and any module
    let shm = "import builtins, ctypes\nopen = builtins.open\nlibc = ctypes.CDLL(None, use_errno=True)\n";
    let first = vec![cell(&format!(
        "{shm}open('/tmp/left', 'w').write('x')\nopen('/dev/shm/left', 'w').write('x')\n\
         print('shm', libc.shmget(4242, 4096, 0o1600))\n\
         try:\n    open('/dev/planted', 'w')\n    print('dev writable')\nexcept OSError as e:\n    print('dev', e.errno)"
    ))];
    let ep = episode(&suite, &task, &ScriptedPolicy::new("writer", first));
    let obs = &ep.steps[0].calls[0].observation;
    assert!(obs.contains("shm ") && !obs.contains("shm -1") && obs.contains("dev 30"), "{obs}");
    let second = vec![cell(&format!(
        "{shm}import os\nprint(os.path.exists('/tmp/left'), os.path.exists('/dev/shm/left'), libc.shmget(4242, 0, 0), sorted(os.listdir('/tmp')))"
    ))];
    let ep = episode(&suite, &task, &ScriptedPolicy::new("reader", second));
    assert_eq!(ep.steps[0].calls[0].observation, "False False -1 []");
}

// ------------------------------------------------------------------------------------------------
// Memory: one action cannot take gigabytes of the workbench's memory.
// ------------------------------------------------------------------------------------------------

/// The workbench's peak resident memory (this process's `VmHWM`), in MB.
fn peak_rss_mb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap().trim().trim_end_matches(" kB").trim().parse().unwrap();
    kb / 1024
}

/// The bound every case below stays under, for the whole process: the test binary's own
/// footprint, the suites' data, and at most the per-action caps (a 32 MB SQL result, a 4 MB
/// runner line, SQLite's 256 MB statement memory and what one step adds past it) with room to spare.
const PEAK_RSS_BOUND_MB: u64 = 512;

/// Run `case` in a fresh copy of this test binary (a process of its own, so its peak memory is
/// its own) and return that peak.
fn peak_of(case: &str) -> u64 {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["memory_case", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env("HARNESS_S_MEMORY_CASE", case)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{case}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let at = stdout.find("PEAK_MB=").unwrap_or_else(|| panic!("{case}: {stdout}"));
    stdout[at + "PEAK_MB=".len()..].split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
#[ignore = "run by one_action_cannot_take_gigabytes_of_the_workbench_s_memory in a process of its own"]
fn memory_case() {
    let case = std::env::var("HARNESS_S_MEMORY_CASE").unwrap();
    match case.as_str() {
        "sql" => {
            let suite = DbBench::new();
            let task = suite.bundled_tasks().unwrap().into_iter().next().unwrap();
            let mut env = suite.make_env(&task).unwrap();
            let rows = "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000) SELECT x FROM c) AS t";
            let wide = (0..150).map(|_| "randomblob(1000000)").collect::<Vec<_>>().join(", ");
            for sql in [
                // 3 GB of rows: stopped at the result's cap
                format!("SELECT randomblob(1000000) FROM {rows}"),
                // 2.7 GB in SQLite's sorter: stopped at the statement's memory limit
                format!("SELECT randomblob(900000) AS b FROM {rows} ORDER BY b"),
                format!("SELECT randomblob(1000000) AS b FROM {rows} ORDER BY b"),
                // one row of 150 MB
                format!("SELECT {wide}"),
                format!("SELECT {wide}, {wide}"),
                "SELECT randomblob(2000000000)".to_string(),
                format!("SELECT group_concat(randomblob(1000000)) FROM {rows}"),
            ] {
                let out = env.step(&call("execute_sql", json!({ "query": sql }))).unwrap();
                println!("after `{}`: {} MB: {}", &sql[..60.min(sql.len())], peak_rss_mb(), &out.observation[..200.min(out.observation.len())]);
                assert!(out.observation.len() < 4096, "{}", &out.observation[..200]);
                assert!(out.signals.error_kind.is_some(), "{sql}: {}", out.observation);
            }
        }
        "print" => {
            sandbox_required();
            let suite = appworld(None, 1);
            let task = appworld_task(&suite, "todo_complete");
            let turns = vec![cell("print('a' * 10**9)"), cell("for i in range(20):\n    print('b' * 10**8)"), cell("raise Exception('c' * 10**9)")];
            let ep = episode(&suite, &task, &ScriptedPolicy::new("printer", turns));
            for s in &ep.steps {
                assert!(s.calls.iter().all(|c| c.observation.len() < 200_000));
            }
        }
        "unfiltered-line" => {
            // code past the filter writes one endless line to the runner's channel itself
            sandbox_required();
            let suite = appworld(Some(unfiltered_driver()), 1);
            let task = appworld_task(&suite, "todo_complete");
            let turns = vec![cell("import os\nchunk = b'x' * (1 << 24)\nfor i in range(100):\n    os.write(1, chunk)")];
            let ep = episode(&suite, &task, &ScriptedPolicy::new("flooder", turns));
            assert_ne!(ep.status, EpisodeStatus::InfraError, "{:?}", ep.infra_error);
        }
        "datasets" => {
            let dir = tempfile::tempdir().unwrap();
            let sparse = dir.path().join("huge.jsonl");
            std::fs::File::create(&sparse).unwrap().set_len(3 << 30).unwrap();
            for path in [Path::new("/dev/zero"), sparse.as_path()] {
                for suite in [&DbBench::new() as &dyn Suite, &SweGym::new(), &AppWorld::new()] {
                    let t0 = Instant::now();
                    let err = suite.load_file(path).err().unwrap_or_else(|| panic!("{} loaded {}", suite.name(), path.display()));
                    let msg = err.to_string();
                    assert!(msg.contains("not a regular file") || msg.contains("more than"), "{msg}");
                    assert!(msg.contains(&path.display().to_string()), "{msg}");
                    assert!(t0.elapsed() < Duration::from_secs(5));
                }
            }
        }
        other => panic!("no memory case {other}"),
    }
    println!("PEAK_MB={}", peak_rss_mb());
}

#[test]
fn one_action_cannot_take_gigabytes_of_the_workbench_s_memory() {
    sandbox_required();
    for case in ["sql", "print", "unfiltered-line", "datasets"] {
        let peak = peak_of(case);
        println!("{case}: peak {peak} MB");
        assert!(peak < PEAK_RSS_BOUND_MB, "{case}: the workbench reached {peak} MB (bound {PEAK_RSS_BOUND_MB} MB)");
    }
}

// ------------------------------------------------------------------------------------------------
// One coordinator per run.
// ------------------------------------------------------------------------------------------------

fn sample_episode(i: u32) -> Episode {
    let suite = DbBench::new();
    let task = suite.bundled_tasks().unwrap().into_iter().next().unwrap();
    let mut ep = episode(&suite, &task, &ScriptedPolicy::new("x", vec![]));
    ep.sample = i;
    ep
}

/// Move the run's lease heartbeat a minute into the past (the holder stalled).
fn age_lease(location: &str, run_id: i64) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use sqlx::Connection;
        let sql = format!("UPDATE run_leases SET heartbeat_ms = heartbeat_ms - 60000 WHERE run_id = {run_id}");
        if location.starts_with("postgres") {
            let mut c = sqlx::PgConnection::connect(location).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut c).await.unwrap();
        } else {
            let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{location}")).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut c).await.unwrap();
        }
    });
}

#[test]
fn a_run_has_one_coordinator_on_sqlite_and_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let mut locations = vec![dir.path().join("runs.db").display().to_string()];
    locations.extend(postgres::fresh_database("lease"));
    for location in locations {
        let store = BlockingStore::open(&location).unwrap();
        let run = store.create_run(&NewRun::new("experiment", "raced")).unwrap();
        let a = store.fenced(run, "host-a:1:aa");
        assert_eq!(store.acquire_run_lease(run, "host-a:1:aa", "host-a", 1).unwrap(), Ok(()));
        // a second coordinator is refused, told who holds the run and since when
        let held = store.acquire_run_lease(run, "host-b:2:bb", "host-b", 2).unwrap().unwrap_err();
        assert!(held.live() && held.holder == "host-a:1:aa" && held.describe().contains("process 1 on host host-a"), "{held:?}");
        a.insert_episode(run, &sample_episode(0), &EpisodeContext::default()).unwrap();
        a.set_state(run, "job", &json!(1)).unwrap();
        assert!(a.renew_run_lease(run, "host-a:1:aa").unwrap());
        // the first stalls past its lease: the second may take the run over
        age_lease(&location, run);
        assert!(!store.run_lease(run).unwrap().unwrap().live());
        assert_eq!(store.acquire_run_lease(run, "host-b:2:bb", "host-b", 2).unwrap(), Ok(()));
        let b = store.fenced(run, "host-b:2:bb");
        // the first wakes up: every write it tries is refused, and it learns it lost the run
        let lost = a.insert_episode(run, &sample_episode(1), &EpisodeContext::default()).unwrap_err();
        assert!(matches!(lost, StoreError::LeaseLost { .. }), "{lost}");
        assert!(lost.to_string().contains("host-b:2:bb"), "{lost}");
        assert!(matches!(a.set_state(run, "job", &json!(2)), Err(StoreError::LeaseLost { .. })));
        assert!(matches!(a.finish_run(run, harness_s::store::RunStatus::Failed, &json!({})), Err(StoreError::LeaseLost { .. })));
        assert!(!a.renew_run_lease(run, "host-a:1:aa").unwrap());
        b.insert_episode(run, &sample_episode(2), &EpisodeContext::default()).unwrap();
        assert_eq!(store.count_episodes(&EpisodeFilter::run(run)).unwrap(), 2);
        assert_eq!(store.state(run, "job").unwrap(), Some(json!(1)));
        assert_eq!(store.run(run).unwrap().unwrap().status, harness_s::store::RunStatus::Running);
        b.release_run_lease(run, "host-b:2:bb").unwrap();
        assert_eq!(store.run_lease(run).unwrap(), None);
        // a holder that was a process of this machine and has ended (killed) is not waited out
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap().trim().replace(':', "");
        let mut ended = Command::new("true").spawn().unwrap();
        let pid = ended.id();
        ended.wait().unwrap();
        let dead = format!("here:{pid}:{boot}:1:0000abcd");
        assert_eq!(store.acquire_run_lease(run, &dead, "here", pid as i64).unwrap(), Ok(()));
        let seen = store.run_lease(run).unwrap().unwrap();
        assert!(seen.gone() && !seen.live(), "{seen:?}");
        assert_eq!(store.acquire_run_lease(run, "host-c:3:cc", "host-c", 3).unwrap(), Ok(()));
        // while this process, alive, holds a run, it is not taken
        let (me, host, my_pid) = harness_s::store::new_holder();
        let other = store.create_run(&NewRun::new("experiment", "mine")).unwrap();
        assert_eq!(store.acquire_run_lease(other, &me, &host, my_pid).unwrap(), Ok(()));
        let held = store.acquire_run_lease(other, "host-d:4:dd", "host-d", 4).unwrap().unwrap_err();
        assert!(!held.gone() && held.live(), "{held:?}");
    }
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_harness-s"))
}

/// A small experiment that runs for several seconds.
const RACED: &str = r#"
name = "raced"
suites = ["dbbench"]
heldout_families = ["aggregation-MAX"]
arms = ["policy-only", "harness-s"]
seeds = [1, 2]
iterations = 4
eval_every = 2
[budget]
batch_tasks = 8
base_tries = 2
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 8
[policy]
warm_start_demos = 4
"#;

#[test]
fn a_second_coordinator_cannot_take_a_running_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db").display().to_string();
    let file = dir.path().join("raced.toml");
    std::fs::write(&file, RACED).unwrap();
    let run = |extra: &[&str]| {
        let mut c = Command::new(bin());
        c.args(["experiment", "run"]).arg(&file).args(["--db", &db]).args(extra).stdout(Stdio::piped()).stderr(Stdio::piped());
        c
    };
    let mut first = run(&["--json"]).spawn().unwrap();
    // wait until the first holds the run
    let t0 = Instant::now();
    let run_id = loop {
        if let Some(status) = first.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(first.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("the first coordinator ended ({status}) before it was seen holding the run: {err}");
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "the first coordinator never took the run");
        if let Ok(store) = BlockingStore::open(&db) {
            if let Some(r) = store.runs().unwrap().into_iter().next() {
                if store.run_lease(r.id).unwrap().is_some_and(|h| h.live()) {
                    break r.id;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // a second process on the same run is refused, and says who runs it
    let second = run(&[]).output().unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success() && err.contains("is being run by process") && err.contains(&format!("{}", first.id())), "{err}");
    // so is a resume through the command set (the app, `serve`)
    let wb = harness_s::workbench::Workbench::open(&db, dir.path()).unwrap();
    let refused = wb.call("experiment_resume", json!({ "run_id": run_id })).unwrap_err();
    assert_eq!(refused.kind(), "conflict", "{refused}");
    assert!(refused.to_string().contains("is being run by"), "{refused}");
    let out = first.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // every episode once: no key twice
    let store = BlockingStore::open(&db).unwrap();
    let rows = store.episode_rows(&EpisodeFilter::run(run_id)).unwrap();
    let mut keys = std::collections::HashSet::new();
    for r in &rows {
        let key = (
            r.context.arm.clone(),
            r.context.seed_index,
            r.context.iteration,
            r.context.phase.clone(),
            r.task_id.clone(),
            r.harness.clone(),
            r.sample,
        );
        assert!(keys.insert(key.clone()), "episode {key:?} stored twice");
    }
    assert!(!rows.is_empty());
    assert_eq!(store.run_lease(run_id).unwrap(), None, "the lease is released at the end");
}

// ------------------------------------------------------------------------------------------------
// Writes and inputs.
// ------------------------------------------------------------------------------------------------

#[test]
fn workbench_writes_never_follow_links_in_their_folders() {
    use harness_s::report::synthetic::{write_synthetic, Synthetic};
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("workspace");
    let db = dir.path().join("runs.db").display().to_string();
    let store = BlockingStore::open(&db).unwrap();
    let spec = Synthetic { seeds: vec![1], iterations: 2, train_tasks: 20, eval_train_tasks: 10, heldout_tasks: 10, ..Synthetic::default() };
    let run = write_synthetic(&store, &spec).unwrap().run_id;
    drop(store);
    let wb = harness_s::workbench::Workbench::open(&db, &ws).unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "keep").unwrap();
    let kept = || assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    // an experiment file saved over a hard link to a file outside the workspace
    std::fs::create_dir_all(ws.join("experiments")).unwrap();
    std::fs::hard_link(&outside, ws.join("experiments/linked.toml")).unwrap();
    let e = wb.call("config_save", json!({"toml": RACED, "path": "linked.toml", "overwrite": true})).unwrap_err();
    assert!(e.to_string().contains("hard links"), "{e}");
    kept();
    // a report into a folder where a link stands in for one of its files, or its charts folder
    std::fs::create_dir_all(ws.join("reports/r")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("reports/r/report.html")).unwrap();
    let e = wb.call("export_report", json!({"id": run, "out_dir": "r"})).unwrap_err();
    assert!(e.to_string().contains("symbolic link") && e.kind() == "conflict", "{e}");
    kept();
    std::fs::create_dir_all(ws.join("reports/c")).unwrap();
    std::os::unix::fs::symlink(dir.path(), ws.join("reports/c/charts")).unwrap();
    let e = wb.call("export_report", json!({"id": run, "out_dir": "c"})).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(
        !dir.path().join("transfer.svg").exists()
            && std::fs::read_dir(dir.path()).unwrap().all(|f| !f.unwrap().file_name().to_string_lossy().ends_with(".svg"))
    );
    // a clean folder works
    wb.call("export_report", json!({"id": run, "out_dir": "clean"})).unwrap();
    // a training export whose file is a planted link
    let out = ws.join(format!("exports/run-{run}-openai-chat"));
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(&outside, out.join("examples.jsonl")).unwrap();
    if let Err(e) = wb.call("export_training", json!({"id": run, "format": "openai-chat"})) {
        assert!(e.to_string().contains("symbolic link") || e.kind() == "bad_arguments", "{e}");
    }
    kept();
    // bad names are the caller's mistake: 400, not 500
    for path in ["a\u{0}b.toml", &format!("{}.toml", "n".repeat(300)), &format!("{}/x.toml", "d/".repeat(600))] {
        let e = wb.call("config_save", json!({"toml": RACED, "path": path})).unwrap_err();
        assert_eq!(e.kind(), "bad_arguments", "{path:?}: {e}");
    }
    let e = wb.call("export_report", json!({"id": run, "out_dir": "a\u{0}b"})).unwrap_err();
    assert_eq!(e.kind(), "bad_arguments", "{e}");
}

#[test]
fn tasks_escapes_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("evil.jsonl");
    let record = json!({
        "description": "What is \u{1b}]0;pwned\u{7}\u{1b}[2J the answer?",
        "label": ["1"],
        "table": {"table_name": "t", "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["1"]]}},
        "type": ["other"],
        "sql": {"query": "SELECT a FROM t"}
    });
    std::fs::write(&file, format!("{record}\n")).unwrap();
    let out = Command::new(bin()).args(["tasks", "--suite", "dbbench", "--file"]).arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    assert!(text.contains("\\u{1b}]0;pwned\\u{7}"), "{text}");
}

#[test]
fn the_desktop_app_runs_its_pages_under_a_content_security_policy() {
    let conf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tauri.conf.json")).unwrap()).unwrap();
    let csp = conf["app"]["security"]["csp"].as_str().expect("a CSP, not null");
    for part in ["default-src 'self'", "script-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "connect-src ipc: http://ipc.localhost"] {
        assert!(csp.contains(part), "{part} missing from {csp}");
    }
    assert!(!csp.contains("unsafe-eval") && !csp.contains("script-src 'self' 'unsafe-inline'"), "{csp}");
}
