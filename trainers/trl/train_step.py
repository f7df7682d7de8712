"""The reference trainer: one update of a LoRA adapter from one harness-s training batch.

    python train_step.py request.json

Reads the request (docs/trainer-protocol.md), trains, writes the adapter to `output_dir` and
`result.json` with the figures. Objectives, per line of the batch (assistant tokens only, as
marked by the chat template's generation markers; assistant messages with "weight": 0 are
context, not targets):

  group  advantage-weighted policy gradient: minimise -(weight * advantage) * log p(token),
         averaged over the batch's target tokens (negative advantages push tokens down)
  sft    weighted SFT on the positive lines: minimise -weight * log p(token) where
         weight * advantage > 0

Params (`[trainer] params`, all optional): lora_r (8), lora_alpha (16), lora_dropout (0.0),
target_modules (["q_proj", "v_proj"]), lora_layers (all; n: adapt only the top n decoder layers,
so no gradient flows below them), learning_rate (2e-4), epochs (1), batch_size (0: every sequence
of the batch in one optimizer step per epoch; n: steps of n sequences, in a seeded shuffled
order), max_length (1024, longer sequences keep their last tokens), threads, bf16 (false; true:
bfloat16 autocast, 1.4x faster on a CPU with AVX-512 BF16, 25x slower on one without it or AMX;
"auto": true on a GPU or a CPU with either), share_prefix (true: see `shared_prefix`), seed (0),
device ("auto": cuda when there is a GPU, else cpu), chat_template ("auto": the model's own when
it renders tools, else "hermes", this trainer's; serve.py makes the same choice).

The base model loads from a cached float32 copy (common.py), and logits are computed only at the
positions whose next token is a target, which is most of a step's time saved on a long prompt.
"""

import json
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import cpu_has_bf16, file_sha256 as sha256, load_model  # noqa: E402


def encode(tok, line, max_length):
    """(input ids, target mask) of one batch line, truncated from the left. The targets are the
    assistant turns with weight 1: marked by the template's generation markers when it has them
    (this trainer's template), else found by rendering the conversation up to each such turn
    (a model's own template, e.g. Qwen's, as vLLM renders it)."""
    msgs, tools = line["messages"], line.get("tools") or None
    if "{% generation %}" in (tok.chat_template or ""):
        out = tok.apply_chat_template(msgs, tools=tools, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
        ids, mask = out["input_ids"], out["assistant_masks"]
        return ids[-max_length:], mask[-max_length:]

    def render(upto, prompt):
        return list(tok.apply_chat_template(msgs[:upto], tools=tools, tokenize=True, add_generation_prompt=prompt, return_dict=True)["input_ids"])

    ids = render(len(msgs), False)
    mask = [0] * len(ids)
    for i, m in enumerate(msgs):
        if m["role"] != "assistant" or m.get("weight", 1) == 0:
            continue
        before, upto = render(i, True), render(i + 1, False)
        if upto[:len(before)] != before or ids[:len(upto)] != upto:
            raise SystemExit(f"{line.get('task_id')}: the chat template does not render a conversation as the prefix of its "
                             "continuation, so the assistant's tokens cannot be found; set params.chat_template = \"hermes\"")
        for k in range(len(before), len(upto)):
            mask[k] = 1
    return ids[-max_length:], mask[-max_length:]


def top_layers(model, n):
    """The indices of the model's top `n` decoder layers (None: every layer)."""
    if not n:
        return None
    total = int(model.config.num_hidden_layers)
    return list(range(max(0, total - int(n)), total))


def shared_prefix(model, chunk, share, bf16, dev):
    """(n, keys and values) of the longest prefix every sequence of `chunk` shares and no target
    falls in (the system prompt and tool specs, typically three quarters of a sequence),
    computed once for the whole chunk with the current adapter, without gradient: each
    sequence then runs forward and backward on the rest only. The adapter's effect on that
    prefix gets no gradient (the one approximation); `share_prefix = false` turns it off."""
    import torch
    first = chunk[0][0]
    n = min(len(ids) for ids, _, _ in chunk) - 1
    for ids, mask, _ in chunk:
        same = 0
        while same < n and ids[same] == first[same] and not mask[same + 1]:
            same += 1
        n = same
    if n < 16:
        return 0, None
    with torch.no_grad(), torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
        out = model(input_ids=torch.tensor([first[:n]], device=dev), use_cache=True, logits_to_keep=1)
    layers = out.cache.layers
    return n, [(layer.keys.float(), layer.values.float()) for layer in layers]


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: train_step.py request.json")
    t_start = time.time()
    req = json.load(open(sys.argv[1]))
    if req.get("protocol") != 1:
        raise SystemExit(f"{sys.argv[1]}: protocol {req.get('protocol')!r}, this trainer speaks 1")
    p = req.get("params") or {}
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model

    torch.manual_seed(int(p.get("seed", 0)))
    tok, model = load_model(req["base_model"], p.get("threads"), p.get("chat_template", "auto"))
    # a GPU when there is one (the users' machines), else the CPU
    want = p.get("device", "auto")
    dev = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if want == "auto" else want)
    model.to(dev)
    if req.get("previous_checkpoint"):
        model = PeftModel.from_pretrained(model, req["previous_checkpoint"], is_trainable=True)
        print(f"continuing from {req['previous_checkpoint']}", flush=True)
    else:
        cfg = LoraConfig(
            r=int(p.get("lora_r", 8)), lora_alpha=int(p.get("lora_alpha", 16)), lora_dropout=float(p.get("lora_dropout", 0.0)),
            target_modules=list(p.get("target_modules", ["q_proj", "v_proj"])), task_type="CAUSAL_LM",
            # only the top layers: no gradient flows below them, which saves most of a backward pass
            layers_to_transform=top_layers(model, p.get("lora_layers")),
        )
        model = get_peft_model(model, cfg)
    # the adapter before this update, for the before/after checksums
    import tempfile
    with tempfile.TemporaryDirectory() as before_dir:
        model.save_pretrained(before_dir)
        before_sha = sha256(os.path.join(before_dir, "adapter_model.safetensors"))
    trainable = sum(x.numel() for x in model.parameters() if x.requires_grad)
    lines = [json.loads(l) for l in open(req["batch"]) if l.strip()]
    objective = req["objective"]
    max_length = int(p.get("max_length", 1024))
    items = []
    for line in lines:
        coef = float(line["weight"]) * float(line["advantage"])
        if objective == "sft":
            if coef <= 0:
                continue
            coef = float(line["weight"])
        if coef == 0:
            continue
        ids, mask = encode(tok, line, max_length)
        if sum(mask) == 0:
            continue
        items.append((ids, mask, coef))
    targets = sum(sum(m) for _, m, _ in items)
    print(f"{len(lines)} lines, {len(items)} sequences to learn, {targets} target tokens, {trainable} trainable parameters", flush=True)
    params = [x for x in model.parameters() if x.requires_grad]
    opt = torch.optim.AdamW(params, lr=float(p.get("learning_rate", 2e-4)))
    bf16 = p.get("bf16", False)
    bf16 = (dev.type == "cuda" or cpu_has_bf16()) if bf16 == "auto" else bool(bf16)
    batch_size = int(p.get("batch_size", 0)) or max(len(items), 1)
    share = bool(p.get("share_prefix", True))
    rng = random.Random(int(p.get("seed", 0)))
    losses, nlls, steps = [], [], 0
    model.train()
    for epoch in range(int(p.get("epochs", 1))):
        order = list(items)
        if batch_size < len(items):
            rng.shuffle(order)
        total, nll_sum = 0.0, 0.0
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            chunk_targets = sum(sum(m) for _, m, _ in chunk)
            opt.zero_grad()
            shared, prefix = shared_prefix(model, chunk, share, bf16, dev) if share else (0, None)
            for ids, mask, coef in chunk:
                # positions whose next token is a target: the only logits the loss reads
                at = [i - shared for i in range(shared, len(ids) - 1) if mask[i + 1]]
                x = torch.tensor([ids[shared:]], device=dev)
                kwargs = {}
                if prefix is not None:
                    from transformers import DynamicCache
                    cache = DynamicCache()
                    for layer, (k, v) in enumerate(prefix):
                        cache.update(k, v, layer)
                    kwargs = {"cache": cache, "position_ids": torch.arange(shared, len(ids), device=dev).unsqueeze(0)}
                with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
                    logits = model(input_ids=x, logits_to_keep=torch.tensor(at, device=dev), **kwargs).logits[0].float()
                want = torch.tensor([ids[shared + i + 1] for i in at], device=dev)
                nll = -torch.log_softmax(logits, -1).gather(-1, want.unsqueeze(-1)).sum()
                loss = coef * nll / max(chunk_targets, 1)
                loss.backward()
                total += coef * nll.item() / max(targets, 1)
                nll_sum += nll.item()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            steps += 1
        losses.append(total)
        nlls.append(nll_sum / max(targets, 1))
        print(f"epoch {epoch + 1}: loss {total:.4f}, nll per target token {nlls[-1]:.4f} ({steps} steps, {time.time() - t_start:.0f} s)", flush=True)
    if not all(math.isfinite(l) for l in losses):
        raise SystemExit(f"the loss is not finite: {losses}")
    out = req["output_dir"]
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out)
    weights = os.path.join(out, "adapter_model.safetensors")
    result = {
        "checkpoint": out,
        "metrics": {
            "loss": losses[-1] if losses else None, "nll": nlls[-1] if nlls else None, "sequences": len(items), "lines": len(lines),
            "target_tokens": targets, "trainable_parameters": trainable, "optimizer_steps": steps, "seconds": round(time.time() - t_start, 2),
            "adapter_sha256_before": before_sha,
            "adapter_sha256": sha256(weights) if os.path.exists(weights) else None,
        },
    }
    with open(req["result"] + ".tmp", "w") as f:
        json.dump(result, f, indent=2)
    os.replace(req["result"] + ".tmp", req["result"])
    print(f"wrote {out} in {result['metrics']['seconds']} s", flush=True)


if __name__ == "__main__":
    main()
