#!/usr/bin/env python3
"""Writes seed corpora for the cargo-fuzz targets from the conformance vectors.

    python3 fuzz/seed.py [--out fuzz/seeds]

For every case of tests/conformance/cases/*.jsonl:

- template_load: the inline template's JSON, and every bundled template file;
- parse_stream: the case's prompt and text in the layout that
  tests/src/fuzz_checks.rs decodes (template byte, longest piece, seed,
  prefix 0xFF text), once in one piece and once in short pieces; texts of
  bundled-template cases are also written for the regex-heavy templates;
- lenient: the same files as parse_stream;
- compiled: the same for cases of bundled templates.

Files are named by the SHA-1 of their bytes, as libFuzzer names its corpus.
The output is meant to be minimised into fuzz/corpus/<target> with
`cargo fuzz cmin` (see fuzz/README.md).
"""

import argparse
import hashlib
import json
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Keep in step with REGEX_TEMPLATES in tests/src/fuzz_checks.rs.
REGEX_TEMPLATES = 3


def encode(template, longest, seed, prefix, text):
    out = bytes([template % 256, longest, seed])
    if prefix:
        out += prefix.encode("utf-8", "surrogatepass") + b"\xff"
    return out + text.encode("utf-8", "surrogatepass")


def write(directory, data):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "fuzz" / "seeds"))
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    rng = random.Random(13)
    bundled = sorted(p.stem for p in (ROOT / "templates").glob("*.json"))
    index = {name: i for i, name in enumerate(bundled)}
    for path in sorted((ROOT / "templates").glob("*.json")):
        write(out / "template_load", path.read_bytes())
    counts = {"template_load": len(bundled), "parse_stream": 0, "lenient": 0, "compiled": 0}
    for cases in sorted((ROOT / "tests" / "conformance" / "cases").glob("*.jsonl")):
        for line in cases.read_text().split("\n"):
            if not line.strip():
                continue
            case = json.loads(line)
            template = case.get("template")
            if isinstance(template, dict):
                write(out / "template_load", json.dumps(template).encode())
                counts["template_load"] += 1
                continue
            if template not in index:
                continue
            prefix, text = case.get("prefix", ""), case.get("text", "")
            i = index[template]
            pieces = [(0, 0), (rng.randint(1, 16), rng.randint(0, 255))]
            for longest, seed in pieces:
                data = encode(i, longest, seed, prefix, text)
                for target in ("parse_stream", "lenient", "compiled"):
                    write(out / target, data)
                    counts[target] += 1
            extra = len(bundled) + rng.randrange(REGEX_TEMPLATES)
            data = encode(extra, rng.randint(1, 16), rng.randint(0, 255), prefix, text)
            for target in ("parse_stream", "lenient"):
                write(out / target, data)
                counts[target] += 1
    for target, n in counts.items():
        print(f"{target}: {n} seeds written under {out / target}")


if __name__ == "__main__":
    main()
