"""Type stubs of the extension module (src/lib.rs)."""

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, Union

Event = dict[str, Any]
"""``{"type": "region_open", "field": str}``,
``{"type": "region_chunk", "field": str, "text": str, "dirty": bool}`` or
``{"type": "region_close", "field": str, "value": Any}``."""

Tool = Union[dict[str, Any], Callable[..., Any]]
# transformers' ``ResponseTemplate`` objects are accepted too (not named
# here, so that type-checking does not need transformers).
TemplateLike = Union[dict[str, Any], str, "Template"]

PREFIX_REQUIRED: str

class Template:
    """A compiled response template (from a dict, JSON text, or transformers'
    ``ResponseTemplate``). Raises ``ValueError`` (with ``rule``, ``path`` and
    ``location`` attributes) for a template the reference rejects."""

    def __init__(self, spec: TemplateLike) -> None: ...
    @property
    def fields(self) -> list[str]: ...
    @property
    def defaults(self) -> dict[str, Any]: ...

class ResponseParser:
    """transformers' ``ResponseParser`` on retort's engine: feed the
    generation piece by piece, then ``finalize``."""

    def __init__(
        self,
        response_template: TemplateLike,
        prefix: str | None = None,
        *,
        tools: Iterable[Tool] | None = None,
        require_anchor: bool = False,
        reasoning_format: Literal["auto", "none"] = "auto",
    ) -> None:
        """``reasoning_format="none"`` keeps the reasoning inline in
        ``content``, delimiters included (llama.cpp's ``none``); ``"auto"``
        (the default) splits it out, as the reference does."""
    @property
    def anchor_missing(self) -> bool:
        """The prompt (not empty) lacks the template's start anchor, so all
        of it was parsed as output; ``require_anchor=True`` raises instead."""
    @property
    def unclaimed(self) -> list[tuple[int, str]]:
        """The generation's text no region claimed, as ``(offset, text)``
        (templates without an implicit field drop it)."""
    @property
    def initial_events(self) -> list[Event]: ...
    def feed(self, text: str) -> list[Event]: ...
    def finalize(self) -> tuple[dict[str, Any], list[Event]]: ...

def parse_response(
    text: str,
    response_template: TemplateLike,
    *,
    prefix: str | None = None,
    tools: Iterable[Tool] | None = None,
    reasoning_format: Literal["auto", "none"] = "auto",
) -> dict[str, Any]: ...
def parse_many(
    texts: Iterable[str],
    response_template: TemplateLike,
    *,
    prefixes: str | Sequence[str] | None = None,
    tools: Iterable[Tool] | None = None,
    threads: int | None = None,
    errors: Literal["raise", "return"] = "raise",
    output: Literal["dict", "json"] = "dict",
    reasoning_format: Literal["auto", "none"] = "auto",
) -> list[Any]: ...
def bundled_names() -> list[str]: ...
def bundled_json(name: str) -> str: ...
def resolve_model(query: str) -> str: ...

class RenderFailure(Exception):
    """A chat-template render failed; ``args`` are (the Python exception
    class the reference raises, its message)."""

class ChatTemplate:
    """A compiled chat template (``retort.apply_chat_template`` takes one, or
    the template's text)."""

    def __init__(self, source: str) -> None: ...
    @property
    def source(self) -> str: ...
    def render(
        self,
        conversations: str,
        *,
        tools: str | None = None,
        documents: str | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str | None = None,
        kwargs: str | None = None,
        apply: bool = True,
        now: tuple[int, int, int, int, int, int, int] | None = None,
    ) -> list[tuple[str, list[tuple[int, int]]]]: ...
