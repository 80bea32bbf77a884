"""The package's own API: the batch function, the bundled templates, the
compiled Template object and the extra attributes of exceptions."""

from __future__ import annotations

import json

import pytest

import retort
from vectors import OWN_CASES, OWN_TEMPLATES, REPO, SHARED_CASES, SHARED_TEMPLATES, load_cases, strict_equal


def all_cases():
    files = [(SHARED_CASES / f"{n}.jsonl", SHARED_TEMPLATES) for n in ("suite", "gen", "extra")]
    files += [(p, OWN_TEMPLATES) for p in sorted(OWN_CASES.glob("*.jsonl"))]
    return [c for path, t in files if path.exists() for c in load_cases(path, t) if "whole" in c["expected"]]


def one_by_one(case):
    try:
        return retort.parse_response(case["text"], case["template"], prefix=case["prefix"], tools=case.get("tools"))
    except Exception as e:  # noqa: BLE001
        return e


def same(a, b):
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b) and str(a) == str(b)
    return strict_equal(a, b)


def test_parse_many_equals_parse_response_in_input_order():
    """Every vector, grouped by template: the batch (on 1, 2 and all
    threads) gives what the one-shot function gives, item by item."""
    groups: dict[str, list] = {}
    for case in all_cases():
        key = json.dumps([case["template"], case.get("tools")], sort_keys=True)
        groups.setdefault(key, []).append(case)
    checked = 0
    for cases in groups.values():
        want = [one_by_one(c) for c in cases]
        for threads in (1, 2, None):
            got = retort.parse_many(
                [c["text"] for c in cases],
                cases[0]["template"],
                prefixes=[c["prefix"] for c in cases],
                tools=cases[0].get("tools"),
                threads=threads,
                errors="return",
            )
            assert len(got) == len(want)
            for i, (w, g) in enumerate(zip(want, got)):
                assert same(w, g), (cases[i]["id"], w, g)
                if isinstance(g, Exception):
                    assert g.index == i
        # JSON output: what json.dumps writes of the same messages.
        texts = retort.parse_many(
            [c["text"] for c in cases],
            cases[0]["template"],
            prefixes=[c["prefix"] for c in cases],
            tools=cases[0].get("tools"),
            errors="return",
            output="json",
        )
        for i, (w, g) in enumerate(zip(want, texts)):
            if isinstance(w, Exception):
                assert same(w, g), (cases[i]["id"], w, g)
            else:
                assert g == json.dumps(w, ensure_ascii=False), cases[i]["id"]
                assert strict_equal(json.loads(g), w), cases[i]["id"]
        checked += len(cases)
    assert checked > 100


def test_parse_many_raises_the_first_failure_by_default():
    template = {"start_anchor": "<a>", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}, "c": {}}}
    texts = ["<n>1</n>", "<n>x</n>", "<n>2</n>", "<n>y</n>"] * 50
    with pytest.raises(ValueError) as info:
        retort.parse_many(texts, template, prefixes="")
    assert info.value.index == 1
    assert str(info.value) == str(one_by_one({"text": "<n>x</n>", "template": template, "prefix": ""}))
    out = retort.parse_many(texts, template, prefixes="", errors="return")
    assert [isinstance(x, ValueError) for x in out[:4]] == [False, True, False, True]
    assert out[2] == {"n": 2}


def test_parse_many_checks_its_arguments():
    t = retort.templates.load("qwen3")
    with pytest.raises(ValueError, match="requires `prefix`"):
        retort.parse_many(["x"], t)
    with pytest.raises(ValueError, match="1 text"):
        retort.parse_many(["x"], t, prefixes=["", ""])
    with pytest.raises(TypeError):
        retort.parse_many("x", t, prefixes="")
    with pytest.raises(ValueError):
        retort.parse_many(["x"], t, prefixes="", errors="ignore")
    with pytest.raises(ValueError):
        retort.parse_many(["x"], t, prefixes="", threads=0)
    with pytest.raises(ValueError):
        retort.parse_many(["x"], t, prefixes="", output="yaml")
    assert retort.parse_many([], t, prefixes="") == []


def test_bundled_templates_are_the_repository_templates():
    files = sorted(p.stem for p in (REPO / "templates").glob("*.json"))
    assert retort.templates.names() == files
    for name in files:
        assert retort.templates.spec(name) == json.loads((REPO / "templates" / f"{name}.json").read_text())
        assert isinstance(retort.templates.load(name), retort.Template)
    with pytest.raises(KeyError):
        retort.templates.spec("no-such-model")


def test_models_resolve_from_hub_names():
    assert retort.templates.resolve("qwen3") == "qwen3"
    assert retort.templates.resolve("Qwen/Qwen3-8B") == "qwen3"
    with pytest.raises(KeyError, match="qwen3"):
        retort.templates.resolve("Qwen/Qwen9-1B")


def test_models_parse_with_their_template():
    text = "<think>Hm.</think>Hi!<|im_end|>"
    spec = retort.templates.spec("qwen3")
    want = retort.parse_response(text, spec, prefix="")
    assert strict_equal(retort.models.qwen3.parse(text, prefix=""), want)
    assert strict_equal(retort.models.qwen3.parse_many([text], prefixes="")[0], want)
    parser = retort.models.qwen3.parser("")
    parser.feed(text)
    assert strict_equal(parser.finalize()[0], want)
    assert retort.models.glm_4_5.name == "glm-4.5"
    with pytest.raises(AttributeError):
        retort.models.no_such_model  # noqa: B018


def test_template_forms_agree():
    spec = retort.templates.spec("gpt-oss")
    text = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|end|>"
    want = retort.parse_response(text, spec, prefix="")
    for form in (json.dumps(spec), retort.Template(spec), {"response_template": spec, "chat_template": "x"}):
        if isinstance(form, dict):
            form = json.dumps(form)  # a whole tokenizer_config.json, as text
        assert strict_equal(retort.parse_response(text, form, prefix=""), want)
    assert retort.Template(spec).fields == list(spec["fields"])


def test_template_errors_say_where():
    with pytest.raises(ValueError) as info:
        retort.Template('{"start_anchor": "<a>", "fields": {"c": {"open": "<c>", "bogus": 1}}}')
    assert info.value.rule == "unknown-key"
    assert info.value.path.startswith("fields.c")
    assert info.value.location is not None
    with pytest.raises(ValueError, match="must be a dict, got int"):
        retort.Template(3)
    with pytest.raises(TypeError, match="set"):
        retort.Template({"start_anchor": "<a>", "fields": {"c": {}}, "defaults": {"x": {1, 2}}})


def test_parse_errors_carry_the_field_and_raw_text():
    template = {"start_anchor": "<a>", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}, "c": {}}}
    parser = retort.ResponseParser(template, prefix="")
    with pytest.raises(ValueError) as info:
        parser.feed("<n> twelve </n>")
    assert (info.value.field, info.value.raw) == ("n", " twelve ")
    assert isinstance(info.value.offset, int)


def test_a_prompt_without_the_start_anchor_is_reported():
    """gpt-oss rendered without the generation prompt: the whole prompt is
    parsed (the reference's semantics), and the parser says so; with
    ``require_anchor=True`` it raises instead, as a ValueError holding the
    prompt."""
    prompt = "<|start|>user<|message|>Hi<|end|>"
    gpt_oss = retort.templates.spec("gpt-oss")
    parser = retort.ResponseParser(gpt_oss, prefix=prompt)
    assert parser.anchor_missing is True
    parser.feed("<|channel|>final<|message|>Hello!<|return|>")
    message, _ = parser.finalize()
    assert message["content"] == "Hello!"
    assert retort.ResponseParser(gpt_oss, prefix=prompt + "<|start|>assistant").anchor_missing is False
    assert retort.ResponseParser(gpt_oss, prefix="").anchor_missing is False
    with pytest.raises(ValueError, match="start anchor") as info:
        retort.ResponseParser(gpt_oss, prefix=prompt, require_anchor=True)
    assert info.value.raw == prompt


def test_text_no_region_claims_is_reported():
    gpt_oss = retort.templates.spec("gpt-oss")
    parser = retort.ResponseParser(gpt_oss, prefix="<|start|>assistant")
    parser.feed("The weather is sunny.")
    message, _ = parser.finalize()
    assert "content" not in message
    assert parser.unclaimed == [(0, "The weather is sunny.")]
    # What follows the end of the turn is kept out of the message, and
    # reported too.
    qwen3 = retort.ResponseParser(retort.templates.spec("qwen3"), prefix="<|im_start|>assistant\n")
    qwen3.feed("Hello.<|im_end|>\nThe model ran on.")
    message, _ = qwen3.finalize()
    assert message["content"] == "Hello."
    assert qwen3.unclaimed == [(16, "\nThe model ran on.")]


def test_reasoning_format_none_keeps_the_reasoning_inline():
    """llama.cpp's ``reasoning_format: none``: the reasoning stays in the
    content with its delimiters (the prompt's ``<think>\\n`` included); the
    default splits it out, as the reference does. Every chunking gives the
    same message."""
    qwen = retort.templates.spec("qwen3.5")
    prompt = "<|im_start|>user\nHey<|im_end|>\n<|im_start|>assistant\n<think>\n"
    text = "I'm thinking\n</think>\n\nHello!<|im_end|>"
    inline = "<think>\nI'm thinking\n</think>\n\nHello!"
    assert retort.parse_response(text, qwen, prefix=prompt) == {
        "role": "assistant", "reasoning_content": "I'm thinking", "content": "Hello!"}
    assert retort.parse_response(text, qwen, prefix=prompt, reasoning_format="none") == {
        "role": "assistant", "content": inline}
    parser = retort.ResponseParser(qwen, prefix=prompt, reasoning_format="none")
    for ch in text:
        parser.feed(ch)
    message, _ = parser.finalize()
    assert message == {"role": "assistant", "content": inline}
    [batch] = retort.parse_many([text], qwen, prefixes=prompt, reasoning_format="none")
    assert batch == message
    with pytest.raises(ValueError, match="reasoning format"):
        retort.parse_response(text, qwen, prefix=prompt, reasoning_format="inline-ish")


def test_parse_many_releases_the_gil():
    """Another Python thread runs while the batch is parsed: with the GIL
    held through the native call it could not count at all."""
    import threading

    count = 0
    stop = threading.Event()

    def spin():
        nonlocal count
        while not stop.is_set():
            count += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        # Long texts: most of the call is parsing, not converting.
        texts = ["<think>" + "plain words " * 100_000 + "</think>done"] * 8
        template = retort.templates.load("qwen3")
        before = count
        out = retort.parse_many(texts, template, prefixes="", threads=1)
        during = count - before
    finally:
        stop.set()
        spinner.join()
    assert len(out) == 8 and out[0]["content"] == "done"
    assert during > 1000, during
