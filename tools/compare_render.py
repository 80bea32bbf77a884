#!/usr/bin/env python3
"""Checks chat-template render results against cases with expected results.

    python3 tools/compare_render.py CASES.jsonl... --actual RESULTS.jsonl [--show N] [--context C]

CASES hold `expected` results (the reference's, from
tools/reference/render.py --expect; tests/conformance/chat/README.md has the
format); RESULTS hold one result line per case, as `retort render --cases`
or tools/reference/render.py print them. A case passes when

- `expected.rendered` is given: the result's `rendered` is the same string
  (code point for code point, so byte for byte in UTF-8) and its
  `generation` is the same list of [start, end] pairs;
- `expected.error` is given: the result is an error with the same `type`
  and `message`. A case may relax that with `"error_match"`: `"type"`
  compares the type only, `"any"` lets any error pass.

Counted apart as skipped: result lines that say `"skipped"` (a runner that
cannot run a case says why), and cases whose expected result is a
`Timeout` error (render.py's per-case bound: the reference gave no result). Prints one line per failing case, with details for
the first --show (for a render, the offset, line and column of the first
difference and both texts around it), and ends with the line `N passed, M
failed` (`, K skipped` when some were); exits 1 when a case failed or has
no result, 2 on unreadable input. Standard library only, so any python3
runs it.
"""

from __future__ import annotations

import argparse
import json
import sys


def first_difference(a: str, b: str) -> int:
    """The first index where a and b differ (the shorter one's length when
    one is a prefix of the other); -1 when they are equal."""
    if a == b:
        return -1
    n = min(len(a), len(b))
    lo, hi = 0, n
    # Binary search on prefix equality: renders can be long.
    while lo < hi:
        mid = (lo + hi) // 2
        if a[lo:mid + 1] == b[lo:mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def quote(text: str) -> str:
    """A piece of text with every character visible (newlines as \\n)."""
    return json.dumps(text, ensure_ascii=False)


def render_diff(expected: str, actual: str, context: int = 60, what: str = "rendered") -> str:
    """Where two texts first differ, and both of them around there."""
    i = first_difference(expected, actual)
    line = expected.count("\n", 0, i) + 1
    column = i - (expected.rfind("\n", 0, i) + 1) + 1
    start = max(0, i - context)
    lead = "…" if start else ""

    def around(text):
        tail = "…" if len(text) > i + context else ""
        return lead + quote(text[start:i]) + " ▶ " + quote(text[i:i + context]) + tail
    return (f"{what} differs at offset {i} (line {line}, column {column}; expected length {len(expected)}, "
            f"actual {len(actual)})\n    expected {around(expected)}\n    actual   {around(actual)}")


def show(value, limit=300) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def compare_case(case: dict, actual: dict, context: int = 60) -> list[str]:
    """The problems of one case's result line."""
    expected = case.get("expected")
    if not isinstance(expected, dict) or not ("rendered" in expected or "error" in expected):
        return ["the case has no expected result"]
    if "error" in expected:
        want = expected["error"]
        got = actual.get("error")
        if not isinstance(got, dict):
            what = "a render" if "rendered" in actual else "no error"
            return [f"expected {want.get('type')}: {show(want.get('message'))}, got {what}"]
        match = case.get("error_match", "exact")
        if match == "any":
            return []
        if got.get("type") != want.get("type"):
            return [f"error type differs: expected {want.get('type')}, actual {got.get('type')}"
                    f"\n    expected message {show(want.get('message'))}\n    actual message   {show(got.get('message'))}"]
        if match != "type" and got.get("message") != want.get("message"):
            w, g = want.get("message"), got.get("message")
            if isinstance(w, str) and isinstance(g, str):
                return [render_diff(w, g, context, f"{want.get('type')} message")]
            return [f"{want.get('type')} message differs\n    expected {show(w)}\n    actual   {show(g)}"]
        return []
    if "error" in actual:
        err = actual["error"]
        if isinstance(err, dict):
            return [f"unexpected {err.get('type')}: {show(err.get('message'))}"]
        return [f"unexpected error: {show(err)}"]
    problems = []
    rendered = actual.get("rendered")
    if not isinstance(rendered, str):
        problems.append("no rendered text")
    elif rendered != expected["rendered"]:
        problems.append(render_diff(expected["rendered"], rendered, context))
    if actual.get("generation") != expected.get("generation"):
        e, a = expected.get("generation"), actual.get("generation")
        if isinstance(e, list) and isinstance(a, list):
            i = next((i for i, (x, y) in enumerate(zip(e, a)) if x != y), min(len(e), len(a)))
            problems.append(f"generation differs at #{i} (expected {len(e)} spans, actual {len(a)})"
                            f"\n    expected {show(e[i:i + 3])}\n    actual   {show(a[i:i + 3])}")
        else:
            problems.append(f"generation differs\n    expected {show(e)}\n    actual   {show(a)}")
    return problems


def expected_timeout(case: dict) -> bool:
    expected = case.get("expected")
    return isinstance(expected, dict) and isinstance(expected.get("error"), dict) and (
        expected["error"].get("type") == "Timeout")


def read_jsonl(path: str):
    """(line number, object) for each non-blank line; exits 2 on bad JSON."""
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as e:
        print(f"compare_render.py: {e}", file=sys.stderr)
        sys.exit(2)
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"compare_render.py: {path}:{n}: not JSON: {e}", file=sys.stderr)
                sys.exit(2)
            if not isinstance(obj, dict) or "id" not in obj:
                print(f"compare_render.py: {path}:{n}: expected an object with an \"id\"", file=sys.stderr)
                sys.exit(2)
            yield n, obj


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="+", help="case files with expected results")
    ap.add_argument("--actual", required=True, help="result lines of the implementation under test")
    ap.add_argument("--show", type=int, default=10, help="failures shown with details (default 10)")
    ap.add_argument("--context", type=int, default=60, help="characters shown each side of a difference")
    args = ap.parse_args()

    actual = {obj["id"]: obj for _, obj in read_jsonl(args.actual)}
    passed = failed = skipped = shown = 0
    for path in args.cases:
        for _, case in read_jsonl(path):
            result = actual.get(case["id"])
            if (result is not None and "skipped" in result) or expected_timeout(case):
                skipped += 1
                continue
            problems = ["no result"] if result is None else compare_case(case, result, args.context)
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
