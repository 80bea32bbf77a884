#!/usr/bin/env python3
"""Times the reference's chat-template rendering, the other half of
`cargo run --release -p retort-benches --bin render-compare` (which writes
the cases and calls this script through tools/reference/setup.sh).

    $(tools/reference/setup.sh) tools/reference/bench_render.py CASES.jsonl [--min-seconds S]

Each case line is the rendering case format (tests/conformance/chat/README.md).
For each, in order, one JSON line on stdout: {"id", "seconds": the best
single render, "runs"}, or {"id", "error": "..."} where the reference
raises. What is timed is `render_jinja_template(...)` as transformers calls
it, with the compiled template cached as transformers caches it
(`_compile_jinja_template` is an lru_cache, warmed by one untimed render):
the same work retort's side measures (conversation preparation, render,
continue_final_message handling). The garbage collector is paused while a
case runs; a case runs at least 3 times and until its runs add up to S
seconds (default 0.3; at most 10,000 runs).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import warnings

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
warnings.filterwarnings("ignore")

from transformers.utils.chat_template_utils import render_jinja_template  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--min-seconds", type=float, default=0.3)
    args = ap.parse_args()
    for line in open(args.cases, encoding="utf-8"):
        if not line.strip():
            continue
        case = json.loads(line)

        def render():
            return render_jinja_template(
                conversations=[case["messages"]],
                tools=case.get("tools"),
                documents=case.get("documents"),
                chat_template=case["chat_template"],
                continue_final_message=case.get("continue_final_message", False),
                add_generation_prompt=case.get("add_generation_prompt", False),
                **case.get("kwargs", {}),
            )

        try:
            render()
        except Exception as e:  # the case is reported, not timed
            print(json.dumps({"id": case["id"], "error": f"{type(e).__name__}: {e}"}), flush=True)
            continue
        best, total, runs = float("inf"), 0.0, 0
        gc.collect()
        gc.disable()
        try:
            while runs < 3 or (total < args.min_seconds and runs < 10_000):
                t = time.perf_counter()
                render()
                dt = time.perf_counter() - t
                best, total, runs = min(best, dt), total + dt, runs + 1
        finally:
            gc.enable()
        print(json.dumps({"id": case["id"], "seconds": best, "runs": runs}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
