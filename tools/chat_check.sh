#!/usr/bin/env bash
# Checks a chat-template renderer against the reference (transformers'
# render_jinja_template, through tools/reference/render.py).
#
#   tools/chat_check.sh BIN [SHARED_DIR]
#   tools/chat_check.sh --reference [SHARED_DIR]     # render.py stands in for BIN
#
# 1. The repository's vectors, tests/conformance/chat/cases.jsonl: checks
#    that they are what tools/chat_cases.py generates, runs
#    `BIN render --cases FILE` on them (result lines on stdout, the format of
#    tests/conformance/chat/README.md) and compares with
#    tools/compare_render.py.
# 2. With SHARED_DIR (a copy of the shared templates: SHARED_DIR/chat-templates
#    and SHARED_DIR/llamacpp/templates): generates the same conversations over
#    those templates (tools/chat_cases.py --shared), has the reference render
#    them (render.py --expect; cached under target/chat/shared/, keyed by a
#    hash of the generated cases, render.py and the reference's pins, so a
#    re-run skips this step), runs BIN on them and compares.
#
# Prints each comparison's `N passed, M failed` line (and its first
# failures); exits 1 when a comparison failed or BIN did, 2 on bad usage.
#
# Environment:
#   RETORT_CHAT_RENDER  the command that renders a case file, the file's path
#                       appended (default: "BIN render --cases"; --reference
#                       makes it "python3 tools/reference/render.py")
#   RETORT_CHAT_CASES   the repository vectors (default tests/conformance/chat/cases.jsonl);
#                       when set, step 1 skips the up-to-date check
#   RETORT_CHAT_OUT     where results and the cache go (default target/chat)
#   PYTHON              the python3 that runs the tools (default python3)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-python3}"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
bin="$1"
shared="${2:-}"

if [ -n "${RETORT_CHAT_RENDER:-}" ]; then
  read -r -a render <<<"$RETORT_CHAT_RENDER"
elif [ "$bin" = "--reference" ]; then
  render=("$py" "$root/tools/reference/render.py")
else
  render=("$bin" render --cases)
fi

out="${RETORT_CHAT_OUT:-$root/target/chat}"
mkdir -p "$out"
status=0

# run_and_compare NAME CASES: renders CASES with the command under test and
# compares the results with their expected ones.
run_and_compare() {
  local name="$1" cases="$2" results="$out/$1.results.jsonl"
  echo "== $name: $cases"
  if ! "${render[@]}" "$cases" >"$results"; then
    echo "chat_check.sh: '${render[*]} $cases' failed" >&2
    status=1
    return
  fi
  if ! "$py" "$root/tools/compare_render.py" "$cases" --actual "$results"; then
    status=1
  fi
}

# 1. The repository's vectors.
cases="${RETORT_CHAT_CASES:-$root/tests/conformance/chat/cases.jsonl}"
if [ -z "${RETORT_CHAT_CASES:-}" ]; then
  if ! "$py" "$root/tools/chat_cases.py" check "$cases"; then
    echo "chat_check.sh: $cases is not what tools/chat_cases.py generates (see tests/conformance/chat/README.md)" >&2
    status=1
  fi
fi
run_and_compare repo "$cases"

# 2. The shared templates, rendered by the reference at test time.
if [ -n "$shared" ]; then
  if [ ! -d "$shared" ]; then
    echo "chat_check.sh: $shared is not a directory" >&2
    exit 2
  fi
  dir="$out/shared"
  mkdir -p "$dir"
  "$py" "$root/tools/chat_cases.py" --shared "$shared" --out "$dir/raw.jsonl"
  key="$(cat "$dir/raw.jsonl" "$root/tools/reference/render.py" "$root/tools/reference/requirements.txt" |
    sha256sum | cut -c1-16)"
  expected="$dir/expected-$key.jsonl"
  if [ ! -s "$expected" ]; then
    echo "== shared: the reference renders $(wc -l <"$dir/raw.jsonl") cases (cached as $expected)"
    "$py" "$root/tools/reference/render.py" --expect "$dir/raw.jsonl" >"$expected.tmp"
    mv "$expected.tmp" "$expected"
    # Older caches are of other inputs.
    find "$dir" -name 'expected-*.jsonl' ! -name "expected-$key.jsonl" -delete
  fi
  run_and_compare shared "$expected"
fi

exit "$status"
