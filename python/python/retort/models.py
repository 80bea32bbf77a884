"""One object per bundled model: ``retort.models.qwen3.parse(text, prefix=...)``.

Attribute names are the template names with ``-`` and ``.`` turned into
``_`` (``glm-4.5`` -> ``retort.models.glm_4_5``).
"""

from __future__ import annotations

from typing import Any

from . import templates
from ._native import ResponseParser, Template, parse_many, parse_response


class Model:
    """A bundled model's template with the parsing functions bound to it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.template: Template = templates.load(name)

    def parse(self, text: str, *, prefix: str | None = None, tools: Any = None) -> dict:
        """``parse_response(text, <this template>, prefix=..., tools=...)``."""
        return parse_response(text, self.template, prefix=prefix, tools=tools)

    def parser(self, prefix: str | None = None, *, tools: Any = None) -> ResponseParser:
        """``ResponseParser(<this template>, prefix, tools=...)``."""
        return ResponseParser(self.template, prefix, tools=tools)

    def parse_many(self, texts, *, prefixes=None, tools=None, threads=None, errors="raise", output="dict") -> list:
        """``retort.parse_many(texts, <this template>, ...)``."""
        return parse_many(
            texts, self.template, prefixes=prefixes, tools=tools, threads=threads, errors=errors, output=output
        )

    def __repr__(self) -> str:
        return f"<retort model {self.name!r}>"


def _attr(name: str) -> str:
    return name.replace("-", "_").replace(".", "_")


_BY_ATTR = {_attr(n): n for n in templates.names()}
_LOADED: dict[str, Model] = {}


def __getattr__(attr: str) -> Model:
    name = _BY_ATTR.get(attr)
    if name is None:
        raise AttributeError(f"no bundled model {attr!r}; bundled: {', '.join(sorted(_BY_ATTR))}")
    model = _LOADED.get(name)
    if model is None:
        model = _LOADED[name] = Model(name)
    return model


def __dir__() -> list[str]:
    return sorted([*_BY_ATTR, "Model"])
