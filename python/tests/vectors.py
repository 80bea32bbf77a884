"""Conformance vectors as Python objects, and a strict comparison.

The vectors (format: ``shared/conformance/FORMAT.md``) hold the reference's
results as JSON, with ``{"$float": "nan" | "inf" | "-inf"}`` and
``{"$bigint": "digits"}`` for what JSON cannot hold. ``decode`` turns those
back into the Python objects the reference returned, so that results are
compared as objects: ``strict_equal`` keeps ``bool``, ``int`` and ``float``
apart (``1 == 1.0 == True`` in Python), checks dict key order, and treats
NaN as equal to NaN.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Iterator

# The vectors hold values nested as deep as the reference's JSON limit (986
# levels); json.loads and the binding's conversions recurse once per level,
# which pytest's own stack depth would take past Python's default limit.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("RETORT_SHARED", REPO.parent / "shared"))
SHARED_CASES = SHARED / "conformance" / "cases"
SHARED_TEMPLATES = SHARED / "conformance" / "templates"
OWN_CASES = REPO / "tests" / "conformance" / "cases"
OWN_TEMPLATES = REPO / "templates"
SHARED_FILES = ("suite", "gen", "extra")


def decode(v: Any) -> Any:
    """A vector's JSON value as the Python object the reference produced."""
    if isinstance(v, dict):
        if len(v) == 1 and "$float" in v:
            return float(v["$float"])
        if len(v) == 1 and "$bigint" in v:
            return int(v["$bigint"])
        return {k: decode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [decode(x) for x in v]
    return v


def strict_equal(a: Any, b: Any) -> bool:
    """Deep equality with exact types and dict key order; NaN equals NaN.
    Iterative: vectors hold values nested as deep as the reference's JSON
    limit (986 levels), past Python's recursion limit for a recursive walk."""
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            if list(a) != list(b):
                return False
            stack.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b))
        elif isinstance(a, float):
            if not ((math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))):
                return False
        elif a != b:
            return False
    return True


def coalesce(events: list[dict]) -> list[dict]:
    """Merges consecutive chunks of one field and ``dirty`` flag (how text
    is split into chunks is not part of the outcome)."""
    out: list[dict] = []
    for ev in events:
        if (
            ev["type"] == "region_chunk"
            and out
            and out[-1]["type"] == "region_chunk"
            and out[-1]["field"] == ev["field"]
            and out[-1]["dirty"] == ev["dirty"]
        ):
            out[-1] = {**out[-1], "text": out[-1]["text"] + ev["text"]}
        else:
            out.append(dict(ev))
    return out


def load_cases(path: Path, templates: Path) -> Iterator[dict]:
    """The cases of a file, each with its template resolved to a dict and
    its expectation decoded."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            case = json.loads(line)
            if isinstance(case["template"], str):
                with open(templates / f"{case['template']}.json", encoding="utf-8") as t:
                    case["template"] = json.load(t)
            case["expected"] = decode(case["expected"])
            yield case


def run(parser_factory, case: dict, chunks: list[str]) -> dict:
    """One run in the result format, as Python objects: initial events,
    events and message, or the exception (class name and ``str``) and the
    stage it was raised at."""
    try:
        parser = parser_factory(case)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return {"error": {"type": type(e).__name__, "message": str(e)}, "at": "init"}
    initial = coalesce(parser.initial_events)
    events: list[dict] = []
    try:
        for piece in chunks:
            events.extend(parser.feed(piece))
    except Exception as e:  # noqa: BLE001
        return {"error": {"type": type(e).__name__, "message": str(e)}, "at": "feed"}
    try:
        message, last = parser.finalize()
    except Exception as e:  # noqa: BLE001
        return {"error": {"type": type(e).__name__, "message": str(e)}, "at": "finalize"}
    events.extend(last)
    return {"initial_events": initial, "events": coalesce(events), "message": message}


def problems(expected: dict, actual: dict, where: str) -> list[str]:
    """How a run differs from the reference's one-shot run. An expected
    error must be an error of the same class and message (``str(exc)``);
    the stage it is raised at is not compared (FORMAT.md: retort may settle a region, and find its
    error, in an earlier call than the reference)."""
    if "error" in expected:
        if "error" not in actual:
            return [f"{where}: expected {expected['error']['type']}, got a message"]
        found = []
        if actual["error"] != {k: expected["error"][k] for k in ("type", "message")}:
            found.append(f"{where}: expected {expected['error']['type']}, got {actual['error']}")
        return found
    if "error" in actual:
        return [f"{where}: unexpected {actual['error']} at {actual['at']}"]
    return [
        f"{where}: {key} differs\n  expected {expected[key]!r}\n  actual   {actual[key]!r}"
        for key in ("initial_events", "events", "message")
        if not strict_equal(expected[key], actual[key])
    ]
