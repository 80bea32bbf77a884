#!/usr/bin/env bash
# Builds the Python package from the repository and runs its tests, in a
# venv that also holds the reference (transformers 5.23.0, pinned by
# tools/reference/requirements.txt) for the transformers patch tests and
# ray[data] for the scale-out example. What .ci/run calls.
#
#   python/ci.sh [pytest args...]
#
# Environment:
#   RETORT_PY_VENV    the venv (default: ${XDG_CACHE_HOME:-~/.cache}/retort/python-ci);
#                     reused while the requirement files are unchanged
#   RETORT_PY_PYTHON  the interpreter it is made from (default: python3.11 if
#                     on PATH, else python3)
#   RETORT_SHARED     the shared conformance material (default: ../shared)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
venv="${RETORT_PY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/retort/python-ci}"
base="${RETORT_PY_PYTHON:-$(command -v python3.11 || command -v python3)}"
reference="$repo/tools/reference/requirements.txt"
stamp="$venv/.retort-ci-requirements"

requirements=("$here/ci-requirements.txt")
if [ -f "$reference" ]; then
  requirements+=("$reference")
fi
wanted="$(cat "${requirements[@]}")"
if [ ! -f "$reference" ]; then
  wanted+=$'\ntransformers==5.23.0'
fi

pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input -q)
start=$SECONDS
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "ci.sh: making the venv $venv" >&2
  rm -rf "$venv"
  "$base" -m venv "$venv"
  args=()
  for r in "${requirements[@]}"; do args+=(-r "$r"); done
  [ -f "$reference" ] || args+=("transformers==5.23.0")
  "${pip[@]}" install "${args[@]}"
  printf '%s' "$wanted" > "$stamp"
fi
echo "ci.sh: venv ready in $((SECONDS - start)) s" >&2

# The wheel is built by maturin (the PEP 517 backend, from PyPI) with cargo,
# in the workspace's target directory, so a warm build is incremental.
start=$SECONDS
"${pip[@]}" install --force-reinstall --no-deps "$here"
echo "ci.sh: retort built and installed in $((SECONDS - start)) s" >&2

cd "$here"
exec "$venv/bin/python" -m pytest tests -q -p no:cacheprovider "$@"
