"""What the real-model scripts share (benches/real-lm/*.py, scripts/check-real-lm): starting a
server and waiting for its port, reading a stored episode, and counting valid tool calls."""

import json
import re
import subprocess
import time


def start_server(command, log_path, timeout_s=600):
    """(process, base URL) of an OpenAI-compatible server started as `command` + `--port 0`,
    once its log says where it listens (trainers/trl/serve.py's `serve: listening on ...`)."""
    log = open(log_path, "w")
    proc = subprocess.Popen(list(command) + ["--port", "0"], stdout=log, stderr=subprocess.STDOUT)
    started = time.time()
    while True:
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+/v1)", open(log_path).read())
        if m:
            return proc, m.group(1)
        if proc.poll() is not None or time.time() - started > timeout_s:
            proc.kill()
            raise SystemExit(f"the server did not start:\n{open(log_path).read()}")
        time.sleep(0.5)


def stored_episode(binary, db, episode_id):
    """Episode `episode_id` of the store `db`, as `harness-s store episode` prints it."""
    out = subprocess.run([binary, "store", "episode", str(episode_id), "--db", db], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def valid_call(call, tools):
    """A call of a tool the step offered, with a JSON object holding the tool's required fields."""
    spec = next((t for t in tools if t["name"] == call["name"]), None)
    if spec is None:
        return False
    args = call.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return False
    required = (spec.get("parameters") or {}).get("required") or []
    return isinstance(args, dict) and all(k in args for k in required)


def tool_calls(steps):
    """(replies that are valid tool calls, replies) over one stored episode's steps."""
    calls = replies = 0
    tools = []
    for s in steps:
        # a stored step names its tools only when they changed
        if s.get("tools") is not None:
            tools = s["tools"]
        replies += 1
        tc = s["output"].get("tool_calls") or []
        calls += bool(tc) and all(valid_call(c, tools) for c in tc)
    return calls, replies
