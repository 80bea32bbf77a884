"""Writes the reference's message for each bundled generation.

Run with the reference's python (transformers 5.23.0), from the
repository's root:

    "$(tools/reference/setup.sh)" examples/data/reference.py

(`../shared/reference/setup.sh` makes an equivalent venv). For every
`NAME.txt` here it parses the generation with `templates/NAME.json`, after
the prompt `NAME.prompt.txt`, and writes `NAME.expected.json`, which
`examples/tests/stream.rs` checks the demo against.
"""

import json
import pathlib

from transformers.utils.chat_parsing import parse_response

HERE = pathlib.Path(__file__).resolve().parent
TEMPLATES = HERE.parent.parent / "templates"

for generation in sorted(HERE.glob("*.txt")):
    if generation.name.endswith(".prompt.txt"):
        continue
    name = generation.stem
    template = json.loads((TEMPLATES / f"{name}.json").read_text())
    prompt = (HERE / f"{name}.prompt.txt").read_text()
    message = parse_response(generation.read_text(), template, prefix=prompt)
    out = HERE / f"{name}.expected.json"
    out.write_text(json.dumps(message, indent=2, ensure_ascii=False) + "\n")
    print(f"{out.name}: {', '.join(message)}")
