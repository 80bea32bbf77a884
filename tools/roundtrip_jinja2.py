#!/usr/bin/env python3
"""Checks the round-trip test's Jinja environment against jinja2 as
transformers configures it.

`tests/roundtrip.rs` (with RETORT_ROUNDTRIP_DUMP=DIR) writes, per chat template
and assistant turn, the contexts it rendered and what minijinja made of them.
This script renders the same contexts with transformers' own compiled template
(`transformers.utils.chat_template_utils._compile_jinja_template`: the sandboxed
environment, trim_blocks, lstrip_blocks, loopcontrols, its tojson,
raise_exception, dict, namespace) and reports every render that differs.

    RETORT_ROUNDTRIP_DUMP=$PWD/target/roundtrip cargo test -p retort-tests --test roundtrip
    PY=$(bash tools/reference/setup.sh | tail -1)
    $PY -m pip install -q --target target/jinja2 jinja2==3.1.6   # transformers' templating dependency
    PYTHONPATH=target/jinja2 $PY tools/roundtrip_jinja2.py target/roundtrip ../shared/chat-templates

(The reference's requirements leave jinja2 out: parsing needs none.)

strftime_now is pinned to the test's fixed instant (2024-07-26 12:00:00).
Exit status 1 when any render differs.
"""

import datetime
import json
import pathlib
import sys

from transformers.utils.chat_template_utils import _compile_jinja_template

FIXED = datetime.datetime(2024, 7, 26, 12, 0, 0)


def render(template, context):
    try:
        return template.render(**context), None
    except Exception as e:  # noqa: BLE001 - any template failure is a result
        return None, f"{type(e).__name__}: {e}"


def main():
    dump, templates = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    same = differ = 0
    for record_path in sorted(dump.glob("*.json")):
        record = json.loads(record_path.read_text())
        source = (templates / record["chat_template"]).read_text()
        template = _compile_jinja_template(source)
        template.globals["strftime_now"] = FIXED.strftime
        for key in ("prompt", "full"):
            expected, error = render(template, record[f"{key}_context"])
            got = record[key]
            if expected == got:
                same += 1
                continue
            differ += 1
            print(f"{record_path.name} {key}:")
            if error or got is None:
                print(f"  jinja2: {error or 'renders'}; minijinja: {'fails' if got is None else 'renders'}")
            else:
                at = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
                print(f"  differ at {at}: jinja2 …{expected[at:at + 80]!r}")
                print(f"  {' ' * len(str(at))}           minijinja …{got[at:at + 80]!r}")
    print(f"{same} renders identical, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
