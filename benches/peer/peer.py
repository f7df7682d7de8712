#!/usr/bin/env python3
"""Throughput beside a peer: the same DBBench tasks, the same local mock model, run through
`harness-s eval` and through Inspect AI.

    python3 benches/peer/peer.py [--tasks 200] [--samples 1] [--concurrency 16] [--inspect-python PY]

Starts a mock OpenAI-compatible server on 127.0.0.1 (a thread of this script) whose "model"
answers every task in two turns: one `execute_sql` call that reads the task's table, then the
answer (harness-s: a `commit_final_answer` call; Inspect: the answer as text, which ends its
tool loop). Each side runs the N bundled tasks and a small run of N/10, and the script prints:
marginal wall and CPU milliseconds and bytes stored per episode (the difference of the two runs
over the difference of their sizes), start-up (what is left of the small run's wall time), peak
RSS, bytes stored per episode over the whole run (harness-s: every file of its SQLite store;
Inspect: its log directory), and the ratios. Both sides store every trajectory in full. Not part of CI.

Inspect AI comes from a virtualenv: `--inspect-python` (default: .cache/peer-venv, created with
`pip install inspect-ai openai` when missing).
"""

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mock_reply(req):
    """The mock model's answer to a chat-completions request: it solves a task in two turns."""
    messages = req.get("messages", [])
    tools = [t.get("function", {}).get("name") for t in req.get("tools", [])]
    prompt = "\n".join(m.get("content") or "" for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str))
    table = re.search(r"The name of this table is (.+?), and the headers", prompt)
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    if turns == 0:
        query = f"SELECT * FROM `{table.group(1) if table else 'unknown'}` LIMIT 3"
        call = {"id": "call_0", "type": "function", "function": {"name": "execute_sql", "arguments": json.dumps({"query": query})}}
        message, finish = {"role": "assistant", "content": "Let me look at the table.", "tool_calls": [call]}, "tool_calls"
    elif "commit_final_answer" in tools:
        call = {"id": "call_1", "type": "function", "function": {"name": "commit_final_answer", "arguments": json.dumps({"answers": ["42"]})}}
        message, finish = {"role": "assistant", "content": "", "tool_calls": [call]}, "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": "42"}, "stop"
    return {
        "id": "chatcmpl-peer",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.get("model", "mock"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
    }


class MockServer(asyncio.Protocol):
    """A minimal HTTP/1.1 server (keep-alive, content-length bodies) for the mock model: the
    standard library's threaded server, at about 3 ms a request, was slower than what it serves."""

    def connection_made(self, transport):
        self.transport, self.buf = transport, b""

    def data_received(self, data):
        self.buf += data
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buf[:head_end].decode("latin-1")
            length = int((re.search(r"(?im)^content-length:\s*(\d+)", head) or [0, 0])[1])
            if len(self.buf) < head_end + 4 + length:
                return
            body, self.buf = self.buf[head_end + 4 : head_end + 4 + length], self.buf[head_end + 4 + length :]
            if head.startswith("GET"):
                reply = {"object": "list", "data": [{"id": "mock", "object": "model", "owned_by": "peer-bench"}]}
            else:
                reply = mock_reply(json.loads(body or b"{}"))
            data = json.dumps(reply).encode()
            self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data))


def start_mock_server():
    """Serve the mock model on 127.0.0.1 from a thread; its URL and the thread's CPU clock."""
    ready = threading.Event()
    state = {}

    def run():
        loop = asyncio.new_event_loop()
        server = loop.run_until_complete(loop.create_server(MockServer, "127.0.0.1", 0))
        state["port"] = server.sockets[0].getsockname()[1]
        state["clock"] = time.pthread_getcpuclockid(threading.get_ident())
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait()
    return f"http://127.0.0.1:{state['port']}/v1", state["clock"]


INSPECT_TASK = r'''
import json, sqlite3
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, solver, use_tools
from inspect_ai.tool import tool
from inspect_ai.util import store

RECORDS = [json.loads(l) for l in open(__RECORDS__)]

def prompt(r):
    t = r["table"]
    headers = ",".join(c["name"] for c in t["table_info"]["columns"])
    return (f"{r['description']}\nThe name of this table is {t['table_name']}, and the headers of this table are {headers}.")

@tool
def execute_sql():
    async def execute(query: str):
        """Execute one SQL statement against the task's table and return the rows.

        Args:
            query: The SQL statement.
        """
        t = store().get("table")
        db = sqlite3.connect(":memory:")
        cols = ", ".join('"%s" TEXT' % c["name"] for c in t["table_info"]["columns"])
        db.execute('CREATE TABLE "%s" (%s)' % (t["table_name"], cols))
        marks = ", ".join("?" for _ in t["table_info"]["columns"])
        db.executemany('INSERT INTO "%s" VALUES (%s)' % (t["table_name"], marks), t["table_info"]["rows"])
        try:
            return str(db.execute(query.replace("`", '"')).fetchall())
        except Exception as e:
            return f"error: {e}"
    return execute

@solver
def load_table():
    async def solve(state, generate):
        store().set("table", state.metadata["table"])
        return state
    return solve

@task
def dbbench_peer(limit: int = 200):
    samples = [Sample(id=r["id"], input=prompt(r), target=r["label"], metadata={"table": r["table"]}) for r in RECORDS[:limit]]
    return Task(dataset=samples, solver=[load_table(), use_tools([execute_sql()]), generate()], scorer=includes())
'''


def run_measured(cmd, env, cwd):
    """Run a command; its wall time, CPU time (user + sys of it and its children) and peak RSS
    (GNU time's maximum resident set size of the command)."""
    rss_file = Path(cwd) / "rss.txt"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *map(str, cmd)], env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss_kb = int(rss_file.read_text().split()[-1])
    return wall, cpu, rss_kb / 1024.0, out


def harness_s_run(binary, url, n, samples, concurrency, work):
    db = work / f"harness-s-{n}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    cmd = [binary, "eval", "--suite", "dbbench", "--policy", "openai", "--base-url", url, "--model", "mock", "--limit", str(n),
           "--samples", str(samples), "--concurrency", str(concurrency), "--db", str(db), "--json"]
    env = dict(os.environ, OPENAI_API_KEY="peer-bench")
    wall, cpu, rss, _ = run_measured(cmd, env, work)
    info = json.loads(subprocess.run([binary, "store", "info", "--db", str(db), "--json"], capture_output=True, text=True, check=True).stdout)
    assert info["episodes"] == n * samples, info
    return wall, cpu, rss, info["bytes"]


def inspect_run(python, url, n, samples, concurrency, work, records):
    task = work / "dbbench_peer.py"
    task.write_text(INSPECT_TASK.replace("__RECORDS__", repr(str(records))))
    logs = work / f"inspect-logs-{n}"
    shutil.rmtree(logs, ignore_errors=True)
    inspect = str(Path(python).parent / "inspect")
    cmd = [inspect, "eval", task.name, "--model", "openai/mock", "--model-base-url", url, "-M", "responses_api=false", "-T", f"limit={n}", "--epochs", str(samples),
           "--max-connections", str(concurrency), "--max-samples", str(concurrency), "--log-dir", str(logs), "--display", "plain"]
    env = dict(os.environ, OPENAI_API_KEY="peer-bench", INSPECT_LOG_DIR=str(logs))
    wall, cpu, rss, _ = run_measured(cmd, env, work)
    files = [p for p in logs.rglob("*") if p.is_file()]
    # every sample ran to its answer (Inspect can end "interrupted" with status 0)
    check = "from inspect_ai.log import read_eval_log; import sys; l = read_eval_log(sys.argv[1]); " \
            "print(l.status, len(l.samples), min(len(s.messages) for s in l.samples))"
    status = subprocess.run([python, "-c", check, str(files[0])], capture_output=True, text=True, check=True).stdout.split()
    assert status == ["success", str(n * samples), "4"], f"Inspect's log says {status}"
    return wall, cpu, rss, sum(p.stat().st_size for p in files)


def ensure_inspect(python):
    if python:
        return python
    venv = ROOT / ".cache" / "peer-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "inspect-ai", "openai"], check=True)
    return str(py)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--samples", type=int, default=1, help="tries per task (Inspect: epochs)")
    ap.add_argument("--harness-s", default=str(ROOT / "target" / "release" / "harness-s"))
    ap.add_argument("--inspect-python", default=None)
    a = ap.parse_args()
    python = ensure_inspect(a.inspect_python)
    version = subprocess.run([python, "-c", "import inspect_ai; print(inspect_ai.__version__)"], capture_output=True, text=True, check=True).stdout.strip()

    url, server_clock = start_mock_server()
    records = ROOT / "datasets" / "dbbench" / "bundled.jsonl"
    small = max(1, a.tasks // 10)
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        rows, server_ms = {}, {}
        for name, run in (("harness-s", lambda n: harness_s_run(a.harness_s, url, n, a.samples, a.concurrency, work)),
                          (f"Inspect AI {version}", lambda n: inspect_run(python, url, n, a.samples, a.concurrency, work, records))):
            run(small)  # warm the caches (binaries, Python imports) before measuring
            w1, c1, _, b1 = run(small)
            s0 = time.clock_gettime(server_clock)
            w2, c2, rss, b2 = run(a.tasks)
            server_ms[name] = (time.clock_gettime(server_clock) - s0) / (a.tasks * a.samples) * 1e3
            per = lambda big, little: (big - little) / ((a.tasks - small) * a.samples)
            rows[name] = (per(w2, w1) * 1e3, per(c2, c1) * 1e3, max(0.0, w1 - small * a.samples * per(w2, w1)), rss, per(b2, b1), b2 / (a.tasks * a.samples))
    (hs, ins) = rows.values()
    print(f"{a.tasks} DBBench tasks x {a.samples} tries (and {small} tasks for the marginal cost), mock model on 127.0.0.1, concurrency {a.concurrency}")
    print(f"| | {' | '.join(rows)} | ratio |")
    print("|---|---|---|---|")
    fields = [("marginal wall ms / episode", 0, "{:.2f}"), ("marginal CPU ms / episode", 1, "{:.2f}"), ("start-up s", 2, "{:.2f}"),
              ("peak RSS MB", 3, "{:.0f}"), ("marginal bytes stored / episode", 4, "{:.0f}"), ("bytes stored / episode, all", 5, "{:.0f}")]
    for label, i, fmt in fields:
        ratio = ins[i] / hs[i] if hs[i] > 0 else float("inf")
        print(f"| {label} | {fmt.format(hs[i])} | {fmt.format(ins[i])} | {ratio:.1f}x |")
    print("the mock server's own CPU per episode: " + ", ".join(f"{k} {v:.2f} ms" for k, v in server_ms.items()) + " (not counted above)")


if __name__ == "__main__":
    main()
