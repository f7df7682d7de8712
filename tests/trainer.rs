//! An endpoint's policy trained by an external trainer, on loopback: the runner writes each
//! update's batch and request, runs the trainer command, loads the checkpoint into the server as a
//! LoRA adapter (vLLM's API), waits for `/v1/models` to list it, and samples the next rollouts
//! from it. Failures (a trainer that exits non-zero or hangs, a server that never lists the
//! adapter) stop the run with a clear error, and the run resumes.
//!
//! The trainer here is a small Python program (the real one, `trainers/trl/train_step.py`, runs in
//! `scripts/check-real-lm`): it checks the request and the batch and writes a checkpoint whose
//! content depends on the batch.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use harness_s::events::NullSink;
use harness_s::experiment::{run_experiment, ExperimentConfig};
use harness_s::store::{BlockingStore, EpisodeFilter};
use serde_json::Value;

#[path = "support/chat_server.rs"]
mod chat_server;
use chat_server::{ChatServer, Script};

const TRAINER: &str = r#"
import hashlib, json, os, sys, time
req = json.load(open(sys.argv[1]))
p = req["params"]
assert req["protocol"] == 1
if p.get("sleep"):
    time.sleep(float(p["sleep"]))
print("training on", req["lines"], "lines")
if p.get("fail_flag") and os.path.exists(p["fail_flag"]):
    print("out of memory (pretend)", file=sys.stderr)
    sys.exit(int(open(p["fail_flag"]).read()))
lines = [json.loads(l) for l in open(req["batch"])]
assert len(lines) == req["lines"], (len(lines), req["lines"])
for l in lines:
    for k in ["messages", "tools", "task_id", "family", "group_id", "reward", "advantage", "weight", "source", "harness", "arm", "seed", "iteration", "policy_version"]:
        assert k in l, k
    assert l["messages"][-1]["role"] == "assistant" and l["messages"][-1]["weight"] == 1
os.makedirs(req["output_dir"], exist_ok=True)
digest = hashlib.sha256(open(req["batch"], "rb").read() + (req["previous_checkpoint"] or "").encode()).hexdigest()
open(os.path.join(req["output_dir"], "adapter_model.bin"), "w").write(digest)
result = {"checkpoint": req["output_dir"], "metrics": {"loss": 0.5, "sequences": len(lines)}}
if p.get("no_checkpoint"):
    result["checkpoint"] = os.path.join(req["output_dir"], "missing")
json.dump(result, open(req["result"], "w"))
print("loss 0.5")
"#;

fn config(dir: &Path, server: &ChatServer, params: &str, extra: &str) -> ExperimentConfig {
    let trainer = dir.join("trainer.py");
    std::fs::write(&trainer, TRAINER).unwrap();
    let text = format!(
        r#"
name = "endpoint"
suites = ["dbbench"]
heldout_families = ["DELETE"]
arms = ["policy-only", "harness-s"]
seeds = [1]
iterations = 2
eval_every = 2
reanchor_every = 2
workers = 1

[policy]
backend = "openai"
base_url = "{url}"
model = "test-model"
warm_start_demos = 3
temperature = 0.7

[budget]
batch_tasks = 3
base_tries = 2
rescue_siblings = 1
rescue_tries = 1
probe_tasks = 2

[harness]
siblings = ["inspect-first"]

[eval]
train_tasks = 2
heldout_tasks = 2

[trainer]
command = ["python3", "{trainer}", "{{request}}"]
timeout_s = 60
workdir = "{work}"
params = {{ {params} }}
{extra}
"#,
        url = server.url(),
        trainer = trainer.display(),
        work = dir.join("work").display(),
    );
    ExperimentConfig::parse("endpoint.toml", &text).expect("valid config")
}

fn lora_server() -> ChatServer {
    ChatServer::start(Script::new().lora().always(|_| (200, chat_server::text_reply("I cannot tell."))))
}

#[test]
fn an_endpoint_policy_is_trained_and_served_round_by_round() {
    let dir = tempfile::tempdir().unwrap();
    let server = lora_server();
    let cfg = config(dir.path(), &server, "lora_r = 8", "");
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    let out = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("runs");
    assert!(out.finished);
    let run = out.run_id;
    // the warm start: trained once for both arms (same demonstrations), in a folder named by its
    // content, and served under that name
    let warm: Vec<_> = std::fs::read_dir(dir.path().join("work/warm-start")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(warm.len(), 1, "one warm start for both arms: {warm:?}");
    let it0 = &warm[0];
    let key = it0.file_name().unwrap().to_str().unwrap().to_string();
    let lines: Vec<Value> = std::fs::read_to_string(it0.join("batch.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!lines.is_empty(), "warm-start batch");
    for l in &lines {
        assert_eq!(l["source"], "warm-start");
        assert_eq!(l["harness"], "base");
        assert_eq!(l["iteration"], 0);
        assert_eq!(l["policy_version"], 0);
        assert!(l["tools"].as_array().is_some_and(|t| !t.is_empty()));
        let calls = l["messages"].as_array().unwrap().iter().filter(|m| m["tool_calls"].is_array()).count();
        assert!(calls > 0, "a demonstration calls tools: {l}");
    }
    let req: Value = serde_json::from_str(&std::fs::read_to_string(it0.join("request.json")).unwrap()).unwrap();
    assert_eq!(req["objective"], "sft", "a warm start is SFT");
    assert_eq!(req["arm"], "warm-start");
    assert_eq!(req["base_model"], "test-model");
    assert_eq!(req["params"]["lora_r"], 8);
    assert_eq!(req["previous_checkpoint"], Value::Null);
    assert_eq!(req["lines"], lines.len());
    assert!(std::fs::read_to_string(it0.join("trainer.log")).unwrap().contains("loss 0.5"));
    let warm_name = format!("hs-warm-{}", &key[..12]);
    let reqs = server.requests();
    let loads: Vec<_> = reqs.iter().filter(|r| r.path == "/v1/load_lora_adapter" && r.body["lora_name"] == warm_name.as_str()).collect();
    assert_eq!(loads.len(), 2, "each arm makes sure the shared warm start is served");
    assert_eq!(loads[0].body["lora_path"], it0.join("checkpoint").display().to_string());
    assert!(
        !reqs.iter().any(|r| r.path.ends_with("unload_lora_adapter") && r.body["lora_name"] == warm_name.as_str()),
        "no arm unloads the warm start the other samples from"
    );
    // every episode after the warm start samples from it (this server's replies never succeed,
    // so no later batch has a non-zero advantage and no arm updates again)
    for arm in ["policy-only", "harness-s"] {
        let eps = store.episodes(&EpisodeFilter { run_id: Some(run), arm: Some(arm.into()), ..Default::default() }).unwrap();
        assert!(!eps.is_empty());
        for (_, e) in &eps {
            assert_eq!(e.policy, format!("openai:{warm_name}"), "{arm}: every rollout after the warm start samples from the adapter");
        }
        assert!(!dir.path().join(format!("work/run-{run}/dbbench/{arm}/seed-1/iter-0001")).exists(), "{arm}: no update without a signal");
    }
    let first_load = reqs.iter().position(|r| r.path == "/v1/load_lora_adapter").unwrap();
    assert!(reqs[first_load..].iter().any(|r| r.method == "GET" && r.path == "/v1/models"), "the adapter is listed before it is asked");
    assert!(reqs[..first_load].iter().all(|r| r.path != "/v1/chat/completions" || r.body["model"] == "test-model"));
    // one trainer record per update, with its metrics and log tail
    let recs = store.records(run, "trainer").unwrap();
    assert!(recs.len() >= 2, "{recs:?}");
    for (_, r) in &recs {
        assert_eq!(r["exit"], 0);
        assert_eq!(r["metrics"]["loss"], 0.5);
        assert!(r["log_tail"].as_array().unwrap().iter().any(|l| l == "loss 0.5"));
    }
    let cached: Vec<bool> = recs.iter().filter(|(_, r)| r["iteration"] == 0).map(|(_, r)| r["cached"].as_bool().unwrap()).collect();
    assert_eq!(cached.iter().filter(|c| !**c).count(), 1, "the warm start trained once, the other arm found it: {cached:?}");
    // the policy-only adapter was unloaded once a newer one of the same job was served, or is the
    // newest; the harness-s job's adapter stays listed
    let models: Vec<String> =
        server.requests().iter().filter(|r| r.path.ends_with("unload_lora_adapter")).map(|r| r.body["lora_name"].to_string()).collect();
    assert!(models.iter().all(|m| m.contains("-it")), "{models:?}");
}

#[test]
fn the_warm_start_is_cached_by_its_inputs_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let server = lora_server();
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    let warm = dir.path().join("work/warm-start");
    let cfg = config(dir.path(), &server, "lora_r = 8", "");
    let first = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("runs");
    let folders = |p: &Path| -> Vec<std::path::PathBuf> { std::fs::read_dir(p).unwrap().map(|e| e.unwrap().path()).collect() };
    let made = folders(&warm);
    assert_eq!(made.len(), 1);
    let stamp = std::fs::metadata(made[0].join("result.json")).unwrap().modified().unwrap();
    // the same inputs: the second run serves the cached adapter without training it
    let second = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("runs");
    assert_ne!(first.run_id, second.run_id);
    assert_eq!(folders(&warm), made);
    assert_eq!(std::fs::metadata(made[0].join("result.json")).unwrap().modified().unwrap(), stamp, "not trained again");
    for (_, r) in store.records(second.run_id, "trainer").unwrap().iter().filter(|(_, r)| r["iteration"] == 0) {
        assert_eq!(r["cached"], true, "{r}");
        assert_eq!(r["exit"], 0);
    }
    // other trainer params are other inputs: a new warm start
    let cfg = config(dir.path(), &server, "lora_r = 4", "");
    run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("runs");
    assert_eq!(folders(&warm).len(), 2);
}

#[test]
fn a_trainer_that_fails_stops_the_run_clearly_and_the_run_resumes_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let server = lora_server();
    let db = dir.path().join("e.db");
    let store = BlockingStore::open(db.to_str().unwrap()).unwrap();
    let flag = dir.path().join("fail");
    std::fs::write(&flag, "3").unwrap();
    let cfg = config(dir.path(), &server, &format!("fail_flag = {:?}", flag.display().to_string()), "");
    let err = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect_err("the trainer fails").to_string();
    assert!(err.contains("exited with status 3") && err.contains("trainer.log"), "{err}");
    let rec = store.records(1, "trainer").unwrap();
    assert!(rec.iter().any(|(_, r)| r["log_tail"].as_array().unwrap().iter().any(|l| l == "out of memory (pretend)")), "{rec:?}");
    // the trainer works again: the same experiment resumes the failed run and finishes it
    std::fs::remove_file(&flag).unwrap();
    let out = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("runs");
    assert!(out.resumed && out.finished);
    // a clean run of the fixed configuration stores the same number of episodes
    let clean_dir = tempfile::tempdir().unwrap();
    let clean_server = lora_server();
    let clean_cfg = config(clean_dir.path(), &clean_server, &format!("fail_flag = {:?}", flag.display().to_string()), "");
    let clean = BlockingStore::open(clean_dir.path().join("c.db").to_str().unwrap()).unwrap();
    let c = run_experiment(&clean_cfg, &clean, &NullSink, &AtomicBool::new(false)).expect("runs");
    let count = |s: &BlockingStore, run| s.count_episodes(&EpisodeFilter { run_id: Some(run), ..Default::default() }).unwrap();
    assert_eq!(count(&store, out.run_id), count(&clean, c.run_id), "no episode lost or duplicated by the failure");
}

#[test]
fn a_trainer_past_its_timeout_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let server = lora_server();
    let mut cfg = config(dir.path(), &server, "sleep = 30", "");
    cfg.trainer.as_mut().unwrap().timeout_s = 1;
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    let t = std::time::Instant::now();
    let err = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect_err("times out").to_string();
    assert!(err.contains("was stopped after 1 s (trainer.timeout_s)"), "{err}");
    assert!(t.elapsed().as_secs() < 25, "the trainer was killed, not waited for");
}

#[test]
fn a_missing_checkpoint_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = lora_server();
    let cfg = config(dir.path(), &server, "no_checkpoint = true", "");
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    let err = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect_err("no checkpoint").to_string();
    assert!(err.contains("checkpoint") && err.contains("does not exist"), "{err}");
}

#[test]
fn a_server_that_never_lists_the_adapter_times_out_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let server = ChatServer::start(Script::new().lora_never_listed().always(|_| (200, chat_server::text_reply("no"))));
    let cfg = config(dir.path(), &server, "", "[serving]\nkind = \"vllm-lora\"\nready_timeout_s = 1");
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    let err = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect_err("never listed").to_string();
    assert!(err.contains("did not list the new adapter `hs-warm-") && err.contains("` within 1 s"), "{err}");
    assert!(err.contains("it lists test-model"), "{err}");
}

#[test]
fn an_endpoint_policy_without_a_trainer_is_a_config_error_naming_the_table() {
    let text = "name = \"x\"\n[policy]\nbackend = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n";
    let err = ExperimentConfig::parse("x.toml", text).expect_err("needs a trainer").to_string();
    assert!(err.contains("trainer") && err.contains("[trainer]"), "{err}");
    let text = "name = \"x\"\n[trainer]\ncommand = [\"true\"]\n";
    let err = ExperimentConfig::parse("x.toml", text).expect_err("builtin has no trainer").to_string();
    assert!(err.contains("trainer"), "{err}");
    let text = "name = \"x\"\n[policy]\nbackend = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n[trainer]\ncommand = [\"true\"]\n[serving]\nkind = \"triton\"\n";
    let err = ExperimentConfig::parse("x.toml", text).expect_err("unknown serving kind").to_string();
    assert!(err.contains("serving.kind") && err.contains("vllm-lora"), "{err}");
}

#[test]
fn sglang_lora_serving_loads_without_the_v1_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let server = lora_server();
    let cfg = config(dir.path(), &server, "", "[serving]\nkind = \"sglang-lora\"");
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    let out = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("runs");
    let loads: Vec<_> = server.requests().into_iter().filter(|r| r.path.ends_with("load_lora_adapter")).collect();
    assert!(!loads.is_empty());
    assert!(loads.iter().all(|r| r.path == "/load_lora_adapter"), "{:?}", loads.iter().map(|r| &r.path).collect::<Vec<_>>());
    let eps = store.episodes(&EpisodeFilter { run_id: Some(out.run_id), arm: Some("harness-s".into()), ..Default::default() }).unwrap();
    // the shared warm start, as no later batch has a signal against this server
    assert!(
        !eps.is_empty() && eps.iter().all(|(_, e)| e.policy.starts_with("openai:hs-warm-")),
        "{:?}",
        eps.iter().map(|(_, e)| &e.policy).collect::<Vec<_>>()
    );
}

#[test]
fn command_serving_runs_the_users_reload_script_then_waits_for_the_name() {
    let dir = tempfile::tempdir().unwrap();
    // the user's script reloads the server: here, it asks the server to load the adapter over HTTP
    let server = ChatServer::start(Script::new().lora().always(|_| (200, chat_server::text_reply("no"))));
    let log = dir.path().join("reloads.txt");
    let reload = dir.path().join("reload.py");
    std::fs::write(
        &reload,
        format!(
            "import json, os, urllib.request as u\n\
             try:\n    u.urlopen(u.Request('{}/load_lora_adapter', data=json.dumps({{'lora_name': os.environ['HARNESS_S_ADAPTER'], \
             'lora_path': os.environ['HARNESS_S_CHECKPOINT']}}).encode(), headers={{'Content-Type': 'application/json'}}))\n\
             except u.HTTPError as e:\n    assert b'already' in e.read(), e\n",
            server.url()
        ),
    )
    .unwrap();
    let serving = format!(
        "[serving]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo $HARNESS_S_ADAPTER {{checkpoint}} >> {} && python3 {}\"]\nready_timeout_s = 5",
        log.display(),
        reload.display()
    );
    let cfg = config(dir.path(), &server, "", &serving);
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("runs");
    let reloads = std::fs::read_to_string(&log).unwrap();
    assert!(reloads.contains("hs-warm-") && reloads.contains("/warm-start/"), "{reloads}");
}

#[test]
fn none_serving_keeps_sampling_the_served_model_name() {
    let dir = tempfile::tempdir().unwrap();
    let server = lora_server();
    let cfg = config(dir.path(), &server, "", "[serving]\nkind = \"none\"");
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    let out = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("runs");
    assert!(server.requests().iter().all(|r| !r.path.ends_with("load_lora_adapter")));
    let eps = store.episodes(&EpisodeFilter { run_id: Some(out.run_id), ..Default::default() }).unwrap();
    assert!(eps.iter().all(|(_, e)| e.policy == "openai:test-model"));
    // the trainer still ran: the job's learner state counts its update
    let recs = store.records(out.run_id, "trainer").unwrap();
    assert_eq!(recs.len(), 2, "one warm start per arm");
}

/// A trainer that records its pid and, while `hold` exists, sleeps (a long training step).
const SLOW_TRAINER: &str = r#"
import json, os, sys, time
req = json.load(open(sys.argv[1]))
p = req["params"]
open(p["pid_file"], "a").write(f"{os.getpid()}\n")
while os.path.exists(p["hold"]):
    time.sleep(0.1)
os.makedirs(req["output_dir"], exist_ok=True)
open(os.path.join(req["output_dir"], "adapter_model.bin"), "w").write(open(req["batch"]).read())
json.dump({"checkpoint": req["output_dir"], "metrics": {"loss": 0.5}}, open(req["result"], "w"))
"#;

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn killing_the_workbench_during_a_training_step_stops_the_trainer_and_the_run_resumes() {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let server = lora_server();
    let (pid_file, hold) = (dir.path().join("pids"), dir.path().join("hold"));
    std::fs::write(&hold, "").unwrap();
    let cfg_text = |work: &Path| {
        let trainer = work.join("slow.py");
        std::fs::create_dir_all(work).unwrap();
        std::fs::write(&trainer, SLOW_TRAINER).unwrap();
        format!(
            "name = \"kill\"\nheldout_families = [\"DELETE\"]\narms = [\"policy-only\"]\niterations = 1\nworkers = 1\n[policy]\nbackend = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\nwarm_start_demos = 3\n[budget]\nbatch_tasks = 2\nbase_tries = 2\n[eval]\ntrain_tasks = 2\nheldout_tasks = 1\n[trainer]\ncommand = [\"python3\", \"{}\", \"{{request}}\"]\nworkdir = \"{}\"\nparams = {{ pid_file = {:?}, hold = {:?} }}\n",
            server.url(),
            trainer.display(),
            work.join("trainer").display(),
            pid_file.display().to_string(),
            hold.display().to_string()
        )
    };
    let cfg = dir.path().join("kill.toml");
    std::fs::write(&cfg, cfg_text(&dir.path().join("w"))).unwrap();
    let db = dir.path().join("k.db");
    let run = |db: &Path| {
        Command::new(env!("CARGO_BIN_EXE_harness-s"))
            .args(["experiment", "run", cfg.to_str().unwrap(), "--db", db.to_str().unwrap(), "--json"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut child = run(&db);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let trainer_pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|s| s.lines().next().and_then(|l| l.trim().parse::<i32>().ok())) {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "the trainer never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(alive(trainer_pid));
    child.kill().unwrap(); // SIGKILL, mid training step
    child.wait().unwrap();
    let gone = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(trainer_pid) && std::time::Instant::now() < gone {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(trainer_pid), "the trainer outlived the workbench");
    // resume: the training step runs again and the run finishes
    std::fs::remove_file(&hold).unwrap();
    let out = run(&db).wait_with_output().unwrap();
    assert!(out.status.success());
    let store = BlockingStore::open(db.to_str().unwrap()).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1, "the kill's run was resumed, not restarted");
    assert_eq!(runs[0].status.as_str(), "finished");
    // the same experiment uninterrupted stores as many episodes: none lost or duplicated
    let clean_db = dir.path().join("c.db");
    assert!(run(&clean_db).wait_with_output().unwrap().status.success());
    let clean = BlockingStore::open(clean_db.to_str().unwrap()).unwrap();
    let count = |s: &BlockingStore| s.count_episodes(&EpisodeFilter { run_id: Some(1), ..Default::default() }).unwrap();
    assert_eq!(count(&store), count(&clean));
}

struct Messages(std::sync::Mutex<Vec<String>>);

impl harness_s::events::EventSink for Messages {
    fn emit(&self, e: harness_s::events::Event) {
        if let harness_s::events::Event::Message { text, .. } = e {
            self.0.lock().unwrap().push(text);
        }
    }
}

#[test]
fn live_progress_names_the_phases_and_each_replicas_request_rate() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (lora_server(), lora_server());
    let mut cfg = config(dir.path(), &a, "", "");
    cfg.policy.base_urls = vec![b.url()];
    let store = BlockingStore::open(dir.path().join("e.db").to_str().unwrap()).unwrap();
    let sink = Messages(Default::default());
    run_experiment(&cfg, &store, &sink, &AtomicBool::new(false)).expect("runs");
    let said = sink.0.lock().unwrap().clone();
    for phase in ["phase: warm start, training on", "phase: reloading", "phase: sampling harness-s seed 1 from `hs-warm-"] {
        assert!(said.iter().any(|m| m.starts_with(phase)), "{phase}: {said:#?}");
    }
    assert!(said.iter().any(|m| m.starts_with("trainer [warm start seed 1] loss 0.5")), "the trainer's log lines: {said:#?}");
    let replicas = said.iter().rfind(|m| m.starts_with("endpoint replicas:")).expect("replica figures");
    assert!(replicas.contains(&a.url()) && replicas.contains(&b.url()) && replicas.contains("req/s"), "{replicas}");
    // both replicas served the rollouts, and both loaded every adapter
    assert!(a.request_count() > 3 && b.request_count() > 3);
    for s in [&a, &b] {
        assert_eq!(s.requests().iter().filter(|r| r.path == "/v1/load_lora_adapter").count(), 2);
    }
}
