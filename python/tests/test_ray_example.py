"""The Ray Data example (examples/ray_parse.py) parses a small corpus in a
local cluster and gives the messages ``parse_response`` gives; it reports
throughput per core. Skipped without ray (CI installs it)."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

import retort
from retort.bench import SMOL_PROMPT, chat
from vectors import strict_equal

pytest.importorskip("ray.data", reason="ray[data] is not installed")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ray_parse.py"


def load_example():
    spec = importlib.util.spec_from_file_location("ray_parse", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ray_data_parses_a_corpus_like_parse_response(tmp_path, capsys):
    import pandas as pd
    import ray

    rng = random.Random(7)
    texts = [chat(rng) for _ in range(10_000)]
    texts[5] = "<tool_call>{not json</tool_call>"  # one bad generation: reported, not fatal
    corpus = tmp_path / "corpus.jsonl"
    with open(corpus, "w", encoding="utf-8") as fh:
        for t in texts:
            fh.write(json.dumps({"text": t, "prefix": SMOL_PROMPT}, ensure_ascii=False) + "\n")
    example = load_example()
    try:
        report = example.run(str(corpus), str(tmp_path / "out"), "smollm3", num_cpus=2, batch_size=256)
    finally:
        ray.shutdown()
    out = pd.read_parquet(tmp_path / "out")
    assert report["generations"] == len(texts) == len(out)
    assert report["errors"] == 1
    spec = retort.templates.spec("smollm3")
    by_text = {row.text: row for row in out.itertuples()}
    for t in texts:
        row = by_text[t]
        try:
            want = retort.parse_response(t, spec, prefix=SMOL_PROMPT)
        except ValueError as e:
            assert row.error == f"ValueError: {e}" and pd.isna(row.message)
            continue
        assert pd.isna(row.error) and strict_equal(json.loads(row.message), want)
    with capsys.disabled():
        print(
            f"\nray local mode: {report['generations']} generations in {report['seconds']:.2f} s on "
            f"{report['cores']} cores = {report['generations_per_s_per_core']:.0f} generations/s per core, "
            f"{report['mb_per_s_per_core']:.2f} M chars/s per core",
            file=sys.stderr,
        )
