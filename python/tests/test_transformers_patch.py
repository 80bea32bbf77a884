"""With ``retort.patch_transformers()``, transformers' own API runs on retort
and gives the reference's results: the module functions, and a tokenizer's
``parse_response`` / ``get_response_parser`` (a tokenizer built offline over
a tiny WordLevel vocabulary)."""

from __future__ import annotations

import pytest

import retort
from vectors import SHARED_CASES, SHARED_TEMPLATES, coalesce, load_cases, problems, run, strict_equal

transformers = pytest.importorskip("transformers", reason="transformers is not installed")
tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")

import transformers.tokenization_utils_base as tub  # noqa: E402
import transformers.utils.chat_parsing as cp  # noqa: E402
import transformers.utils.chat_parsing.response_parser as cp_rp  # noqa: E402
from transformers.utils.chat_parsing.response_templates import load_response_template  # noqa: E402

# The reference's own objects, captured before any patching.
REF_PARSER = cp.ResponseParser
REF_PARSE = cp.parse_response

SUITE = SHARED_CASES / "suite.jsonl"


def suite_cases():
    if not SUITE.exists():
        return [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=f"{SUITE} is absent: no shared vectors"))]
    return [pytest.param(c, id=c["id"]) for c in load_cases(SUITE, SHARED_TEMPLATES)]


def make_tokenizer(template):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "hello": 1, "world": 2}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", response_template=template)


@pytest.fixture
def patched():
    retort.patch_transformers()
    yield
    retort.unpatch_transformers()


def test_patch_replaces_every_binding_and_unpatch_restores_them():
    assert not retort.transformers_patched()
    retort.patch_transformers()
    retort.patch_transformers()  # idempotent
    try:
        assert retort.transformers_patched()
        assert cp.ResponseParser is retort.ResponseParser
        assert cp.parse_response is retort.parse_response
        assert cp_rp.ResponseParser is retort.ResponseParser
        assert cp_rp.parse_response is retort.parse_response
        assert tub.ResponseParser is retort.ResponseParser
        assert tub._template_parse_response is retort.parse_response
    finally:
        retort.unpatch_transformers()
    retort.unpatch_transformers()  # idempotent
    assert not retort.transformers_patched()
    assert cp.ResponseParser is REF_PARSER and cp.parse_response is REF_PARSE
    assert cp_rp.ResponseParser is REF_PARSER and cp_rp.parse_response is REF_PARSE
    assert tub.ResponseParser is REF_PARSER and tub._template_parse_response is REF_PARSE


@pytest.mark.parametrize("case", suite_cases())
def test_suite_through_transformers_api(case, patched):
    expected = case["expected"]
    template, prefix, tools = case["template"], case["prefix"], case.get("tools")
    if "template_error" in expected:
        with pytest.raises(ValueError) as info:
            cp.parse_response(case["text"], template, prefix=prefix)
        assert str(info.value) == expected["template_error"]["message"]
        return
    whole = expected["whole"]
    chunkings = [[case["text"]], *case.get("chunkings", [])]
    found = []

    # The module's streaming class (retort's, by the patch).
    for i, chunks in enumerate(chunkings):
        found += problems(whole, run(lambda c: cp.ResponseParser(template, prefix=prefix, tools=tools), case, chunks), f"ResponseParser #{i}")

    # A tokenizer: its get_response_parser streams every chunking...
    tokenizer = make_tokenizer(template)
    for i, chunks in enumerate(chunkings):
        def factory(c):
            parser = tokenizer.get_response_parser(prefix=prefix, tools=tools)
            assert type(parser) is retort.ResponseParser
            return parser

        found += problems(whole, run(factory, case, chunks), f"get_response_parser #{i}")

    # ...and its parse_response (and the module's) returns the message.
    for name, call in [
        ("transformers.utils.chat_parsing.parse_response", lambda: cp.parse_response(case["text"], template, prefix=prefix, tools=tools)),
        ("tokenizer.parse_response", lambda: tokenizer.parse_response(case["text"], prefix=prefix, tools=tools)),
        ("tokenizer.parse_response (batch)", lambda: tokenizer.parse_response([case["text"]] * 2, prefix=prefix, tools=tools)),
        ("parse_response(ResponseTemplate)", lambda: cp.parse_response(case["text"], load_response_template(template), prefix=prefix, tools=tools)),
    ]:
        try:
            got = call()
        except Exception as e:  # noqa: BLE001
            if "error" not in whole or whole["error"]["type"] != type(e).__name__ or whole["error"]["message"] != str(e):
                found.append(f"{name}: {type(e).__name__}: {e}")
            continue
        want = [whole.get("message")] * 2 if "batch" in name else whole.get("message")
        if "error" in whole or not strict_equal(want, got):
            found.append(f"{name}: {got!r}")
    assert not found, "\n".join(found)


def test_token_ids_are_decoded_by_the_tokenizer_then_parsed_by_retort(patched):
    template = {"start_anchor": "world", "fields": {"content": {}}, "defaults": {"role": "assistant"}}
    tokenizer = make_tokenizer(template)
    ids = tokenizer("hello world")["input_ids"]
    got = tokenizer.parse_response(ids, prefix=ids[:1])
    retort.unpatch_transformers()
    want = tokenizer.parse_response(ids, prefix=ids[:1])
    assert strict_equal(got, want) and want["content"].endswith("hello world")


def weather(city: str, days: int, metric: bool = True) -> dict:
    """Looks up the weather.

    Args:
        city: The city.
        days: How many days ahead.
        metric: Whether to use metric units.
    """
    return {}


def test_callable_tools_are_converted_as_the_reference_does():
    template = retort.templates.spec("qwen3")
    text = (
        '<think>x</think><tool_call>\n{"name": "weather", "arguments": {"city": "Oslo", "days": "3", "metric": "false"}}'
        "\n</tool_call><|im_end|>"
    )
    for tools in ([weather], [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {"days": {"type": "integer"}}}}}]):
        want = REF_PARSE(text, template, prefix="", tools=tools)
        got = retort.parse_response(text, template, prefix="", tools=tools)
        assert strict_equal(want, got), (want, got)
    # The cast happened (a test of the test: tools matter here).
    assert retort.parse_response(text, template, prefix="", tools=[weather])["tool_calls"][0]["function"]["arguments"]["days"] == 3


def test_prefix_and_finalize_errors_match_the_reference():
    template = retort.templates.spec("qwen3")
    for impl in (REF_PARSER, retort.ResponseParser):
        with pytest.raises(ValueError) as info:
            impl(template)
        if impl is REF_PARSER:
            ref_message = str(info.value)
        else:
            assert str(info.value) == ref_message
    ref, ours = REF_PARSER(template, prefix=""), retort.ResponseParser(template, prefix="")
    ref.finalize()
    ours.finalize()
    for method in ("finalize", "feed"):
        args = ("x",) if method == "feed" else ()
        with pytest.raises(RuntimeError) as want:
            getattr(ref, method)(*args)
        with pytest.raises(RuntimeError) as got:
            getattr(ours, method)(*args)
        assert str(want.value) == str(got.value)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "f", "arguments": {"n": NaN, "i": Infinity, "m": -Infinity, "big": 123456789012345678901234567890, "neg": -98765432109876543210, "f": 1.0, "t": true, "z": 0, "nil": null, "e": 1e400, "l": [1, 1.0, false, "1"]}}</tool_call>',
        '<tool_call>{"name": "f", "arguments": {"b": 2, "a": 1, "c": {"y": 1, "x": 2}}}</tool_call>',
    ],
)
def test_python_types_match_the_reference(text):
    template = retort.templates.spec("qwen3")
    want = REF_PARSE(text, template, prefix="")
    got = retort.parse_response(text, template, prefix="")
    assert strict_equal(want, got), (want, got)
    # And the events, streamed in 3-character pieces.
    ref, ours = REF_PARSER(template, prefix=""), retort.ResponseParser(template, prefix="")
    want_events, got_events = [], []
    for i in range(0, len(text), 3):
        want_events += ref.feed(text[i : i + 3])
        got_events += ours.feed(text[i : i + 3])
    want_events += ref.finalize()[1]
    got_events += ours.finalize()[1]
    assert strict_equal(coalesce(want_events), coalesce(got_events))
