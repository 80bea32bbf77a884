"""Runs the recorded model outputs of ../shared/research/model-formats.json
through the reference implementation with retort's bundled templates, and
checks each against the message the recording implies -- the same check as
tests/recorded.rs, on the other implementation. Run it with the reference's
python (`$(tools/reference/setup.sh) tools/recorded_check.py`).

    python tools/recorded_check.py [--json OUT.jsonl] [--verbose]

Which template and prompt a recording is parsed with comes from
tests/models.json; the examples known not to pass are the table under
"Recorded examples that do not pass" in templates/README.md. Exit status 1
when an unlisted example fails or a listed one passes. --json writes each
example's parsed message, to compare with retort's (tests/recorded.rs
prints the same with RETORT_RECORDED_DUMP).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from models_cases import value_reads_as

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("RETORT_SHARED", os.path.join(ROOT, "..", "shared"))


def load_known(readme):
    """(template, family, example number) -> reason, from the README table."""
    known, inside = {}, False
    for line in open(readme, encoding="utf-8"):
        if line.startswith("## "):
            inside = line.strip() == "## Recorded examples that do not pass"
            continue
        if not inside or not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`([^`]+)` #(\d+)", cells[0])
        if m:
            known[(m.group(1), int(m.group(2)))] = cells[1]
    return known


def pick_prompt(model, raw):
    """The generation prompt a recording was made with: where the reasoning
    opener starts the raw text the model wrote it; where the raw text holds
    only the closer the prompt opened it; otherwise the family's default."""
    prompts = model["prompts"]
    if "open" not in prompts:
        return prompts[model["default"]]
    opener, closer = model.get("reasoning", [None, None])
    if opener and raw.lstrip().startswith(opener):
        return prompts["plain"]
    if closer and closer in raw:
        return prompts["open"]
    return prompts[model["default"]]


def text_of(v):
    return (v or "").strip() if isinstance(v, str) or v is None else v


def calls_of(message):
    out = []
    for c in message.get("tool_calls") or []:
        fn = c.get("function", c) if isinstance(c, dict) else {}
        out.append({"name": fn.get("name"), "arguments": fn.get("arguments", fn.get("parameters")), "id": c.get("id") if isinstance(c, dict) else None})
    return out


def args_match(got, want):
    """Arguments equal as JSON, where a text *value* also matches the value
    it reads as: tag-delimited formats (Qwen3-Coder, GLM, MiniMax, ...) give
    their values as text, typed only by the tool definitions, and the
    recordings do not carry the definitions their parsers were given."""
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(value_reads_as(got[k], want[k]) for k in got)
    return got == want


def mismatch(got, expected):
    """Why `got` is not the message `expected` implies, or None."""
    for key, ours in (("content", "content"), ("reasoning_content", "reasoning_content")):
        if text_of(got.get(ours)) != text_of(expected.get(key)):
            return f"{key}: got {got.get(ours)!r}, expected {expected.get(key)!r}"
    gc, ec = calls_of(got), expected.get("tool_calls") or []
    if len(gc) != len(ec):
        return f"tool_calls: got {len(gc)}, expected {len(ec)}: {gc!r}"
    for i, (g, e) in enumerate(zip(gc, ec)):
        if g["name"] != e["name"]:
            return f"tool_calls[{i}].name: got {g['name']!r}, expected {e['name']!r}"
        if not args_match(g["arguments"], e["arguments"]):
            return f"tool_calls[{i}].arguments: got {g['arguments']!r}, expected {e['arguments']!r}"
        if "id" in e and g["id"] != e["id"]:
            return f"tool_calls[{i}].id: got {g['id']!r}, expected {e['id']!r}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    from transformers.utils.chat_parsing import parse_response

    data_path = os.path.join(SHARED, "research", "model-formats.json")
    if not os.path.exists(data_path):
        print(f"skipped: {data_path} is not there")
        return 0
    families = {f["family"]: f for f in json.load(open(data_path, encoding="utf-8"))}
    models = json.load(open(os.path.join(ROOT, "tests", "models.json"), encoding="utf-8"))["models"]
    known = load_known(os.path.join(ROOT, "templates", "README.md"))
    seen, passed, listed, bad = 0, 0, 0, 0
    dump = open(args.json, "w", encoding="utf-8") if args.json else None
    for model in models:
        template = json.load(open(os.path.join(ROOT, "templates", model["template"] + ".json"), encoding="utf-8"))
        for family in model["covers"]:
            for n, ex in enumerate(families[family]["examples"], 1):
                seen += 1
                key = (model["template"], n)
                prompt = pick_prompt(model, ex["raw"])
                try:
                    got = parse_response(ex["raw"], template, prefix=prompt)
                    why = mismatch(got, ex["expected"]) if ex["expected"] is not None else "no expected message"
                except Exception as e:  # the reference raises plain exceptions
                    got, why = {"error": str(e)}, f"error: {e}"
                if dump:
                    dump.write(json.dumps({"template": model["template"], "example": n, "message": got}, ensure_ascii=False) + "\n")
                if why is None:
                    passed += 1
                    if key in known:
                        bad += 1
                        print(f"LISTED BUT PASSES {model['template']} #{n}")
                elif key in known:
                    listed += 1
                    if args.verbose:
                        print(f"listed {model['template']} #{n}: {why}")
                else:
                    bad += 1
                    print(f"FAIL {model['template']} #{n} ({family}): {why}\n    raw={ex['raw']!r}")
    print(f"{seen} recorded examples: {passed} passed, {listed} listed in templates/README.md, {bad} unexpected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
