"""Check that TRL reads a harness-s batch file as it is: `datasets` loads the JSONL, TRL's
`SFTTrainer` tokenizes its conversations (tools and tool calls through the chat template, the
assistant-only loss mask from its generation markers) and takes one optimizer step.

    python trl_reads_batch.py batch.jsonl MODEL
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_model  # noqa: E402


def main():
    batch, model_spec = sys.argv[1], sys.argv[2]
    from datasets import load_dataset
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    tok, model = load_model(model_spec, threads=2)
    ds = load_dataset("json", data_files=batch, split="train")
    # the conversation and its tools: what TRL's conversational format is
    ds = ds.select_columns(["messages", "tools"])
    with tempfile.TemporaryDirectory() as out:
        args = SFTConfig(output_dir=out, max_steps=1, per_device_train_batch_size=1, assistant_only_loss=True,
                         max_length=768, report_to=[], logging_steps=1, use_cpu=True, save_strategy="no",
                         bf16=False, fp16=False)
        trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok,
                             peft_config=LoraConfig(r=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
        out = trainer.train()
    print(json.dumps({"rows": len(ds), "steps": out.global_step, "loss": out.training_loss}))


if __name__ == "__main__":
    main()
