#!/usr/bin/env python3
"""Renders chat-template cases through the reference implementation
(transformers' `render_jinja_template`, pinned with Jinja2 by
requirements.txt here) and prints what it gives, one line per case, in
input order.

    tools/reference/render.py [CASES.jsonl...] [--timeout S] > RESULTS.jsonl
    tools/reference/render.py --expect [CASES.jsonl...] > VECTORS.jsonl

With no file (or `-`) the cases come from stdin. Any python3 can start it:
without the pinned transformers it runs tools/reference/setup.sh (which makes
the venv on first use) and restarts itself under the venv's python.

A case (tests/conformance/chat/README.md has the whole format):

    {"id": str, "chat_template": str, "messages": [...],
     "tools": [...] | null, "documents": [...] | null,
     "add_generation_prompt": bool, "continue_final_message": bool | "FIELD",
     "kwargs": {...}}

Every key but "id" and "chat_template" may be left out (messages [],
tools and documents null, the flags false, kwargs {}). The case is rendered
as

    render_jinja_template([messages], tools=..., documents=...,
                          chat_template=..., return_assistant_tokens_mask=True,
                          continue_final_message=..., add_generation_prompt=...,
                          **kwargs)

so the `{% generation %}` spans are reported. A result line is

    {"id", "rendered": str, "generation": [[start, end], ...]}
    {"id", "error": {"type": EXCEPTION_CLASS_NAME, "message": str(exception)}}

`generation` holds the reference's own offsets: Python str indices (code
points), exactly as `_render_with_assistant_indices` counted them (inside a
macro or a `{% set %}` block it counts from where the enclosing top-level
output started, and continue_final_message does not shift them).

`--expect` prints the cases instead, each with `expected` set to its result
without the id. A case whose result is a RecursionError or MemoryError also
gets `"error_match": "type"` (unless it has an error_match already): the
message says where Python's stack or memory ran out, which is this
process's business, not the template's.

The clock: templates call `strftime_now(format)`, which is
`datetime.now().strftime(format)` with `datetime` looked up in
`transformers.utils.chat_template_utils` at call time. For the run that
module's `datetime` is replaced by a subclass whose `now()` returns
2026-01-01 00:00:00 (naive; with a tz argument, that wall time in that
zone), and put back at the end. strftime runs in the C locale (Python never
sets LC_TIME), so `%B` is "January" and `%A` "Thursday".

Bounds: each case runs in this process under an alarm (setitimer, --timeout
seconds, default 10). A case still running when it rings gets the result
`{"error": {"type": "Timeout", "message": "no result after S s"}}`, and the
run goes on with the next case (tools/compare_render.py counts a case whose
expected result is a Timeout as skipped: the reference gave none). The alarm raises an exception derived from
BaseException, which neither Jinja's generate() (it catches Exception) nor
the template can catch. The process's address space is capped too (RLIMIT_AS, --memory MB, default
4096; 0 for none), so that a template building a huge string (`'x' *
10**10`) gets a MemoryError instead of the machine's memory.

The call depth is fixed on purpose: main -> run_case ->
render_jinja_template. A template whose macros recurse without end hits
Python's recursion limit at a depth that depends on the frames below it;
do not wrap run_case in further functions.
"""

from __future__ import annotations

import argparse
import datetime as _datetime
import json
import os
import resource
import signal
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))

# The moment strftime_now sees.
FIXED_NOW = _datetime.datetime(2026, 1, 1, 0, 0, 0)


def pinned_version() -> str:
    with open(os.path.join(HERE, "requirements.txt"), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("transformers=="):
                return line.split("==", 1)[1].strip()
    sys.exit("render.py: requirements.txt pins no transformers version")


def reference_or_restart():
    """Imports the reference, or restarts this script under the venv's python
    when this interpreter lacks the pinned version."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore")
    want = pinned_version()
    try:
        import transformers
        from transformers.utils import chat_template_utils

        if transformers.__version__ == want:
            return chat_template_utils
        problem = f"transformers {transformers.__version__} is installed, not {want}"
    except ImportError as e:
        problem = f"cannot import the reference ({e})"
    if os.environ.get("RETORT_RENDER_RESTARTED"):
        sys.exit(f"render.py: {sys.executable}: {problem}")
    setup = subprocess.run(["bash", os.path.join(HERE, "setup.sh")], stdout=subprocess.PIPE, text=True)
    if setup.returncode != 0:
        sys.exit(f"render.py: {problem}, and tools/reference/setup.sh failed")
    python = setup.stdout.strip()
    os.environ["RETORT_RENDER_RESTARTED"] = "1"
    sys.stdout.flush()
    os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])


chat_template_utils = reference_or_restart()
render_jinja_template = chat_template_utils.render_jinja_template


# Errors whose message depends on this process rather than the template:
# where the stack ran out. --expect marks their cases `"error_match":
# "type"`, so that only the type is compared.
LOOSE_ERRORS = ("RecursionError", "MemoryError")


class FixedDatetime(_datetime.datetime):
    """`datetime` as strftime_now sees it during the run: a fixed now()."""

    @classmethod
    def now(cls, tz=None):
        fixed = cls(FIXED_NOW.year, FIXED_NOW.month, FIXED_NOW.day, FIXED_NOW.hour, FIXED_NOW.minute,
                    FIXED_NOW.second)
        return fixed if tz is None else fixed.replace(tzinfo=tz)


class Timeout(BaseException):
    """Derives from BaseException so that neither Jinja nor the reference
    catches it."""


def on_alarm(signum, frame):
    raise Timeout


# ---------------------------------------------------------------------------
# One case (keep the call structure: see the module docs)


def run_case(case):
    """The result of one case, without its id."""
    try:
        rendered, generation = render_jinja_template(
            [case.get("messages", [])],
            tools=case.get("tools"),
            documents=case.get("documents"),
            chat_template=case["chat_template"],
            return_assistant_tokens_mask=True,
            continue_final_message=case.get("continue_final_message", False),
            add_generation_prompt=case.get("add_generation_prompt", False),
            **case.get("kwargs") or {},
        )
    except Exception as exc:  # noqa: BLE001 - every exception the reference raises is a result
        return {"error": {"type": type(exc).__name__, "message": str(exc)}}
    return {"rendered": rendered[0], "generation": [[start, end] for start, end in generation[0]]}


# ---------------------------------------------------------------------------
# Plumbing


def dump(obj) -> str:
    line = json.dumps(obj, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: UTF-8 cannot carry it
        line = json.dumps(obj)
    return line


def read_cases(path: str):
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as e:
        sys.exit(f"render.py: {e}")
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"render.py: {path}:{n}: not JSON: {e}")
            if not isinstance(case, dict) or not isinstance(case.get("id"), str) or not isinstance(
                case.get("chat_template"), str
            ):
                sys.exit(f'render.py: {path}:{n}: a case needs a string "id" and a string "chat_template"')
            if not isinstance(case.get("kwargs") or {}, dict):
                sys.exit(f'render.py: {path}:{n}: "kwargs" must be an object')
            yield n, case


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", default=["-"], help="case files (JSON lines; - or none for stdin)")
    ap.add_argument("--expect", action="store_true", help="print the cases with the reference's expected results")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="seconds per case before its result is a Timeout error (0: none; default 10)")
    ap.add_argument("--memory", type=int, default=4096,
                    help="address-space cap in MiB for the whole run (0: none; default 4096)")
    args = ap.parse_args()
    if args.memory > 0:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = args.memory * 1024 * 1024
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    timed = args.timeout > 0 and hasattr(signal, "setitimer")
    if timed:
        signal.signal(signal.SIGALRM, on_alarm)
    out = sys.stdout
    timeouts = 0
    # strftime_now reads the module's global `datetime` at each call: swap
    # it for the fixed clock for the run, and put it back at the end.
    real_datetime = chat_template_utils.datetime
    chat_template_utils.datetime = FixedDatetime
    try:
        for path in args.cases:
            for n, case in read_cases(path):
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, args.timeout)
                try:
                    result = run_case(case)
                except Timeout:
                    timeouts += 1
                    result = {"error": {"type": "Timeout", "message": f"no result after {args.timeout:g} s"}}
                    print(f"render.py: {path}:{n}: {case['id']}: no result after {args.timeout:g} s", file=sys.stderr)
                finally:
                    if timed:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                if args.expect:
                    line = {k: v for k, v in case.items() if k != "expected"}
                    kind = result.get("error", {}).get("type")
                    if kind in LOOSE_ERRORS and "error_match" not in line:
                        line["error_match"] = "type"
                    line["expected"] = result
                else:
                    line = {"id": case["id"], **result}
                out.write(dump(line) + "\n")
    finally:
        chat_template_utils.datetime = real_datetime
    out.flush()
    if timeouts:
        print(f"render.py: {timeouts} case(s) timed out", file=sys.stderr)


if __name__ == "__main__":
    main()
