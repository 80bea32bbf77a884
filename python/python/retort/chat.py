"""Chat templates rendered as transformers renders them, without jinja2.

``apply_chat_template(conversation, chat_template=..., ...)`` gives the text
transformers' ``tokenizer.apply_chat_template(..., tokenize=False)`` gives
(transformers 5.23.0), on retort's Rust renderer: byte for byte the same
prompt, sandboxed and bounded (a template that loops forever, recurses
without end or builds a huge string stops with an error). A list of
conversations gives a list of strings, as in transformers.

Errors are the reference's: ``ValueError`` and ``TypeError`` as Python
raises them; jinja2's ``TemplateError`` family (``raise_exception``,
``UndefinedError``, ``SecurityError``, ``TemplateSyntaxError``) as jinja2's
own classes when jinja2 is installed, else as :class:`ChatTemplateError`
(whose ``python_type`` names the class the reference raises).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, Union

from ._native import ChatTemplate, RenderFailure

__all__ = ["ChatTemplate", "ChatTemplateError", "apply_chat_template", "render_jinja_template"]

Conversation = Sequence[Mapping[str, Any]]


class ChatTemplateError(Exception):
    """A render failed the way jinja2 fails (jinja2 is not installed, so its
    class cannot be raised): ``python_type`` is that class's name."""

    def __init__(self, python_type: str, message: str) -> None:
        super().__init__(message)
        self.python_type = python_type
        self.message = message


_BUILTIN = {
    "ValueError": ValueError,
    "TypeError": TypeError,
    "RecursionError": RecursionError,
    "MemoryError": MemoryError,
    "KeyError": KeyError,
    "IndexError": IndexError,
    "AttributeError": AttributeError,
    "ZeroDivisionError": ZeroDivisionError,
    "OverflowError": OverflowError,
    "OSError": OSError,
    # A render limit (`retort.chat` Limits): the class Python would end in
    # on running out of the same resource.
    "TimeoutError": TimeoutError,
}


def _error(failure: RenderFailure) -> Exception:
    python_type, message = failure.args
    builtin = _BUILTIN.get(python_type)
    if builtin is not None:
        return builtin(message)
    try:
        import jinja2.exceptions as jinja_errors  # the reference's classes, when present
    except ImportError:
        return ChatTemplateError(python_type, message)
    cls = getattr(jinja_errors, python_type, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        if python_type == "TemplateSyntaxError":
            return cls(message, 0)
        return cls(message)
    return ChatTemplateError(python_type, message)


@functools.lru_cache(maxsize=64)
def _compiled(source: str) -> ChatTemplate:
    # As transformers caches its compiled templates: a template is parsed
    # once per process, not once per render.
    try:
        return ChatTemplate(source)
    except RenderFailure as failure:
        raise _error(failure) from None


def _plain(value: Any) -> Any:
    """``transformers.utils.chat_template_utils._plain_template_data``: the
    plain JSON data a template may see; anything else becomes the
    placeholder ``"<TypeName>"``."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and callable(item):
        return _plain(item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump())
    return f"<{type(value).__name__}>"


def _tool_schemas(tools: Sequence[Any] | None) -> list[Any] | None:
    if tools is None:
        return None
    out = []
    for tool in tools:
        if isinstance(tool, dict):
            out.append(tool)
        elif callable(tool):
            try:
                from transformers.utils import get_json_schema
            except ImportError:
                raise TypeError(
                    "a callable tool needs transformers' get_json_schema to become a JSON schema; "
                    "pass the schema (a dict) instead, or install transformers"
                ) from None
            out.append(get_json_schema(tool))
        else:
            raise ValueError(
                "Tools should either be a JSON schema, or a callable function with type hints "
                "and a docstring suitable for auto-conversion to a schema."
            )
    return out


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _render(chats, template, tools, documents, add_generation_prompt, continue_final_message, kwargs, apply, now):
    template = template if isinstance(template, ChatTemplate) else _compiled(template)
    plain_tools = _plain(_tool_schemas(tools))
    if documents is not None:
        for document in documents:
            if not isinstance(document, dict):
                raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")
    try:
        return template.render(
            _dumps([_plain(list(c)) for c in chats]),
            tools=None if plain_tools is None else _dumps(plain_tools),
            documents=None if documents is None else _dumps(_plain(documents)),
            add_generation_prompt=bool(add_generation_prompt),
            continue_final_message=continue_final_message or None,
            kwargs=_dumps(_plain(kwargs)),
            apply=apply,
            now=None if now is None else (now.year, now.month, now.day, now.hour, now.minute,
                                          now.second, now.microsecond),
        )
    except RenderFailure as failure:
        raise _error(failure) from None


def render_jinja_template(
    conversations: Sequence[Conversation],
    tools: Sequence[Any] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    chat_template: Union[str, ChatTemplate, None] = None,
    return_assistant_tokens_mask: bool = False,
    continue_final_message: Union[bool, str] = False,
    add_generation_prompt: bool = False,
    *,
    now: datetime.datetime | None = None,
    **kwargs: Any,
) -> tuple[list[str], list[list[tuple[int, int]]]]:
    """``transformers.utils.chat_template_utils.render_jinja_template``:
    the same arguments and result (the rendered conversations, and with
    ``return_assistant_tokens_mask`` the ``{% generation %}`` spans of each,
    as character offsets). ``now`` is the time ``strftime_now`` formats."""
    if chat_template is None:
        raise ValueError("render_jinja_template needs a chat_template")
    chats = [getattr(c, "messages", c) for c in conversations]
    rendered = _render(chats, chat_template, tools, documents, add_generation_prompt,
                       continue_final_message, kwargs, apply=False, now=now)
    texts = [text for text, _ in rendered]
    spans = [list(s) for _, s in rendered] if return_assistant_tokens_mask else []
    return texts, spans


def apply_chat_template(
    conversation: Union[Conversation, Sequence[Conversation]],
    chat_template: Union[str, ChatTemplate],
    *,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: Union[bool, str] = False,
    tokenize: bool = False,
    return_generation_spans: bool = False,
    now: datetime.datetime | None = None,
    **kwargs: Any,
) -> Any:
    """The prompt ``tokenizer.apply_chat_template(conversation,
    tokenize=False, ...)`` renders, for ``chat_template`` (the template's
    text, or a compiled :class:`ChatTemplate`).

    ``kwargs`` are template variables (``enable_thinking``,
    ``reasoning_effort``, ``bos_token``, ...). A list of conversations gives
    a list of strings. With ``return_generation_spans``, each result is
    ``(text, [(start, end), ...])``: the character ranges of the template's
    ``{% generation %}`` blocks (transformers' assistant masks). ``now`` is
    the time ``strftime_now`` formats (default: the current time).
    """
    if tokenize:
        raise ValueError(
            "retort.apply_chat_template renders text (tokenize=False); tokenize the text with "
            "your tokenizer"
        )
    batched = bool(conversation) and isinstance(conversation, (list, tuple)) and (
        isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages")
    )
    conversations = conversation if batched else [conversation]
    chats = [getattr(c, "messages", c) for c in conversations]
    rendered = _render(chats, chat_template, tools, documents, add_generation_prompt,
                       continue_final_message, kwargs, apply=True, now=now)
    results = [(text, spans) if return_generation_spans else text for text, spans in rendered]
    return results if batched else results[0]
