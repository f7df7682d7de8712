//! The workbench command set end to end on a real store and a real (small) experiment: what the
//! app and `harness-s serve` show comes from these commands.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness_s::workbench::{CommandError, Workbench};

#[path = "support/chat_server.rs"]
mod chat_server;
use chat_server::{ChatServer, Script};
use serde_json::{json, Value};

/// A small experiment that finishes in seconds and rescues some tasks.
const SMALL: &str = r#"
name = "small"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG"]
arms = ["policy-only", "harness-s"]
seeds = [1]
iterations = 2
eval_every = 1
reanchor_every = 1
[policy]
warm_start_demos = 10
[budget]
batch_tasks = 16
base_tries = 2
rescue_siblings = 2
rescue_tries = 2
probe_tasks = 8
[eval]
train_tasks = 20
"#;

/// The demo's experiment file.
const DEMO: &str = harness_s::workbench::DEMO_CONFIG;

fn open(dir: &tempfile::TempDir) -> Workbench {
    Workbench::open(&dir.path().join("wb.db").display().to_string(), dir.path()).unwrap()
}

fn wait_finished(wb: &Workbench, run_id: i64) -> Value {
    let t = Instant::now();
    loop {
        let r = wb.call("experiment", json!({"id": run_id})).unwrap();
        if r["status"] != "running" {
            return r;
        }
        assert!(t.elapsed() < Duration::from_secs(600), "experiment {run_id} did not finish");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn suites_tasks_and_dataset_import() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let suites = wb.call("suites", Value::Null).unwrap();
    let db = suites.as_array().unwrap().iter().find(|s| s["name"] == "dbbench").unwrap();
    assert_eq!(db["tasks"], 440);
    assert_eq!(db["families"].as_array().unwrap().len(), 11);

    let tasks = wb.call("tasks", json!({"suite": "dbbench", "family": "counting"})).unwrap();
    let tasks = tasks.as_array().unwrap();
    assert_eq!(tasks.len(), 40);
    assert!(tasks.iter().all(|t| t["family"] == "counting"));
    let id = tasks[0]["id"].as_str().unwrap();
    let t = wb.call("task", json!({"suite": "dbbench", "id": id})).unwrap();
    assert!(t["prompt"].as_str().unwrap().contains(t["instruction"].as_str().unwrap().lines().next().unwrap()), "{t}");

    // A bad file: the error names the line.
    let good = r#"{"description": "How many rows?", "label": ["2"], "table": {"table_name": "t", "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["x"], ["y"]]}}, "type": ["counting"], "sql": {"query": "SELECT COUNT(*) FROM t"}}"#;
    let bad = format!("{good}\n{{\"description\": 3}}\n");
    let r = wb.call("import_dataset", json!({"suite": "dbbench", "name": "mine.jsonl", "text": bad})).unwrap();
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["errors"][0]["line"], 2, "{r}");
    assert!(wb.call("tasks", json!({"suite": "dbbench", "dataset": "mine.jsonl"})).is_err(), "a failed import keeps nothing");

    let r = wb.call("import_dataset", json!({"suite": "dbbench", "name": "mine.jsonl", "text": format!("{good}\n{good}\n")})).unwrap();
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["tasks"], 2);
    let mine = wb.call("tasks", json!({"suite": "dbbench", "dataset": "mine.jsonl"})).unwrap();
    assert_eq!(mine.as_array().unwrap().len(), 2);
    // other files in the folder (a README beside a bundled set, a scratch file) are not datasets
    let folder = dir.path().join("datasets/dbbench");
    std::fs::write(folder.join("README.md"), "# notes\n").unwrap();
    std::fs::write(folder.join(".other.jsonl.importing"), format!("{good}\n")).unwrap();
    let suites = wb.call("suites", Value::Null).unwrap();
    let listed: Vec<&str> = suites[0]["datasets"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(listed, ["mine.jsonl"], "{}", suites[0]["datasets"]);

    let e = wb.call("import_dataset", json!({"suite": "dbbench", "name": "../escape.jsonl", "text": good})).unwrap_err();
    assert!(matches!(e, CommandError::BadArguments(_)), "{e}");
    let e = wb.call("tasks", json!({"suite": "nope"})).unwrap_err();
    assert!(matches!(e, CommandError::NotFound(_)) && e.to_string().contains("dbbench"), "{e}");
    let e = wb.call("no_such_command", Value::Null).unwrap_err();
    assert!(matches!(e, CommandError::NotFound(_)), "{e}");
}

#[test]
fn harnesses_show_siblings_as_differences_from_base() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let hs = wb.call("harnesses", json!({"suite": "dbbench"})).unwrap();
    let hs = hs.as_array().unwrap();
    let base = hs.iter().find(|h| h["name"] == "base").unwrap();
    assert_eq!(base["base"], true);
    assert!(base["diff"].as_array().unwrap().is_empty());
    let schema = hs.iter().find(|h| h["name"] == "schema-first").unwrap();
    assert_eq!(schema["extends"], "base");
    let added: Vec<&str> = schema["diff"].as_array().unwrap().iter().filter(|l| l["op"] == "+").map(|l| l["line"].as_str().unwrap()).collect();
    assert!(added.iter().any(|l| l.contains("schema-card")), "{added:?}");
    assert!(schema["profile"].is_null(), "no experiment has measured profiles yet");
}

#[test]
fn experiment_files_are_checked_rendered_and_saved() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let t = wb.call("config_template", Value::Null).unwrap();
    let c = wb.call("config_check", json!({"toml": t["toml"]})).unwrap();
    assert_eq!(c["ok"], true, "{c}");
    assert_eq!(c["config"]["name"], "demo");
    let mut cfg = c["config"].clone();
    cfg["seeds"] = json!([7, 8]);
    cfg["budget"]["rescue_siblings"] = json!(3);
    let r = wb.call("config_render", json!({"config": cfg})).unwrap();
    let text = r["toml"].as_str().unwrap();
    assert!(text.contains("seeds = [7, 8]") && text.contains("rescue_siblings = 3"), "{text}");
    let back = wb.call("config_check", json!({"toml": text})).unwrap();
    assert_eq!(back["config"], cfg);

    let bad = wb.call("config_check", json!({"toml": "name = \"x\"\n\niterations = \"many\"\n"})).unwrap();
    assert_eq!(bad["ok"], false);
    assert_eq!(bad["line"], 3, "{bad}");
    let bad = wb.call("config_check", json!({"toml": "name = \"x\"\narms = [\"harness-s\", \"wishful\"]\n"})).unwrap();
    assert!(bad["error"].as_str().unwrap().contains("wishful"), "{bad}");

    let saved = wb.call("config_save", json!({"path": "mine.toml", "toml": text})).unwrap();
    let p = saved["path"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(p).unwrap(), text);
    assert!(wb.call("config_save", json!({"path": "broken.toml", "toml": "name = 1"})).is_err());
    assert!(!dir.path().join("experiments/broken.toml").exists());
}

#[test]
fn saved_files_stay_in_the_workspace_and_replace_nothing_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let text = wb.call("config_template", Value::Null).unwrap()["toml"].as_str().unwrap().to_string();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x.toml");

    // absolute paths and `..` are refused, naming the argument and what it should be
    let e = wb.call("config_save", json!({"path": target.display().to_string(), "toml": text})).unwrap_err();
    assert_eq!(
        e,
        CommandError::BadArguments(format!(
            "config_save: path `{}` must be relative to the workspace's experiments folder (no absolute path, no `..`)",
            target.display()
        ))
    );
    for bad in ["../x.toml", "sub/../../x.toml", "../../x.toml"] {
        let e = wb.call("config_save", json!({"path": bad, "toml": text})).unwrap_err();
        assert!(matches!(e, CommandError::BadArguments(_)) && e.to_string().contains(&format!("path `{bad}` must be relative")), "{e}");
    }
    assert!(!target.exists() && !dir.path().join("x.toml").exists());

    // a symbolic link out of the workspace: a folder on the way, or the file itself (even dangling)
    std::fs::create_dir_all(dir.path().join("experiments")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("experiments/out")).unwrap();
    let e = wb.call("config_save", json!({"path": "out/x.toml", "toml": text})).unwrap_err();
    assert!(matches!(e, CommandError::BadArguments(_)) && e.to_string().contains("outside the workspace"), "{e}");
    std::os::unix::fs::symlink(&target, dir.path().join("experiments/link.toml")).unwrap();
    for overwrite in [false, true] {
        let e = wb.call("config_save", json!({"path": "link.toml", "toml": text, "overwrite": overwrite})).unwrap_err();
        assert!(matches!(e, CommandError::BadArguments(_)), "{e}");
    }
    assert!(!target.exists(), "nothing written outside the workspace");
    // a link that stays inside is fine
    std::fs::create_dir_all(dir.path().join("shared")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("shared"), dir.path().join("experiments/shared")).unwrap();
    wb.call("config_save", json!({"path": "shared/s.toml", "toml": text})).unwrap();
    assert!(dir.path().join("shared/s.toml").exists());

    // a new file is written (folders made); an existing one only with `overwrite: true`
    let saved = wb.call("config_save", json!({"path": "team/mine.toml", "toml": text})).unwrap();
    let p = dir.path().join("experiments/team/mine.toml");
    assert_eq!(Path::new(saved["path"].as_str().unwrap()), p);
    let edited = text.replace("iterations = 8", "iterations = 3");
    assert_ne!(edited, text);
    let e = wb.call("config_save", json!({"path": "team/mine.toml", "toml": edited})).unwrap_err();
    assert!(matches!(e, CommandError::Conflict(_)), "{e}");
    assert_eq!(e.kind(), "conflict");
    assert!(e.to_string().contains("already exists") && e.to_string().contains("overwrite: true"), "{e}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text, "the refused save changed nothing");
    wb.call("config_save", json!({"path": "team/mine.toml", "toml": edited, "overwrite": false})).unwrap_err();
    wb.call("config_save", json!({"path": "team/mine.toml", "toml": edited, "overwrite": true})).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), edited);
    // dataset import is confined the same way
    std::os::unix::fs::symlink(outside.path(), dir.path().join("datasets")).unwrap();
    let e = wb.call("import_dataset", json!({"suite": "dbbench", "name": "d.jsonl", "text": "{}"})).unwrap_err();
    assert!(matches!(e, CommandError::BadArguments(_)) && e.to_string().starts_with("import_dataset:"), "{e}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn a_form_edit_keeps_the_files_comments_and_order() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let original = r#"# my experiment: keep this comment
seeds = [3, 1]   # odd order on purpose
name = "custom"

iterations = 8 # eight rounds

[budget]
# the batch first
batch_tasks = 24      # training tasks per iteration
base_tries = 4

[policy]
temperature = 0.6
"#;
    let c = wb.call("config_check", json!({"toml": original})).unwrap();
    assert_eq!(c["ok"], true, "{c}");
    let mut cfg = c["config"].clone();
    cfg["iterations"] = json!(3);
    cfg["budget"]["batch_tasks"] = json!(8);
    let r = wb.call("config_render", json!({"config": cfg, "original": original})).unwrap();
    let want = original.replace("iterations = 8 #", "iterations = 3 #").replace("batch_tasks = 24 ", "batch_tasks = 8 ");
    assert_eq!(r["toml"].as_str().unwrap(), want);
    // a setting the file did not have is added to its table; nothing else moves
    cfg["budget"]["probe_tasks"] = json!(5);
    let r = wb.call("config_render", json!({"config": cfg, "original": want})).unwrap();
    assert_eq!(
        r["toml"].as_str().unwrap(),
        want.replace(
            "base_tries = 4
",
            "base_tries = 4
probe_tasks = 5
"
        )
    );
    // without the original, the file is written afresh (as before)
    let fresh = wb.call("config_render", json!({"config": cfg})).unwrap();
    assert!(!fresh["toml"].as_str().unwrap().contains('#'));
}

#[test]
fn numbers_are_checked_with_their_key_and_the_estimate_comes_with_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    // in a file: the key, its line, and words a person uses
    let c = wb.call("config_check", json!({"toml": "name = \"x\"\niterations = -1\n"})).unwrap();
    assert_eq!((c["ok"].clone(), c["key"].clone(), c["line"].clone()), (json!(false), json!("iterations"), json!(2)), "{c}");
    assert!(c["error"].as_str().unwrap().ends_with("iterations: line 2: must be a whole number ≥ 1, got -1"), "{c}");
    let c = wb.call("config_check", json!({"toml": "name = \"x\"\n[budget]\nprobe_tasks = 2.5\n"})).unwrap();
    assert_eq!(c["key"], "budget.probe_tasks", "{c}");
    assert!(c["error"].as_str().unwrap().ends_with("must be a whole number ≥ 0, got 2.5"), "{c}");
    let c = wb.call("config_check", json!({"toml": "name = \"x\"\n[budget]\nbatch_tasks = 0\n"})).unwrap();
    assert_eq!(c["key"], "budget.batch_tasks", "{c}");
    assert!(c["error"].as_str().unwrap().ends_with("must be a whole number ≥ 1, got 0"), "{c}");
    // the form's JSON: the same key, no line of a text nobody sees
    let mut cfg = wb.call("config_check", json!({"toml": DEMO})).unwrap()["config"].clone();
    cfg["budget"]["batch_tasks"] = json!(-24);
    let c = wb.call("config_check", json!({"config": cfg})).unwrap();
    assert_eq!((c["ok"].clone(), c["key"].clone(), c["line"].clone()), (json!(false), json!("budget.batch_tasks"), Value::Null), "{c}");
    assert_eq!(c["error"], "config: budget.batch_tasks: must be a whole number ≥ 1, got -24");
    let e = wb.call("config_render", json!({"config": cfg})).unwrap_err();
    assert!(matches!(e, CommandError::BadArguments(_)) && e.to_string().contains("budget.batch_tasks: must be a whole number ≥ 1"), "{e}");
    cfg["budget"]["batch_tasks"] = json!(24);
    cfg["seeds"] = json!([1, 2.5]);
    assert_eq!(wb.call("config_check", json!({"config": cfg})).unwrap()["key"], "seeds");

    // valid: the estimate, its parts adding up, and a warning (not a refusal) when it is large
    let c = wb.call("config_check", json!({"toml": DEMO})).unwrap();
    let e = &c["estimate"];
    let n = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("{k} in {e}"));
    assert_eq!(n("jobs"), 25, "{e}");
    assert_eq!(n("max"), n("train") + n("rescue") + n("probe") + n("eval"), "{e}");
    assert!(n("min") < n("max") && n("min") > n("train"), "{e}");
    // 5 arms × 5 seeds × 8 iterations × 24 tasks × 4 base tries
    assert_eq!(n("train"), 5 * 5 * 8 * 24 * 4, "{e}");
    assert!(e["seconds_min"].as_f64().unwrap() > 0.0 && e["seconds_max"].as_f64() >= e["seconds_min"].as_f64(), "{e}");
    assert!(e["warning"].is_null(), "{e}");
    let big = wb.call("config_check", json!({"toml": DEMO.replace("iterations = 8", "iterations = 100000")})).unwrap();
    assert_eq!(big["ok"], true, "a large experiment may still run: {big}");
    assert!(big["estimate"]["max"].as_u64().unwrap() > 10_000_000, "{big}");
    let max = big["estimate"]["max"].as_u64().unwrap().to_string();
    let grouped: Vec<String> = max.as_bytes().rchunks(3).rev().map(|c| String::from_utf8_lossy(c).into_owned()).collect();
    let warning = big["estimate"]["warning"].as_str().unwrap();
    assert!(warning.starts_with(&format!("a large experiment: up to {} executor rollouts, roughly ", grouped.join(","))), "{warning}");
}

/// The builder's power plan: none before any run on the suite (it says what would give one);
/// after a run, planned from that run's spread, its numbers the statistics' own, sized for an
/// effect asked about, and changing with the design's seeds.
#[test]
fn the_check_plans_the_design_s_detectable_effect_from_a_finished_run() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let two_seeds = SMALL.replace("seeds = [1]", "seeds = [1, 2]");
    let c = wb.call("config_check", json!({"toml": two_seeds})).unwrap();
    let plan = &c["power"][0];
    assert_eq!((plan["suite"].as_str(), plan["split"].as_str(), plan["pilot_run"].clone()), (Some("dbbench"), Some("heldout"), Value::Null), "{c}");
    assert!(plan["sentence"].as_str().unwrap().contains("no finished run on this suite"), "{plan}");

    let run = wb.call("experiment_start", json!({"toml": two_seeds})).unwrap()["run_id"].as_i64().unwrap();
    assert_eq!(wait_finished(&wb, run)["status"], "finished");
    let c = wb.call("config_check", json!({"toml": two_seeds, "effect": 0.05})).unwrap();
    let plan = &c["power"][0];
    assert_eq!(plan["pilot_run"], run, "{plan}");
    let tasks = plan["tasks"].as_u64().unwrap() as usize;
    assert_eq!(tasks, 40, "the held-out family's tasks: {plan}");
    let (between, within) = (plan["between"].as_f64().unwrap(), plan["within"].as_f64().unwrap());
    let spread = harness_s::stats::PairedSpread { between, within, tasks: plan["pilot_tasks"].as_u64().unwrap() as usize, seeds: 2.0 };
    assert_eq!(plan["mde"].as_f64(), spread.mde(tasks, 2), "{plan}");
    assert_eq!(plan["tasks_needed"].as_u64(), Some(spread.tasks_for(0.05, 2) as u64), "{plan}");
    let sentence = plan["sentence"].as_str().unwrap();
    assert!(sentence.starts_with("dbbench: 40 held-out tasks × 2 seeds detects differences of "), "{sentence}");
    assert!(sentence.contains(&format!("run #{run}")) && sentence.contains("For 5.0 pts: "), "{sentence}");
    // more seeds: a smaller detectable difference, from the same pilot
    let five = wb.call("config_check", json!({"toml": SMALL.replace("seeds = [1]", "seeds = [1, 2, 3, 4, 5]")})).unwrap();
    let mde5 = five["power"][0]["mde"].as_f64().unwrap();
    assert!(mde5 <= plan["mde"].as_f64().unwrap(), "{five}");
    assert_eq!(Some(mde5), spread.mde(tasks, 5));
    // a bad effect is named
    let e = wb.call("config_check", json!({"toml": two_seeds, "effect": "lots"})).unwrap_err();
    assert!(e.to_string().contains("argument `effect` must be a number"), "{e}");
}

#[test]
fn an_experiment_runs_in_the_background_and_its_evidence_is_browsable() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let events: Arc<Mutex<Vec<Value>>> = Arc::default();
    let ev = events.clone();
    let _sub = wb.subscribe(move |v| ev.lock().unwrap().push(v.clone()));

    let started = wb.call("experiment_start", json!({"toml": SMALL})).unwrap();
    let run_id = started["run_id"].as_i64().unwrap();
    let again = wb.call("experiment_start", json!({"toml": SMALL})).unwrap_err();
    assert!(again.to_string().contains("already running"), "{again}");
    let done = wait_finished(&wb, run_id);
    assert_eq!(done["status"], "finished", "{done}");
    assert!(done["config_toml"].as_str().unwrap().contains("batch_tasks = 16"));

    let evs = events.lock().unwrap().clone();
    assert_eq!(evs.first().unwrap()["event"], "run_started");
    let progress: Vec<&Value> = evs.iter().filter(|e| e["event"] == "progress").collect();
    assert!(!progress.is_empty());
    assert!(progress.iter().any(|e| e["unit"]["arm"] == "harness-s" && e["unit"]["rollouts"].as_u64().unwrap() > 0), "{progress:?}");
    assert!(evs.iter().any(|e| e["event"] == "run_finished" && e["status"] == "finished"));
    let jobs = wb.call("jobs", Value::Null).unwrap();
    let units = jobs[0]["units"].as_array().unwrap();
    assert_eq!(units.len(), 2, "one unit per arm and seed: {jobs}");
    assert!(units.iter().all(|u| u["iteration"] == 2 && u["iterations"] == 2));

    let list = wb.call("experiments", Value::Null).unwrap();
    assert_eq!(list[0]["id"], run_id);

    // Results: the report's numbers with every chart inline.
    let res = wb.call("results", json!({"id": run_id})).unwrap();
    let charts = res["charts"].as_array().unwrap();
    assert!(
        charts.iter().any(|c| c["id"] == "transfer" && c["svg"].as_str().unwrap().starts_with("<svg")),
        "{:?}",
        charts.iter().map(|c| &c["id"]).collect::<Vec<_>>()
    );
    assert!(res["final_table"].is_object() || res["final_table"].is_array());

    // Episodes: filters, paging, text search.
    let all = wb.call("episodes", json!({"run_id": run_id, "limit": 5})).unwrap();
    let total = all["total"].as_u64().unwrap();
    assert!(total > 100);
    assert_eq!(all["rows"].as_array().unwrap().len(), 5);
    let page2 = wb.call("episodes", json!({"run_id": run_id, "limit": 5, "offset": 5})).unwrap();
    assert!(page2["rows"][0]["id"].as_i64() > all["rows"][4]["id"].as_i64());
    let fails = wb.call("episodes", json!({"run_id": run_id, "arm": "harness-s", "success": false, "family": "counting"})).unwrap();
    assert!(fails["rows"].as_array().unwrap().iter().all(|r| r["arm"] == "harness-s" && r["success"] == false && r["family"] == "counting"));
    let rescued = wb.call("episodes", json!({"run_id": run_id, "rescued": true})).unwrap();
    let rescued_rows = rescued["rows"].as_array().unwrap();
    assert!(!rescued_rows.is_empty(), "the small experiment rescues some tasks");
    assert!(rescued_rows.iter().all(|r| r["phase"] == "rescue" && r["success"] == true && r["rescued"] == true && r["harness"] != "base"));
    let task = rescued_rows[0]["task_id"].as_str().unwrap().to_string();
    let found = wb.call("episodes", json!({"run_id": run_id, "text": task})).unwrap();
    assert!(found["rows"].as_array().unwrap().iter().any(|r| r["task_id"] == task.as_str()));

    // A rescue: base failures, the sibling's success, the distilled example.
    let rescue_id = rescued_rows[0]["id"].as_i64().unwrap();
    let r = wb.call("rescue", json!({"episode_id": rescue_id})).unwrap();
    assert_eq!(r["rescue"], rescue_id, "{r}");
    assert_eq!(r["sibling"], rescued_rows[0]["harness"]);
    let base = r["base_failures"].as_array().unwrap();
    assert_eq!(base.len(), 2, "both base tries failed: {r}");
    let base_ep = wb.call("episode", json!({"id": base[0]})).unwrap();
    assert_eq!(base_ep["episode"]["harness"], "base");
    assert_eq!(base_ep["episode"]["task_id"], task.as_str());
    assert_eq!(base_ep["row"]["success"], false);
    assert!(!r["distilled"]["examples"].as_array().unwrap().is_empty(), "{r}");
    // the built-in policy's examples say whether its grammar can produce them in base context
    assert!(r["distilled"]["examples"].as_array().unwrap().iter().all(|e| e["producible"].is_boolean()), "{r}");
    // ... and the routing decision that chose the sibling: each voter's ranking and the choice
    let route = &r["route"];
    assert_eq!(route["query"]["task_id"], task.as_str(), "{r}");
    assert_eq!(route["rankings"].as_array().unwrap().len(), 3, "{route}");
    assert!(route["chosen"].as_array().unwrap().contains(&r["sibling"]), "{route}");
    // The same rescue is found from the base failure.
    let from_base = wb.call("rescue", json!({"episode_id": base[0]})).unwrap();
    assert_eq!(from_base["task_id"], r["task_id"]);
    let ep = wb.call("episode", json!({"id": rescue_id})).unwrap();
    let steps = ep["episode"]["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps[0].get("keep").is_some(), "steps are sent compactly");
    assert!(matches!(wb.call("episode", json!({"id": 99_999_999})).unwrap_err(), CommandError::NotFound(_)));

    // Profiles measured by the experiment now show on the harnesses.
    let hs = wb.call("harnesses", json!({"suite": "dbbench"})).unwrap();
    let profiled: Vec<&Value> = hs.as_array().unwrap().iter().filter(|h| !h["profile"].is_null()).collect();
    assert!(!profiled.is_empty());
    assert_eq!(profiled[0]["profile"]["run_id"], run_id);

    // Export: files on disk, and single files for a browser download.
    let paths = wb.call("export_report", json!({"id": run_id, "out_dir": "small"})).unwrap();
    assert_eq!(Path::new(paths["dir"].as_str().unwrap()), dir.path().join("reports/small"));
    let html = std::fs::read_to_string(paths["html"].as_str().unwrap()).unwrap();
    assert!(html.contains("<svg"));
    // ... never outside the workspace
    let outside = tempfile::tempdir().unwrap();
    for bad in [outside.path().display().to_string(), "../escaped".to_string(), "a/../../escaped".to_string()] {
        let e = wb.call("export_report", json!({"id": run_id, "out_dir": bad})).unwrap_err();
        assert!(matches!(e, CommandError::BadArguments(_)), "{e}");
        assert!(e.to_string().starts_with(&format!("export_report: out_dir `{bad}` must be relative to the workspace's reports folder")), "{e}");
    }
    std::os::unix::fs::symlink(outside.path(), dir.path().join("reports/elsewhere")).unwrap();
    let e = wb.call("export_report", json!({"id": run_id, "out_dir": "elsewhere/r"})).unwrap_err();
    assert!(matches!(e, CommandError::BadArguments(_)) && e.to_string().contains("symbolic link"), "{e}");
    assert!(!dir.path().join("escaped").exists() && !dir.path().parent().unwrap().join("escaped").exists());
    // training data: into exports/ of the workspace, and not through a link out of it
    let exported = wb.call("export_training", json!({"id": run_id, "format": "openai-chat"})).unwrap();
    assert!(Path::new(exported["dir"].as_str().unwrap()).starts_with(dir.path().join("exports")), "{exported}");
    std::fs::remove_dir_all(dir.path().join("exports")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("exports")).unwrap();
    let e = wb.call("export_training", json!({"id": run_id, "format": "sharegpt"})).unwrap_err();
    assert!(matches!(e, CommandError::BadArguments(_)) && e.to_string().starts_with("export_training:"), "{e}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "nothing written outside the workspace");
    // The estimate config_check gave before the start brackets what the run spent.
    let est = wb.call("config_check", json!({"toml": SMALL})).unwrap()["estimate"].clone();
    let spent = wb.call("episodes", json!({"run_id": run_id, "limit": 1})).unwrap()["total"].as_u64().unwrap();
    assert!(est["min"].as_u64().unwrap() <= spent && spent <= est["max"].as_u64().unwrap(), "spent {spent}, estimate {est}");
    let f = wb.call("report_file", json!({"id": run_id, "format": "json"})).unwrap();
    let parsed: Value = serde_json::from_str(f["text"].as_str().unwrap()).unwrap();
    assert_eq!(parsed["status"], "finished");
    let csv = wb.call("report_file", json!({"id": run_id, "format": "csv"})).unwrap();
    assert!(csv["text"].as_str().unwrap().starts_with("# "));
    assert!(wb.call("report_file", json!({"id": run_id, "format": "pdf"})).is_err());

    // Two experiments side by side.
    let second = wb
        .call("experiment_start", json!({"toml": SMALL.replace("name = \"small\"", "name = \"small-2\"").replace("seeds = [1]", "seeds = [2]")}))
        .unwrap();
    let second_id = second["run_id"].as_i64().unwrap();
    assert_eq!(wait_finished(&wb, second_id)["status"], "finished");
    let cmp = wb.call("compare", json!({"id": second_id, "other": run_id})).unwrap();
    assert!(cmp["comparison"].is_object(), "{}", cmp["comparison"]);
    assert_eq!(cmp["other"]["id"], run_id);
}

#[test]
fn a_run_started_elsewhere_is_live_here_from_the_snapshot_its_process_stores() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wb.db");
    let file = dir.path().join("elsewhere.toml");
    std::fs::write(&file, SMALL.replace("name = \"small\"", "name = \"elsewhere\"").replace("iterations = 2", "iterations = 8")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_harness-s"))
        .args(["experiment", "run", file.to_str().unwrap(), "--db", db.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let wb = open(&dir);
    let t = Instant::now();
    let job = loop {
        let jobs = wb.call("jobs", Value::Null).unwrap();
        let live = jobs.as_array().unwrap().iter().find(|j| j["name"] == "elsewhere").cloned();
        if let Some(j) = live.filter(|j| !j["evaluations"].as_array().unwrap().is_empty() && j["units"].as_array().unwrap().len() == 2) {
            break j;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it was seen live: {jobs}");
        assert!(t.elapsed() < Duration::from_secs(120), "no live snapshot of the run: {jobs}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(job["status"], "running");
    let by = job["elsewhere"].as_str().unwrap();
    assert!(by.contains(&format!("process {} ", child.id())), "{by}");
    assert!(job["episodes"]["done"].as_u64().unwrap() > 0 && job["episodes"]["max"].as_u64().unwrap() > 0, "{job}");
    assert!(!job["curves"].as_array().unwrap().is_empty(), "the live curves are drawn from its evaluations: {job}");
    assert!(job["now"].as_str().is_some_and(|n| n.contains("seed 1")), "{job}");
    // only the process running it can cancel it
    let run_id = job["run_id"].as_i64().unwrap();
    let err = wb.call("experiment_cancel", json!({"run_id": run_id})).unwrap_err();
    assert!(matches!(err, CommandError::NotFound(_)), "{err}");
    assert!(child.wait().unwrap().success());
    // once it ended, it is no longer among the live runs
    let jobs = wb.call("jobs", Value::Null).unwrap();
    assert!(jobs.as_array().unwrap().iter().all(|j| j["run_id"] != run_id), "{jobs}");
}

#[test]
fn a_cancelled_experiment_resumes_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let run_id = wb.call("experiment_start", json!({"toml": SMALL})).unwrap()["run_id"].as_i64().unwrap();
    wb.call("experiment_cancel", json!({"run_id": run_id})).unwrap();
    let r = wait_finished(&wb, run_id);
    assert_eq!(r["status"], "cancelled", "{r}");
    let resumed = wb.call("experiment_resume", json!({"run_id": run_id})).unwrap();
    assert_eq!(resumed["run_id"], run_id);
    assert_eq!(wait_finished(&wb, run_id)["status"], "finished");
    let e = wb.call("experiment_resume", json!({"run_id": run_id})).unwrap_err();
    assert!(e.to_string().contains("finished"), "{e}");
    assert!(wb.call("experiment_cancel", json!({"run_id": 12345})).is_err());
}

#[test]
fn an_experiment_that_cannot_start_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let e = wb.call("experiment_start", json!({"toml": "name = \"x\"\nsuites = [\"nosuch\"]\n"})).unwrap_err();
    assert!(e.to_string().contains("nosuch"), "{e}");
    let openai = "name = \"x\"\n[policy]\nbackend = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n";
    // an endpoint's policy is trained by an external trainer: the file must name one
    let c = wb.call("config_check", json!({"toml": openai})).unwrap();
    assert_eq!(c["ok"], false, "{c}");
    assert_eq!(c["key"], "trainer", "{c}");
    let e = wb.call("experiment_start", json!({"toml": openai})).unwrap_err();
    assert!(e.to_string().contains("[trainer]"), "{e}");
    let r = wb.call("test_connection", json!({"base_url": "http://127.0.0.1:9/v1", "model": "m"})).unwrap();
    assert_eq!(r["ok"], false);
    assert!(!r["error"].as_str().unwrap().is_empty());
}

#[test]
fn the_connection_test_lists_an_endpoints_models() {
    let server = ChatServer::start(Script::new().models(&["qwen-7b", "llama-8b"]));
    let dir = tempfile::tempdir().unwrap();
    let wb = open(&dir);
    let r = wb.call("test_connection", json!({"base_url": server.url(), "model": "qwen-7b"})).unwrap();
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["models"], json!(["qwen-7b", "llama-8b"]));
    let r = wb.call("test_connection", json!({"base_url": server.url(), "model": "gpt-9"})).unwrap();
    assert_eq!(r["ok"], false);
    assert!(r["error"].as_str().unwrap().contains("gpt-9"), "{r}");
}

#[test]
fn test_trainer_runs_the_command_once_on_a_one_line_batch() {
    let dir = tempfile::tempdir().unwrap();
    let w = open(&dir);
    let script = dir.path().join("t.py");
    std::fs::write(
        &script,
        "import json,os,sys\nr=json.load(open(sys.argv[1]))\nlines=[json.loads(l) for l in open(r['batch'])]\nassert len(lines)==1 and lines[0]['messages'][-1]['tool_calls']\nos.makedirs(r['output_dir'])\njson.dump({'checkpoint':r['output_dir'],'metrics':{'loss':0.25,'model':r['base_model']}},open(r['result'],'w'))\n",
    )
    .unwrap();
    let ok = w
        .call(
            "test_trainer",
            json!({"trainer": {"command": ["python3", script.display().to_string(), "{request}"], "timeout_s": 30}, "base_model": "m"}),
        )
        .unwrap();
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(ok["metrics"]["loss"], 0.25);
    assert_eq!(ok["metrics"]["model"], "m");
    let bad = w.call("test_trainer", json!({"trainer": {"command": ["sh", "-c", "echo no GPU >&2; exit 4"], "timeout_s": 30}})).unwrap();
    assert_eq!(bad["ok"], false);
    assert!(bad["error"].as_str().unwrap().contains("exited with status 4"), "{bad}");
    assert_eq!(bad["log_tail"][0], "no GPU");
    let err = w.call("test_trainer", json!({"trainer": {"timeout_s": 3}})).unwrap_err();
    assert!(err.to_string().contains("trainer"), "{err}");
}
