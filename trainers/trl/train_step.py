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
target_modules (["q_proj", "v_proj"]), learning_rate (2e-4), epochs (1), max_length (1024,
longer sequences keep their last tokens), threads, bf16 (false: bfloat16 autocast; fast on CPUs with AMX, 25x slower
without), seed (0).
"""

import hashlib
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_model  # noqa: E402


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def encode(tok, line, max_length):
    """(input ids, target mask) of one batch line, truncated from the left."""
    out = tok.apply_chat_template(
        line["messages"], tools=line.get("tools") or None, tokenize=True, return_dict=True,
        return_assistant_tokens_mask=True,
    )
    ids, mask = out["input_ids"], out["assistant_masks"]
    return ids[-max_length:], mask[-max_length:]


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
    tok, model = load_model(req["base_model"], p.get("threads"))
    if req.get("previous_checkpoint"):
        model = PeftModel.from_pretrained(model, req["previous_checkpoint"], is_trainable=True)
        print(f"continuing from {req['previous_checkpoint']}", flush=True)
    else:
        cfg = LoraConfig(
            r=int(p.get("lora_r", 8)), lora_alpha=int(p.get("lora_alpha", 16)), lora_dropout=float(p.get("lora_dropout", 0.0)),
            target_modules=list(p.get("target_modules", ["q_proj", "v_proj"])), task_type="CAUSAL_LM",
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
    opt = torch.optim.AdamW([x for x in model.parameters() if x.requires_grad], lr=float(p.get("learning_rate", 2e-4)))
    bf16 = bool(p.get("bf16", False))
    losses, nlls = [], []
    model.train()
    for epoch in range(int(p.get("epochs", 1))):
        opt.zero_grad()
        total, nll_sum = 0.0, 0.0
        for i, (ids, mask, coef) in enumerate(items):
            x = torch.tensor([ids])
            m = torch.tensor([mask[1:]], dtype=torch.float32)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = model(input_ids=x).logits[:, :-1].float()
            logp = torch.log_softmax(logits, -1).gather(-1, x[:, 1:].unsqueeze(-1)).squeeze(-1)
            nll = -(logp * m).sum()
            loss = coef * nll / max(targets, 1)
            loss.backward()
            total += loss.item()
            nll_sum += nll.item()
        torch.nn.utils.clip_grad_norm_([x for x in model.parameters() if x.requires_grad], 1.0)
        opt.step()
        losses.append(total)
        nlls.append(nll_sum / max(targets, 1))
        print(f"epoch {epoch + 1}: loss {total:.4f}, nll per target token {nlls[-1]:.4f}", flush=True)
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
            "target_tokens": targets, "trainable_parameters": trainable, "seconds": round(time.time() - t_start, 2),
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
