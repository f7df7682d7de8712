//! The escape suite: an "agent" whose code tries to get out, for each suite. Every attempt is
//! refused or contained, the episode ends with a clear status, and the workbench goes on.
//! `docs/security.md` lists each attempt with the guarantee its test checks.
//!
//! The sandbox is required here (the test command installs bubblewrap): a machine where it does
//! not work fails these tests rather than skipping them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use harness_s::episode::EpisodeStatus;
use harness_s::harness::{run_episode, EpisodeRequest, HarnessLibrary, HarnessSpec};
use harness_s::policy::scripted::ScriptedPolicy;
use harness_s::policy::{AssistantTurn, ToolCall};
use harness_s::suite::appworld::world::forkserver::ForkServer;
use harness_s::suite::appworld::world::python::{contained_python, DRIVER};
use harness_s::suite::appworld::AppWorld;
use harness_s::suite::dbbench::DbBench;
use harness_s::suite::swegym::instance::{bundled_tasks, instance_of};
use harness_s::suite::swegym::runtime::{run_process, ExecOutput, Isolation, Limits, LocalRuntime, Runtime};
use harness_s::suite::swegym::{SweGym, SweGymConfig};
use harness_s::suite::{Environment, Suite};
use harness_s::task::Task;
use serde_json::json;

/// What the workbench's environment holds and no agent may ever see.
const SECRET: &str = "sk-escape-suite-7f3a9c1e5b";

/// Host files an agent must not read: a stand-in for the run store, a home file, and the
/// bundled SWE-Gym dataset with its gold patches.
struct Host {
    store: PathBuf,
    home_file: PathBuf,
    dataset: PathBuf,
}

fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| {
        // SAFETY: set once, before any sandbox starts, by the first test that needs it; every
        // test reads it only through the children it starts.
        unsafe { std::env::set_var("OPENAI_API_KEY", SECRET) };
        assert!(harness_s::sandbox::availability().usable(), "bubblewrap must work here: {:?}", harness_s::sandbox::availability());
        // one folder for the test process, made afresh (a static is never dropped)
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("escape-host");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store = dir.join("runs.db");
        std::fs::write(&store, format!("store {SECRET}")).unwrap();
        let home_file = dir.join("home-secret.txt");
        std::fs::write(&home_file, format!("home {SECRET}")).unwrap();
        let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/swegym/bundled.jsonl");
        assert!(dataset.exists());
        Host { store, home_file, dataset }
    })
}

fn py_quote(p: &Path) -> String {
    format!("{:?}", p.display().to_string())
}

// ------------------------------------------------------------------------------------------------
// AppWorld: the first line (the cell filter) and the second (the sandbox).
// ------------------------------------------------------------------------------------------------

fn spec(suite: &str, name: &str) -> HarnessSpec {
    HarnessLibrary::builtin().unwrap().get(suite, name).unwrap().spec.clone()
}

fn cell(code: &str) -> AssistantTurn {
    ScriptedPolicy::call("execute_python", json!({ "code": code }))
}

fn appworld_task(suite: &AppWorld) -> Task {
    suite.bundled_tasks().unwrap().into_iter().find(|t| t.family == "todo_complete").unwrap()
}

#[test]
fn appworld_filter_refuses_the_known_escapes_and_the_episode_goes_on() {
    let h = host();
    let suite = AppWorld::new();
    let t = appworld_task(&suite);
    let attempts = [
        ("B = print.__self__\nprint(B.open('/etc/passwd').read())", "__self__"),
        ("import random\nprint(random._os.listdir('/'))", "_os"),
        ("print(getattr(__builtins__, 'op' + 'en')('/etc/shadow').read())", "getattr"),
        ("print(().__class__.__base__.__subclasses__())", "__subclasses__"),
        ("import importlib", "importlib"),
        ("import ctypes", "ctypes"),
        ("import os\nprint(open('/proc/%d/environ' % os.getppid()).read())", "os"),
        ("import subprocess\nsubprocess.Popen(['sleep', '1000'], start_new_session=True)", "subprocess"),
        ("import socket\nsocket.create_connection(('127.0.0.1', 22))", "socket"),
        ("from operator import attrgetter\nprint(attrgetter('__self__')(print))", "attrgetter"),
        (&format!("print(open({}).read())", py_quote(&h.store)), "open"),
    ];
    let turns: Vec<AssistantTurn> = attempts.iter().map(|(c, _)| cell(c)).collect();
    let policy = ScriptedPolicy::new("escaper", turns);
    let base = spec("appworld", "base");
    let ep =
        run_episode(&EpisodeRequest { suite: &suite, harness: &base, task: &t, policy: &policy, sample: 0, seed: 1, temperature: 0.0, cancel: None });
    assert_ne!(ep.status, EpisodeStatus::InfraError, "{:?}", ep.infra_error);
    assert!(ep.steps.len() >= attempts.len());
    for (step, (code, what)) in ep.steps.iter().zip(&attempts) {
        let obs = step.calls[0].observation.as_str();
        assert!(obs.starts_with("Execution failed. Traceback:") && obs.contains("not allowed") && obs.contains(what), "{code}: {obs}");
        assert!(!obs.contains(SECRET), "{code} leaked the secret: {obs}");
    }
    assert!(!ep.success());
    // the workbench goes on: the next episode solves the task
    let reference = harness_s::suite::appworld::world::tasks::find(&t.id).unwrap().requirement().1.reference;
    let policy = ScriptedPolicy::new("solver", vec![cell(&reference)]);
    let ep =
        run_episode(&EpisodeRequest { suite: &suite, harness: &base, task: &t, policy: &policy, sample: 0, seed: 1, temperature: 0.0, cancel: None });
    assert!(ep.success(), "{:?}", ep.score);
}

/// Run Python in the AppWorld runner's sandbox with no filter at all: what code that got past the
/// filter could do.
fn sandboxed_python(code: &str, timeout: Duration) -> ExecOutput {
    let (cmd, lifeline) = contained_python("python3", &["-I", "-c", code]).expect("the runner's command");
    let out = run_process(cmd, None, &Limits { timeout, max_output: 1 << 20 }).expect("the sandbox starts");
    drop(lifeline);
    out
}

#[test]
fn appworld_sandbox_contains_code_that_passes_the_filter() {
    let h = host();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let parent = std::process::id();
    // each probe prints one line: what happened
    let probe = format!(
        r#"
import os, socket, sys
def attempt(name, f):
    try:
        r = repr(f())
        print(name, "OK", "SECRET-SEEN" if {secret:?} in r else "", r[:200])
    except BaseException as e:
        print(name, "REFUSED", type(e).__name__)
B = print.__self__
attempt("shadow", lambda: B.open("/etc/shadow").read())
attempt("passwd", lambda: B.open("/etc/passwd").read())
attempt("home", lambda: os.listdir({home:?}))
attempt("store", lambda: B.open({store}).read())
attempt("homefile", lambda: B.open({home_file}).read())
attempt("dataset", lambda: B.open({dataset}).read())
attempt("parent_environ", lambda: B.open("/proc/{parent}/environ").read())
attempt("parent_cmdline", lambda: B.open("/proc/{parent}/cmdline").read())
attempt("pid1_environ", lambda: B.open("/proc/1/environ").read())
attempt("own_environ", lambda: dict(os.environ))
attempt("write_host_tmp", lambda: B.open("/tmp/escape-marker", "w").write("x"))
attempt("write_store_dir", lambda: B.open({store_dir}, "w").write("x"))
attempt("loopback", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
attempt("public", lambda: socket.create_connection(("192.0.2.1", 80), timeout=2))
import random
attempt("random_os", lambda: random._os.system("id > /tmp/id-out"))
attempt("importlib", lambda: __import__("importlib").import_module("os").getuid())
attempt("ctypes", lambda: __import__("ctypes").CDLL(None).getuid())
attempt("subclasses", lambda: len(().__class__.__base__.__subclasses__()))
attempt("alloc_10gb", lambda: len("a" * 10**10))
def big():
    with B.open("/tmp/big", "wb") as f:
        for _ in range(10 * 1024):
            f.write(b"x" * (1 << 20))
attempt("file_10gb", big)
"#,
        secret = SECRET,
        store = py_quote(&h.store),
        home_file = py_quote(&h.home_file),
        dataset = py_quote(&h.dataset),
        store_dir = py_quote(&h.store.with_file_name("planted.txt")),
    );
    let out = sandboxed_python(&probe, Duration::from_secs(30));
    assert!(!out.timed_out, "{}", out.output);
    let line = |name: &str| {
        out.output.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("no line for {name}: {}", out.output)).to_string()
    };
    for name in [
        "shadow",
        "passwd",
        "home",
        "store",
        "homefile",
        "dataset",
        "parent_environ",
        "parent_cmdline",
        "write_store_dir",
        "loopback",
        "public",
        "alloc_10gb",
        "file_10gb",
    ] {
        assert!(line(name).contains("REFUSED"), "{}", line(name));
    }
    assert!(line("public").contains("OSError"), "no route at all: {}", line("public"));
    // what runs inside is harmless: the sandbox's own PID 1 (bwrap, with no environment), a
    // private /tmp, the sandbox's own user id
    for name in ["pid1_environ", "own_environ", "write_host_tmp", "random_os", "importlib", "ctypes", "subclasses"] {
        assert!(!line(name).contains("SECRET-SEEN"), "{}", line(name));
    }
    assert!(!out.output.contains(SECRET), "the secret leaked: {}", out.output);
    assert!(!Path::new("/tmp/escape-marker").exists() && !Path::new("/tmp/id-out").exists(), "a write reached the host's /tmp");
    assert!(!h.store.with_file_name("planted.txt").exists());
    assert!(std::fs::metadata("/tmp/big").is_err());
    drop(listener);
}

#[test]
fn appworld_sandbox_stops_fork_bombs_sleepers_and_detached_children() {
    host();
    let t0 = Instant::now();
    let out = sandboxed_python(
        "import os\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            import time; time.sleep(60); os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('stopped after', n, type(e).__name__)\n",
        Duration::from_secs(20),
    );
    assert!(out.output.contains("stopped after") && out.output.contains("BlockingIOError"), "{}", out.output);
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    // a sleeper past the time limit is killed, with what it started in a new session
    let marker = "escape-sleeper-4242";
    let t0 = Instant::now();
    let (out, seen) = seen_while(marker, || {
        sandboxed_python(
            "import subprocess, time\nsubprocess.Popen(['bash', '-c', 'exec -a escape-sleeper-' + str(4242) + ' sleep 1000'], start_new_session=True)\ntime.sleep(1000)",
            Duration::from_secs(2),
        )
    });
    assert!(seen, "the sleeper never started: {}", out.output);
    assert!(out.timed_out && t0.elapsed() < Duration::from_secs(8), "{:?} {}", t0.elapsed(), out.output);
    assert_no_process(marker);
}

/// One cell through a runner's channel, and the runner's `done` message.
fn cell_over(runner: &std::os::unix::net::UnixStream, code: &str) -> serde_json::Value {
    use std::io::{BufRead, Write};
    runner.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    writeln!(&*runner, "{}", json!({ "code": code })).unwrap();
    let mut line = String::new();
    std::io::BufReader::new(runner).read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

#[test]
fn appworld_fork_server_episodes_start_clean_and_leave_nothing_behind() {
    host();
    // each episode's runner is a clean fork: no variable of the last episode is there
    let mut fs = ForkServer::start("python3").expect("the fork server starts in the sandbox");
    let a = fs.spawn().unwrap();
    assert_eq!(cell_over(&a, "x = 41\nprint(x + 1)")["output"], "42\n");
    drop(a);
    fs.sweep().unwrap();
    let b = fs.spawn().unwrap();
    let out = cell_over(&b, "print(x)");
    assert!(out["error"].as_str().is_some_and(|e| e.contains("NameError")), "{out}");
    drop(b);
    drop(fs);

    // what an episode starts (here a detached sleeper in a session of its own, as code past the
    // cell filter could) ends with the episode, and with the fork server
    // (the marker is put together in Python, so the fork server's own command line lacks it)
    let marker = "forkserver-sleeper-5151";
    let driver = DRIVER.replace(
        "def serve():\n",
        "def serve():\n    import subprocess\n    subprocess.Popen(['bash', '-c', 'exec -a forkserver-sleeper-' + str(5151) + ' sleep 1000'], start_new_session=True)\n",
    );
    assert_ne!(driver, DRIVER);
    let mut fs = ForkServer::start_serving("python3", &driver).unwrap();
    let a = fs.spawn().unwrap();
    assert_eq!(cell_over(&a, "print(1)")["output"], "1\n");
    wait_for_process(marker);
    drop(a);
    fs.sweep().unwrap();
    assert_no_process(marker);
    // the fork server serves on after a sweep; dropping it ends everything in its sandbox
    let b = fs.spawn().unwrap();
    assert_eq!(cell_over(&b, "print(2)")["output"], "2\n");
    wait_for_process(marker);
    drop(fs);
    assert_no_process(marker);
    drop(b);
}

/// Run `f` while watching for a process named `marker`: its result, and whether one was seen.
fn seen_while<T>(marker: &str, f: impl FnOnce() -> T) -> (T, bool) {
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| loop {
            if !processes_matching(marker).is_empty() {
                return true;
            }
            if done.load(std::sync::atomic::Ordering::Relaxed) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        });
        let out = f();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (out, watcher.join().unwrap())
    })
}

fn wait_for_process(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_matching(marker).is_empty() {
        assert!(Instant::now() < deadline, "no process `{marker}` started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_no_process(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive = processes_matching(marker);
        if alive.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "still running: {alive:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn processes_matching(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let zombie = std::fs::read_to_string(e.path().join("stat")).map(|s| s.contains(") Z ")).unwrap_or(false);
        if cmd.contains(marker) && !zombie {
            out.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// The sandbox's own machinery.
// ------------------------------------------------------------------------------------------------

#[test]
fn a_closed_lifeline_ends_the_sandbox_whatever_the_workbench_s_descriptor_numbers() {
    host();
    // a workbench with a store open and threads running hands out descriptors past 9, so the
    // lifeline's own number is past 9 too; the watchdog inside must still hold it
    let spare: Vec<std::fs::File> = (0..24).map(|_| std::fs::File::open("/dev/null").unwrap()).collect();
    let (mut cmd, lifeline) = harness_s::sandbox::SandboxSpec::new("/").command(&["sleep", "60"]).unwrap();
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    drop(lifeline);
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(20) {
            harness_s::sandbox::end(&mut child);
            panic!("the sandbox outlived its lifeline: the watchdog inside is not running");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(spare);
}

// ------------------------------------------------------------------------------------------------
// SWE-Gym: commands, grading, the store.
// ------------------------------------------------------------------------------------------------

fn swe_exec(rt: &mut LocalRuntime, cmd: &str, secs: u64) -> ExecOutput {
    rt.exec(cmd, None, &Limits { timeout: Duration::from_secs(secs), max_output: 1 << 20 }).unwrap()
}

#[test]
fn swegym_commands_see_only_their_repository() {
    let h = host();
    let mut rt = LocalRuntime::empty().unwrap();
    assert_eq!(rt.isolation(), Isolation::Sandbox);
    harness_s::sandbox::scratch::root().unwrap();
    // the workspaces' root (in memory where the machine has a tmpfs) and the disk root
    let roots = harness_s::sandbox::scratch::roots();
    assert!(roots.iter().any(|r| rt.repo().starts_with(r)), "{roots:?}");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let parent = std::process::id();
    for (what, cmd) in [
        ("/etc/shadow", "cat /etc/shadow".to_string()),
        ("$HOME of the host", format!("ls {}", std::env::var("HOME").unwrap_or_else(|_| "/root".into()))),
        ("a host file", format!("cat {}", h.home_file.display())),
        ("the store", format!("cat {}", h.store.display())),
        ("the dataset with gold patches", format!("cat {}", h.dataset.display())),
        ("the project checkout", format!("ls {}", env!("CARGO_MANIFEST_DIR"))),
        ("the workbench's scratch roots (grading templates)", roots.iter().map(|r| format!("ls {}", r.display())).collect::<Vec<_>>().join(" && ")),
        ("the parent's environment", format!("cat /proc/{parent}/environ")),
        ("the parent's command line", format!("cat /proc/{parent}/cmdline")),
        ("a write outside", format!("echo x > {}", h.store.with_file_name("planted-swe.txt").display())),
        ("loopback", format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\"")),
        ("a public address", "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=2)\"".to_string()),
        ("10 GB of memory", "python3 -c \"print(len('a' * 10**10))\"".to_string()),
    ] {
        let out = swe_exec(&mut rt, &cmd, 30);
        assert!(!out.ok(), "{what}: `{cmd}` succeeded: {}", out.output);
        assert!(!out.output.contains(SECRET), "{what}: {}", out.output);
    }
    assert!(!h.store.with_file_name("planted-swe.txt").exists());
    // the whole /proc is the sandbox's: PID 1's environment is empty, the shell's is its own
    let out = swe_exec(&mut rt, "cat /proc/1/environ; env; ls /proc | grep -c '^[0-9]'", 10);
    assert!(!out.output.contains(SECRET), "{}", out.output);
    // a 10 GB file stops at the per-file limit
    let out = swe_exec(&mut rt, "head -c 10G /dev/zero > /testbed/big && ls -l /testbed/big", 60);
    assert!(!out.ok(), "{}", out.output);
    let size = std::fs::metadata(rt.repo().join("big")).map(|m| m.len()).unwrap_or(0);
    assert!(size <= 512 << 20, "{size}");
    std::fs::remove_file(rt.repo().join("big")).ok();
    drop(listener);
}

#[test]
fn swegym_editor_writes_never_follow_links_out_of_the_repository() {
    let h = host();
    let mut rt = LocalRuntime::empty().unwrap();
    let limits = Limits { timeout: Duration::from_secs(10), max_output: 1 << 20 };
    let before = std::fs::read(&h.home_file).unwrap();
    // what an agent can leave in its repository: a link to a host file, a link to a host
    // folder, a file written by its own user
    assert!(swe_exec(&mut rt, "mkdir -p pkg && echo 'a = 1' > pkg/m.py", 10).ok());
    std::os::unix::fs::symlink(&h.home_file, rt.repo().join("link.py")).unwrap();
    std::os::unix::fs::symlink(h.home_file.parent().unwrap(), rt.repo().join("dir")).unwrap();
    let through_folder = format!("/testbed/dir/{}", h.home_file.file_name().unwrap().to_string_lossy());
    for path in ["/testbed/link.py", through_folder.as_str()] {
        let out = rt.write_file(path, b"planted", &limits).unwrap();
        assert_eq!(std::fs::read(&h.home_file).unwrap(), before, "{path}: {}", out.output);
    }
    // a file of the repository is written (in place) and stays its user's
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(rt.repo().join("pkg/m.py")).unwrap().uid();
    let out = rt.write_file("/testbed/pkg/m.py", b"a = 2\n", &limits).unwrap();
    assert!(out.ok(), "{}", out.output);
    assert_eq!(std::fs::read_to_string(rt.repo().join("pkg/m.py")).unwrap(), "a = 2\n");
    assert_eq!(std::fs::metadata(rt.repo().join("pkg/m.py")).unwrap().uid(), owner);
    // and what the sandbox then reads is what was written
    assert_eq!(swe_exec(&mut rt, "cat pkg/m.py", 10).output, "a = 2\n");
    // a new file in a new folder goes through the sandbox, as the agent's user
    let out = rt.write_file("/testbed/new/n.py", b"n = 1\n", &limits).unwrap();
    assert!(out.ok(), "{}", out.output);
    assert_eq!(std::fs::metadata(rt.repo().join("new/n.py")).unwrap().uid(), owner);
}

#[test]
fn swegym_fork_bombs_sleepers_and_detached_processes_end_with_the_command() {
    host();
    let mut rt = LocalRuntime::empty().unwrap();
    // the process limit is in force inside (the sandbox's first shell sets it)
    let out = swe_exec(&mut rt, "ulimit -u", 10);
    assert_eq!(out.output.trim(), "256", "{out:?}");
    let t0 = Instant::now();
    let out = swe_exec(&mut rt, "bomb() { bomb | bomb & }; bomb", 5);
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    let _ = out;
    // the workbench goes on: the next command runs
    assert!(swe_exec(&mut rt, "echo alive", 10).output.contains("alive"));
    let marker = "escape-swe-sleeper-5151";
    let t0 = Instant::now();
    // (bash, not dash, knows `exec -a`; the name is put together by the shell, so only the
    // sleepers carry it)
    let name = "escape-swe-sleeper-$((5150 + 1))";
    let (out, seen) = seen_while(marker, || {
        swe_exec(&mut rt, &format!("setsid bash -c \"exec -a {name} sleep 1000\" & nohup bash -c \"exec -a {name} sleep 1000\" & sleep 1000"), 2)
    });
    assert!(seen, "the sleepers never started: {}", out.output);
    assert!(out.timed_out && t0.elapsed() < Duration::from_secs(8));
    assert_no_process(marker);
    // a detached process of a command that finished is gone too
    let (out, seen) = seen_while(marker, || swe_exec(&mut rt, &format!("setsid bash -c \"exec -a {name} sleep 1000\" & sleep 1; echo started"), 10));
    assert!(seen, "the sleeper never started: {}", out.output);
    assert!(out.ok(), "{}", out.output);
    assert_no_process(marker);
}

fn swe_call(name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall { id: "c".into(), name: name.into(), arguments: args }
}

#[test]
fn swegym_rewards_cannot_be_tampered_with() {
    let h = host();
    let suite = SweGym::with_config(SweGymConfig::default());
    let tasks = bundled_tasks().unwrap();
    let task = tasks.iter().find(|t| t.family == "harness-s/textkit").unwrap();
    let inst = instance_of(task).unwrap();
    // the first environment makes the sealed template
    let mut env = suite.make_env(task).unwrap();
    let roots = harness_s::sandbox::scratch::roots();
    assert!(!roots.is_empty());
    // the agent looks for the grading template and the gold patch, and writes the fix there
    let bash = |env: &mut Box<dyn Environment>, cmd: &str| env.step(&swe_call("execute_bash", json!({ "command": cmd }))).unwrap().observation;
    for scratch in &roots {
        let found = bash(
            &mut env,
            &format!(
                "ls -d /tmp/harness-s-* /dev/shm/harness-s-* {} 2>&1; find / -name bundled.jsonl -o -name '*.patch' 2>/dev/null | head",
                scratch.display()
            ),
        );
        assert!(!found.contains("bundled.jsonl") && !found.contains(&format!("{}/", scratch.display())), "{found}");
    }
    let patch_file = format!("/tmp/fix-{}.patch", std::process::id());
    std::fs::write(&patch_file, &inst.patch).unwrap();
    let out = bash(&mut env, &format!("cat {} | head -c 100", h.dataset.display()));
    assert!(!out.contains("instance_id"), "the dataset is visible: {out}");
    let mut templates = 0;
    for dir in roots.iter().flat_map(|r| std::fs::read_dir(r).unwrap().flatten()) {
        let template = dir.path().join("testbed");
        templates += usize::from(template.is_dir());
        let out = bash(&mut env, &format!("cd {} && git apply {patch_file} && echo APPLIED", template.display()));
        assert!(!out.contains("APPLIED"), "{out}");
    }
    assert!(templates > 0, "no workspace or template found under {roots:?}");
    std::fs::remove_file(&patch_file).ok();
    bash(&mut env, "echo 'looked around' >> NOTES.md");
    let score = env.score(None).unwrap();
    assert!(!score.success, "graded as resolved: {}", score.details);
    // the templates are untouched: a fresh workspace is clean at base, and the reference fix,
    // made by the agent's own tools, still resolves
    let mut env = suite.make_env(task).unwrap();
    let status = bash(&mut env, "git status --porcelain; git diff HEAD --stat");
    assert!(status.trim().starts_with("[The command completed"), "{status}");
    env.step(&swe_call("str_replace_editor", json!({"command": "create", "path": "/testbed/fix.patch", "file_text": inst.patch}))).unwrap();
    bash(&mut env, "git apply fix.patch && rm fix.patch");
    let score = env.score(None).unwrap();
    assert!(score.success, "{}", score.details);
}

#[test]
fn swegym_disk_quota_ends_the_episode() {
    host();
    // writing past the quota may take longer than a bundled repository's 3 s command limit
    let suite = SweGym::with_config(SweGymConfig { bundled_timeout: std::time::Duration::from_secs(120), ..SweGymConfig::default() });
    let tasks = bundled_tasks().unwrap();
    let mut env = suite.make_env(&tasks[0]).unwrap();
    // a workspace in memory has the smaller quota: write 1.25 times whichever applies
    let in_memory = harness_s::sandbox::scratch::memory_base().is_some();
    let quota = if in_memory { harness_s::suite::swegym::runtime::MEMORY_QUOTA } else { harness_s::suite::swegym::runtime::DISK_QUOTA };
    let chunk_mb = quota / 4 / (1 << 20);
    let out = env
        .step(&swe_call(
            "execute_bash",
            json!({ "command": format!("for i in 1 2 3 4 5; do head -c {chunk_mb}M /dev/zero > /testbed/f$i; done; echo done") }),
        ))
        .unwrap();
    assert!(out.done && out.signals.error_kind.as_deref() == Some("disk_quota"), "{}", out.observation);
    let score = env.score(None).unwrap();
    assert!(!score.success && score.details["reason"].as_str().unwrap().contains("disk quota"), "{}", score.details);
}

// ------------------------------------------------------------------------------------------------
// DBBench: SQL runs in-process on an in-memory database.
// ------------------------------------------------------------------------------------------------

#[test]
fn dbbench_sql_escapes_are_refused() {
    host();
    let suite = DbBench::new();
    let t = suite.bundled_tasks().unwrap().into_iter().next().unwrap();
    let out_file = format!("/tmp/escape-vacuum-{}.db", std::process::id());
    let attempts = [
        format!("ATTACH DATABASE '{out_file}' AS x"),
        "SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')".into(),
        format!("VACUUM INTO '{out_file}'"),
        "PRAGMA journal_mode = WAL".into(),
        format!("PRAGMA temp_store_directory = '{out_file}'"),
        "SELECT readfile('/etc/passwd')".into(),
        format!("SELECT writefile('{out_file}', 'x')"),
        "CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END".into(),
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT COUNT(*) FROM c".into(),
    ];
    let mut env = suite.make_env(&t).unwrap();
    for sql in &attempts {
        let t0 = Instant::now();
        let out = env.step(&swe_call("execute_sql", json!({ "query": sql }))).unwrap();
        assert!(t0.elapsed() < Duration::from_secs(8), "{sql}: {:?}", t0.elapsed());
        assert!(out.signals.error_kind.is_some(), "{sql}: {}", out.observation);
        assert!(!out.observation.contains("root:"), "{sql}: {}", out.observation);
    }
    assert!(!Path::new(&out_file).exists());
    // the episode goes on
    let out = env.step(&swe_call("execute_sql", json!({ "query": "SELECT 1" }))).unwrap();
    assert_eq!(out.observation, "[(1,)]");
}

// ------------------------------------------------------------------------------------------------
// The policy side: a model's code is refused where there is no sandbox, and its key never
// reaches the store.
// ------------------------------------------------------------------------------------------------

#[path = "support/chat_server.rs"]
mod chat_server;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_harness-s"))
}

#[test]
fn a_model_s_code_is_refused_without_bubblewrap_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let server = chat_server::ChatServer::start(chat_server::Script::new().always(|_| (200, chat_server::tool_call_reply(&[("finish", json!({}))]))));
    let run = |suite: &str, extra: &[&str]| {
        let db = dir.path().join(format!("{suite}-{}.db", extra.len()));
        Command::new(bin())
            .args(["eval", "--suite", suite, "--policy", "openai", "--base-url", &server.url(), "--model", "test-model", "--limit", "1", "--db"])
            .arg(&db)
            .args(extra)
            .env("HARNESS_S_BWRAP", "/nonexistent/bwrap")
            .env("TMPDIR", dir.path())
            .output()
            .unwrap()
    };
    let out = run("swegym", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("bubblewrap") && err.contains("--unsafe-no-sandbox") && err.contains("apt-get install bubblewrap"), "{err}");
    let out = run("appworld", &[]);
    assert!(!out.status.success());
    // the user allows it: the run goes ahead (with process-level limits only)
    let out = run("swegym", &["--unsafe-no-sandbox"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // SQL never needs the sandbox
    let out = run("dbbench", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_model_reading_the_workbench_s_environment_gets_nothing_into_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let probe = "import os\nfor p in ['/proc/1/environ', '/proc/%d/environ' % os.getppid(), '/proc/self/environ']:\n    try:\n        print(p, open(p).read())\n    except Exception as e:\n        print(p, type(e).__name__)\n";
    // the model's code as a real endpoint would send it; the filter refuses `open`, so it goes
    // through the builtins module the way the escape was found
    let escape = probe.replace("open(", "print.__self__.open(");
    let turns = [escape.clone(), "apis.supervisor.complete_task(answer='x')".to_string()];
    let n = std::sync::atomic::AtomicUsize::new(0);
    let server = chat_server::ChatServer::start(chat_server::Script::new().always(move |_| {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst).min(turns.len() - 1);
        (200, chat_server::tool_call_reply(&[("execute_python", json!({ "code": turns[i] }))]))
    }));
    let db = dir.path().join("runs.db");
    let out = Command::new(bin())
        .args([
            "eval",
            "--suite",
            "appworld",
            "--policy",
            "openai",
            "--base-url",
            &server.url(),
            "--model",
            "test-model",
            "--limit",
            "1",
            "--json",
            "--db",
        ])
        .arg(&db)
        .env("OPENAI_API_KEY", SECRET)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&db).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains(SECRET), "the key is in the store");
    for r in server.requests() {
        assert!(!r.body_text.contains(SECRET), "the key went back to the endpoint as context");
    }
    // and the cell was refused by the filter before the sandbox was even needed
    assert!(server.requests().iter().any(|r| r.body_text.contains("not allowed")));
}
