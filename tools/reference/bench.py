#!/usr/bin/env python3
"""Times the reference implementation on benchmark workloads, the other half
of `cargo run --release -p retort-benches --bin compare` (which writes the
workloads and calls this script through tools/reference/setup.sh).

    $(tools/reference/setup.sh) tools/reference/bench.py WORKLOAD_DIR \\
        [--templates DIR] [--repeat N] [--min-seconds S] [--modes whole,stream1,stream4,stream16] [--only NAME]...

A workload is WORKLOAD_DIR/NAME.json, `{"template", "prefix", "text"}`; the
template is DIR/TEMPLATE.json (default: the repository's templates/). For
each workload, in name order, one JSON line on stdout:

    {"workload": NAME, "template": ..., "bytes": UTF-8 length of text,
     "repeat": N, "whole_s": seconds, "whole_runs": runs, "stream1_s": ..., ...}

A mode's time is the best of its runs of what retort's side measures too:
construct a parser with the prompt, feed the pieces, finalize. `whole`
feeds the text in one piece, `streamK` in pieces of K characters (code
points, as retort cuts them). The template is loaded, the pieces are cut and
one untimed parse warms up before the clock starts; the garbage collector
is paused while it runs (as `timeit` does) and collects between runs. A
mode runs at least N times (default 3) and until its runs add up to S
seconds (default 1; at most 1000 runs): a best of 3 of a 6 ms parse moved
by 1.8x between runs on a shared machine, a best of a second's worth far
less, and it is the figure least favourable to retort.

The reference must parse every workload, and its streamed runs must end in
the same message as its one-shot run: otherwise the script says which on
stderr and exits 1, since a timing of a failed or different parse compares
nothing.
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import sys
import time
import warnings

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
warnings.filterwarnings("ignore")

from transformers.utils.chat_parsing import ResponseParser  # noqa: E402
from transformers.utils.chat_parsing.response_templates import load_response_template  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pieces_of(text: str, mode: str) -> list[str]:
    if mode == "whole":
        return [text]
    if not mode.startswith("stream") or not mode[len("stream"):].isdigit() or int(mode[len("stream"):]) < 1:
        raise SystemExit(f"bench.py: unknown mode {mode!r} (whole or streamK, K >= 1)")
    step = int(mode[len("stream"):])
    return [text[i:i + step] for i in range(0, len(text), step)]


def parse(template, prefix: str, pieces: list[str]) -> dict:
    parser = ResponseParser(template, prefix=prefix)
    for piece in pieces:
        parser.feed(piece)
    message, _ = parser.finalize()
    return message


MAX_RUNS = 1000


def best_of(repeat: int, min_seconds: float, template, prefix: str, pieces: list[str]) -> tuple[float, int, dict]:
    """The shortest of at least `repeat` timed parses that together take
    `min_seconds` (at most MAX_RUNS of them), how many ran, and the message
    parsed."""
    best, message, total, runs = float("inf"), None, 0.0, 0
    while runs < repeat or (total < min_seconds and runs < MAX_RUNS):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            message = parse(template, prefix, pieces)
            took = time.perf_counter() - start
        finally:
            gc.enable()
        best, total, runs = min(best, took), total + took, runs + 1
    return best, runs, message


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workloads", help="directory of NAME.json workloads")
    ap.add_argument("--templates", default=os.path.join(ROOT, "templates"), help="directory of TEMPLATE.json")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per mode at least; the best is kept (default 3)")
    ap.add_argument("--min-seconds", type=float, default=1.0,
                    help="a mode runs until its runs add up to this many seconds (default 1; at most 1000 runs)")
    ap.add_argument("--modes", default="whole,stream1,stream4,stream16")
    ap.add_argument("--only", action="append", default=[], help="time only this workload (repeatable)")
    args = ap.parse_args()
    if args.repeat < 1:
        raise SystemExit("bench.py: --repeat must be at least 1")
    modes = [m for m in args.modes.split(",") if m]

    paths = sorted(glob.glob(os.path.join(args.workloads, "*.json")))
    if args.only:
        paths = [p for p in paths if os.path.basename(p)[: -len(".json")] in args.only]
    if not paths:
        raise SystemExit(f"bench.py: no workloads in {args.workloads}" + (f" named {args.only}" if args.only else ""))

    for path in paths:
        name = os.path.basename(path)[: -len(".json")]
        with open(path, encoding="utf-8") as fh:
            w = json.load(fh)
        with open(os.path.join(args.templates, w["template"] + ".json"), encoding="utf-8") as fh:
            template = load_response_template(json.load(fh))
        row = {"workload": name, "template": w["template"], "bytes": len(w["text"].encode("utf-8")),
               "repeat": args.repeat}
        # One untimed one-shot parse first, as retort's side warms up too; its
        # message is what every mode must reproduce.
        try:
            whole_message = parse(template, w["prefix"], [w["text"]])
        except Exception as exc:  # noqa: BLE001 - report which workload, then stop
            print(f"bench.py: {name}: the reference failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            sys.exit(1)
        for mode in modes:
            pieces = pieces_of(w["text"], mode)
            try:
                seconds, runs, message = best_of(args.repeat, args.min_seconds, template, w["prefix"], pieces)
            except Exception as exc:  # noqa: BLE001 - report which workload, then stop
                print(f"bench.py: {name} {mode}: the reference failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                sys.exit(1)
            if message != whole_message:
                print(f"bench.py: {name} {mode}: the reference's message differs from its one-shot one",
                      file=sys.stderr)
                sys.exit(1)
            row[f"{mode}_s"] = seconds
            row[f"{mode}_runs"] = runs
            print(f"  {name} {mode}: {seconds:.4f} s (best of {runs})", file=sys.stderr, flush=True)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
