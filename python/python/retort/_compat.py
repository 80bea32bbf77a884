"""Conversions the native module delegates to Python: transformers'
``ResponseTemplate`` objects and callable tools (both as the reference
reads them)."""

from __future__ import annotations

from inspect import isfunction, ismethod
from typing import Any


def _anchor(out: dict, literals: Any, compiled: Any, literal_key: str, pattern_key: str) -> None:
    if literals is not None:
        out[literal_key] = list(literals)
    elif compiled is not None:
        out[pattern_key] = compiled.pattern


def _looks_like_reference_template(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("defaults", "fields", "start_anchor_re", "implicit"))


def template_spec(obj: Any) -> dict:
    """The dict form of a template given as transformers' ``ResponseTemplate``
    (what ``load_response_template`` returned). Anything else that is not a
    dict is rejected with the reference's message."""
    if not _looks_like_reference_template(obj):
        raise ValueError(f"response_template must be a dict, got {type(obj).__name__}")
    spec: dict = {"defaults": obj.defaults, "fields": {}}
    _anchor(spec, obj.start_anchor_literals, obj.start_anchor_re, "start_anchor", "start_anchor_pattern")
    for name, f in obj.fields.items():
        field: dict = {}
        _anchor(field, f.open_literals, f.open_re, "open", "open_pattern")
        _anchor(field, f.close_literals, f.close_re, "close", "close_pattern")
        field["content"] = f.content
        if f.content_args:
            field["content_args"] = f.content_args
        field["repeats"] = f.repeats
        if f.join is not None:
            field["join"] = f.join
        field["optional"] = f.optional
        if f.transform is not None:
            field["transform"] = f.transform
            field["transform_each"] = f.transform_each
        spec["fields"][name] = field
    return spec


def tool_list(tools: Any) -> list:
    """``tools`` as a list of JSON-like tool definitions. Functions and
    methods become their JSON schema through transformers'
    ``get_json_schema``, as in the reference (imported only then); entries
    the reference ignores (anything but a dict) become ``None``, which the
    engine ignores too."""
    out = []
    for tool in tools or []:
        if isfunction(tool) or ismethod(tool):
            try:
                from transformers.utils.chat_template_utils import get_json_schema
            except ImportError as e:  # pragma: no cover - depends on the environment
                raise ImportError(
                    "a callable in `tools` is converted with transformers' get_json_schema, "
                    "which needs transformers installed; pass the tool's JSON schema instead"
                ) from e
            tool = get_json_schema(tool)
        out.append(tool if isinstance(tool, dict) else None)
    return out
