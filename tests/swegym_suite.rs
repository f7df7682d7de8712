//! SWE-Gym end to end on real components: the loader on the official sample, every editor
//! command through a real local runtime, time limits and cleanup, and scoring of bundled
//! instances by really running their tests.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness_s::policy::ToolCall;
use harness_s::suite::swegym::instance::{bundled_tasks, instance_of, load_tasks};
use harness_s::suite::swegym::runtime::{Isolation, Limits, LocalRuntime, Runtime};
use harness_s::suite::swegym::tools::Editor;
use harness_s::suite::swegym::{SweGym, SweGymConfig};
use harness_s::suite::Suite;
use serde_json::{json, Value};

#[path = "support/shared_data.rs"]
mod shared_data;
use shared_data::shared_data;

fn sample_path() -> Option<PathBuf> {
    shared_data("swegym/swebench_lite_sample5.json")
}

#[test]
fn official_sample_loads() {
    let Some(path) = sample_path() else {
        println!("skip: swebench_lite_sample5.json not found next to the checkout");
        return;
    };
    let tasks = load_tasks(&path).expect("the official sample loads");
    assert_eq!(tasks.len(), 5);
    for t in &tasks {
        let inst = instance_of(t).unwrap();
        assert_eq!(t.id, inst.instance_id);
        assert_eq!(t.family, inst.repo, "the family is the repository");
        assert!(!inst.fail_to_pass.is_empty());
        assert!(inst.patch.starts_with("diff --git"));
        assert!(inst.test_patch.starts_with("diff --git"));
        assert_eq!(inst.base_commit.len(), 40);
        // fields outside the schema survive in the payload
        assert!(t.payload.get("environment_setup_commit").is_some());
    }
    let django = tasks.iter().find(|t| t.id == "django__django-16255").map(|t| instance_of(t).unwrap());
    if let Some(d) = django {
        assert_eq!(d.fail_to_pass, vec!["test_callable_sitemod_no_items (sitemaps_tests.test_http.HTTPSitemapTests)"]);
        assert_eq!(harness_s::suite::swegym::runtime::image_name(&d.instance_id), "xingyaoww/sweb.eval.x86_64.django_s_django-16255");
        assert!(harness_s::suite::swegym::score::test_command(&d).contains("sitemaps_tests.test_http"));
    }
}

#[test]
fn loader_errors_name_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.jsonl");
    let good = json!({"instance_id": "a__b-1", "repo": "a/b", "base_commit": "c", "problem_statement": "p", "patch": "d", "test_patch": "t",
                      "FAIL_TO_PASS": ["x"], "PASS_TO_PASS": []});
    let mut bad = good.clone();
    bad["instance_id"] = json!("a__b-2");
    bad["FAIL_TO_PASS"] = json!({"x": 1});
    std::fs::write(&p, format!("{good}\n{bad}\n")).unwrap();
    let e = load_tasks(&p).unwrap_err().to_string();
    assert_eq!(e, format!("{}:2: field `FAIL_TO_PASS`: expected a list of test names, got an object", p.display()));
}

fn editor_call(ed: &mut Editor, rt: &mut dyn Runtime, args: Value) -> String {
    ed.call(rt, args.as_object().unwrap()).expect("runtime works").observation
}

#[test]
fn every_editor_command() {
    let mut rt = LocalRuntime::empty().unwrap();
    let mut ed = Editor::default();
    let r: &mut dyn Runtime = &mut rt;
    let created = editor_call(&mut ed, r, json!({"command": "create", "path": "/testbed/pkg/m.py", "file_text": "a = 1\nb = 2\na = 1\n"}));
    assert_eq!(created, "File created successfully at: /testbed/pkg/m.py");
    let again = editor_call(&mut ed, r, json!({"command": "create", "path": "/testbed/pkg/m.py", "file_text": "x"}));
    assert!(again.contains("File already exists at: /testbed/pkg/m.py. Cannot overwrite files using command `create`."), "{again}");
    let view = editor_call(&mut ed, r, json!({"command": "view", "path": "/testbed/pkg/m.py"}));
    assert_eq!(view, "Here's the result of running `cat -n` on /testbed/pkg/m.py:\n     1\ta = 1\n     2\tb = 2\n     3\ta = 1\n     4\t\n");
    let range = editor_call(&mut ed, r, json!({"command": "view", "path": "/testbed/pkg/m.py", "view_range": [2, -1]}));
    assert!(range.ends_with("     2\tb = 2\n     3\ta = 1\n     4\t\n"), "{range}");
    let bad_range = editor_call(&mut ed, r, json!({"command": "view", "path": "/testbed/pkg/m.py", "view_range": [9, 10]}));
    assert!(bad_range.starts_with("ERROR:\nInvalid `view_range`: [9, 10]. Its first element `9`"), "{bad_range}");
    let dir = editor_call(&mut ed, r, json!({"command": "view", "path": "/testbed"}));
    assert!(
        dir.starts_with(
            "Here's the files and directories up to 2 levels deep in /testbed, excluding hidden items:\n/testbed\n/testbed/pkg\n/testbed/pkg/m.py"
        ),
        "{dir}"
    );
    // the unique-match rule
    let twice = editor_call(&mut ed, r, json!({"command": "str_replace", "path": "/testbed/pkg/m.py", "old_str": "a = 1", "new_str": "a = 3"}));
    assert_eq!(twice, "ERROR:\nNo replacement was performed. Multiple occurrences of old_str `a = 1` in lines [1, 3]. Please ensure it is unique.");
    let none = editor_call(&mut ed, r, json!({"command": "str_replace", "path": "/testbed/pkg/m.py", "old_str": "c = 9", "new_str": "c = 8"}));
    assert_eq!(none, "ERROR:\nNo replacement was performed, old_str `c = 9` did not appear verbatim in /testbed/pkg/m.py.");
    let ok = editor_call(&mut ed, r, json!({"command": "str_replace", "path": "/testbed/pkg/m.py", "old_str": "b = 2", "new_str": "b = 20"}));
    assert!(ok.starts_with("The file /testbed/pkg/m.py has been edited. Here's the result of running `cat -n` on a snippet of /testbed/pkg/m.py:\n     1\ta = 1\n     2\tb = 20\n"), "{ok}");
    let ins = editor_call(&mut ed, r, json!({"command": "insert", "path": "/testbed/pkg/m.py", "insert_line": 0, "new_str": "# head"}));
    assert!(ins.contains("     1\t# head\n     2\ta = 1"), "{ins}");
    let bad_ins = editor_call(&mut ed, r, json!({"command": "insert", "path": "/testbed/pkg/m.py", "insert_line": 99, "new_str": "x"}));
    assert_eq!(bad_ins, "ERROR:\nInvalid `insert_line` parameter: 99. It should be within the range of lines of the file: [0, 5]");
    let content = |rt: &LocalRuntime| std::fs::read_to_string(rt.repo().join("pkg/m.py")).unwrap();
    let undo = editor_call(&mut ed, &mut rt, json!({"command": "undo_edit", "path": "/testbed/pkg/m.py"}));
    assert!(undo.starts_with("Last edit to /testbed/pkg/m.py undone successfully."), "{undo}");
    assert_eq!(content(&rt), "a = 1\nb = 20\na = 1\n");
    editor_call(&mut ed, &mut rt, json!({"command": "undo_edit", "path": "/testbed/pkg/m.py"}));
    assert_eq!(content(&rt), "a = 1\nb = 2\na = 1\n");
    let r: &mut dyn Runtime = &mut rt;
    let empty = editor_call(&mut ed, r, json!({"command": "undo_edit", "path": "/testbed/pkg/m.py"}));
    assert_eq!(empty, "ERROR:\nNo edit history found for /testbed/pkg/m.py.");
    // paths: absolute, inside the repository, existing
    let rel = editor_call(&mut ed, r, json!({"command": "view", "path": "pkg/m.py"}));
    assert!(rel.contains("is not an absolute path") && rel.contains("Maybe you meant /testbed/pkg/m.py?"), "{rel}");
    let out = editor_call(&mut ed, r, json!({"command": "create", "path": "/testbed/../escape.txt", "file_text": "x"}));
    assert_eq!(out, "ERROR:\nThe path /testbed/../escape.txt is outside the repository /testbed.");
    let missing = editor_call(&mut ed, r, json!({"command": "view", "path": "/testbed/nope.py"}));
    assert_eq!(missing, "ERROR:\nThe path /testbed/nope.py does not exist. Please provide a valid path.");
    // long files are clipped with the notice
    let long: String = (0..3000).map(|i| format!("line_{i} = {i}\n")).collect();
    editor_call(&mut ed, r, json!({"command": "create", "path": "/testbed/long.py", "file_text": long}));
    let clipped = editor_call(&mut ed, r, json!({"command": "view", "path": "/testbed/long.py"}));
    assert!(clipped.contains("<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you."), "no notice");
    assert!(clipped.len() < 30_000, "{}", clipped.len());
    assert!(!rt.root().join("escape.txt").exists());
}

#[test]
fn commands_are_limited_killed_and_cleaned_up() {
    let mut rt = LocalRuntime::empty().unwrap();
    let root = rt.root().to_path_buf();
    // time limit: the command and what it started are killed
    let t0 = Instant::now();
    let marker = format!("swe-suite-bg-{}", std::process::id());
    let out = rt
        .exec(
            &format!("bash -c 'exec -a {marker} sleep 30' & sleep 0.1; tr '\\0' ' ' < /proc/$!/cmdline; echo; sleep 20"),
            None,
            &Limits { timeout: Duration::from_millis(600), max_output: 4096 },
        )
        .unwrap();
    assert!(out.timed_out && out.exit_code.is_none());
    assert!(out.output.contains(&format!("{marker} 30")), "the background process never started: {:?}", out.output);
    assert!(t0.elapsed() < Duration::from_secs(5), "killed promptly: {:?}", t0.elapsed());
    // (the sandbox numbers processes in its own namespace: look for it by name on the host)
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let cmd = String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).ok()?).replace('\0', " ");
                let zombie = std::fs::read_to_string(e.path().join("stat")).map(|s| s.contains(") Z ")).unwrap_or(true);
                (cmd.contains(&marker) && !zombie).then_some(cmd)
            })
            .collect();
        if alive.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the background process survived: {alive:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // output cap
    let out = rt.exec("head -c 100000 /dev/zero | tr '\\0' 'x'", None, &Limits { timeout: Duration::from_secs(10), max_output: 1000 }).unwrap();
    assert!(out.truncated && out.output.len() == 1000 && out.ok());
    // exit codes and the repository path as the agent sees it
    let out = rt.exec("pwd; exit 3", None, &Limits::default()).unwrap();
    assert_eq!(out.output.trim(), "/testbed");
    assert_eq!(out.exit_code, Some(3));
    // HOME and TMPDIR live in the episode folder
    let out = rt.exec("touch \"$HOME/h\" \"$TMPDIR/t\" /testbed/r && echo $HOME", None, &Limits::default()).unwrap();
    assert!(out.ok(), "{}", out.output);
    assert!(root.join("home/h").exists() && root.join("tmp/t").exists() && rt.repo().join("r").exists());
    // no network where the OS allows a namespace: a loopback server is out of reach
    if rt.isolation() != Isolation::None {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let out = rt
            .exec(&format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\""), None, &Limits::default())
            .unwrap();
        assert!(!out.ok(), "the command reached the host's loopback: {}", out.output);
    } else {
        println!("note: this OS allows no network namespace; commands are not network-isolated");
    }
    drop(rt);
    assert!(!root.exists(), "the episode folder is removed");
}

fn suite() -> SweGym {
    SweGym::with_config(SweGymConfig::default())
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall { id: "c".into(), name: name.into(), arguments: args }
}

#[test]
fn scoring_bundled_instances() {
    let tasks = bundled_tasks().expect("bundled dataset");
    let s = suite();
    let task = tasks
        .iter()
        .find(|t| t.family == "harness-s/textkit" && !t.payload["FAIL_TO_PASS"].to_string().contains("Slugify"))
        .expect("a textkit instance");
    let inst = instance_of(task).unwrap();

    // untouched: an empty diff is unresolved
    let mut env = s.make_env(task).unwrap();
    assert!(env.task_prompt().contains(&inst.problem_statement));
    let score = env.score(None).unwrap();
    assert!(!score.success);
    assert_eq!(score.details["reason"], "empty diff");

    // the reference patch, applied by the agent's own tools, resolves it
    let mut env = s.make_env(task).unwrap();
    let out = env.step(&call("str_replace_editor", json!({"command": "create", "path": "/testbed/fix.patch", "file_text": inst.patch}))).unwrap();
    assert!(out.signals.error_kind.is_none(), "{}", out.observation);
    let out = env.step(&call("execute_bash", json!({"command": "git apply fix.patch && rm fix.patch"}))).unwrap();
    assert!(out.observation.ends_with("[The command completed with exit code 0.]"), "{}", out.observation);
    let done = env.step(&call("finish", json!({}))).unwrap();
    assert!(done.done && done.signals.submitted);
    let score = env.score(None).unwrap();
    assert!(score.success, "{}", score.details);
    assert_eq!(score.details["diff"].as_str().unwrap().trim(), inst.patch.trim());
    assert!(score.details["FAIL_TO_PASS"].as_object().unwrap().values().all(|v| v == true));

    // the same diff again comes from the cache
    let mut again = s.make_env(task).unwrap();
    again.step(&call("str_replace_editor", json!({"command": "create", "path": "/testbed/fix.patch", "file_text": inst.patch}))).unwrap();
    again.step(&call("execute_bash", json!({"command": "git apply fix.patch && rm fix.patch"}))).unwrap();
    let t0 = Instant::now();
    let cached = again.score(None).unwrap();
    assert!(cached.success && cached.details["cached"] == true);
    assert!(t0.elapsed() < Duration::from_secs(2));

    // the fix plus a change that breaks a passing test is not resolved
    let mut env = s.make_env(task).unwrap();
    env.step(&call("str_replace_editor", json!({"command": "create", "path": "/testbed/fix.patch", "file_text": inst.patch}))).unwrap();
    env.step(&call("execute_bash", json!({"command": "git apply fix.patch && rm fix.patch"}))).unwrap();
    let out = env
        .step(&call("str_replace_editor", json!({"command": "str_replace", "path": "/testbed/textkit/core.py", "old_str": "    return sep.join(words)", "new_str": "    return sep.join(words).upper()"})))
        .unwrap();
    assert!(out.signals.error_kind.is_none(), "{}", out.observation);
    let score = env.score(None).unwrap();
    assert!(!score.success);
    assert!(score.details["FAIL_TO_PASS"].as_object().unwrap().values().all(|v| v == true), "{}", score.details);
    let broken: Vec<&String> = score.details["PASS_TO_PASS"].as_object().unwrap().iter().filter(|(_, v)| **v == false).map(|(k, _)| k).collect();
    assert!(broken.iter().any(|k| k.contains("SlugifyTests")), "{broken:?}");
}

#[test]
fn the_runtime_for_an_official_instance_is_a_container() {
    let Some(path) = sample_path() else {
        println!("skip: swebench_lite_sample5.json not found next to the checkout");
        return;
    };
    let tasks = load_tasks(&path).unwrap();
    // with the local runtime forced, an official instance says what it needs instead of failing obscurely
    let local = SweGym::with_config(SweGymConfig { runtime: harness_s::suite::swegym::RuntimeChoice::Local, ..Default::default() });
    let e = local.make_env(&tasks[0]).err().expect("no local copy of an official repository").to_string();
    assert!(e.contains("is not bundled") && e.contains("container runtime"), "{e}");
}

#[test]
fn an_endless_loop_costs_the_bundled_time_limit_once() {
    let tasks = bundled_tasks().expect("bundled dataset");
    let s = suite();
    let task = tasks.iter().find(|t| t.family == "harness-s/textkit").expect("a textkit instance");
    let looping = |env: &mut Box<dyn harness_s::suite::Environment>| {
        let out = env.step(&call("execute_bash", json!({"command": "printf 'while True:\\n    pass\\n' >> textkit/core.py"}))).unwrap();
        assert!(out.signals.error_kind.is_none(), "{}", out.observation);
    };

    // a bundled repository's tests run in well under a second: a loop is stopped after 3 s, not 120
    let mut env = s.make_env(task).unwrap();
    looping(&mut env);
    let t0 = Instant::now();
    let out = env.step(&call("execute_bash", json!({"command": "python3 -m unittest"}))).unwrap();
    let first = t0.elapsed();
    assert_eq!(out.signals.error_kind.as_deref(), Some("timeout"), "{}", out.observation);
    assert!(out.observation.contains("timed out after 3 seconds"), "{}", out.observation);
    assert!(first >= Duration::from_secs(3) && first < Duration::from_secs(60), "{first:?}");
    let score = env.score(None).unwrap();
    assert!(!score.success);
    assert_eq!(score.details["reason"], "the tests timed out after 3 s", "{}", score.details);

    // the same workspace content again: the test run's result is replayed, not run
    let mut again = s.make_env(task).unwrap();
    looping(&mut again);
    let t0 = Instant::now();
    let replay = again.step(&call("execute_bash", json!({"command": "python3 -m unittest"}))).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    assert_eq!(replay.observation, out.observation);
    assert_eq!(replay.signals.error_kind.as_deref(), Some("timeout"));
    // other content, another result: without the loop the tests run (and end)
    let out = again.step(&call("execute_bash", json!({"command": "sed -i '$d' textkit/core.py && sed -i '$d' textkit/core.py"}))).unwrap();
    assert!(out.signals.error_kind.is_none(), "{}", out.observation);
    let real = again.step(&call("execute_bash", json!({"command": "python3 -m unittest"}))).unwrap();
    assert_ne!(real.signals.error_kind.as_deref(), Some("timeout"), "{}", real.observation);
    assert!(real.observation.contains("Ran "), "{}", real.observation);
}

#[test]
fn workspace_content_keys() {
    let tasks = bundled_tasks().expect("bundled dataset");
    let inst = instance_of(tasks.iter().find(|t| t.family == "harness-s/textkit").unwrap()).unwrap();
    let dir = harness_s::suite::swegym::instance::bundled_repo_dir(&inst.repo).unwrap();
    let mut a = LocalRuntime::from_dir(&dir).unwrap();
    let b = LocalRuntime::from_dir(&dir).unwrap();
    assert_eq!(a.content_key(), b.content_key(), "two copies of one repository look alike");
    assert!(a.content_key().is_some());
    let limits = Limits::default();
    let mut keys = vec![a.content_key()];
    for change in [
        // the history is part of it (a diff reads it); only the index, whose stat data differs
        // between any two copies and which no cached command reads, is not
        "git init -q . && git add -A",
        "printf '\n# x\n' >> textkit/core.py",
        "mkdir -p ~/.local && echo x > ~/.local/note",
        "echo y > /tmp/scratch",
        "chmod +x textkit/core.py",
        // a Python cache is read by the interpreter: part of it
        "mkdir -p textkit/__pycache__ && echo pyc > textkit/__pycache__/core.cpython-311.pyc",
        // a link is its text, never followed
        "ln -s /dev/zero zero",
    ] {
        let out = a.exec(change, None, &limits).unwrap();
        assert!(out.ok(), "{change}: {}", out.output);
        let k = a.content_key();
        assert!(k.is_some() && !keys.contains(&k), "`{change}` changed nothing of the key");
        keys.push(k);
    }
    // restaging content the history already holds changes only the index: the key stays
    assert!(a.exec("git add -A", None, &limits).unwrap().ok());
    let k = a.content_key();
    assert!(a.exec("touch textkit/core.py && git add -A && git status --short", None, &limits).unwrap().ok());
    assert_eq!(a.content_key(), k);
    // a pipe is never opened, and what reading it gives is not content: no key, no caching
    assert!(a.exec("mkfifo pipe", None, &limits).unwrap().ok());
    assert_eq!(a.content_key(), None);
}
