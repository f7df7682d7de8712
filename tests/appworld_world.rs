//! The AppWorld adapter against the bundled world over loopback HTTP: the protocol round trip,
//! plain-text errors, timeouts, the sandbox, the apps' rules, and every bundled task solved by
//! its reference solution and failed by doing nothing.

use std::time::Duration;

use harness_s::suite::appworld::client::ClientError;
use harness_s::suite::appworld::world::WorldOptions;
use harness_s::suite::appworld::{load_ids, AppWorld, AppWorldConfig, TOOL};
use harness_s::suite::{Action, Environment, Suite};
use serde_json::json;

fn suite_with(time_limit: Duration, client_timeout: Duration, servers: usize) -> AppWorld {
    AppWorld::with_config(AppWorldConfig {
        urls: vec![],
        client_timeout,
        execution_timeout_seconds: 100,
        world: WorldOptions { python: "python3".into(), time_limit, driver: None },
        bundled_servers: servers,
    })
}

fn suite() -> AppWorld {
    suite_with(Duration::from_secs(10), Duration::from_secs(180), 2)
}

fn code(c: &str) -> Action {
    Action { id: "c".into(), name: TOOL.into(), arguments: json!({ "code": c }) }
}

fn first_task(family: &str) -> String {
    suite().bundled_tasks().unwrap().into_iter().find(|t| t.family == family).unwrap().id
}

#[test]
fn initialize_execute_evaluate_close_over_loopback() {
    let s = suite();
    let urls = s.server_urls().unwrap();
    assert!(urls.iter().all(|u| u.starts_with("http://127.0.0.1:")), "{urls:?}");
    let id = first_task("contacts_phone");
    let mut env = s.open(&id).unwrap();
    let prompt = env.task_prompt();
    assert!(prompt.starts_with("My name is: ") && prompt.contains("Task: What is the phone number of my"), "{prompt}");
    let out = env.step(&code("print(1 + 1)")).unwrap();
    assert_eq!(out.observation, "2");
    assert!(out.signals.executed && !out.done);
    let out = env.step(&code("x = 3")).unwrap();
    assert_eq!(out.observation, "Execution successful.");
    // variables persist between cells
    assert_eq!(env.step(&code("print(x * 2)")).unwrap().observation, "6");
    let out = env.step(&code("apis.contacts.search_contacts(access_token='nope')")).unwrap();
    assert!(out.observation.starts_with("Execution failed. Traceback:\n"), "{}", out.observation);
    assert!(out.observation.contains("Response status code is 401"), "{}", out.observation);
    assert_eq!(out.signals.error_kind.as_deref(), Some("unauthorized"));
    // not done yet: evaluation fails
    let sc = env.score(None).unwrap();
    assert!(!sc.success);
    assert!(!sc.details["failures"].as_array().unwrap().is_empty());
    // a wrong answer completes the task but fails the answer test
    let out = env.step(&code("apis.supervisor.complete_task(answer='555-000-0000')")).unwrap();
    assert!(out.done && out.signals.submitted, "{out:?}");
    let sc = env.score(None).unwrap();
    assert!(!sc.success);
    let fails: Vec<String> = sc.details["failures"].as_array().unwrap().iter().map(|f| f["requirement"].as_str().unwrap().to_string()).collect();
    assert_eq!(fails.len(), 1, "{fails:?}");
    assert!(fails[0].starts_with("the answer is"));
    let url = env.server_url().to_string();
    drop(env);
    // closed: the server no longer holds the task
    let client = s.client().unwrap();
    let err = client.post(&url, "execute", &json!({"task_id": id, "code": "print(1)"})).unwrap_err();
    assert!(matches!(err, ClientError::Status { status: 500, .. }), "{err}");
    // every suite instance is one run with its own experiment name
    assert_ne!(s.experiment_name(), suite().experiment_name());
}

#[test]
fn a_plain_text_500_is_an_infrastructure_error_naming_url_and_status() {
    let s = suite();
    let e = s
        .make_env(&harness_s::task::Task {
            id: "nosuch_1".into(),
            suite: "appworld".into(),
            family: "x".into(),
            instruction: String::new(),
            payload: json!({"task_id": "nosuch_1"}),
        })
        .err()
        .unwrap();
    let msg = e.to_string();
    assert!(msg.contains("/initialize answered 500"), "{msg}");
    assert!(msg.contains("http://127.0.0.1:"), "{msg}");
    assert!(msg.contains("Task `nosuch_1` does not exist"), "{msg}");

    let client = s.client().unwrap();
    let url = s.server_urls().unwrap()[0].clone();
    let err = client.post(&url, "execute", &json!({"task_id": "abc_1", "code": "print(1)"})).unwrap_err();
    match &err {
        ClientError::Status { url: u, status, body } => {
            assert_eq!(*status, 500);
            assert_eq!(u, &format!("{url}/execute"));
            assert!(body.contains("not initialized"), "{body}");
        }
        other => panic!("{other:?}"),
    }
    // the adapter never sends ground_truth_mode: the bundled server refuses it
    let err = client.post(&url, "initialize", &json!({"task_id": first_task("notes_lookup"), "ground_truth_mode": "full"})).unwrap_err();
    assert!(err.to_string().contains("ground_truth_mode"), "{err}");
}

#[test]
fn a_slow_server_times_out_as_an_infrastructure_error() {
    let s = suite_with(Duration::from_secs(4), Duration::from_millis(800), 1);
    let id = first_task("notes_lookup");
    let mut env = s.open(&id).unwrap();
    let t0 = std::time::Instant::now();
    let err = env.step(&code("while True:\n    pass")).unwrap_err().to_string();
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert!(err.contains("timed out after 0.8 s"), "{err}");
    assert!(err.contains("/execute"), "{err}");
}

#[test]
fn the_sandbox_refuses_unsafe_code_and_kills_runaway_cells() {
    let s = suite_with(Duration::from_secs(1), Duration::from_secs(30), 1);
    let id = first_task("todo_complete");
    let mut env = s.open(&id).unwrap();
    for (cell, what) in [
        ("import os\nprint(os.listdir('/'))", "module(s) is not allowed: os."),
        ("import subprocess", "not allowed: subprocess."),
        ("from socket import socket", "not allowed: socket."),
        ("print(open('/etc/passwd').read())", "not allowed: open."),
        ("__import__('os')", "not allowed: __import__."),
        ("print(().__class__.__bases__)", "not allowed: __bases__."),
    ] {
        let out = env.step(&code(cell)).unwrap();
        assert!(out.observation.starts_with("Execution failed. Traceback:\n"), "{cell}: {}", out.observation);
        assert!(out.observation.contains(what), "{cell}: {}", out.observation);
        assert_eq!(out.signals.error_kind.as_deref(), Some("unsafe"), "{cell}");
    }
    // allowed modules work
    assert_eq!(env.step(&code("import math\nprint(math.floor(2.5))")).unwrap().observation, "2");
    // state of the apps survives a killed cell; variables do not
    env.step(&code("p = {a['account_name']: a['password'] for a in apis.supervisor.show_account_passwords()}\nme = apis.supervisor.show_profile()['email']\nt = apis.todo.login(username=me, password=p['todo'])['access_token']\nprint(apis.todo.complete_item(access_token=t, item_id=1))")).unwrap();
    let t0 = std::time::Instant::now();
    let out = env.step(&code("while True:\n    pass")).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(out.observation.contains("TimeoutError"), "{}", out.observation);
    assert_eq!(out.signals.error_kind.as_deref(), Some("timeout"));
    let out = env.step(&code("print(t)")).unwrap();
    assert!(out.observation.contains("NameError"), "{}", out.observation);
    let out = env.step(&code("p = {a['account_name']: a['password'] for a in apis.supervisor.show_account_passwords()}\nme = apis.supervisor.show_profile()['email']\nt = apis.todo.login(username=me, password=p['todo'])['access_token']\nprint([i['completed'] for i in apis.todo.show_items(access_token=t, page_limit=20) if i['item_id'] == 1])")).unwrap();
    assert_eq!(out.observation, "[True]");
}

#[test]
fn apps_need_logins_page_their_listings_and_check_arguments() {
    let s = suite();
    let id = first_task("notes_lookup");
    let mut env = s.open(&id).unwrap();
    let run = |env: &mut harness_s::suite::appworld::AppWorldEnv, c: &str| env.step(&code(c)).unwrap().observation;
    let out = run(&mut env, "print(apis.api_docs.show_app_descriptions())");
    for app in ["api_docs", "supervisor", "notes", "contacts", "wallet", "music", "todo"] {
        assert!(out.contains(&format!("'name': '{app}'")), "{out}");
    }
    let out = run(&mut env, "print(apis.api_docs.show_api_descriptions(app_name='notes'))");
    assert!(out.contains("show_notes") && out.contains("login"), "{out}");
    let out = run(&mut env, "print(apis.api_docs.show_api_doc(app_name='notes', api_name='show_notes'))");
    assert!(out.contains("'page_index'") && out.contains("'access_token'"), "{out}");
    let out = run(&mut env, "apis.notes.login(username='x@y.z', password='bad')");
    assert!(out.contains("status code is 401") && out.contains("Invalid credentials"), "{out}");
    let out = run(&mut env, "p = {a['account_name']: a['password'] for a in apis.supervisor.show_account_passwords()}\nme = apis.supervisor.show_profile()['email']\nt = apis.notes.login(username=me, password=p['notes'])['access_token']\nprint(len(apis.notes.show_notes(access_token=t)), len(apis.notes.show_notes(access_token=t, page_index=2)), len(apis.notes.show_notes(access_token=t, page_limit=20)))");
    assert_eq!(out, "5 2 12");
    let out = run(&mut env, "apis.notes.show_notes(access_token=t, page_limit=50)");
    assert!(out.contains("status code is 422") && out.contains("page_limit"), "{out}");
    let out = run(&mut env, "apis.notes.show_note(access_token=t)");
    assert!(out.contains("Missing required parameter 'note_id'"), "{out}");
    let out = run(&mut env, "apis.notes.show_note(access_token=t, note_id=999)");
    assert!(out.contains("status code is 404"), "{out}");
    let out = run(&mut env, "apis.notes.show_note(t, 1)");
    assert!(out.contains("TypeError") && out.contains("keyword arguments only"), "{out}");
    let out = run(&mut env, "apis.notes.show_notes(access_token=t, colour='red')");
    assert!(out.contains("Unexpected parameter 'colour'"), "{out}");
    let out = run(&mut env, "apis.nosuchapp.anything()");
    assert!(out.contains("No app named 'nosuchapp'"), "{out}");
    // a deletion the task did not ask for is caught by "nothing else changed"
    run(&mut env, "apis.notes.delete_note(access_token=t, note_id=1)\napis.supervisor.complete_task(answer='x')");
    let sc = env.score(None).unwrap();
    let fails = sc.details["failures"].to_string();
    assert!(fails.contains("nothing else changed") && fails.contains("notes"), "{fails}");
}

#[test]
fn every_bundled_task_is_solved_by_its_reference_and_failed_by_doing_nothing() {
    let s = suite_with(Duration::from_secs(10), Duration::from_secs(180), 4);
    let tasks = s.bundled_tasks().unwrap();
    assert!(tasks.len() >= 150, "{} tasks", tasks.len());
    let families: std::collections::BTreeSet<_> = tasks.iter().map(|t| t.family.clone()).collect();
    assert!(families.len() >= 8, "{families:?}");
    let mut per_scenario = std::collections::BTreeMap::<String, usize>::new();
    for t in &tasks {
        *per_scenario.entry(t.id.split_once('_').unwrap().0.to_string()).or_default() += 1;
    }
    assert!(per_scenario.values().all(|n| *n == 3), "{per_scenario:?}");
    let report = s.verify(&tasks);
    assert_eq!(report.agree, report.total, "{:?}", report.disagreements);
    assert_eq!(report.groups.len(), families.len());
}

#[test]
fn task_id_files_load_and_bad_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ids.txt");
    let bundled = suite().bundled_tasks().unwrap();
    std::fs::write(&p, format!("# dev\n{}\n\n82e2fac_1\n", bundled[0].id)).unwrap();
    let tasks = suite().load_file(&p).unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0], bundled[0]);
    assert_eq!(tasks[1].family, "82e2fac");
    std::fs::write(&p, "abc_1\nnot an id\n").unwrap();
    let e = load_ids(&p).unwrap_err().to_string();
    assert!(e.ends_with("ids.txt:2: `not an id` is not an AppWorld task id (`<scenario>_<n>`, e.g. `82e2fac_1`)"), "{e}");
    std::fs::write(&p, "[\"abc_1\", 3]").unwrap();
    assert!(load_ids(&p).unwrap_err().to_string().contains("element 1 is not a string"));
}

#[test]
fn verify_dataset_cli_reports_families_in_the_dbbench_shape() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness-s")).args(["verify-dataset", "--suite", "appworld", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["suite"], "appworld");
    assert_eq!(v["total"], v["agree"]);
    assert!(v["total"].as_u64().unwrap() >= 150);
    let g = v["groups"].as_object().unwrap();
    assert!(g.len() >= 8);
    for (_, c) in g {
        assert_eq!(c["total"], c["agree"]);
    }
    assert!(v.get("disagreements").is_none());
}
