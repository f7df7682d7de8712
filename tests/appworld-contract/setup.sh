#!/usr/bin/env bash
# Makes the virtualenv of the AppWorld contract test (default: .cache/appworld-venv under the
# project): the PyPI package appworld (its environment server, appworld.serve.environment) and
# uvicorn, pinned in requirements.txt beside this script. Re-running it is quick when nothing
# changed (a stamp holds the requirements' hash).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${HARNESS_S_APPWORLD_VENV:-$root/.cache/appworld-venv}"
python="${PYTHON:-python3}"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$venv/bin/python" -c "import appworld.serve.environment, uvicorn" 2>/dev/null; then
  echo "AppWorld virtualenv ready: $venv"
  exit 0
fi
# AppWorld uses typing.Self: an older Python fails at import, long after pip succeeded.
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "AppWorld virtualenv: appworld needs Python 3.11 or newer; $python is $("$python" --version 2>&1) (set PYTHON)" >&2
  exit 1
fi
# About 32 MB downloaded (79 wheels) and a 230 MB virtualenv.
mkdir -p "$(dirname "$venv")"
need_kb=$((512 * 1024))
free_kb="$(df -Pk "$(dirname "$venv")" | awk 'NR==2 {print $4}')"
if [ -n "$free_kb" ] && [ "$free_kb" -lt "$need_kb" ]; then
  echo "AppWorld virtualenv: $(dirname "$venv") has $((free_kb / 1024)) MB free; making $venv needs about 512 MB (set HARNESS_S_APPWORLD_VENV to a disk with room)" >&2
  exit 1
fi
echo "making the AppWorld virtualenv in $venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet -r "$here/requirements.txt"
"$venv/bin/python" -c "import appworld.serve.environment, uvicorn"
echo "$want" > "$stamp"
echo "AppWorld virtualenv ready: $venv"
