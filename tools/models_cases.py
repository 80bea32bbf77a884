"""Writes conformance cases (tests/conformance/README.md, without
`expected`) for every bundled model template: outputs in each model's own
format, written for this project from the formats the templates describe.

    python3 tools/models_cases.py > raw.jsonl
    python3 tools/fuzz.py expect raw.jsonl > tests/conformance/cases/models.jsonl
    python3 tools/models_cases.py check tests/conformance/cases/models.jsonl

Per family: reasoning then an answer, the answer alone, the prompt that turns
thinking off (where the chat template has one), the prompt that opens the
reasoning (where it has one), one tool call (with tool definitions, so the
reference casts arguments), parallel calls, arguments with nested JSON,
unicode and escapes, and two truncated outputs. The prefixes are the
generation prompts of tests/models.json. Each case has four chunkings: the
whole text, one character at a time, fixed pieces of five, and seeded random
cuts. Deterministic: the same file every run.
"""

from __future__ import annotations

import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIMPLE = {"city": "Paris", "days": 3}
SECOND = {"query": "rain gear", "limit": 5}
NESTED = {
    "city": "Tōkyō 東京 🌧",
    "filters": {"units": "metric", "tags": ["a", "b\"c", "ü"]},
    "note": "line one\nline two \\ with a tab\tand 'quotes'",
    "exact": True,
    "ratio": 0.25,
    "missing": None,
}

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "search_docs", "parameters": {"type": "object", "properties": {
        "query": {"type": "string"}, "limit": {"type": "integer"}}}}},
]

REASONING = "The user wants the weather in Paris.\nI should call the weather tool, then answer briefly."
ANSWER = "It will be sunny in Paris — 24 °C, with a light breeze. Enjoy!"
PREAMBLE = "Let me check that for you."


def js(v):
    return json.dumps(v, ensure_ascii=False)


def raw_value(v):
    """A parameter value as XML-style formats write it: strings bare,
    everything else as JSON."""
    return v if isinstance(v, str) else js(v)


def gemma_value(v):
    if isinstance(v, str):
        return '<|"|>' + v + '<|"|>'
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{gemma_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(gemma_value(x) for x in v) + "]"
    return js(v)


# ---------------------------------------------------------------------------
# Tool-call encoders: (calls) -> text, where calls = [(name, args, id)].


def hermes(calls):
    return "\n".join(f"<tool_call>\n{js({'name': n, 'arguments': a})}\n</tool_call>" for n, a, _ in calls)


def coder(calls, tag="tool_call", pad=True):
    nl = "\n" if pad else ""
    out = []
    for n, a, _ in calls:
        params = "".join(f"<parameter={k}>{nl}{raw_value(v)}{nl}</parameter>\n" for k, v in a.items())
        out.append(f"<{tag}>\n<function={n}>\n{params}</function>\n</{tag}>")
    return "\n".join(out)


def glm(calls, compact=False):
    sep = "" if compact else "\n"
    out = []
    for n, a, _ in calls:
        pairs = "".join(f"<arg_key>{k}</arg_key>{sep}<arg_value>{raw_value(v)}</arg_value>{sep}" for k, v in a.items())
        out.append(f"<tool_call>{n}{sep}{pairs}</tool_call>")
    return "\n".join(out)


def minimax(calls):
    inv = "".join(
        f"<invoke name=\"{n}\">\n" + "".join(f"<parameter name=\"{k}\">{raw_value(v)}</parameter>\n" for k, v in a.items()) + "</invoke>\n"
        for n, a, _ in calls
    )
    return f"<minimax:tool_call>\n{inv}</minimax:tool_call>"


def deepseek_r1(calls):
    body = "".join(f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{js(a)}\n```<｜tool▁call▁end｜>" for n, a, _ in calls)
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def deepseek_v31(calls):
    body = "".join(f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{js(a)}<｜tool▁call▁end｜>" for n, a, _ in calls)
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def dsml(calls, section="function_calls"):
    inv = ""
    for n, a, _ in calls:
        params = "".join(
            f"<｜DSML｜parameter name=\"{k}\" string=\"{'true' if isinstance(v, str) else 'false'}\">{raw_value(v)}</｜DSML｜parameter>\n"
            for k, v in a.items()
        )
        inv += f"<｜DSML｜invoke name=\"{n}\">\n{params}</｜DSML｜invoke>\n"
    return f"<｜DSML｜{section}>\n{inv}</｜DSML｜{section}>"


def atem(calls):
    # Muse Glimmer: one message per call, addressed to the tool; the prompt
    # (or the message before) already wrote `<|start|>assistant`.
    return "<|eom|><|start|>assistant".join(
        f" to={n}<|message|><atem:function_calls>\n<atem:invoke name=\"{n}\">\n"
        + "".join(f"<atem:parameter name=\"{k}\">{raw_value(v)}</atem:parameter>\n" for k, v in a.items())
        + "</atem:invoke>\n</atem:function_calls>"
        for n, a, _ in calls
    ) + "<|eot|>"


def solar(calls):
    body = "".join(f"<|tool_call:begin|>{i}<|tool_call:name|>{n}<|tool_call:args|>{js(a)}<|tool_call:end|>" for n, a, i in calls)
    return f"<|tool_calls|>{body}<|calls|>"


def harmony(calls):
    # The prompt (or the message before) already wrote `<|start|>assistant`.
    return "<|start|>assistant".join(
        f"<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{js(a)}<|call|>" for n, a, _ in calls
    )


def pythonic(calls):
    # Values as the chat templates render them: JSON (`key={{ val | tojson }}`).
    return "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={js(v)}" for k, v in a.items()) + ")" for n, a, _ in calls) + "]"


def gemma4(calls):
    return "".join(f"<|tool_call>call:{n}{gemma_value(a)}<tool_call|>" for n, a, _ in calls)


def llama(calls):
    return "; ".join(js({"name": n, "parameters": a}) for n, a, _ in calls)


def json_list(calls, with_id=False):
    items = []
    for n, a, i in calls:
        item = {"name": n, "arguments": a}
        if with_id:
            item["id"] = i
        items.append(item)
    return js(items)


def mistral_v11(calls, with_id):
    return "".join(f"[TOOL_CALLS]{n}" + (f"[CALL_ID]{i}" if with_id else "") + f"[ARGS]{js(a)}" for n, a, i in calls)


def cohere(calls):
    items = ",\n".join("    " + js({"tool_call_id": str(k), "tool_name": n, "parameters": a}) for k, (n, a, _) in enumerate(calls))
    return f"<|START_ACTION|>[\n{items}\n]<|END_ACTION|>"


def cohere_plus(calls):
    items = ",\n".join("    " + js({"tool_name": n, "parameters": a}) for n, a, _ in calls)
    return f"Action:\n```json\n[\n{items}\n]\n```"


def kimi(calls):
    body = "".join(f"<|tool_call_begin|>functions.{n}:{k}<|tool_call_argument_begin|>{js(a)}<|tool_call_end|>" for k, (n, a, _) in enumerate(calls))
    return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>"


def functionary31(calls):
    return "".join(f"<function={n}>{js(a)}</function>" for n, a, _ in calls)


def functionary32(calls):
    return "".join(f">>>{n}\n{js(a)}" for n, a, _ in calls)


def apertus(calls):
    return "<|tools_prefix|>[" + ", ".join(js({n: a}) for n, a, _ in calls) + "]<|tools_suffix|>"


def step3(calls):
    out = []
    for n, a, _ in calls:
        params = "".join(f"<steptml:parameter name=\"{k}\">{raw_value(v)}</steptml:parameter>" for k, v in a.items())
        out.append(f"<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"{n}\">{params}</steptml:invoke><｜tool_call_end｜>")
    return "<｜tool_calls_begin｜>" + "<｜tool_sep｜>".join(out) + "<｜tool_calls_end｜>"


def minicpm(calls):
    return "".join(
        f"<function name=\"{n}\">" + "".join(f"<param name=\"{k}\">{raw_value(v)}</param>" for k, v in a.items()) + "</function>"
        for n, a, _ in calls
    )


def kimi_k3(calls):
    """Kimi-K3's XTML: a tools section, one call per `call` tag, each
    argument in its own tag with its JSON type; strings bare."""
    out = []
    for k, (n, a, _) in enumerate(calls, 1):
        args = "".join(f"<|open|>argument key=\"{key}\" type=\"{xtml_type(v)}\"<|sep|>{raw_value(v)}<|close|>argument<|sep|>" for key, v in a.items())
        out.append(f"<|open|>call tool=\"{n}\" index=\"{k}\"<|sep|>{args}<|close|>call<|sep|>")
    return "<|open|>tools<|sep|>" + "".join(out) + "<|close|>tools<|sep|>"


def xtml_type(v):
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "object" if isinstance(v, dict) else "array"


MM3 = "]<]minimax[>["


def mm3_xml(v):
    """A MiniMax-M3 value as its chat template writes it: objects and
    arrays as nested elements (`<item>` per array element), booleans as
    JSON, None left out."""
    if isinstance(v, dict):
        return "".join(f"{MM3}<{k}>{mm3_xml(x)}{MM3}</{k}>" for k, x in v.items() if x is not None)
    if isinstance(v, list):
        return "".join(f"{MM3}<item>{mm3_xml(x)}{MM3}</item>" for x in v)
    if isinstance(v, bool):
        return js(v)
    return str(v)


def minimax_m3(calls):
    inv = "".join(f"{MM3}<invoke name=\"{n}\">{mm3_xml(a)}{MM3}</invoke>\n" for n, a, _ in calls)
    return f"{MM3}<tool_call>\n{inv}{MM3}</tool_call>"


def minimax_m3_read(args):
    """What the template reads from MiniMax-M3's arguments: nested elements
    stay the text the model wrote (templates/README.md); None is never
    written."""
    return {k: mm3_xml(v) if isinstance(v, (dict, list)) else v for k, v in args.items() if v is not None}


def minimax_m1(calls):
    lines = "".join(f"{{\"name\": \"{n}\", \"arguments\": {js(a)}}}\n" for n, a, _ in calls)
    return f"<tool_calls>\n{lines}</tool_calls>"


def hunyuan(calls):
    t = ":opensource"
    out = []
    for n, a, _ in calls:
        pairs = "".join(f"<arg_key{t}>{k}</arg_key{t}>\n<arg_value{t}>{raw_value(v)}</arg_value{t}>\n" for k, v in a.items())
        out.append(f"<tool_call{t}>{n}<tool_sep{t}>\n{pairs}</tool_call{t}>\n")
    return f"<tool_calls{t}>\n" + "".join(out) + f"</tool_calls{t}>"


def gigachat(calls):
    n, a, _ = calls[0]  # one call per message in this format
    return f"<|message_sep|>\n\nfunction call<|role_sep|>\n{js({'name': n, 'arguments': a})}"


# ---------------------------------------------------------------------------
# Per template: reasoning delimiters (None = the family does not reason),
# the tool-call encoder (None = the family writes no calls), what wraps an
# answer, the end of turn, whether the encoder takes parallel calls and
# nested arguments, and (`read`) what the template reads of the arguments
# where that is not all of them.

THINK = ("<think>", "</think>")
FORMATS = {
    "smollm3": dict(think=("<think>\n", "\n</think>\n"), calls=hermes, eot="<|im_end|>"),
    "qwen2.5": dict(think=None, calls=hermes, eot="<|im_end|>"),
    "qwen3": dict(think=("<think>\n", "\n</think>\n\n"), calls=hermes, eot="<|im_end|>"),
    "qwen3-coder": dict(think=None, calls=coder, eot="<|im_end|>"),
    "qwen3.5": dict(think=("<think>\n", "\n</think>\n\n"), calls=coder, eot="<|im_end|>"),
    "qwq": dict(think=("<think>\n", "\n</think>\n\n"), calls=hermes, eot="<|im_end|>"),
    "deepseek-r1": dict(think=("<think>\n", "\n</think>\n\n"), calls=deepseek_r1, eot="<｜end▁of▁sentence｜>"),
    "deepseek-v3": dict(think=None, calls=deepseek_r1, eot="<｜end▁of▁sentence｜>"),
    "deepseek-v3.1": dict(think=THINK, calls=deepseek_v31, eot="<｜end▁of▁sentence｜>"),
    "deepseek-v3.2": dict(think=THINK, calls=dsml, eot="<｜end▁of▁sentence｜>"),
    "deepseek-v4": dict(think=THINK, calls=lambda c: dsml(c, "tool_calls"), eot="<｜end▁of▁sentence｜>"),
    "gpt-oss": dict(think=("<|channel|>analysis<|message|>", "<|end|><|start|>assistant"), calls=harmony,
                    wrap=("<|channel|>final<|message|>", ""), eot="<|return|>", after_call=True,
                    preamble=("<|channel|>commentary<|message|>", "<|end|><|start|>assistant"), sep=""),
    "muse-glimmer": dict(think=(" to=self<|message|>", "<|eom|><|start|>assistant"), calls=atem, wrap=(" to=user<|message|>", ""),
                         eot="<|eot|>", after_call=True, preamble=(" to=user<|message|>", "<|eom|><|start|>assistant"), sep=""),
    "solar-open": dict(think=("<|think|>", "<|end|><|begin|>assistant"), calls=solar, wrap=("<|content|>", ""), eot="<|end|>",
                       after_call=True, preamble=("<|content|>", "<|end|><|begin|>assistant"), sep="", ids=lambda k, n, i: i),
    "gemma-3": dict(think=None, calls=pythonic, eot="<end_of_turn>", calls_alone=True, extra=[
        # Where pythonic calls go beyond what the template reads exactly
        # (templates/README.md): Python literals, quotes, a call left open.
        ("Python-style values", "[f(a='x, y', b=\"q\\\"r\", c=True, d=None, e=[1, 2], g={\"k\": \"v)\"}), g()]"),
        ("a call list left open", "[f(a=1"),
    ]),
    "gemma4": dict(think=("<|channel>thought\n", "<channel|>"), calls=gemma4, eot="<turn|>"),
    "llama-3.1": dict(think=None, calls=llama, eot="<|eot_id|>", calls_alone=True, extra=[
        ("a JSON call after <|python_tag|>", '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>'),
        ("a built-in call (stays content)", '<|python_tag|>brave_search.call(query="Paris weather")<|eom_id|>'),
    ]),
    "mistral-nemo": dict(think=None, calls=lambda c: "[TOOL_CALLS]" + json_list(c, True), eot="</s>", ids=lambda k, n, i: i),
    "mistral-small-3.2": dict(think=None, calls=lambda c: mistral_v11(c, True), eot="</s>", ids=lambda k, n, i: i),
    "devstral": dict(think=None, calls=lambda c: mistral_v11(c, False), eot="</s>"),
    "magistral": dict(think=("[THINK]", "[/THINK]"), calls=lambda c: mistral_v11(c, False), eot="</s>"),
    "command-r-plus": dict(think=None, calls=cohere_plus, eot="<|END_OF_TURN_TOKEN|>"),
    "command-r7b": dict(think=("<|START_THINKING|>", "<|END_THINKING|>"), calls=cohere,
                        wrap=("<|START_RESPONSE|>", "<|END_RESPONSE|>"), eot="<|END_OF_TURN_TOKEN|>", ids=lambda k, n, i: str(k)),
    "command-a": dict(think=("<|START_THINKING|>", "<|END_THINKING|>"), calls=cohere,
                      wrap=("<|START_RESPONSE|>", "<|END_RESPONSE|>"), eot="<|END_OF_TURN_TOKEN|>", ids=lambda k, n, i: str(k)),
    "granite-3.3": dict(think=THINK, calls=lambda c: "<|tool_call|>" + json_list(c), eot="<|end_of_text|>",
                        wrap_after_think=("<response>", "</response>"), extra=[
        ("Granite 3.2's phrase markers", "Here is my thought process:\nThey ask about Paris.\nHere is my response:\nSunny.<|end_of_text|>"),
    ]),
    "granite-4": dict(think=None, calls=hermes, eot="<|end_of_text|>"),
    "glm-4.5": dict(think=("<think>", "</think>\n"), calls=glm, eot="<|user|>", lead="\n"),
    "glm-4.7": dict(think=THINK, calls=lambda c: glm(c, compact=True), eot="<|user|>"),
    "laguna": dict(think=THINK, calls=lambda c: glm(c, compact=True), eot="</assistant>", extra=[
        ("Laguna XS's layout (newlines around the reasoning and the arguments)",
         "<think>\nThey ask about Paris.\n</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n</assistant>"),
    ]),
    "kimi-k2": dict(think=THINK, calls=kimi, eot="<|im_end|>", ids=lambda k, n, i: f"functions.{n}:{k}"),
    "kimi-k2-thinking": dict(think=THINK, calls=kimi, eot="<|im_end|>", ids=lambda k, n, i: f"functions.{n}:{k}"),
    "kimi-k3": dict(think=("<|open|>think<|sep|>", "<|close|>think<|sep|>"), calls=kimi_k3,
                    wrap=("<|open|>response<|sep|>", "<|close|>response<|sep|>"), eot="<|close|>message<|sep|><|end_of_msg|>", sep=""),
    "minimax-m1": dict(think=("<think>\n", "\n</think>\n"), calls=minimax_m1, eot="<end_of_sentence>"),
    "minimax-m2": dict(think=("<think>\n", "\n</think>\n\n"), calls=minimax, eot="[e~["),
    "minimax-m3": dict(think=("<mm:think>", "</mm:think>"), calls=minimax_m3, eot="[e~[", sep="", read=minimax_m3_read),
    "hermes-2-pro": dict(think=None, calls=hermes, eot="<|im_end|>"),
    "bielik": dict(think=("<think>\n", "\n</think>\n"), calls=hermes, eot="<|im_end|>"),
    "phi-3.5": dict(think=None, calls=None, eot="<|end|>"),
    "phi-4-mini": dict(think=None, calls=lambda c: "functools" + json_list(c), eot="<|end|>", calls_last=True),
    "functionary-v3.1": dict(think=None, calls=functionary31, eot="<|eot_id|>"),
    "functionary-v3.2": dict(think=None, calls=functionary32, wrap=("all\n", ""), eot="<|eot_id|>", recipients=True),
    "nemotron-nano-v2": dict(think=("<think>\n", "\n</think>\n"), calls=lambda c: "<TOOLCALL>" + json_list(c) + "</TOOLCALL>", eot="<SPECIAL_12>"),
    "nemotron-3": dict(think=("<think>\n", "\n</think>\n"), calls=coder, eot="<|im_end|>"),
    "seed-oss": dict(think=("<seed:think>", "</seed:think>"), calls=lambda c: coder(c, "seed:tool_call", pad=False), eot="<seed:eos>"),
    "ernie-4.5": dict(think=("<think>\n", "\n</think>\n\n"), calls=hermes, eot="<|im_end|>"),
    "apertus": dict(think=("<|inner_prefix|>", "<|inner_suffix|>"), calls=apertus, eot="<|assistant_end|>"),
    # Apriel always reasons first: its output starts inside the reasoning.
    "apriel": dict(think=("Here are my reasoning steps:\n", "\n[BEGIN FINAL RESPONSE]\n"), calls=lambda c: "<tool_calls>" + json_list(c) + "</tool_calls>",
                   wrap_after_think=("", "\n[END FINAL RESPONSE]"), eot="<|end|>", always_reasons=True),
    "firefunction-v2": dict(think=None, calls=lambda c: " functools" + json_list(c), eot="<|eot_id|>", calls_last=True),
    "step3": dict(think=("<think>\n", "\n</think>\n"), calls=step3, eot="<|EOT|>"),
    "step-3.5": dict(think=("<think>\n", "\n</think>\n"), calls=coder, eot="<|im_end|>"),
    "lfm2": dict(think=THINK, calls=lambda c: "<|tool_call_start|>" + pythonic(c) + "<|tool_call_end|>", eot="<|im_end|>", extra=[
        ("Python-style values", "<|tool_call_start|>[f(a='it\\'s', c=False), g(x=\"a=b, c\")]<|tool_call_end|>"),
    ]),
    "reka-edge": dict(think=("<think>\n", "\n</think>\n\n"), calls=hermes, eot="<sep>"),
    "gigachat3": dict(think=None, calls=gigachat, eot="<|message_sep|>", single=True, calls_last=True),
    "minicpm5": dict(think=("<think>\n", "</think>"), calls=minicpm, eot="<|im_end|>"),
    "ling": dict(think=("<think>\n", "\n</think>\n"), calls=glm, eot="<|role_end|>"),
    "hunyuan-3": dict(think=("<think:opensource>", "</think:opensource>"), calls=hunyuan, eot="<｜hy_eos:opensource｜>", sep=""),
}


def answer(fmt, text, thought=False):
    if thought and "wrap_after_think" in fmt:
        o, c = fmt["wrap_after_think"]
        return o + text + c
    o, c = fmt.get("wrap", ("", ""))
    return o + text + c


def thought(fmt, text, opened=False):
    o, c = fmt["think"]
    return ("" if opened else o) + text + c


def cases_for(model, fmt, rng):
    name = model["template"]
    prompts = model["prompts"]
    plain = prompts.get("plain", prompts[model["default"]])
    eot = fmt["eot"]
    calls = fmt["calls"]
    one = [("get_weather", SIMPLE, "Ab3dE6gH9")]
    two = one + [("search_docs", SECOND, "Zx8wV7uT6")]
    nested = [("get_weather", NESTED, "Nq2Rs4Tu6")]
    if fmt.get("single"):
        two = one
    lead = fmt.get("lead", "")
    out = []

    def ids(cs):
        how = fmt.get("ids")
        return [how(k, n, i) if how else None for k, (n, _, i) in enumerate(cs)]

    def add(what, prefix, text, tools=None, intent=None):
        out.append((what, prefix, text, tools, intent))

    def meant(reasoning=None, content=None, cs=()):
        read = fmt.get("read", lambda a: a)
        return {"reasoning_content": reasoning, "content": content,
                "tool_calls": [[n, read(a), i] for (n, a, _), i in zip(cs, ids(cs))]}

    def call_text(cs, before=PREAMBLE):
        before = "" if fmt.get("calls_alone") else before
        if fmt.get("recipients"):
            return answer(fmt, before) + calls(cs) if before else calls(cs)[3:]
        if not before:
            return calls(cs)
        o, c = fmt.get("preamble", fmt.get("wrap", ("", "")))
        return o + before + c + fmt.get("sep", "\n") + calls(cs)

    if fmt["think"]:
        add("reasoning, then an answer", plain, lead + thought(fmt, REASONING) + answer(fmt, ANSWER, True) + eot,
            intent=meant(REASONING, ANSWER))
    if not fmt.get("always_reasons"):
        add("an answer alone", plain, answer(fmt, ANSWER) + eot, intent=meant(content=ANSWER))
    if eot and not fmt.get("always_reasons"):
        # What a file saved by an editor, or a decoded stream with a newline
        # after the end-of-turn token, looks like; and a model that runs on
        # past its end marker. Neither may replace the answer.
        add("an answer, the end of turn, a newline", plain, answer(fmt, ANSWER) + eot + "\n", intent=meant(content=ANSWER))
        add("an answer, the end of turn, and text after it", plain,
            answer(fmt, ANSWER) + eot + "\nuser\nAnd tomorrow?", intent=meant(content=ANSWER))
    if eot and fmt.get("always_reasons"):
        add("reasoning and an answer, the end of turn, a newline", plain,
            lead + thought(fmt, REASONING) + answer(fmt, ANSWER, True) + eot + "\n", intent=meant(REASONING, ANSWER))
    if "off" in prompts:
        add("thinking turned off by the prompt", prompts["off"], answer(fmt, ANSWER) + eot, intent=meant(content=ANSWER))
    if "open" in prompts and fmt["think"]:
        add("the prompt opens the reasoning", prompts["open"], thought(fmt, REASONING, opened=True) + answer(fmt, ANSWER, True) + eot,
            intent=meant(REASONING, ANSWER))
        add("the prompt opens the reasoning, then a tool call", prompts["open"], thought(fmt, "Need the tool.", opened=True) + calls(one),
            intent=meant("Need the tool.", cs=one))
    if calls is None:
        # A family without tool calls (Phi-3.5): the answers only.
        return finish(out, name, rng)
    add("one tool call after a preamble, with tool definitions", plain, call_text(one) + ("" if fmt.get("after_call") else eot), TOOLS,
        intent=meant(PREAMBLE, cs=one) if fmt.get("always_reasons")
        else meant(content=None if fmt.get("calls_alone") else PREAMBLE, cs=one))
    add("two tool calls", plain, call_text(two, before=""), intent=meant(cs=two))
    add("arguments with nested JSON, unicode and escapes", plain, call_text(nested, before=""), intent=meant(cs=nested))
    full = (lead + thought(fmt, REASONING) if fmt["think"] and "open" not in prompts else "") + call_text(two, before="")
    cut = max(1, int(len(full) * 0.6))
    add("truncated inside a tool call", plain, full[:cut])
    if fmt["think"]:
        text = lead + thought(fmt, REASONING)
        add("truncated inside the reasoning", plain, text[: len(text) // 2])
    for what, text in fmt.get("extra", ()):
        add(what, plain, text)
    return finish(out, name, rng)


def finish(out, name, rng):
    cases = []
    for n, (what, prefix, text, tools, intent) in enumerate(out, 1):
        case = {"id": f"model/{name}/{n}", "what": what, "template": name, "prefix": prefix, "text": text,
                "chunkings": chunkings(text, rng)}
        if tools:
            case["tools"] = tools
        cases.append((case, intent))
    return cases


def chunkings(text, rng):
    whole = [text]
    ones = list(text) or [""]
    fives = [text[i : i + 5] for i in range(0, len(text), 5)] or [""]
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, max(1, len(text) // 12)))) if len(text) > 1 else []
    bounds = [0] + cuts + [len(text)]
    rand = [text[a:b] for a, b in zip(bounds, bounds[1:])] or [""]
    return [whole, ones, fives, rand]


def all_cases():
    models = json.load(open(os.path.join(ROOT, "tests", "models.json"), encoding="utf-8"))["models"]
    missing = [m["template"] for m in models if m["template"] not in FORMATS]
    if missing:
        sys.exit(f"no format written for {missing}")
    rng = random.Random(11)
    for model in models:
        yield from cases_for(model, FORMATS[model["template"]], rng)


def meant_by(message):
    """The parts of a message a sample's intent speaks about."""
    calls = []
    for c in message.get("tool_calls") or []:
        fn = c.get("function") or {}
        calls.append([fn.get("name"), fn.get("arguments"), c.get("id")])
    return {"reasoning_content": message.get("reasoning_content"), "content": message.get("content"), "tool_calls": calls}


def same_intent(got, intent):
    """`got` says what `intent` means. Without tool definitions the
    tag-delimited formats (Qwen3-Coder, GLM, MiniMax, ...) give each argument
    value as its text (the definitions type it), so a text value also
    matches the value it reads as JSON."""
    if not isinstance(got, dict) or "tool_calls" not in got:
        return got == intent
    if {k: v for k, v in got.items() if k != "tool_calls"} != {k: v for k, v in intent.items() if k != "tool_calls"}:
        return False
    if len(got["tool_calls"]) != len(intent["tool_calls"]):
        return False
    for (gn, ga, gi), (wn, wa, wi) in zip(got["tool_calls"], intent["tool_calls"]):
        if gn != wn or gi != wi:
            return False
        if isinstance(ga, dict) and isinstance(wa, dict):
            if ga.keys() != wa.keys() or not all(value_reads_as(ga[k], wa[k]) for k in ga):
                return False
        elif ga != wa:
            return False
    return True


def value_reads_as(got, want):
    """`got` is `want`, or text whose JSON reading is `want` (a value of a
    tag-delimited format read without tool definitions)."""
    if isinstance(got, str) and not isinstance(want, str):
        try:
            return json.loads(got) == want
        except ValueError:
            return False
    return got == want


def check(path):
    """Whether each complete sample's expected message (the reference's) is
    the message the sample was written to mean: a template that misreads its
    own model's format fails here even where retort agrees with the
    reference."""
    expected = {}
    for line in open(path, encoding="utf-8"):
        if line.strip():
            case = json.loads(line)
            expected[case["id"]] = case.get("expected", {}).get("whole", {})
    bad = checked = 0
    for case, intent in all_cases():
        if intent is None:
            continue
        checked += 1
        whole = expected.get(case["id"])
        got = meant_by(whole["message"]) if whole and "message" in whole else whole
        if not same_intent(got, intent):
            bad += 1
            print(f"{case['id']} ({case['what']}):\n  meant    {js(intent)}\n  expected {js(got)}")
    print(f"{checked} samples checked, {bad} not parsed as meant")
    return 1 if bad else 0


def main():
    if sys.argv[1:2] == ["check"] and len(sys.argv) == 3:
        sys.exit(check(sys.argv[2]))
    if sys.argv[1:]:
        sys.exit(__doc__)
    for case, _ in all_cases():
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
