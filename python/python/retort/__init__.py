"""retort: parse chat-model output into assistant messages, as it streams.

A drop-in for ``transformers.utils.chat_parsing`` (transformers 5.23.0): the
same ``ResponseParser`` and ``parse_response``, with the same signatures,
events, messages and exceptions, on retort's engine (exact for every
chunking, linear in the input). On top of that:

- ``parse_many(texts, template, prefixes=...)`` parses a batch on all cores
  with the GIL released;
- ``retort.templates`` / ``retort.models`` hold the bundled model templates
  (``retort.models.qwen3.parse(text, prefix=...)``);
- ``apply_chat_template(conversation, chat_template=...)`` renders a chat
  template as transformers does (``tokenize=False``), without jinja2;
- ``patch_transformers()`` makes transformers itself (its module functions
  and tokenizers' ``parse_response`` / ``get_response_parser``) use retort.

Templates are given as dicts (the ``response_template`` of a
``tokenizer_config.json``), as JSON text, as compiled ``retort.Template``
objects, or as transformers' ``ResponseTemplate``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from . import models, templates
from .chat import ChatTemplate, ChatTemplateError, apply_chat_template, render_jinja_template
from ._native import ResponseParser, Template, parse_response
from ._native import parse_many as _parse_many
from ._patch import patch_transformers, transformers_patched, unpatch_transformers

__all__ = [
    "ChatTemplate",
    "ChatTemplateError",
    "ResponseParser",
    "apply_chat_template",
    "render_jinja_template",
    "Template",
    "models",
    "parse_many",
    "parse_response",
    "patch_transformers",
    "templates",
    "transformers_patched",
    "unpatch_transformers",
]


def parse_many(
    texts: Iterable[str],
    response_template: Any,
    *,
    prefixes: str | Sequence[str] | None = None,
    tools: Iterable[Any] | None = None,
    threads: int | None = None,
    errors: Literal["raise", "return"] = "raise",
    output: Literal["dict", "json"] = "dict",
    reasoning_format: Literal["auto", "none"] = "auto",
) -> list[Any]:
    """Parses many complete generations at once, on all cores.

    ``texts`` is a sequence of generations; ``prefixes`` either one prompt
    (a ``str``, used for every text) or one prompt per text. As with
    ``parse_response``, a prefix is required (``""`` opts out). The
    template is compiled once; the texts are parsed by ``threads`` threads
    (default: every core) with the GIL released, and the messages come back
    as a list in input order.

    ``errors="raise"`` (the default) raises the exception of the first text
    (lowest index) that fails, as the reference's loop over
    ``parse_response`` would, after the whole batch ran; the exception has
    an ``index`` attribute. ``errors="return"`` puts the exception object in
    that text's place instead, so one bad generation in a million does not
    cost the batch.

    ``output="json"`` returns each message as the text
    ``json.dumps(message, ensure_ascii=False)`` would write (``NaN``,
    ``Infinity`` and big integers included), written on the worker threads:
    building Python objects needs the GIL, so for a pipeline that stores
    JSON anyway this is the fast path that scales with the cores.

    ``reasoning_format="none"`` keeps the reasoning inline in ``content``,
    delimiters included (llama.cpp's ``none``); ``"auto"`` splits it out.
    """
    return _parse_many(
        texts,
        response_template,
        prefixes=prefixes,
        tools=tools,
        threads=threads,
        errors=errors,
        output=output,
        reasoning_format=reasoning_format,
    )
