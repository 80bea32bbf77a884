"""The model templates bundled with retort (the repository's ``templates/``,
embedded in the extension when it was built, through the ``retort`` crate's
registry).

>>> import retort
>>> "qwen3" in retort.templates.names()
True
>>> retort.parse_response("<think>Hm.</think>Hi!<|im_end|>", retort.templates.load("qwen3"), prefix="")["content"]
'Hi!'
"""

from __future__ import annotations

import json
from functools import lru_cache

from ._native import Template, bundled_json, bundled_names, resolve_model

__all__ = ["load", "names", "resolve", "spec"]


def names() -> list[str]:
    """The bundled templates' names, sorted (``"qwen3"``, ``"gpt-oss"``, ...)."""
    return list(bundled_names())


def spec(name: str) -> dict:
    """A bundled template as a dict (a fresh copy), e.g. to hand to
    transformers. Raises ``KeyError`` for an unknown name."""
    return json.loads(bundled_json(name))


@lru_cache(maxsize=None)
def load(name: str) -> Template:
    """A bundled template, compiled (once per process). Raises ``KeyError``
    for an unknown name."""
    return Template(bundled_json(name))


def resolve(query: str) -> str:
    """The bundled template's name for a family name, a Hugging Face repo
    id (``"Qwen/Qwen3-8B"``, also quantised copies such as
    ``"unsloth/Qwen3-8B-GGUF"``) or a hub address. Raises ``KeyError``
    (listing what would match) when no bundled family fits."""
    return resolve_model(query)
