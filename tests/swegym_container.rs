//! SWE-Gym's container runtime on a real engine (podman, with Debian's runc), on official
//! SWE-bench instances: images built locally in the official layout by `scripts/swebench-image`
//! from the repositories at their base commits (`../shared/data/swegym/repos/`), no registry
//! pull. `verify-dataset` resolves both instances with their gold patch and neither without it;
//! a scripted agent works through bash and the editor inside a container; limits and the missing
//! network hold; every container is labelled, removed when done, and swept after a SIGKILL.
//!
//! Without podman, mmdebstrap, root or the shared data the tests skip; under CI
//! (`CI=true`) a missing engine fails them instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use harness_s::policy::ToolCall;
use harness_s::suite::swegym::instance::{instance_of, load_tasks};
use harness_s::suite::swegym::runtime::{self, ContainerConfig, ContainerRuntime, Limits, Runtime, LABEL_OWNER, LABEL_RUN};
use harness_s::suite::swegym::{RuntimeChoice, SweGym, SweGymConfig};
use harness_s::suite::Suite;
use serde_json::{json, Value};

#[path = "support/shared_data.rs"]
mod shared_data;
use shared_data::shared_data;

const PYTEST: &str = "pytest-dev__pytest-11143";
const SYMPY: &str = "sympy__sympy-13031";

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Skip (or, under CI, fail) with a reason.
fn unavailable(why: &str) -> Option<Engine> {
    assert!(!ci(), "the container tests need {why} under CI (scripts/install-deps installs podman, runc and mmdebstrap)");
    println!("skip: {why}");
    None
}

/// The engine the tests use: podman with runc and ulimits this machine allows, through a
/// `containers.conf` of the tests' own (named by `CONTAINERS_CONF` in a small wrapper, so the
/// tests' own environment stays as it is).
#[derive(Clone)]
struct Engine {
    wrapper: PathBuf,
    conf: PathBuf,
}

impl Engine {
    fn config(&self) -> ContainerConfig {
        ContainerConfig { engine: self.wrapper.display().to_string(), ..ContainerConfig::default() }
    }

    fn suite(&self) -> SweGym {
        SweGym::with_config(SweGymConfig { runtime: RuntimeChoice::Container(self.config()), ..SweGymConfig::default() })
    }

    fn podman(&self, args: &[&str]) -> String {
        let out = Command::new("podman").env("CONTAINERS_CONF", &self.conf).args(args).stderr(Stdio::inherit()).output().expect("podman runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Names of the containers carrying the workbench's owner label.
    fn labelled(&self) -> Vec<String> {
        self.podman(&["ps", "-a", "--filter", &format!("label={LABEL_OWNER}"), "--format", "{{.Names}}"])
            .lines()
            .map(str::to_string)
            .filter(|l| !l.is_empty())
            .collect()
    }
}

fn have(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).stdout(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn sample() -> Option<PathBuf> {
    shared_data("swegym/swebench_lite_sample5.json")
}

/// The engine, with both instances' images built (once per test process; cached by content by
/// the build script across runs).
fn engine() -> Option<Engine> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    let made = ENGINE.get_or_init(|| {
        for p in ["podman", "runc", "mmdebstrap"] {
            if !have(p) {
                return Err(format!("`{p}`"));
            }
        }
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("root (mmdebstrap builds the images' root file systems as root)".into());
        }
        let archives = [
            (PYTEST, shared_data("swegym/repos/pytest-dev__pytest-6995257c.tar.zst")),
            (SYMPY, shared_data("swegym/repos/sympy__sympy-2dfa7457.tar.zst")),
        ];
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("podman");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let conf = dir.join("containers.conf");
        // runc: the hosts' cgroups are in hybrid mode, which crun refuses; ulimits within the
        // hard limits here
        std::fs::write(&conf, "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n[engine]\nruntime = \"runc\"\n")
            .map_err(|e| e.to_string())?;
        let wrapper = dir.join("podman-tests");
        std::fs::write(&wrapper, format!("#!/bin/sh\nCONTAINERS_CONF='{}' exec podman \"$@\"\n", conf.display())).map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
        for (id, archive) in archives {
            let Some(archive) = archive else { return Err(format!("the repository archive of {id} in ../shared/data/swegym/repos/")) };
            let t0 = Instant::now();
            let out = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/swebench-image"))
                .arg(id)
                .arg(&archive)
                .arg(&wrapper)
                .output()
                .map_err(|e| format!("scripts/swebench-image: {e}"))?;
            assert!(
                out.status.success(),
                "building the image of {id} failed:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            println!("{} ({:.0} s)", String::from_utf8_lossy(&out.stdout).trim(), t0.elapsed().as_secs_f64());
        }
        Ok(Engine { wrapper, conf })
    });
    match made {
        Ok(e) if sample().is_some() => Some(e.clone()),
        Ok(_) => unavailable("../shared/data/swegym/swebench_lite_sample5.json"),
        Err(why) => unavailable(why),
    }
}

fn harness_s() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness-s"))
}

#[test]
fn verify_dataset_resolves_both_official_instances_in_their_images() {
    let Some(engine) = engine() else { return };
    let child = harness_s()
        .args(["verify-dataset", "--suite", "swegym", "--json"])
        .arg(sample().unwrap())
        .env("HARNESS_S_SWEGYM_RUNTIME", &engine.wrapper)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mark = format!("-{}-", child.id());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    // each agrees: the gold patch resolves it, and without a patch its tests do not all pass
    assert_eq!((report["total"].as_u64(), report["agree"].as_u64()), (Some(2), Some(2)), "{report:#}");
    assert_eq!(report["groups"]["pytest-dev/pytest"]["agree"], 1);
    assert_eq!(report["groups"]["sympy/sympy"]["agree"], 1);
    // the instances without an image here are skipped, each naming the image it needs
    let skipped = report["skipped"].as_array().expect("skipped instances");
    assert_eq!(skipped.len(), 3, "{report:#}");
    for s in skipped {
        let id = s["task_id"].as_str().unwrap();
        let reason = s["reason"].as_str().unwrap();
        assert!(reason.contains(&runtime::image_name(id.trim_start_matches("swegym/"))), "{reason}");
        assert!(reason.contains("not on this machine"), "{reason}");
    }
    // every container it started (one per grading run) is gone
    assert!(engine.labelled().iter().all(|n| !n.contains(&mark)), "{:?}", engine.labelled());
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall { id: "c".into(), name: name.into(), arguments: args }
}

#[test]
fn a_scripted_agent_resolves_an_instance_through_bash_and_the_editor_in_its_container() {
    let Some(engine) = engine() else { return };
    let tasks = load_tasks(&sample().unwrap()).unwrap();
    let task = tasks.iter().find(|t| t.id.ends_with(PYTEST)).expect("the pytest instance");
    let inst = instance_of(task).unwrap();
    let suite = engine.suite();
    let mut env = suite.make_env(task).unwrap();

    // the workspace is the repository at its base: neither the fix nor the new tests are there
    let out = env.step(&call("execute_bash", json!({"command": "git status --porcelain | wc -l; grep -c test_constant_not_picked_as_module_docstring testing/test_assertrewrite.py; grep -c 'isinstance(item.value.value, str)' src/_pytest/assertion/rewrite.py; python --version"}))).unwrap();
    let lines: Vec<&str> = out.observation.lines().collect();
    assert_eq!(&lines[..3], ["0", "0", "0"], "{}", out.observation);
    let container = env.step(&call("execute_bash", json!({"command": "hostname"}))).unwrap().observation.lines().next().unwrap().trim().to_string();
    assert!(out.observation.contains("Python 3.9"), "{}", out.observation);

    let path = "/testbed/src/_pytest/assertion/rewrite.py";
    let view = env.step(&call("str_replace_editor", json!({"command": "view", "path": path, "view_range": [670, 685]}))).unwrap();
    assert!(view.observation.contains("isinstance(item.value, ast.Constant)"), "{}", view.observation);
    let edit = env
        .step(&call(
            "str_replace_editor",
            json!({"command": "str_replace", "path": path,
                   "old_str": "                and isinstance(item.value, ast.Constant)\n",
                   "new_str": "                and isinstance(item.value, ast.Constant)\n                and isinstance(item.value.value, str)\n"}),
        ))
        .unwrap();
    assert!(edit.signals.error_kind.is_none(), "{}", edit.observation);
    let done = env.step(&call("finish", json!({}))).unwrap();
    assert!(done.done && done.signals.submitted);
    let score = env.score(None).unwrap();
    assert!(score.success, "{:#}", score.details);
    // the same change as the gold patch (the hunk headers' context differs between git versions)
    let changes = |d: &str| d.lines().filter(|l| l.starts_with(['+', '-'])).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(changes(score.details["diff"].as_str().unwrap()), changes(&inst.patch));
    drop(env);
    // the agent's container is gone with its environment (a container's host name is its id)
    let ids = engine.podman(&["ps", "-a", "-q"]);
    assert!(!ids.lines().any(|id| id.starts_with(&container)), "{container} is still there: {ids}");
}

#[test]
fn limits_output_caps_and_no_network_hold_in_a_container() {
    let Some(engine) = engine() else { return };
    let mut rt = ContainerRuntime::start(engine.config(), PYTEST).unwrap();
    assert!(rt.describe().contains("container"), "{}", rt.describe());

    let t0 = Instant::now();
    let out = rt.exec("sleep 60; echo never", None, &Limits { timeout: Duration::from_secs(2), max_output: 4096 }).unwrap();
    assert!(out.timed_out && !out.output.contains("never"), "{out:?}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());

    let out = rt.exec("head -c 1000000 /dev/zero | tr '\\0' a", None, &Limits { timeout: Duration::from_secs(30), max_output: 1000 }).unwrap();
    assert!(out.truncated && out.output.len() == 1000, "{} bytes, truncated {}", out.output.len(), out.truncated);

    // only a loopback interface, and nothing reachable
    let out = rt
        .exec(
            "ls /sys/class/net; python -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)\" 2>&1 | tail -n 1",
            None,
            &Limits { timeout: Duration::from_secs(30), max_output: 4096 },
        )
        .unwrap();
    assert!(out.output.starts_with("lo\n"), "{}", out.output);
    assert!(out.output.contains("Network is unreachable") || out.output.contains("Errno"), "{}", out.output);

    // the container names its owner (this process) and run
    let name = engine.labelled().into_iter().find(|n| n.contains(&format!("-{}-", std::process::id()))).expect("the container");
    let labels = engine.podman(&[
        "inspect",
        "--format",
        &format!("{{{{index .Config.Labels \"{LABEL_OWNER}\"}}}} {{{{index .Config.Labels \"{LABEL_RUN}\"}}}}"),
        &name,
    ]);
    assert_eq!(labels.trim(), format!("{} -", runtime::owner_label()));
    drop(rt);
    assert!(!engine.labelled().contains(&name), "removed when the runtime is dropped");
}

#[test]
fn a_container_left_by_a_killed_workbench_is_swept_at_the_next_start() {
    let Some(engine) = engine() else { return };
    // a workbench grading an instance (its tests take seconds), killed while its container runs
    let mut child = harness_s()
        .args(["verify-dataset", "--suite", "swegym", "--json"])
        .arg(sample().unwrap())
        .env("HARNESS_S_SWEGYM_RUNTIME", &engine.wrapper)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mark = format!("-{}-", child.id());
    let deadline = Instant::now() + Duration::from_secs(300);
    let name = loop {
        if let Some(n) = engine.labelled().into_iter().find(|n| n.contains(&mark)) {
            break n;
        }
        assert!(Instant::now() < deadline, "no container of the workbench appeared");
        std::thread::sleep(Duration::from_millis(200));
    };
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    child.wait().unwrap();
    assert!(engine.labelled().contains(&name), "a SIGKILL leaves the container behind (nothing of the workbench runs to remove it)");

    // the sweep a process runs before its first container: the dead workbench's container goes,
    // a container of a live process (this one) stays
    let mine = ContainerRuntime::start(engine.config(), PYTEST).unwrap();
    runtime::sweep_abandoned(&engine.config()).unwrap();
    let left = engine.labelled();
    assert!(!left.contains(&name), "{name} survived the sweep: {left:?}");
    assert!(left.iter().any(|n| n.contains(&format!("-{}-", std::process::id()))), "{left:?}");
    drop(mine);
    assert!(engine.labelled().iter().all(|n| !n.contains(&mark)));
}
