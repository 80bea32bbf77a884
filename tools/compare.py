#!/usr/bin/env python3
"""Checks results of an implementation under test against conformance cases.

    python3 tools/compare.py CASES.jsonl... --actual RESULTS.jsonl [--show N] [--reference]

CASES hold `expected` results (the reference's, see
tests/conformance/README.md for the format); RESULTS hold one result line per
case, as `retort conformance` or tools/reference/oracle.py print them. For
each case the one-shot run and every chunking's run are checked against
`expected.whole`:

- messages, initial events and events must be equal, with int, float and
  bool kept apart (1, 1.0 and true differ; so do 0.0 and -0.0), after
  consecutive `region_chunk` events of one field and `dirty` flag are merged;
- where an error is expected, any error passes (its stage and text are not
  compared); where the template is rejected, any template error passes;
- result lines that say `"skipped"` are counted apart (a runner that could
  not run a case says why, e.g. `conformance-compiled` built without the
  case file's inline templates).

With `--reference` the results under test are the reference's own (checking
tools/reference/oracle.py against recorded vectors): the chunkings listed in
`expected.reference_streams_differ`, where the reference's streaming is
known to disagree with its one-shot parse, are not checked. Without it every
chunking must give the one-shot result, as retort promises.

Prints one line per failing case (details for the first --show) and ends
with the line `N passed, M failed` (`, K skipped` when some were); exits 1
when a case failed or has no result, 2 on unreadable input. Standard library
only, so any python3 runs it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys


def strict_equal(a, b) -> bool:
    """Deep equality that keeps bool, int and float apart, and 0.0 from -0.0.
    Iterative: values may nest as deep as Python's json.loads allows."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            todo.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            todo.extend(zip(x, y))
        elif isinstance(x, float):
            # NaN never gets here (results tag it); the sign of zero would slip through ==.
            if x != y or math.copysign(1.0, x) != math.copysign(1.0, y):
                return False
        elif x != y:
            return False
    return True


def merge_chunks(events):
    """Merges consecutive region_chunk events of one field and dirty flag:
    how a chunking cuts the text must not show in the comparison."""
    out = []
    for ev in events or []:
        last = out[-1] if out else None
        if (
            isinstance(ev, dict)
            and ev.get("type") == "region_chunk"
            and last is not None
            and last.get("type") == "region_chunk"
            and last.get("field") == ev.get("field")
            and strict_equal(last.get("dirty"), ev.get("dirty"))
        ):
            out[-1] = {**last, "text": last.get("text", "") + ev.get("text", "")}
        else:
            out.append(ev)
    return out


def show(value, limit=600) -> str:
    return json.dumps(value, ensure_ascii=False)[:limit]


def compare_run(expected: dict, actual, where: str) -> list[str]:
    """The problems of one run against the expected one-shot run."""
    if not isinstance(actual, dict):
        return [f"{where}: missing"]
    if "error" in expected:
        if "error" in actual:
            return []
        return [f"{where}: expected an error ({str(expected['error'].get('message', ''))[:120]!r}), got a message"]
    if "error" in actual:
        err = actual["error"]
        text = err.get("message", err) if isinstance(err, dict) else err
        return [f"{where}: unexpected error at {actual.get('at', '?')}: {str(text)[:200]!r}"]
    problems = []
    if "message" not in actual or not strict_equal(expected.get("message"), actual["message"]):
        problems.append(
            f"{where}: message differs\n    expected {show(expected.get('message'))}\n"
            f"    actual   {show(actual.get('message'))}"
        )
    for key in ("initial_events", "events"):
        e, a = merge_chunks(expected.get(key)), merge_chunks(actual.get(key))
        if not strict_equal(e, a):
            i = next((i for i, (x, y) in enumerate(zip(e, a)) if not strict_equal(x, y)), min(len(e), len(a)))
            problems.append(
                f"{where}: {key} differ at #{i}\n    expected {show(e[i:i + 2])}\n    actual   {show(a[i:i + 2])}"
            )
    return problems


def compare_case(case: dict, actual: dict, reference: bool) -> list[str]:
    """The problems of one case's result line."""
    expected = case.get("expected")
    if not isinstance(expected, dict):
        return ["the case has no expected result"]
    if "template_error" in expected:
        if "template_error" in actual:
            return []
        return ["expected the template to be rejected: " + str(expected["template_error"].get("message", ""))[:200]]
    if "template_error" in actual:
        err = actual["template_error"]
        return ["template rejected: " + str(err.get("message", err) if isinstance(err, dict) else err)[:300]]
    problems = compare_run(expected["whole"], actual.get("whole"), "whole")
    streams = actual.get("streams")
    streams = streams if isinstance(streams, list) else []
    skip = set(expected.get("reference_streams_differ", [])) if reference else set()
    for i in range(len(case.get("chunkings", []))):
        if i in skip:
            continue
        if i >= len(streams):
            problems.append(f"stream #{i}: missing")
            continue
        # Streaming must never change the outcome: every chunking gives the one-shot result.
        problems += compare_run(expected["whole"], streams[i], f"stream #{i}")
    return problems


def read_jsonl(path: str):
    """(line number, object) for each non-blank line; exits 2 on bad JSON."""
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as e:
        sys.exit(f"compare.py: {e}")
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"compare.py: {path}:{n}: not JSON: {e}", file=sys.stderr)
                sys.exit(2)
            if not isinstance(obj, dict) or "id" not in obj:
                print(f"compare.py: {path}:{n}: expected an object with an \"id\"", file=sys.stderr)
                sys.exit(2)
            yield n, obj


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="+", help="case files with expected results")
    ap.add_argument("--actual", required=True, help="result lines of the implementation under test")
    ap.add_argument("--show", type=int, default=10, help="failures shown with details (default 10)")
    ap.add_argument(
        "--reference",
        action="store_true",
        help="the results are the reference's: skip chunkings in expected.reference_streams_differ",
    )
    args = ap.parse_args()
    # json.loads and json.dumps recurse once per nesting level, and results
    # nest as deep as the reference's own json.loads allowed.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

    actual = {obj["id"]: obj for _, obj in read_jsonl(args.actual)}
    passed = failed = skipped = shown = 0
    for path in args.cases:
        for _, case in read_jsonl(path):
            result = actual.get(case["id"])
            if result is not None and "skipped" in result:
                skipped += 1
                continue
            problems = ["no result"] if result is None else compare_case(case, result, args.reference)
            if not problems:
                passed += 1
                continue
            failed += 1
            if shown < args.show:
                shown += 1
                print(f"FAIL {case['id']}: " + "\n  ".join(problems))
            else:
                print(f"FAIL {case['id']}")
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
