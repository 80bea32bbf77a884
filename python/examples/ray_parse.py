"""Parse a corpus of generations with Ray Data, on every core of every node.

    python ray_parse.py CORPUS OUT --template qwen3 [--address auto] [--num-cpus N]

CORPUS is a JSONL file or a Parquet file/directory with a ``text`` column
(the generation) and optionally a ``prefix`` column (the prompt; ``""``
when absent). ``--template`` names a bundled template (``retort.templates
.names()``) or a JSON file (a response template or a whole
``tokenizer_config.json``). OUT is a Parquet directory with the input
columns plus ``message`` (the parsed message as JSON text; ``NaN`` and big
integers are written as Python's ``json`` writes them) and ``error``
(``"ValueError: ..."`` for a generation the template cannot parse, else
null).

Each generation is parsed on its own, so the work needs no coordination:
Ray Data splits the corpus into blocks, each worker process parses its
batches with ``retort.parse_many`` and writes its part of the output. On a
cluster, run it with ``--address auto`` on the head node and the same code
scales to every core of every node; the only shared thing is the template
(a few KiB, shipped with the task).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import retort


def load_template(name_or_path: str) -> str:
    """The template as JSON text (it travels to the workers as a string)."""
    if name_or_path in retort.templates.names():
        return json.dumps(retort.templates.spec(name_or_path))
    return Path(name_or_path).read_text(encoding="utf-8")


def parse_batch(batch, template: str):
    """Ray Data ``map_batches`` function (pandas batches): adds ``message``
    and ``error`` columns. One thread per task: Ray already runs one worker
    process per core."""
    texts = batch["text"].tolist()
    prefixes = batch["prefix"].tolist() if "prefix" in batch else ""
    # The messages are stored as JSON text: retort writes it directly
    # (`json.dumps`'s text), without building Python dicts first.
    results = retort.parse_many(texts, template, prefixes=prefixes, threads=1, errors="return", output="json")
    batch["message"] = [None if isinstance(r, Exception) else r for r in results]
    batch["error"] = [f"{type(r).__name__}: {r}" if isinstance(r, Exception) else None for r in results]
    return batch


def cores_of(ray) -> int:
    return int(ray.cluster_resources().get("CPU", 1))


def run(corpus: str, out: str, template: str, *, address: str | None = None, num_cpus: int | None = None,
        batch_size: int = 512) -> dict:
    """Parses ``corpus`` into ``out``; returns counts, time and throughput."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    spec = load_template(template)
    # Start the worker processes before the clock does: what is measured is
    # the parsing pipeline (read, parse, write), not Ray's start-up.
    ray.data.from_items([{"text": "", "prefix": ""}] * cores_of(ray)).map_batches(
        parse_batch, batch_format="pandas", batch_size=1, fn_kwargs={"template": spec}
    ).materialize()
    read = ray.data.read_parquet if not corpus.endswith((".jsonl", ".json")) else ray.data.read_json
    start = time.perf_counter()
    ds = read(corpus).map_batches(parse_batch, batch_format="pandas", batch_size=batch_size,
                                  fn_kwargs={"template": spec})
    ds.write_parquet(out)
    seconds = time.perf_counter() - start
    stats = ray.data.read_parquet(out).to_pandas()
    cores = cores_of(ray)
    size = int(stats["text"].str.len().sum())
    return {
        "generations": len(stats),
        "errors": int(stats["error"].notna().sum()),
        "characters": size,
        "seconds": seconds,
        "cores": cores,
        "generations_per_s_per_core": len(stats) / seconds / cores,
        "mb_per_s_per_core": size / 1e6 / seconds / cores,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--template", required=True)
    ap.add_argument("--address", help="a Ray cluster (`auto` on a cluster node); default: a local one")
    ap.add_argument("--num-cpus", type=int, default=None, help="cores of the local cluster (default: all)")
    ap.add_argument("--batch-size", type=int, default=512)
    args = ap.parse_args()
    report = run(args.corpus, args.out, args.template, address=args.address, num_cpus=args.num_cpus,
                 batch_size=args.batch_size)
    print(json.dumps(report))
    print(f"{report['generations']} generations ({report['errors']} errors) in {report['seconds']:.2f} s on "
          f"{report['cores']} cores: {report['generations_per_s_per_core']:.0f} generations/s per core, "
          f"{report['mb_per_s_per_core']:.1f} M characters/s per core (pid {os.getpid()})")


if __name__ == "__main__":
    main()
