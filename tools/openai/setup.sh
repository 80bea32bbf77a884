#!/usr/bin/env bash
# Creates (once) a venv with the pinned official `openai` client and prints
# the path of its python. Override the location with RETORT_OPENAI_VENV.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${RETORT_OPENAI_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/retort-openai-client}"
stamp="$venv/.requirements"
if ! cmp -s "$here/requirements.txt" "$stamp" 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt" >&2
    cp "$here/requirements.txt" "$stamp"
fi
echo "$venv/bin/python"
