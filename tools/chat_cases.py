#!/usr/bin/env python3
"""Chat-template render cases: every template rendered over every
conversation of tools/chat_conversations.py. Prints cases without expected
results; tools/reference/render.py --expect adds them.

    python3 tools/chat_cases.py > raw.jsonl
    python3 tools/reference/render.py --expect raw.jsonl > tests/conformance/chat/cases.jsonl

        the repository's templates (tools/chat_templates.py, written for
        retort) over the conversations: the committed vectors.

    python3 tools/chat_cases.py --shared DIR [--out FILE]

        the same conversations over the real chat templates under DIR
        (DIR/chat-templates/*.jinja and DIR/llamacpp/templates/*.jinja, or
        DIR/*.jinja when it has neither), deduplicated by content, the first
        name in sorted order kept. Never commit this output: the templates
        are not the repository's. FILE defaults to stdout; inside the
        repository only a path under target/ is accepted.

    python3 tools/chat_cases.py check FILE

        checks that FILE holds exactly the cases this script prints (the
        `expected` fields aside): the committed vectors are up to date.

    python3 tools/chat_cases.py stats FILE...

        counts templates, conversations, cases and expected errors by type.

    python3 tools/chat_cases.py styles [--out FILE]

        every repository template in each of the five whitespace styles over
        every conversation (ids `styles/STYLE/TEMPLATE/CONVERSATION`): each
        template must render the same in all five, which
        `python3 tools/chat_cases.py styles-check RESULTS` checks on
        render.py's results. A test of the generator, not vectors.

Case ids are `TEMPLATE/CONVERSATION`: `t042-gemma-trim/tool-call-dict` for
the repository's templates, `shared/chat-templates/qwen3/user-gen` for the
shared ones. The output is the same on every run: conversations and
templates in a fixed order, JSON with sorted-nothing but fixed key order.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat_conversations  # noqa: E402
import chat_templates  # noqa: E402

CASE_KEYS = ("tools", "documents", "add_generation_prompt", "continue_final_message", "kwargs")


def case(template_id: str, template: str, conv: dict) -> dict:
    out = {"id": f"{template_id}/{conv['id']}", "chat_template": template, "messages": conv["messages"]}
    out["tools"] = conv.get("tools")
    out["documents"] = conv.get("documents")
    out["add_generation_prompt"] = conv.get("add_generation_prompt", False)
    out["continue_final_message"] = conv.get("continue_final_message", False)
    out["kwargs"] = conv.get("kwargs", {})
    return out


def repo_cases():
    convs = chat_conversations.conversations()
    for tid, text in chat_templates.templates():
        for conv in convs:
            yield case(tid, text, conv)


def shared_templates(root: str):
    """[(id, text)] of the real templates under root, deduplicated by content."""
    dirs = [d for d in (os.path.join(root, "chat-templates"), os.path.join(root, "llamacpp", "templates"))
            if os.path.isdir(d)]
    if not dirs:
        dirs = [root]
    seen, out = set(), []
    for d in dirs:
        rel = os.path.relpath(d, root)
        for name in sorted(os.listdir(d)):
            if not name.endswith(".jinja"):
                continue
            with open(os.path.join(d, name), encoding="utf-8") as fh:
                text = fh.read()
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            prefix = "shared" if rel == "." else f"shared/{rel}"
            out.append((f"{prefix}/{name[:-len('.jinja')]}", text))
    return out


def shared_cases(root: str):
    convs = chat_conversations.conversations()
    for tid, text in shared_templates(root):
        for conv in convs:
            yield case(tid, text, conv)


def style_cases():
    convs = chat_conversations.conversations()
    for i in range(chat_templates.COUNT):
        spec = chat_templates.spec_for(i)
        for ws in chat_templates.STYLES:
            text = chat_templates.source(spec, ws)
            for conv in convs:
                yield case(f"styles/{ws}/{spec.id(i)}", text, conv)


def dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def write(cases, path):
    if path in (None, "-"):
        for c in cases:
            sys.stdout.write(dump(c) + "\n")
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8") as fh:
        for c in cases:
            fh.write(dump(c) + "\n")


def read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def check(path) -> int:
    want = list(repo_cases())
    got = [{k: v for k, v in c.items() if k != "expected"} for c in read_jsonl(path)]
    if len(want) != len(got):
        print(f"chat_cases.py: {path} has {len(got)} cases, the generator {len(want)}", file=sys.stderr)
        return 1
    for w, g in zip(want, got):
        if w != g:
            print(f"chat_cases.py: {path}: case {g.get('id')} differs from the generator's {w['id']}", file=sys.stderr)
            return 1
    missing = sum(1 for c in read_jsonl(path) if "expected" not in c)
    if missing:
        print(f"chat_cases.py: {path}: {missing} case(s) without expected", file=sys.stderr)
        return 1
    print(f"{path}: {len(got)} cases, as generated")
    return 0


def stats(paths) -> int:
    templates, convs, cases = set(), set(), 0
    errors = collections.Counter()
    rendered = 0
    for path in paths:
        for c in read_jsonl(path):
            cases += 1
            tid, cid = c["id"].rsplit("/", 1)
            templates.add(tid)
            convs.add(cid)
            expected = c.get("expected") or {}
            if "error" in expected:
                errors[expected["error"]["type"]] += 1
            elif "rendered" in expected:
                rendered += 1
    print(f"{len(templates)} templates, {len(convs)} conversations, {cases} cases: {rendered} rendered, "
          f"{sum(errors.values())} errors")
    for name, n in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {name}: {n}")
    return 0


def styles_check(path) -> int:
    by = collections.defaultdict(dict)
    for r in read_jsonl(path):
        _, ws, rest = r["id"].split("/", 2)
        by[rest][ws] = {k: v for k, v in r.items() if k != "id"}
    bad = 0
    for key, runs in by.items():
        base = runs.get(chat_templates.STYLES[0])
        for ws, run in runs.items():
            if run != base:
                bad += 1
                if bad <= 10:
                    print(f"{key}: {ws} renders differently from {chat_templates.STYLES[0]}\n"
                          f"    {json.dumps(base, ensure_ascii=False)[:300]}\n    {json.dumps(run, ensure_ascii=False)[:300]}")
                break
    print(f"{len(by) - bad} agree, {bad} differ")
    return 1 if bad else 0


def main():
    if sys.argv[1:2] == ["check"]:
        sys.exit(check(sys.argv[2]))
    if sys.argv[1:2] == ["stats"]:
        sys.exit(stats(sys.argv[2:]))
    if sys.argv[1:2] == ["styles-check"]:
        sys.exit(styles_check(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", nargs="?", choices=["styles"], help="styles: the generator's whitespace self-test")
    ap.add_argument("--shared", metavar="DIR", help="render the conversations over the real templates under DIR")
    ap.add_argument("--out", metavar="FILE", help="where to write (default stdout)")
    args = ap.parse_args()
    if args.mode == "styles":
        cases = style_cases()
    elif args.shared:
        cases = shared_cases(args.shared)
    else:
        cases = repo_cases()
    if args.out and args.out != "-":
        out = os.path.abspath(args.out)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        inside = os.path.commonpath([out, root]) == root
        if args.shared and inside and os.path.commonpath([out, os.path.join(root, "target")]) != os.path.join(
                root, "target"):
            sys.exit(f"chat_cases.py: {args.out} is in the repository: shared templates go outside it (or under target/)")
        os.makedirs(os.path.dirname(out), exist_ok=True)
    write(cases, args.out)


if __name__ == "__main__":
    main()
