"""retort against the reference (transformers 5.23.0), in one process.

    python -m retort.bench [--many 10000] [--workloads DIR] [--json]

Workloads: five model outputs in their models' formats (a short SmolLM3
chat with a tool call, 120 KB Qwen3 and gpt-oss reasoning traces, 20-call
Qwen3-Coder and gpt-oss tool transcripts), generated here deterministically,
or read from DIR (``{"template", "prefix", "text"}`` files, as the Rust
``compare`` binary writes them to ``target/bench-workloads``). Templates are
the bundled ones. Modes:

- ``one-shot``: ``parse_response`` on the whole text;
- ``stream4``: ``ResponseParser`` fed 4 characters at a time, then finalized;
- ``parse_many``: N chat-sized generations (10,000 by default): the
  reference's ``parse_response`` in a loop against ``retort.parse_many`` on
  every core, returning dicts and (``output="json"``) JSON text (and, for
  comparison, retort's ``parse_response`` in a loop).

Each timing is the best of several runs; before timing, retort's message
must equal the reference's (types included).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

import retort

WORDS = (
    "the model weighs each option before it answers , and then checks the result again ; "
    "생각 정리 답변 確認 します 計算 café naïve façade déjà < > <b>bold</b> {curly} [square] "
    "a=1 x<y y>z tool call json value because therefore however 42 3.14 -7 true null"
).split()


def prose(rng: random.Random, n: int) -> str:
    """About ``n`` characters of mixed-script prose with stray markup."""
    out: list[str] = []
    size = 0
    while size < n:
        w = rng.choice(WORDS)
        out.append(w)
        size += len(w) + 1
        if rng.random() < 0.03:
            out.append("\n\n")
            size += 2
    return " ".join(out)[:n]


def call(rng: random.Random, i: int) -> tuple[str, dict]:
    name = rng.choice(["get_weather", "search_web", "run_sql"])
    return name, {"query": prose(rng, 60), "limit": i, "filters": {"lang": "en", "safe": True}}


def chat(rng: random.Random) -> str:
    name, args = call(rng, 1)
    tool = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    return f"<think>\n{prose(rng, 1200)}\n</think>\n\n<tool_call>{tool}</tool_call>\n{prose(rng, 500)}<|im_end|>"


SMOL_PROMPT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def workloads() -> list[dict]:
    rng = random.Random(1)
    coder_calls = []
    for i in range(20):
        name, args = call(rng, i)
        params = "".join(
            f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n" for k, v in args.items()
        )
        coder_calls.append(f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
    oss_tools = f"<|channel|>analysis<|message|>{prose(rng, 800)}<|end|>"
    for i in range(20):
        name, args = call(rng, i)
        oss_tools += (
            f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
            f"{json.dumps(args, ensure_ascii=False)}<|call|>"
        )
    return [
        {"name": "chat-smollm3", "template": "smollm3", "prefix": SMOL_PROMPT, "text": chat(rng)},
        {
            "name": "reasoning-qwen3",
            "template": "qwen3",
            "prefix": "<|im_start|>user\nExplain.<|im_end|>\n<|im_start|>assistant\n<think>\n",
            "text": f"{prose(rng, 100_000)}\n</think>\n\n{prose(rng, 20_000)}<|im_end|>",
        },
        {
            "name": "reasoning-gpt-oss",
            "template": "gpt-oss",
            "prefix": "<|start|>user<|message|>Explain.<|end|><|start|>assistant",
            "text": f"<|channel|>analysis<|message|>{prose(rng, 100_000)}<|end|><|start|>assistant"
            f"<|channel|>final<|message|>{prose(rng, 20_000)}<|end|>",
        },
        {
            "name": "tools-qwen3-coder",
            "template": "qwen3-coder",
            "prefix": "<|im_start|>assistant\n",
            "text": f"<think>{prose(rng, 800)}</think>\n" + "\n".join(coder_calls),
        },
        {"name": "tools-gpt-oss", "template": "gpt-oss", "prefix": "<|start|>assistant", "text": oss_tools},
    ]


def read_workloads(directory: Path) -> list[dict]:
    out = []
    for path in sorted(directory.glob("*.json")):
        w = json.loads(path.read_text(encoding="utf-8"))
        out.append({"name": path.stem, **w})
    return out


def best_time(f: Callable[[], Any], budget: float, min_runs: int = 3, max_runs: int = 50) -> float:
    """Best wall time of ``f`` over at least ``min_runs`` runs, running more
    while the total stays under ``budget`` seconds."""
    best, spent, runs = math.inf, 0.0, 0
    while runs < min_runs or (spent < budget and runs < max_runs):
        t0 = time.perf_counter()
        f()
        dt = time.perf_counter() - t0
        best, spent, runs = min(best, dt), spent + dt, runs + 1
    return best


def strict_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def stream(parser_class: Any, spec: Any, prefix: str, text: str, size: int) -> dict:
    p = parser_class(spec, prefix=prefix)
    for i in range(0, len(text), size):
        p.feed(text[i : i + size])
    return p.finalize()[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m retort.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", type=Path, help="read workloads from this directory instead of generating them")
    ap.add_argument("--many", type=int, default=10_000, help="generations for parse_many (default 10000)")
    ap.add_argument("--budget", type=float, default=0.5, help="seconds of timing per measurement (default 0.5)")
    ap.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    args = ap.parse_args(argv)
    try:
        from transformers.utils.chat_parsing import ResponseParser as RefParser
        from transformers.utils.chat_parsing import parse_response as ref_parse
    except ImportError:
        print("the reference (transformers==5.23.0) is not installed in this Python", file=sys.stderr)
        return 2
    if retort.transformers_patched():
        print("transformers is patched to use retort: unpatch first", file=sys.stderr)
        return 2

    rows: list[dict] = []

    def row(workload: str, mode: str, size: int, ref: float, ours: float, note: str = "") -> None:
        r = {"workload": workload, "mode": mode, "bytes": size, "reference_s": ref, "retort_s": ours, "speedup": ref / ours}
        if note:
            r["note"] = note
        rows.append(r)
        if args.json:
            print(json.dumps(r), flush=True)

    loads = read_workloads(args.workloads) if args.workloads else workloads()
    for w in loads:
        spec = retort.templates.spec(w["template"])
        text, prefix, size = w["text"], w["prefix"], len(w["text"].encode())
        want = ref_parse(text, spec, prefix=prefix)
        for name, got in [
            ("one-shot", retort.parse_response(text, spec, prefix=prefix)),
            ("stream4", stream(retort.ResponseParser, spec, prefix, text, 4)),
        ]:
            if not strict_equal(want, got):
                print(f"{w['name']} {name}: retort differs from the reference", file=sys.stderr)
                return 1
        ref = best_time(lambda: ref_parse(text, spec, prefix=prefix), args.budget)
        ours = best_time(lambda: retort.parse_response(text, spec, prefix=prefix), args.budget)
        row(w["name"], "one-shot", size, ref, ours)
        ref = best_time(lambda: stream(RefParser, spec, prefix, text, 4), args.budget, min_runs=1, max_runs=3)
        ours = best_time(lambda: stream(retort.ResponseParser, spec, prefix, text, 4), args.budget)
        row(w["name"], "stream4", size, ref, ours)

    rng = random.Random(2)
    texts = [chat(rng) for _ in range(args.many)]
    spec = retort.templates.spec("smollm3")
    size = sum(len(t.encode()) for t in texts)
    want = [ref_parse(t, spec, prefix=SMOL_PROMPT) for t in texts[:200]]
    got = retort.parse_many(texts[:200], spec, prefixes=SMOL_PROMPT)
    if not all(strict_equal(a, b) for a, b in zip(want, got)):
        print("parse_many: retort differs from the reference", file=sys.stderr)
        return 1
    ref = best_time(lambda: [ref_parse(t, spec, prefix=SMOL_PROMPT) for t in texts], 0, min_runs=1)
    loop = best_time(lambda: [retort.parse_response(t, spec, prefix=SMOL_PROMPT) for t in texts], args.budget)
    many = best_time(lambda: retort.parse_many(texts, spec, prefixes=SMOL_PROMPT), args.budget)
    many_json = best_time(lambda: retort.parse_many(texts, spec, prefixes=SMOL_PROMPT, output="json"), args.budget)
    cores = os.cpu_count() or 1
    row(f"{args.many} x chat-smollm3", "parse_response loop", size, ref, loop, "retort on one thread")
    row(f"{args.many} x chat-smollm3", f"parse_many ({cores} cores)", size, ref, many, "reference: its loop")
    row(f"{args.many} x chat-smollm3", f"parse_many json ({cores} c.)", size, ref, many_json,
        "retort returns JSON text; the reference's loop builds dicts")

    if not args.json:
        print(f"retort {'' if args.workloads is None else f'({args.workloads}) '}vs transformers 5.23.0, "
              f"Python {sys.version.split()[0]}, {cores} cores; best of several runs\n")
        print(f"| {'workload':<22} | {'mode':<22} | {'bytes':>9} | {'reference':>12} | {'retort':>12} | {'speed-up':>9} |")
        print(f"|{'-' * 24}|{'-' * 24}|{'-' * 11}|{'-' * 14}|{'-' * 14}|{'-' * 11}|")
        for r in rows:
            print(
                f"| {r['workload']:<22} | {r['mode']:<22} | {r['bytes']:>9} | {fmt(r['reference_s']):>12} | "
                f"{fmt(r['retort_s']):>12} | {r['speedup']:>8.0f}x |"
            )
    return 0


def fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


if __name__ == "__main__":
    sys.exit(main())
