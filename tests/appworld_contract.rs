//! The AppWorld client against AppWorld's own environment server: the FastAPI app of
//! `appworld.serve.environment` from the PyPI package `appworld==0.1.3.post1`, run under uvicorn
//! on 127.0.0.1 by `tests/appworld-contract/serve.py`. The suite talks to it exactly as it talks
//! to `appworld serve environment` (`HARNESS_S_APPWORLD_URLS`): initialize, execute,
//! task_completed, evaluate, close, and the API docs its resources read through `/execute`.
//!
//! Only the server's world class is replaced (`tests/appworld-contract/bundled_world.py`): the
//! real one loads AppWorld's data bundle, which cannot be downloaded here. The stand-in runs code
//! in, and grades tasks by, a server of the bundled world this test starts; request parsing,
//! replies, errors and the shape of `/evaluate` (AppWorld's `TestTracker`) are AppWorld's code.
//!
//! The Python with appworld and uvicorn: `HARNESS_S_APPWORLD_SERVER_PYTHON`, else the virtualenv
//! `tests/appworld-contract/setup.sh` makes in `.cache/appworld-venv` (`scripts/test` runs it).
//! Without one the tests skip with a note; under CI (`CI=true`) they fail instead.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use harness_s::suite::appworld::client::{Client, ClientError};
use harness_s::suite::appworld::world::{self, WorldOptions};
use harness_s::suite::appworld::{AppWorld, AppWorldConfig, TOOL};
use harness_s::suite::{Action, EnvError, Environment, Suite};
use serde_json::{json, Value};

/// The Python that has appworld and uvicorn.
const ENV_SERVER_PYTHON: &str = "HARNESS_S_APPWORLD_SERVER_PYTHON";

fn contract_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("appworld-contract")
}

/// The interpreter to run AppWorld's server with, or `None` (with a note) where there is none
/// and this is not CI.
fn server_python() -> Option<PathBuf> {
    let python = match std::env::var(ENV_SERVER_PYTHON) {
        Ok(p) if !p.trim().is_empty() => PathBuf::from(p.trim()),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/appworld-venv/bin/python"),
    };
    let check = Command::new(&python).args(["-c", "import appworld.serve.environment, uvicorn"]).output();
    let why = match check {
        Ok(out) if out.status.success() => return Some(python),
        Ok(out) => {
            format!("{} cannot import appworld.serve.environment and uvicorn: {}", python.display(), String::from_utf8_lossy(&out.stderr).trim())
        }
        Err(e) => format!("{} does not run: {e}", python.display()),
    };
    let how = format!("run tests/appworld-contract/setup.sh or set {ENV_SERVER_PYTHON}");
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI needs AppWorld's server for the contract test: {why} ({how})");
    eprintln!("skipped: no AppWorld server to test against: {why} ({how})");
    None
}

/// AppWorld's server, with the bundled-world stand-in behind it; killed when dropped.
struct RealServer {
    child: Child,
    url: String,
    log: PathBuf,
    /// The bundled world's server the stand-in forwards to, and the runtime serving it.
    world: world::server::Started,
    world_runtime: tokio::runtime::Runtime,
}

impl Drop for RealServer {
    fn drop(&mut self) {
        harness_s::sandbox::end(&mut self.child);
    }
}

impl RealServer {
    fn start(python: &Path) -> RealServer {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let world = world::server::start(rt.handle(), 1, &WorldOptions::default()).unwrap();
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("appworld-contract-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let log = base.join(format!("server-{}.log", world.urls[0].rsplit(':').next().unwrap_or("0")));
        let stderr = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(python);
        cmd.arg(contract_dir().join("serve.py"))
            // AppWorld's root (where it would look for data and write outputs) is its working folder
            .current_dir(&base)
            .env("APPWORLD_ROOT", &base)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("HARNESS_S_BUNDLED_WORLD_URL", &world.urls[0])
            .env("HARNESS_S_BUNDLED_WORLD_TOKEN", &world.token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        // as the test's own user (the virtualenv's interpreter may live in a home only it can
        // read); the cells run in the bundled world's sandbox, not in this process
        harness_s::sandbox::contain(&mut cmd, None, None);
        // its parent-death signal follows the thread that started it: one that lives as long as the tests
        let mut child = harness_s::sandbox::spawn_long_lived(cmd).unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(120)).unwrap_or_default();
        let Some(url) = line.trim().strip_prefix("listening on ").map(str::to_string) else {
            harness_s::sandbox::end(&mut child);
            panic!("AppWorld's server did not start: {}", std::fs::read_to_string(&log).unwrap_or_default());
        };
        RealServer { child, url, log, world, world_runtime: rt }
    }

    fn suite(&self) -> AppWorld {
        AppWorld::with_config(AppWorldConfig { urls: vec![self.url.clone()], ..AppWorldConfig::default() })
    }

    /// A client of the bundled world behind the stand-in, as the suite makes one.
    fn world_client(&self) -> Client {
        Client::new(self.world_runtime.handle().clone(), Duration::from_secs(60)).unwrap().with_bearer(self.world.token.clone())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

fn code(c: &str) -> Action {
    Action { id: "c".into(), name: TOOL.into(), arguments: json!({ "code": c }) }
}

fn bundled_task(family: &str) -> String {
    world::all_tasks().into_iter().find(|t| t.family == family).unwrap().task_id
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

#[test]
fn the_suite_runs_a_task_through_appworlds_own_server() {
    let Some(python) = server_python() else { return };
    let server = RealServer::start(&python);
    // the server is AppWorld's app, not a copy of it
    let openapi = raw_get(&server.url, "/openapi.json");
    assert_eq!(openapi["info"]["title"], "AppWorld Environment Server", "{openapi}");
    assert_eq!(openapi["info"]["version"], "0.1.3.post1");

    let s = server.suite();
    assert!(!s.runs_agent_code(), "a server of the user's runs the code itself");
    let id = bundled_task("contacts_phone");
    let wt = world::tasks::find(&id).unwrap();
    let mut env = s.open(&id).unwrap_or_else(|e| panic!("{e}\n{}", server.log()));
    // /initialize's reply, as AppWorld's server shapes it, feeds the prompt
    assert_eq!(env.instruction().as_deref(), Some(wt.instruction.as_str()));
    let sup = wt.supervisor();
    assert_eq!(
        env.task_prompt(),
        format!(
            "My name is: {} {}. My personal email is {} and phone number is {}.\nTask: {}",
            sup.first_name, sup.last_name, sup.email, sup.phone_number, wt.instruction
        )
    );
    let out = env.step(&code("print(1 + 1)")).unwrap();
    assert_eq!(out.observation, "2");
    assert!(out.signals.executed && !out.done);
    assert_eq!(env.step(&code("x = 3")).unwrap().observation, "Execution successful.");
    assert_eq!(env.step(&code("print(x * 2)")).unwrap().observation, "6");
    let out = env.step(&code("apis.contacts.search_contacts(access_token='nope')")).unwrap();
    assert!(out.observation.starts_with("Execution failed. Traceback:\n"), "{}", out.observation);
    assert_eq!(out.signals.error_kind.as_deref(), Some("unauthorized"));

    // the API docs the harnesses inject, read through /execute as AppWorld's agents read them
    let apps = env.resource("app_descriptions").unwrap();
    assert!(apps.contains("'name': 'contacts'") || apps.contains("\"name\": \"contacts\""), "{apps}");
    let doc = env.resource("api_doc/contacts/search_contacts").unwrap();
    assert!(doc.contains("search_contacts") && !doc.starts_with("Execution failed"), "{doc}");
    assert!(env.resource("task_api_descriptions").unwrap().contains("contacts:"));

    // evaluate before the task is done: AppWorld's TestTracker.to_dict, every failure with its trace
    let sc = env.score(None).unwrap();
    assert!(!sc.success && sc.reward == 0.0);
    let failures = sc.details["failures"].as_array().unwrap();
    assert!(!failures.is_empty());
    for f in failures {
        assert_eq!(keys(f), ["label", "requirement", "trace"], "{f}");
    }
    let num_tests = sc.details["num_tests"].as_u64().unwrap();
    assert_eq!(num_tests as usize, failures.len() + sc.details["passes"].as_array().unwrap().len());

    // the reference solution completes the task (task_completed says so) and passes every test
    let reference = wt.requirement().1.reference;
    let out = env.step(&code(&reference)).unwrap();
    assert!(out.done && out.signals.submitted, "{out:?}");
    let sc = env.score(None).unwrap();
    assert!(sc.success && sc.reward == 1.0, "{}", sc.details);
    assert_eq!(sc.details["failures"], json!([]));
    assert_eq!(sc.details["passes"].as_array().unwrap().len() as u64, num_tests);

    // dropping the episode closes the task: the world behind the server no longer holds it
    let url = env.server_url().to_string();
    drop(env);
    let err = s.client().unwrap().post(&url, "execute", &json!({"task_id": id, "code": "print(1)"})).unwrap_err();
    assert!(matches!(err, ClientError::Status { status: 500, .. }), "{err}");
    // and the next episode on the same server starts afresh
    let mut env = s.open(&id).unwrap();
    assert!(!env.score(None).unwrap().success);
}

#[test]
fn appworlds_errors_reach_the_caller_as_infrastructure_errors() {
    let Some(python) = server_python() else { return };
    let server = RealServer::start(&python);
    let s = server.suite();
    let client = s.client().unwrap();

    // a task AppWorld cannot make: its server answers a bare 500, and the error says where the
    // cause is
    let Err(EnvError::Infra(e)) = s.open("nosuchtask_1") else { panic!("an unknown task opened") };
    assert!(e.contains(&server.url) && e.contains("answered 500") && e.contains("its own log has the traceback"), "{e}");

    let id = bundled_task("notes_lookup");
    let mut env = s.open(&id).unwrap();
    // another task than the one the server holds: AppWorld's HTTPException is built wrongly and
    // becomes a bare 500 too (the log has "... is not a valid HTTPStatus")
    let err = client.post(&server.url, "execute", &json!({"task_id": "other_1", "code": "print(1)"})).unwrap_err();
    assert!(matches!(err, ClientError::Status { status: 500, .. }), "{err}");
    assert!(server.log().contains("The active task world is"), "{}", server.log());
    // uvicorn closed that connection after its 500 without saying so: the next request must not
    // reuse it
    assert_eq!(env.step(&code("print('after a 500')")).unwrap().observation, "after a 500");
    // a request AppWorld's server cannot parse: FastAPI's 422 JSON, made readable
    let err = client.post(&server.url, "execute", &json!({"task_id": id})).unwrap_err();
    match &err {
        ClientError::Status { status: 422, body, .. } => assert_eq!(body, "body.code: field required"),
        other => panic!("{other}"),
    }
    // a pause longer than uvicorn's 5 s keep-alive (a model thinking between two cells)
    std::thread::sleep(Duration::from_millis(5500));
    assert_eq!(env.step(&code("print('after a pause')")).unwrap().observation, "after a pause");
}

#[test]
fn the_bundled_world_answers_in_the_shapes_of_appworlds_server() {
    let Some(python) = server_python() else { return };
    let server = RealServer::start(&python);
    // the suite owns the runtime its client runs on: it lives as long as the client
    let suite = server.suite();
    let real = suite.client().unwrap();
    let bundled = server.world_client();
    let world_url = &server.world.urls[0];
    let id = bundled_task("wallet_pay");
    let init = json!({"task_id": id, "experiment_name": "contract"});
    let from_real = real.post(&server.url, "initialize", &init).unwrap();
    let from_bundled = bundled.post(world_url, "initialize", &init).unwrap();
    // the bundled world gives everything AppWorld's server gives (and the family besides)
    assert_eq!(keys(&from_real), ["datetime", "instruction", "supervisor", "task_id"]);
    for k in keys(&from_real) {
        assert!(from_bundled.get(&k).is_some(), "the bundled world's /initialize lacks `{k}`: {from_bundled}");
    }
    assert_eq!(keys(&from_real["supervisor"]), keys(&from_bundled["supervisor"]));
    // AppWorld's datetime is a datetime serialised by FastAPI: ISO 8601, as the bundled world's
    assert_eq!(from_real["datetime"], from_bundled["datetime"]);

    // doing nothing: the real server re-initialized the bundled world's task above, so both
    // grade the same untouched world
    let real_server_initialized = real.post(&server.url, "initialize", &init).unwrap();
    assert_eq!(real_server_initialized["task_id"], json!(id));
    let body = json!({"task_id": id, "suppress_errors": true, "report": false});
    let from_real = real.post(&server.url, "evaluate", &body).unwrap();
    let from_bundled = bundled.post(world_url, "evaluate", &body).unwrap();
    assert_eq!(keys(&from_real), ["difficulty", "failures", "num_tests", "passes", "success"]);
    for k in keys(&from_real) {
        assert!(from_bundled.get(&k).is_some(), "the bundled world's /evaluate lacks `{k}`: {from_bundled}");
    }
    assert_eq!(from_real["failures"], from_bundled["failures"]);
    assert_eq!(from_real["passes"], from_bundled["passes"]);
    // AppWorld's labels: what doing nothing gets
    assert_eq!(from_real["passes"], json!([{"requirement": "nothing else changed", "label": "no_op_pass"}]));
    assert!(from_real["failures"].as_array().unwrap().iter().all(|f| f["label"] == "no_op_fail"), "{from_real}");

    // `report: true` answers the report's text, from both
    let body = json!({"task_id": id, "suppress_errors": true, "report": true});
    let from_real = real.post(&server.url, "evaluate", &body).unwrap();
    let from_bundled = bundled.post(world_url, "evaluate", &body).unwrap();
    assert!(from_real.as_str().is_some_and(|r| r.contains("Num Failed Tests")), "{from_real}");
    assert!(from_bundled.as_str().is_some_and(|r| r.contains("FAIL the task is marked completed")), "{from_bundled}");

    // /task_completed and /close: a boolean and null from both
    let body = json!({"task_id": id});
    assert_eq!(real.post(&server.url, "task_completed", &body).unwrap(), json!(false));
    assert_eq!(bundled.post(world_url, "task_completed", &body).unwrap(), json!(false));
    assert_eq!(real.post(&server.url, "close", &body).unwrap(), Value::Null);
    assert_eq!(bundled.post(world_url, "close", &body).unwrap(), Value::Null);
}

/// `GET {base}{path}` as JSON, outside the client: the routes of AppWorld's server that answer
/// without the `{"output": ...}` envelope.
fn raw_get(base: &str, path: &str) -> Value {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let resp = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(resp.status(), 200, "GET {path}");
        resp.json::<Value>().await.unwrap()
    })
}
