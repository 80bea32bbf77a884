#!/usr/bin/env python3
"""Runs conformance cases through the reference implementation of response
templates (transformers' `chat_parsing`, pinned by requirements.txt here)
and prints what it does, one line per case.

    tools/reference/oracle.py CASES.jsonl... [--templates DIR] > RESULTS.jsonl
    tools/reference/oracle.py --expect CASES.jsonl... [--templates DIR] > VECTORS.jsonl

Any python3 can start it: without the pinned transformers it runs
tools/reference/setup.sh (which makes the venv on first use) and restarts
itself under the venv's python.

A case (tests/conformance/README.md has the whole format):

    {"id": str, "template": NAME | {inline template}, "prefix": str,
     "text": str, "chunkings": [[str, ...], ...], "tools": [...]?}

NAME is read from DIR/NAME.json (default: the `templates` directory beside
the case file's directory, the layout of tests/conformance/).

A result line is

    {"id", "template_error": ERROR}                    the template was rejected
    {"id", "whole": RUN, "streams": [RUN, ...]}        otherwise

`whole` feeds the text in one piece; each stream feeds one chunking's pieces
in order. A RUN is `{"initial_events", "events", "message"}` (`events` holds
the events of every feed and of finalize, consecutive region_chunk events of
one field and dirty flag merged) or, when the reference raised,
`{"error": ERROR, "at": "init" | "feed" | "finalize", "initial_events"?}`.
ERROR is `{"kind": "template" | "parse", "type": exception class, "message":
str(exception)}`. Values are plain JSON except a float JSON cannot hold,
`{"$float": "nan" | "inf" | "-inf"}`, and an integer outside
[-2**63, 2**64 - 1], `{"$bigint": "digits"}`. A string holding a lone
surrogate makes its line ASCII-escaped (UTF-8 cannot carry it).

`--expect` prints the cases instead, with `expected` set to the reference's
one-shot result (`{"whole": RUN}` or `{"template_error": ERROR}`) and, when
some chunkings' runs differ from it (the reference's streaming has known
bugs), `expected.reference_streams_differ`: their indices.

The call depth is fixed on purpose: main -> run_case -> run_stream ->
ResponseParser(...) / feed / finalize. `json.loads` raises RecursionError at
a nesting that depends on how deep the stack already is, and retort models
that limit from this very structure (tools/py_cases.py has the same shape);
do not wrap these calls in further functions.

A case that runs longer than --timeout seconds (the reference can loop
forever on delimiters that match the empty string) is left out, with a note
on stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import signal
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


def load_compare():
    """tools/compare.py, loaded by path: its notion of equal runs and merged
    chunks is the one `reference_streams_differ` must follow, and putting
    tools/ on sys.path would let its directories shadow installed packages."""
    spec = importlib.util.spec_from_file_location("retort_compare", os.path.join(os.path.dirname(HERE), "compare.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_compare = load_compare()
merge_chunks, strict_equal = _compare.merge_chunks, _compare.strict_equal


def pinned_version() -> str:
    with open(os.path.join(HERE, "requirements.txt"), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("transformers=="):
                return line.split("==", 1)[1].strip()
    sys.exit("oracle.py: requirements.txt pins no transformers version")


def reference_or_restart():
    """Imports the reference, or restarts this script under the venv's python
    when this interpreter lacks the pinned version."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore")
    want = pinned_version()
    try:
        import transformers
        from transformers.utils.chat_parsing import ResponseParser
        from transformers.utils.chat_parsing.response_templates import load_response_template

        if transformers.__version__ == want:
            return ResponseParser, load_response_template
        problem = f"transformers {transformers.__version__} is installed, not {want}"
    except ImportError as e:
        problem = f"cannot import the reference ({e})"
    if os.environ.get("RETORT_ORACLE_RESTARTED"):
        sys.exit(f"oracle.py: {sys.executable}: {problem}")
    setup = subprocess.run(["bash", os.path.join(HERE, "setup.sh")], stdout=subprocess.PIPE, text=True)
    if setup.returncode != 0:
        sys.exit(f"oracle.py: {problem}, and tools/reference/setup.sh failed")
    python = setup.stdout.strip()
    os.environ["RETORT_ORACLE_RESTARTED"] = "1"
    sys.stdout.flush()
    os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])


ResponseParser, load_response_template = reference_or_restart()


# ---------------------------------------------------------------------------
# Python values -> result JSON

INT_MIN, INT_MAX = -(2**63), 2**64 - 1


def plain(value):
    """A reference value as result JSON: tagged where plain JSON loses it."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if INT_MIN <= value <= INT_MAX else {"$bigint": str(value)}
    if isinstance(value, float):
        if math.isnan(value):
            return {"$float": "nan"}
        if math.isinf(value):
            return {"$float": "inf" if value > 0 else "-inf"}
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"a dict key of type {type(k).__name__} has no JSON form")
            out[k] = plain(v)
        return out
    raise TypeError(f"a value of type {type(value).__name__} has no JSON form")


class DeepStack:
    """Raises the recursion limit while values nested as deep as json.loads
    allows are converted and dumped; never while the reference runs."""

    def __enter__(self):
        self.old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.old, 20_000))

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.old)


def error_of(exc: BaseException, kind: str) -> dict:
    return {"kind": kind, "type": type(exc).__name__, "message": str(exc)}


def events_json(events) -> list:
    return merge_chunks(plain(events))


def dump(obj) -> str:
    with DeepStack():
        line = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        with DeepStack():
            line = json.dumps(obj, allow_nan=False)
    return line


# ---------------------------------------------------------------------------
# Runs (keep the call structure: see the module docs)


def run_stream(template, case, chunks):
    """One run: construct with the prompt, feed `chunks`, finalize. Returns the
    raw (not yet converted) pieces of a RUN."""
    try:
        parser = ResponseParser(template, prefix=case.get("prefix", ""), tools=case.get("tools"))
    except Exception as exc:  # noqa: BLE001 - every exception the reference raises is a result
        return {"error": error_of(exc, "parse"), "at": "init"}
    events = []
    try:
        for piece in chunks:
            events.extend(parser.feed(piece))
    except Exception as exc:  # noqa: BLE001
        return {"error": error_of(exc, "parse"), "at": "feed", "initial_events": parser.initial_events}
    try:
        message, last = parser.finalize()
    except Exception as exc:  # noqa: BLE001
        return {"error": error_of(exc, "parse"), "at": "finalize", "initial_events": parser.initial_events}
    events.extend(last)
    return {"initial_events": parser.initial_events, "events": events, "message": message}


def run_case(case, spec):
    """Loads the template, then runs the whole text and every chunking."""
    try:
        template = load_response_template(spec)
    except Exception as exc:  # noqa: BLE001
        return {"template_error": error_of(exc, "template")}
    whole = run_stream(template, case, [case["text"]])
    streams = []
    # A plain loop: a comprehension is a frame of its own and would move the
    # streams' recursion limit one level away from the one-shot run's.
    for chunks in case.get("chunkings", []):
        streams.append(run_stream(template, case, chunks))
    return {"whole": whole, "streams": streams}


def run_json(run: dict) -> dict:
    out = {}
    for key, value in run.items():
        out[key] = events_json(value) if key in ("initial_events", "events") else plain(value)
    return out


# ---------------------------------------------------------------------------
# Plumbing


class Timeout(BaseException):
    """Derives from BaseException so that run_stream's handlers let it pass."""


def on_alarm(signum, frame):
    raise Timeout


def read_cases(path: str):
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as e:
        sys.exit(f"oracle.py: {e}")
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"oracle.py: {path}:{n}: not JSON: {e}")
            if not isinstance(case, dict) or not isinstance(case.get("id"), str) or not isinstance(
                case.get("text"), str
            ):
                sys.exit(f'oracle.py: {path}:{n}: a case needs a string "id" and a string "text"')
            yield n, case


def template_spec(case, where: str, templates: str):
    spec = case.get("template")
    if not isinstance(spec, str):
        return spec  # inline: the reference judges it, whatever it is
    path = os.path.join(templates, spec + ".json")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"oracle.py: {where}: template {spec!r}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="+", help="case files (JSON lines; - for stdin)")
    ap.add_argument("--templates", help="where named templates live (default: ../templates from each case file)")
    ap.add_argument("--expect", action="store_true", help="print the cases with the reference's expected results")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case before it is left out (0: none)")
    args = ap.parse_args()
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, on_alarm)
    out = sys.stdout
    left_out = 0
    for path in args.cases:
        templates = args.templates or os.path.join(os.path.dirname(os.path.abspath(path)), "..", "templates")
        for n, case in read_cases(path):
            where = f"{path}:{n}"
            spec = template_spec(case, where, templates)
            if args.timeout > 0 and hasattr(signal, "setitimer"):
                signal.setitimer(signal.ITIMER_REAL, args.timeout)
            try:
                result = run_case(case, spec)
            except Timeout:
                left_out += 1
                print(f"oracle.py: {where}: {case['id']}: no result after {args.timeout:g} s; left out", file=sys.stderr)
                continue
            finally:
                if hasattr(signal, "setitimer"):
                    signal.setitimer(signal.ITIMER_REAL, 0)
            with DeepStack():
                if "template_error" in result:
                    line = {"id": case["id"], "template_error": result["template_error"]}
                else:
                    whole = run_json(result["whole"])
                    streams = [run_json(s) for s in result["streams"]]
                    line = {"id": case["id"], "whole": whole, "streams": streams}
                if args.expect:
                    if "template_error" in line:
                        expected = {"template_error": line["template_error"]}
                    else:
                        expected = {"whole": whole}
                        differ = [i for i, s in enumerate(streams) if not strict_equal(s, whole)]
                        if differ:
                            expected["reference_streams_differ"] = differ
                    line = {**{k: v for k, v in case.items() if k != "expected"}, "expected": expected}
            out.write(dump(line) + "\n")
    out.flush()
    if left_out:
        print(f"oracle.py: {left_out} case(s) left out", file=sys.stderr)


if __name__ == "__main__":
    main()
