"""Chat templates from Python: the repository's rendering vectors (and the
shared templates' when a cached reference run is beside them) through
``retort.render_jinja_template``, as Python strings; and
``apply_chat_template``'s own behaviour."""

from __future__ import annotations

import datetime
import json

import pytest

import retort
from vectors import REPO

CASES = REPO / "tests" / "conformance" / "chat" / "cases.jsonl"
NOW = datetime.datetime(2026, 1, 1)


def _result(case):
    try:
        texts, spans = retort.render_jinja_template(
            [case["messages"]],
            tools=case["tools"],
            documents=case["documents"],
            chat_template=case["chat_template"],
            return_assistant_tokens_mask=True,
            continue_final_message=case["continue_final_message"],
            add_generation_prompt=case["add_generation_prompt"],
            now=NOW,
            **case["kwargs"],
        )
    except Exception as e:  # compared by class name and message, as the vectors hold them
        return {"error": {"type": getattr(e, "python_type", type(e).__name__), "message": str(e)}}
    return {"rendered": texts[0], "generation": [list(s) for s in spans[0]]}


def test_the_repository_vectors_render_as_the_reference():
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").split("\n") if line.strip()]
    assert len(cases) >= 5000
    failures = []
    for case in cases:
        want = case["expected"]
        got = _result(case)
        if "error" in want:
            ok = "error" in got and got["error"]["type"] == want["error"]["type"] and (
                case.get("error_match") in ("type", "any") or got["error"]["message"] == want["error"]["message"]
            )
        else:
            ok = got == {"rendered": want["rendered"], "generation": want["generation"]}
        if not ok:
            failures.append((case["id"], got, want))
    assert not failures, f"{len(failures)} of {len(cases)} differ; first: {failures[0]}"


TEMPLATE = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def test_apply_chat_template_renders_one_or_a_batch():
    chat = [{"role": "user", "content": "Hi!"}]
    assert retort.apply_chat_template(chat, TEMPLATE, add_generation_prompt=True) == "<|user|>Hi!\n<|assistant|>"
    assert retort.apply_chat_template([chat, chat], TEMPLATE) == ["<|user|>Hi!\n", "<|user|>Hi!\n"]
    compiled = retort.ChatTemplate(TEMPLATE)
    assert retort.apply_chat_template(chat, compiled) == "<|user|>Hi!\n"


def test_errors_are_the_references():
    with pytest.raises(ValueError, match="empty conversation"):
        retort.apply_chat_template([], TEMPLATE)
    with pytest.raises(ValueError, match="continue_final_message"):
        retort.apply_chat_template([{"role": "user", "content": "x"}], TEMPLATE,
                                   continue_final_message=True, add_generation_prompt=True)
    failing = "{{ raise_exception('no tools here') }}"
    with pytest.raises(Exception, match="no tools here") as info:
        retort.apply_chat_template([{"role": "user", "content": "x"}], failing)
    assert type(info.value).__name__ in ("TemplateError", "ChatTemplateError")
    with pytest.raises(ValueError, match="tokenize"):
        retort.apply_chat_template([{"role": "user", "content": "x"}], TEMPLATE, tokenize=True)


def test_a_hostile_template_stops_with_an_error():
    chat = [{"role": "user", "content": "x"}]
    # jinja2's sandbox refuses a range past MAX_RANGE, as the reference does.
    with pytest.raises(OverflowError, match="MAX_RANGE"):
        retort.apply_chat_template(chat, "{% for i in range(10**9) %}x{% endfor %}")
    # Within the ranges it allows, the work and output bounds stop it.
    nested = "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"
    with pytest.raises((TimeoutError, MemoryError)):
        retort.apply_chat_template(chat, nested)
