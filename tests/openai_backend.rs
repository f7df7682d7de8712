//! The `openai` policy back-end against a real loopback chat-completions server.

#[path = "support/chat_server.rs"]
mod chat_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chat_server::{text_reply, tool_call_reply, tool_call_reply_raw, ChatServer, Reply, Script};
use harness_s::episode::HookKind;
use harness_s::policy::openai::{text_tools, OpenAiConfig, OpenAiPolicy, ToolMode};
use harness_s::policy::{CallKind, CallOptions, Context, Message, Origin, Policy, PolicyError, Role, ToolCall, ToolSpec};
use serde_json::{json, Value};

fn config(url: String) -> OpenAiConfig {
    let mut c = OpenAiConfig::new(url, "test-model");
    // A variable no test sets, so no key is sent unless a test asks for one.
    c.api_key_env = Some("HSW_OPENAI_TEST_UNSET_KEY".into());
    c.retry_base_delay = Duration::from_millis(5);
    c.retry_max_delay = Duration::from_millis(50);
    c.timeout = Duration::from_secs(10);
    c
}

fn policy(c: OpenAiConfig) -> OpenAiPolicy {
    OpenAiPolicy::new(c).expect("policy")
}

fn opts() -> CallOptions {
    CallOptions { kind: CallKind::Act, seed: 7, temperature: 0.7 }
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "execute_sql".into(),
            description: "Run one SQL statement.".into(),
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        },
        ToolSpec {
            name: "commit_final_answer".into(),
            description: "Submit the answer.".into(),
            parameters: json!({"type": "object", "properties": {"answers": {"type": "array", "items": {"type": "string"}}}}),
        },
    ]
}

fn ctx() -> Context {
    Context { messages: vec![Message::system("You are a SQL agent."), Message::user("How many rows are in table t?", Origin::Frame)], tools: tools() }
}

/// A context with one earlier tool call and its result, plus a hook's hint.
fn ctx_with_history() -> Context {
    let mut c = ctx();
    let mut a = Message::new(Role::Assistant, "Let me look.", Origin::Policy);
    a.tool_calls.push(ToolCall { id: "call_0".into(), name: "execute_sql".into(), arguments: json!({"query": "SELECT COUNT(*) FROM t"}) });
    c.messages.push(a);
    let mut t = Message::new(Role::Tool, "[(3,)]", Origin::Environment);
    t.tool_call_id = Some("call_0".into());
    c.messages.push(t);
    c.messages.push(Message::user("Hint: answer now.", Origin::Hook { hook: "budget".into(), kind: HookKind::OnInit }));
    c
}

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().expect("messages array")
}

#[test]
fn native_tool_call_request_and_reply() {
    let server = ChatServer::start(Script::new().reply(200, tool_call_reply(&[("execute_sql", json!({"query": "SELECT COUNT(*) FROM t"}))])));
    let mut c = config(server.url());
    c.tool_mode = ToolMode::Native;
    c.max_tokens = Some(256);
    let p = policy(c);
    let turn = p.act(&ctx_with_history(), &opts()).expect("act");

    assert_eq!(turn.content, "");
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(turn.tool_calls[0].id, "call_srv_0");
    assert_eq!(turn.tool_calls[0].name, "execute_sql");
    assert_eq!(turn.tool_calls[0].arguments, json!({"query": "SELECT COUNT(*) FROM t"}));
    let raw: Value = serde_json::from_str(&turn.raw).expect("raw is the message JSON");
    assert_eq!(raw["tool_calls"][0]["function"]["name"], "execute_sql");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    let b = &reqs[0].body;
    assert_eq!(b["model"], "test-model");
    assert_eq!(b["tool_choice"], "auto");
    assert_eq!(b["temperature"], json!(0.7));
    assert_eq!(b["seed"], json!(7));
    assert_eq!(b["max_tokens"], json!(256));
    let tools = b["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(tools[0]["function"]["name"], "execute_sql");
    assert_eq!(tools[0]["function"]["parameters"]["required"], json!(["query"]));
    let m = messages(b);
    assert_eq!(m.len(), 5);
    assert_eq!(m[0], json!({"role": "system", "content": "You are a SQL agent."}));
    assert_eq!(m[1]["role"], "user");
    assert_eq!(m[2]["role"], "assistant");
    assert_eq!(m[2]["content"], "Let me look.");
    assert_eq!(m[2]["tool_calls"][0]["id"], "call_0");
    assert_eq!(m[2]["tool_calls"][0]["type"], "function");
    assert_eq!(m[2]["tool_calls"][0]["function"]["name"], "execute_sql");
    let args = m[2]["tool_calls"][0]["function"]["arguments"].as_str().expect("arguments is a JSON string");
    assert_eq!(serde_json::from_str::<Value>(args).unwrap(), json!({"query": "SELECT COUNT(*) FROM t"}));
    assert_eq!(m[3], json!({"role": "tool", "tool_call_id": "call_0", "content": "[(3,)]"}));
    assert_eq!(m[4], json!({"role": "user", "content": "Hint: answer now."}));
    assert!(!reqs[0].body_text.contains("origin"), "Origin is internal: {}", reqs[0].body_text);
    assert!(reqs[0].header("authorization").is_none());
}

#[test]
fn content_only_reply() {
    let server = ChatServer::start(Script::new().reply(200, text_reply("There are 3 rows.")));
    let p = policy(config(server.url()));
    let turn = p.act(&ctx(), &opts()).unwrap();
    assert_eq!(turn.content, "There are 3 rows.");
    assert!(turn.tool_calls.is_empty());
    assert_eq!(turn.logprobs, None);
}

#[test]
fn no_tools_means_no_tools_field() {
    let server = ChatServer::start(Script::new().reply(200, text_reply("hi")));
    let p = policy(config(server.url()));
    let mut c = ctx();
    c.tools.clear();
    p.act(&c, &opts()).unwrap();
    let b = &server.requests()[0].body;
    assert!(b.get("tools").is_none() && b.get("tool_choice").is_none(), "{b}");
}

#[test]
fn malformed_tool_call_arguments_are_kept_as_a_string() {
    let server =
        ChatServer::start(Script::new().reply(200, tool_call_reply_raw(&[("execute_sql", "{\"query\": \"SELECT 1"), ("commit_final_answer", "")])));
    let p = policy(config(server.url()));
    let turn = p.act(&ctx(), &opts()).unwrap();
    assert_eq!(turn.tool_calls.len(), 2);
    assert_eq!(turn.tool_calls[0].arguments, Value::String("{\"query\": \"SELECT 1".into()));
    // An empty arguments string is an empty object.
    assert_eq!(turn.tool_calls[1].arguments, json!({}));
}

#[test]
fn malformed_arguments_are_sent_back_verbatim_in_history() {
    let server = ChatServer::start(Script::new().reply(200, text_reply("ok")));
    let p = policy(config(server.url()));
    let mut c = ctx();
    let mut a = Message::new(Role::Assistant, "", Origin::Policy);
    a.tool_calls.push(ToolCall { id: "x1".into(), name: "execute_sql".into(), arguments: Value::String("{bad".into()) });
    c.messages.push(a);
    p.act(&c, &opts()).unwrap();
    let b = &server.requests()[0].body;
    assert_eq!(messages(b)[2]["tool_calls"][0]["function"]["arguments"], "{bad");
}

#[test]
fn retries_after_429() {
    let server = ChatServer::start(
        Script::new()
            .reply_full(Reply::new(429, r#"{"error":{"message":"rate limited"}}"#).header("retry-after", "0"))
            .reply(200, text_reply("done")),
    );
    let p = policy(config(server.url()));
    let turn = p.act(&ctx(), &opts()).unwrap();
    assert_eq!(turn.content, "done");
    assert_eq!(server.request_count(), 2);
}

#[test]
fn retry_after_is_honoured_and_capped() {
    let server = ChatServer::start(Script::new().reply_full(Reply::new(429, "busy").header("retry-after", "5")).reply(200, text_reply("done")));
    let mut c = config(server.url());
    c.retry_base_delay = Duration::from_millis(1);
    c.retry_max_delay = Duration::from_millis(300);
    let p = policy(c);
    let t0 = Instant::now();
    p.act(&ctx(), &opts()).unwrap();
    let dt = t0.elapsed();
    assert!(dt >= Duration::from_millis(280), "waited for Retry-After (capped): {dt:?}");
    assert!(dt < Duration::from_secs(3), "Retry-After capped at retry_max_delay: {dt:?}");
}

#[test]
fn persistent_503_becomes_a_server_error() {
    let server = ChatServer::start(Script::new().always(|_| (503, "overloaded".to_string())));
    let mut c = config(server.url());
    c.max_retries = 2;
    let p = policy(c);
    let err = p.act(&ctx(), &opts()).unwrap_err();
    assert_eq!(err, PolicyError::Server { status: 503, message: "overloaded".into() });
    assert_eq!(server.request_count(), 3, "max_retries + 1 attempts");
}

#[test]
fn other_4xx_is_not_retried() {
    let server = ChatServer::start(Script::new().always(|_| (404, r#"{"error":"model not found"}"#.to_string())));
    let p = policy(config(server.url()));
    let err = p.act(&ctx(), &opts()).unwrap_err();
    assert!(matches!(err, PolicyError::Server { status: 404, .. }), "{err:?}");
    assert_eq!(server.request_count(), 1);
}

#[test]
fn malformed_200_is_a_protocol_error() {
    let server = ChatServer::start(
        Script::new().reply(200, "this is not json").reply(200, r#"{"id": "x", "object": "chat.completion"}"#).reply(200, r#"{"choices": []}"#),
    );
    let p = policy(config(server.url()));
    for _ in 0..3 {
        let err = p.act(&ctx(), &opts()).unwrap_err();
        assert!(matches!(err, PolicyError::Protocol(_)), "{err:?}");
    }
    assert_eq!(server.request_count(), 3, "protocol errors are not retried");
}

#[test]
fn connection_refused_is_a_transport_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut c = config(format!("http://127.0.0.1:{port}/v1"));
    c.max_retries = 1;
    let p = policy(c);
    let err = p.act(&ctx(), &opts()).unwrap_err();
    match &err {
        PolicyError::Transport(m) => assert!(m.contains("127.0.0.1"), "{m}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert!(p.list_models().is_err());
}

#[test]
fn timeout_is_honoured() {
    let server = ChatServer::start(Script::new().delay(Duration::from_secs(3)).always(|_| (200, text_reply("late"))));
    let mut c = config(server.url());
    c.timeout = Duration::from_millis(200);
    c.max_retries = 1;
    let p = policy(c);
    let t0 = Instant::now();
    let err = p.act(&ctx(), &opts()).unwrap_err();
    let dt = t0.elapsed();
    match &err {
        PolicyError::Transport(m) => assert!(m.contains("timed out"), "{m}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_eq!(server.request_count(), 2);
    assert!(dt < Duration::from_millis(2500), "gave up well before the server answered: {dt:?}");
}

#[test]
fn text_mode_request_and_three_reply_formats() {
    let server = ChatServer::start(
        Script::new()
            .reply(200, text_reply("I will count.\n<tool_call>\n{\"name\": \"execute_sql\", \"arguments\": {\"query\": \"SELECT 1\"}}\n</tool_call>"))
            .reply(200, text_reply("Counting:\n```json\n{\"name\": \"execute_sql\", \"arguments\": {\"query\": \"SELECT 2\"}}\n```"))
            .reply(200, text_reply("Final: {\"name\": \"commit_final_answer\", \"arguments\": {\"answers\": [\"3\"]}}")),
    );
    let mut c = config(server.url());
    c.tool_mode = ToolMode::Text;
    let p = policy(c);
    let h = ctx_with_history();

    let t1 = p.act(&h, &opts()).unwrap();
    assert_eq!(t1.content, "I will count.");
    assert_eq!(t1.tool_calls, vec![ToolCall { id: "call_1".into(), name: "execute_sql".into(), arguments: json!({"query": "SELECT 1"}) }]);

    let t2 = p.act(&h, &opts()).unwrap();
    assert_eq!(t2.content, "Counting:");
    assert_eq!(t2.tool_calls[0].name, "execute_sql");
    assert_eq!(t2.tool_calls[0].arguments, json!({"query": "SELECT 2"}));

    let t3 = p.act(&ctx(), &opts()).unwrap();
    assert_eq!(t3.content, "Final:");
    assert_eq!(t3.tool_calls, vec![ToolCall { id: "call_0".into(), name: "commit_final_answer".into(), arguments: json!({"answers": ["3"]}) }]);

    let reqs = server.requests();
    let b = &reqs[0].body;
    assert!(b.get("tools").is_none() && b.get("tool_choice").is_none(), "text mode sends no tools: {b}");
    let m = messages(b);
    assert_eq!(m[0]["role"], "system");
    let sys = m[0]["content"].as_str().unwrap();
    assert!(sys.starts_with("You are a SQL agent."), "{sys}");
    for needle in ["execute_sql", "Run one SQL statement.", "\"required\":[\"query\"]", "commit_final_answer", "<tool_call>", "</tool_call>"] {
        assert!(sys.contains(needle), "tool prompt lacks {needle:?}: {sys}");
    }
    assert_eq!(m.len(), 5);
    assert_eq!(m[2]["role"], "assistant");
    let a = m[2]["content"].as_str().unwrap();
    assert!(a.starts_with("Let me look.\n<tool_call>"), "{a}");
    assert!(a.contains("\"name\": \"execute_sql\"") && a.contains("SELECT COUNT(*) FROM t"), "{a}");
    assert!(m[2].get("tool_calls").is_none());
    assert_eq!(m[3], json!({"role": "user", "content": "Tool result (execute_sql):\n[(3,)]"}));
    assert_eq!(m[4]["content"], "Hint: answer now.");
}

#[test]
fn text_mode_without_system_message_adds_one() {
    let server = ChatServer::start(Script::new().reply(200, text_reply("ok")));
    let mut c = config(server.url());
    c.tool_mode = ToolMode::Text;
    let p = policy(c);
    let mut cx = ctx();
    cx.messages.remove(0);
    p.act(&cx, &opts()).unwrap();
    let m = messages(&server.requests()[0].body).clone();
    assert_eq!(m.len(), 2);
    assert_eq!(m[0]["role"], "system");
    assert!(m[0]["content"].as_str().unwrap().contains("execute_sql"));
    assert_eq!(m[1]["role"], "user");
}

#[test]
fn text_parser_edge_cases() {
    // Several tagged calls, an unclosed last tag, stringified arguments.
    let (rest, calls) = text_tools::parse_tool_calls(
        "a <tool_call>{\"name\":\"x\",\"arguments\":{\"k\":1}}</tool_call> b <tool_call>{\"name\":\"y\",\"arguments\":\"{\\\"q\\\":2}\"}",
        5,
    );
    assert_eq!(rest, "a  b");
    assert_eq!(calls.len(), 2);
    assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("call_5", "x"));
    assert_eq!(calls[1].id, "call_6");
    assert_eq!(calls[1].arguments, json!({"q": 2}));

    // A malformed tagged call is still a call, its body kept raw.
    let (_, calls) = text_tools::parse_tool_calls("<tool_call>{\"name\": \"execute_sql\", \"arguments\": {\"query\": }</tool_call>", 0);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "execute_sql");
    assert!(matches!(calls[0].arguments, Value::String(_)));

    // Plain prose and non-call JSON are left alone.
    let (rest, calls) = text_tools::parse_tool_calls("The answer is {\"count\": 3}.", 0);
    assert!(calls.is_empty());
    assert_eq!(rest, "The answer is {\"count\": 3}.");
    let (_, calls) = text_tools::parse_tool_calls("```python\nprint({'name': 1})\n```", 0);
    assert!(calls.is_empty());

    // A fenced array of calls; `parameters` accepted for `arguments`.
    let (rest, calls) =
        text_tools::parse_tool_calls("```\n[{\"name\":\"a\",\"arguments\":{}},{\"name\":\"b\",\"parameters\":{\"z\":true}}]\n```\nthen", 0);
    assert_eq!(rest, "then");
    assert_eq!(calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(calls[1].arguments, json!({"z": true}));
}

const VLLM_NO_TOOLS: &str = r#"{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}"#;

#[test]
fn auto_mode_falls_back_to_text_after_tools_unsupported() {
    let server = ChatServer::start(
        Script::new()
            .reply(400, VLLM_NO_TOOLS)
            .reply(200, text_reply("<tool_call>{\"name\": \"execute_sql\", \"arguments\": {\"query\": \"SELECT 1\"}}</tool_call>"))
            .reply(200, text_reply("{\"name\": \"commit_final_answer\", \"arguments\": {\"answers\": [\"1\"]}}")),
    );
    let mut c = config(server.url());
    c.tool_mode = ToolMode::Auto;
    let p = policy(c);
    assert!(!p.uses_text_tools());
    let t1 = p.act(&ctx(), &opts()).unwrap();
    assert_eq!(t1.tool_calls[0].name, "execute_sql");
    assert!(p.uses_text_tools());
    let t2 = p.act(&ctx(), &opts()).unwrap();
    assert_eq!(t2.tool_calls[0].name, "commit_final_answer");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].body.get("tools").is_some());
    assert!(reqs[1].body.get("tools").is_none());
    assert!(reqs[2].body.get("tools").is_none(), "stays in text mode");
    assert!(messages(&reqs[1].body)[0]["content"].as_str().unwrap().contains("<tool_call>"));
}

#[test]
fn native_mode_does_not_fall_back_and_other_400s_do_not_switch() {
    let server = ChatServer::start(Script::new().reply(400, VLLM_NO_TOOLS).reply(400, r#"{"message":"maximum context length is 4096 tokens"}"#));
    let mut c = config(server.url());
    c.tool_mode = ToolMode::Native;
    let native = policy(c.clone());
    assert!(matches!(native.act(&ctx(), &opts()), Err(PolicyError::Server { status: 400, .. })));
    c.tool_mode = ToolMode::Auto;
    let auto = policy(c);
    assert!(matches!(auto.act(&ctx(), &opts()), Err(PolicyError::Server { status: 400, .. })));
    assert!(!auto.uses_text_tools());
    assert_eq!(server.request_count(), 2);
}

#[test]
fn api_key_is_a_bearer_header_and_never_in_errors() {
    const VAR: &str = "HSW_OPENAI_TEST_KEY_BEARER";
    const KEY: &str = "sk-test-very-secret-4242";
    std::env::set_var(VAR, KEY);
    let server = ChatServer::start(
        Script::new()
            .reply(200, text_reply("hi"))
            .reply(401, format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#))
            .reply(500, format!("internal error for key {KEY}")),
    );
    let mut c = config(server.url());
    c.api_key_env = Some(VAR.into());
    c.max_retries = 0;
    let p = policy(c.clone());
    p.act(&ctx(), &opts()).unwrap();
    let e1 = p.act(&ctx(), &opts()).unwrap_err();
    let e2 = p.act(&ctx(), &opts()).unwrap_err();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "the 401 is not retried");
    for r in &reqs {
        assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
        assert!(!r.body_text.contains(KEY), "key leaked into the body");
    }
    assert!(matches!(e1, PolicyError::Server { status: 401, .. }));
    for e in [&e1, &e2] {
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(KEY), "key leaked into an error: {shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
    }
    // Transport errors and Debug output never carry it either.
    let mut dead = c.clone();
    dead.base_url = format!("http://127.0.0.1:{}/v1", { std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port() });
    let e3 = policy(dead).act(&ctx(), &opts()).unwrap_err();
    assert!(!format!("{e3}").contains(KEY));
    assert!(!format!("{p:?} {:?}", p.config()).contains(KEY));
}

#[test]
fn usage_and_logprobs_are_parsed() {
    let body = json!({
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": "3"},
            "logprobs": {"content": [{"token": "3", "logprob": -0.25, "top_logprobs": []}]},
            "finish_reason": "stop",
        }],
        "usage": {"prompt_tokens": 123, "completion_tokens": 45, "total_tokens": 168},
    });
    let server = ChatServer::start(Script::new().reply(200, body.to_string()).reply(200, text_reply("x")));
    let mut c = config(server.url());
    c.logprobs = true;
    let p = policy(c);
    let t = p.act(&ctx(), &opts()).unwrap();
    assert_eq!((t.prompt_tokens, t.completion_tokens), (123, 45));
    assert_eq!(t.logprobs, Some(vec![-0.25]));
    assert_eq!(server.requests()[0].body["logprobs"], json!(true));
    let t = p.act(&ctx(), &opts()).unwrap();
    assert_eq!((t.prompt_tokens, t.completion_tokens), (chat_server::PROMPT_TOKENS, chat_server::COMPLETION_TOKENS));
}

#[test]
fn concurrency_limit_is_respected() {
    let server = ChatServer::start(Script::new().delay(Duration::from_millis(120)).always(|_| (200, text_reply("ok"))));
    let mut c = config(server.url());
    c.concurrency = 2;
    let p = Arc::new(policy(c));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let p = p.clone();
            std::thread::spawn(move || {
                let o = CallOptions { seed: i, ..opts() };
                p.act(&ctx(), &o).map(|t| t.content)
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap(), "ok");
    }
    assert_eq!(server.request_count(), 8);
    assert_eq!(server.max_in_flight(), 2, "at most `concurrency` requests in flight, and the limit is used");
}

#[test]
fn extra_body_and_temperature_override_are_sent() {
    let server = ChatServer::start(Script::new().reply(200, text_reply("ok")));
    let mut c = config(server.url());
    c.temperature = Some(0.0);
    c.extra_body = Some(json!({"top_p": 0.95, "chat_template_kwargs": {"enable_thinking": false}}));
    let p = policy(c);
    p.act(&ctx(), &CallOptions { seed: u64::MAX, ..opts() }).unwrap();
    let b = &server.requests()[0].body;
    assert_eq!(b["temperature"], json!(0.0));
    assert_eq!(b["top_p"], json!(0.95));
    assert_eq!(b["chat_template_kwargs"]["enable_thinking"], json!(false));
    assert_eq!(b["seed"], json!(i64::MAX), "seed fits a signed 64-bit integer");
}

#[test]
fn models_lora_and_model_switching() {
    let server = ChatServer::start(
        Script::new()
            .models(&["base", "lora-a"])
            .reply(200, "Success: LoRA adapter 'lora-a' added successfully.")
            .reply(400, "The lora adapter 'lora-a' has already been loaded.")
            .reply(200, text_reply("from lora")),
    );
    let p = policy(config(server.url()));
    assert_eq!(p.name(), "openai:test-model");
    assert_eq!(p.list_models().unwrap(), vec!["base".to_string(), "lora-a".to_string()]);
    p.load_lora_adapter("lora-a", "/ckpt/step-10").unwrap();
    // The same call with a base URL that lacks /v1 hits the same endpoint, and "already loaded"
    // is fine.
    let p_root = policy(config(server.root_url()));
    p_root.load_lora_adapter("lora-a", "/ckpt/step-10").unwrap();
    let lora = p.with_model("lora-a");
    assert_eq!(lora.name(), "openai:lora-a");
    assert_eq!(lora.act(&ctx(), &opts()).unwrap().content, "from lora");

    let reqs = server.requests();
    assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("GET", "/v1/models"));
    assert_eq!((reqs[1].method.as_str(), reqs[1].path.as_str()), ("POST", "/v1/load_lora_adapter"));
    assert_eq!(reqs[1].body, json!({"lora_name": "lora-a", "lora_path": "/ckpt/step-10"}));
    assert_eq!(reqs[2].path, "/v1/load_lora_adapter");
    assert_eq!(reqs[3].body["model"], "lora-a");
}

#[test]
fn config_from_toml_with_defaults() {
    let c: OpenAiConfig = toml::from_str("base_url = \"http://127.0.0.1:8000/v1\"\nmodel = \"qwen\"\n").unwrap();
    assert_eq!(c, OpenAiConfig::new("http://127.0.0.1:8000/v1", "qwen"));
    assert_eq!(c.timeout, Duration::from_secs(120));
    assert_eq!((c.max_retries, c.concurrency, c.tool_mode), (4, 8, ToolMode::Auto));
    assert_eq!(c.key_env(), "OPENAI_API_KEY");

    let full: OpenAiConfig = toml::from_str(
        r#"
        base_url = "https://api.example.com/v1/"
        model = "m"
        api_key_env = "EXAMPLE_KEY"
        timeout = 2.5
        max_retries = 1
        concurrency = 3
        temperature = 0.2
        max_tokens = 512
        tool_mode = "text"
        extra_body = { top_p = 0.9 }
        "#,
    )
    .unwrap();
    assert_eq!(full.timeout, Duration::from_millis(2500));
    assert_eq!(full.tool_mode, ToolMode::Text);
    assert_eq!(full.extra_body, Some(json!({"top_p": 0.9})));
    assert_eq!(full.key_env(), "EXAMPLE_KEY");
    let back: OpenAiConfig = toml::from_str(&toml::to_string(&full).unwrap()).unwrap();
    assert_eq!(back, full);

    assert!(OpenAiPolicy::new(OpenAiConfig::new("localhost:8000", "m")).is_err());
    assert!(OpenAiPolicy::new(OpenAiConfig::new("http://localhost:8000/v1", "")).is_err());
    let mut bad = OpenAiConfig::new("http://localhost:8000/v1", "m");
    bad.extra_body = Some(json!([1]));
    assert!(OpenAiPolicy::new(bad).is_err());
}

#[test]
fn act_from_inside_an_async_context_does_not_panic() {
    let server = ChatServer::start(Script::new().reply(200, text_reply("ok")));
    let p = policy(config(server.url()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let content = rt.block_on(async move {
        let c = p.act(&ctx(), &opts()).unwrap().content;
        drop(p); // dropping the policy (and its runtime) here must not panic either
        c
    });
    assert_eq!(content, "ok");
}

#[test]
fn a_pool_of_replicas_routes_around_one_that_is_down_and_tries_it_again_later() {
    // replica A fails its first 3 requests (a restart), replica B is fine
    let a = ChatServer::start(
        Script::new().lora().reply(503, "restarting").reply(503, "restarting").reply(503, "restarting").always(|_| (200, text_reply("from A"))),
    );
    let b = ChatServer::start(Script::new().lora().always(|_| (200, text_reply("from B"))));
    let mut c = config(a.url());
    c.base_urls = vec![b.url()];
    c.replica_cooldown = Duration::from_millis(300);
    c.max_retries = 3;
    let p = policy(c);
    // every request succeeds while A is down; A is taken out after its failure
    for _ in 0..6 {
        let t = p.act(&ctx(), &opts()).expect("served by a healthy replica");
        assert!(t.content == "from B" || t.content == "from A");
    }
    let stats = p.replica_stats();
    assert_eq!(stats.len(), 2);
    assert!(stats[0].failures >= 1, "{stats:?}");
    assert!(!stats[0].healthy || stats[0].failures == 3, "{stats:?}");
    assert!(b.request_count() >= 5, "B took A's share while A was down: {}", b.request_count());
    // after the cool-down A is tried again, and once it answers it takes requests
    let mut from_a = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while from_a == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(350));
        for _ in 0..2 {
            if p.act(&ctx(), &opts()).unwrap().content == "from A" {
                from_a += 1;
            }
        }
    }
    assert!(from_a > 0, "A came back into the pool: {:?}", p.replica_stats());
    assert!(p.replica_stats().iter().all(|r| r.healthy));
    // an adapter is loaded on every replica, and listed only when every replica lists it
    p.load_lora_adapter("ad-1", "/ckpt/1").unwrap();
    for s in [&a, &b] {
        assert!(s.requests().iter().any(|r| r.path == "/v1/load_lora_adapter" && r.body["lora_name"] == "ad-1"));
    }
    assert!(p.list_models().unwrap().contains(&"ad-1".to_string()));
}

#[test]
fn a_pool_with_every_replica_down_fails_with_the_last_error() {
    let a = ChatServer::start(Script::new().always(|_| (500, "boom A".into())));
    let b = ChatServer::start(Script::new().always(|_| (500, "boom B".into())));
    let mut c = config(a.url());
    c.base_urls = vec![b.url()];
    c.max_retries = 2;
    c.retry_base_delay = Duration::from_millis(10);
    let err = policy(c).act(&ctx(), &opts()).expect_err("all down");
    assert!(matches!(err, PolicyError::Server { status: 500, .. }), "{err:?}");
    assert_eq!(a.request_count() + b.request_count(), 3, "max_retries + 1 attempts in all");
}
