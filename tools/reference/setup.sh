#!/usr/bin/env bash
# Makes (or refreshes) a Python virtual environment holding the reference
# implementation of response templates, pinned by requirements.txt next to
# this script, and prints the path of its python on stdout. Everything else
# goes to stderr, so `$(tools/reference/setup.sh) script.py` works.
#
#   tools/reference/setup.sh            # -> /home/me/.cache/retort/reference/bin/python
#
# Environment:
#   RETORT_REFERENCE_VENV    where the venv lives
#                            (default: ${XDG_CACHE_HOME:-~/.cache}/retort/reference)
#   RETORT_REFERENCE_PYTHON  the interpreter the venv is made from (default:
#                            python3.11 if on PATH, else python3)
#
# Idempotent: when the venv was made from this very requirements.txt and its
# transformers has the pinned version, nothing is installed and the call
# returns at once. A changed requirements.txt rebuilds the venv from scratch,
# so no package outside the pins lingers. Concurrent calls wait for each
# other (flock, where available).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requirements="$here/requirements.txt"
venv="${RETORT_REFERENCE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/retort/reference}"
stamp="$venv/.retort-requirements.txt"
python="$venv/bin/python"

pinned="$(sed -n 's/^transformers==\([^[:space:]]*\).*/\1/p' "$requirements")"
if [ -z "$pinned" ]; then
  echo "setup.sh: $requirements pins no transformers version" >&2
  exit 2
fi

# The venv is current when it was built from this requirements file and its
# transformers reports the pinned version (a metadata read, not an import,
# so the check costs one interpreter start).
current() {
  [ -x "$python" ] && cmp -s "$requirements" "$stamp" &&
    "$python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("transformers") != sys.argv[1])' \
      "$pinned" 2>/dev/null
}

if current; then
  echo "$python"
  exit 0
fi

mkdir -p "$(dirname "$venv")"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$venv.lock"
  flock 9
  # Another call may have finished the work while this one waited.
  if current; then
    echo "$python"
    exit 0
  fi
fi

base="${RETORT_REFERENCE_PYTHON:-}"
if [ -z "$base" ]; then
  if command -v python3.11 >/dev/null 2>&1; then base=python3.11; else base=python3; fi
fi
if ! version="$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)"; then
  echo "setup.sh: cannot run the base interpreter '$base' (set RETORT_REFERENCE_PYTHON)" >&2
  exit 2
fi
if [ "$version" != "3.11" ]; then
  # The recorded results come from CPython 3.11: str.strip, int() and float()
  # read its Unicode database, and json.loads' nesting limit its stack use.
  echo "setup.sh: warning: '$base' is Python $version; the reference results were recorded with 3.11" \
    "(set RETORT_REFERENCE_PYTHON to a python3.11); a few Unicode and deep-nesting cases may differ" >&2
fi

echo "setup.sh: installing the reference (transformers $pinned) into $venv ..." >&2
if ! "$base" -m venv --clear "$venv" >&2; then
  echo "setup.sh: '$base -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
  exit 1
fi
"$python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements" >&2
cp "$requirements" "$stamp"
if ! current; then
  echo "setup.sh: $venv does not report transformers $pinned after installing" >&2
  exit 1
fi
echo "$python"
