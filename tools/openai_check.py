#!/usr/bin/env python3
"""Feeds retort's OpenAI chunks into the official `openai` client's own
stream accumulation (ChatCompletionStreamState), offline, chunk by chunk.

For every conformance case whose expected message has tool calls (the
repository's own vectors — tests/conformance/cases/*.jsonl, where
models.jsonl holds samples of every bundled template — and the shared
vectors in ../shared/conformance/cases when present), under several
chunkings (the whole text, pieces of 1, 3 and 7 characters, and the case's
own chunkings), it checks:

- the chunk shape clients depend on: one entry per call index per chunk,
  indices dense and in order, each call opened once with id, type "function",
  name and arguments "" and never again given an id, type or name;
- that no stream aborts, and that the accumulated message equals the
  layer's own non-streaming message (`ChunkStream::message` of the whole
  text in the same text mode): content, reasoning_content, and each call's
  id, name and arguments (as strings and as JSON);
- where the plain parser replaced no value, that the layer's message is the
  reference's message in OpenAI shape, and json.loads of each call's
  arguments equals the arguments of the reference's expected message (after
  tools= coercion). Where a value was replaced (a field that does not
  repeat, written twice: the reference keeps the last), the layer's message
  has every region (openai/src/lib.rs, `TextMode::Stream`).

Run:  python3 tools/openai_check.py [--bin PATH] [CASES.jsonl ...]
The client comes from tools/openai/setup.sh (a venv with the pinned
`openai`); this script re-executes itself with that venv's python.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "conformance")


def venv_python():
    out = subprocess.run(
        ["bash", os.path.join(ROOT, "tools", "openai", "setup.sh")],
        check=True, capture_output=True, text=True,
    )
    return out.stdout.strip()


def untag(v):
    """The conformance format's tagged floats and big ints as Python values."""
    if isinstance(v, dict):
        if set(v) == {"$float"}:
            return float(v["$float"])
        if set(v) == {"$bigint"}:
            return int(v["$bigint"])
        return {k: untag(x) for k, x in v.items()}
    if isinstance(v, list):
        return [untag(x) for x in v]
    return v


def same(a, b):
    """Equality with NaN equal to itself and int, float and bool kept apart."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def same_message(a, b):
    """The layer's message and the reference's, alike: text fields equal,
    calls alike in id, name and the arguments' meaning (the streamed text of
    a call may spell them differently: a repeated key kept, a string
    argument as a JSON string)."""
    if any(a.get(k) != b.get(k) for k in ("role", "content", "reasoning_content", "reasoning")):
        return False
    ca, cb = a.get("tool_calls") or [], b.get("tool_calls") or []
    return len(ca) == len(cb) and all(
        x["id"] == y["id"] and x["function"]["name"] == y["function"]["name"]
        and same(loads_or_text(x["function"]["arguments"]), loads_or_text(y["function"]["arguments"]))
        for x, y in zip(ca, cb)
    )


def loads_or_text(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def reference_calls(message):
    """(name, arguments) of each tool call in the reference's message."""
    calls = message.get("tool_calls") or []
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list):
        # A generated template's tool-call field can hold any value.
        return []
    out = []
    for c in calls:
        if not isinstance(c, dict):
            continue
        f = c.get("function") if isinstance(c.get("function"), dict) else c
        if not isinstance(f.get("name"), str):
            continue
        args = f.get("arguments", f.get("parameters", {}))
        out.append((f["name"], untag(args)))
    return out


def check_shape(chunks):
    """The chunk-level rules; returns a problem or None."""
    opened = 0
    if not chunks or chunks[0]["choices"][0]["delta"].get("role") != "assistant":
        return "the first chunk does not carry the role"
    if chunks[-1]["choices"][0].get("finish_reason") is None:
        return "the last chunk has no finish_reason"
    for n, c in enumerate(chunks):
        calls = c["choices"][0]["delta"].get("tool_calls") or []
        indices = [t["index"] for t in calls]
        if len(set(indices)) != len(indices):
            return f"chunk {n}: an index twice"
        for t in calls:
            head = {"id", "type"} & set(t) or "name" in (t.get("function") or {})
            if t["index"] == opened:
                if not (t.get("id") and t.get("type") == "function"
                        and t["function"].get("name") and t["function"].get("arguments") == ""):
                    return f"chunk {n}: call {opened} does not open with id, type, name and arguments ''"
                opened += 1
            elif t["index"] > opened:
                return f"chunk {n}: index {t['index']} before {opened}"
            elif head:
                return f"chunk {n}: call {t['index']} given an id, type or name again"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", help="the retort-openai-chunks binary (default: cargo run)")
    ap.add_argument("--no-venv", action="store_true", help="use this python as is")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    if not args.no_venv:
        py = venv_python()
        if not os.environ.get("RETORT_OPENAI_CHECK_INNER"):
            env = dict(os.environ, RETORT_OPENAI_CHECK_INNER="1")
            os.execve(py, [py, os.path.abspath(__file__), *sys.argv[1:]], env)
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    files = args.cases or (
        sorted(os.path.join(ROOT, "tests", "conformance", "cases", f)
               for f in os.listdir(os.path.join(ROOT, "tests", "conformance", "cases")) if f.endswith(".jsonl"))
        + (sorted(os.path.join(SHARED, "cases", f) for f in os.listdir(os.path.join(SHARED, "cases"))
                  if f.endswith(".jsonl")) if os.path.isdir(os.path.join(SHARED, "cases")) else [])
    )
    cases = []
    for f in files:
        for line in open(f, encoding="utf-8"):
            c = json.loads(line)
            m = c.get("expected", {}).get("whole", {}).get("message")
            if isinstance(m, dict) and reference_calls(m):
                c["_file"] = os.path.basename(f)
                if f.startswith(SHARED):
                    c["template_dirs"] = [os.path.join(SHARED, "templates")]
                elif c["_file"] == "models.jsonl":
                    c["template_dirs"] = [os.path.join(ROOT, "templates")]
                else:
                    c["template_dirs"] = [os.path.join(ROOT, "tests", "conformance", "templates"),
                                          os.path.join(ROOT, "templates")]
                cases.append(c)
    dirs = [os.path.join(ROOT, "templates"), os.path.join(ROOT, "tests", "conformance", "templates"),
            os.path.join(SHARED, "templates")]
    cmd = [args.bin] if args.bin else ["cargo", "run", "-q", "--release", "-p", "retort-openai",
                                       "--bin", "retort-openai-chunks", "--"]
    for d in dirs:
        if os.path.isdir(d):
            cmd += ["--templates", d]
    started = time.time()
    feed = "".join(json.dumps({k: v for k, v in c.items() if k != "expected"}) + "\n" for c in cases)
    out = subprocess.run(cmd, input=feed, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        sys.exit(f"retort-openai-chunks failed: {out.stderr}")
    results = [json.loads(l) for l in out.stdout.split("\n") if l.strip()]
    failures, runs, templates, per_file, respelled, rewrites = [], 0, set(), {}, set(), set()
    for case, res in zip(cases, results):
        cid = case["id"]
        if "error" in res:
            failures.append(f"{cid}: {res['error']}")
            continue
        ref = reference_calls(case["expected"]["whole"]["message"])
        if res["replaced"]:
            rewrites.add(cid)
        else:
            for mode, layer in res["layer"].items():
                if not same_message(layer, res["message"]):
                    failures.append(f"{cid} ({mode}): nothing was replaced, yet the layer's message "
                                    f"{layer!r} is not the reference's {res['message']!r}")
        if isinstance(case["template"], str):
            templates.add((case["_file"], case["template"]))
        per_file[case["_file"]] = per_file.get(case["_file"], 0) + 1
        firsts = {}
        for run in res["runs"]:
            runs += 1
            where = f"{cid} ({run['mode']}, {run['pieces']} pieces)"
            want = res["layer"][run["mode"]]
            if "error" in run or "error" in want:
                failures.append(f"{where}: {run.get('error') or want.get('error')}")
                continue
            problem = check_shape(run["chunks"])
            if problem:
                failures.append(f"{where}: {problem}")
                continue
            state = ChatCompletionStreamState()
            for c in run["chunks"]:
                state.handle_chunk(ChatCompletionChunk.model_validate(c))
            choice = state.get_final_completion().choices[0]
            got = choice.message
            expect_reason = "tool_calls" if want.get("tool_calls") else "stop"
            if choice.finish_reason != expect_reason:
                failures.append(f"{where}: finish_reason {choice.finish_reason}")
            if got.content != want.get("content"):
                failures.append(f"{where}: content {got.content!r} != {want.get('content')!r}")
            extra = got.model_extra or {}
            if extra.get("reasoning_content") != want.get("reasoning_content"):
                failures.append(f"{where}: reasoning_content differs")
            calls = got.tool_calls or []
            first = firsts.setdefault(run["mode"], [c.function.arguments for c in calls])
            wcalls = want.get("tool_calls") or []
            want_ref = ref
            if res["replaced"]:
                # The reference kept the last region's calls: they end the
                # layer's list.
                want_ref = [None] * (len(wcalls) - len(ref)) + ref
            if len(calls) != len(wcalls) or len(calls) != len(want_ref):
                failures.append(f"{where}: {len(calls)} calls accumulated, {len(wcalls)} in the message, {len(want_ref)} in the reference's")
                continue
            for i, (g, w, r) in enumerate(zip(calls, wcalls, want_ref)):
                rname, rargs = r if r is not None else (w["function"]["name"], loads_or_text(w["function"]["arguments"]))
                if g.id != w["id"] or g.type != "function" or g.function.name != w["function"]["name"] or g.function.name != rname:
                    failures.append(f"{where}: call {i} id/type/name {g.id} {g.type} {g.function.name}")
                if g.function.arguments != first[i]:
                    failures.append(f"{where}: call {i} arguments {g.function.arguments!r} != {first[i]!r} (one piece)")
                    continue
                if g.function.arguments != w["function"]["arguments"]:
                    respelled.add(cid)
                try:
                    parsed = json.loads(g.function.arguments)
                except ValueError:
                    parsed = g.function.arguments
                if not same(parsed, rargs):
                    failures.append(f"{where}: call {i} arguments mean {parsed!r}, the reference has {rargs!r}")
    bad = {}
    for f in failures:
        bad.setdefault(f.split(":")[0].split(" ")[0], f)
    for f in list(bad.values())[:60]:
        print("FAIL", f)
    by_file = {}
    for c in cases:
        if c["id"] in bad:
            by_file[c["_file"]] = by_file.get(c["_file"], 0) + 1
    print("failing cases by file:", by_file)
    print(f"{len(rewrites)} cases where the parser replaced a value (a field written twice): "
          "the layer's message keeps every region, the reference the last")
    print(f"{len(respelled)} cases whose streamed arguments keep a repeated key "
          "(json.loads gives the message's arguments; the non-streaming text has the key once)")
    print(f"openai {sys.modules['openai'].__version__}: {len(cases)} cases with tool calls "
          f"({', '.join(f'{k}: {v}' for k, v in sorted(per_file.items()))}), "
          f"{len(set(t for f, t in templates if f == 'models.jsonl'))} bundled templates, "
          f"{runs} chunked streams (2 text modes) accumulated, {len(failures)} failures, {time.time() - started:.1f}s")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
