"""The conversations of the chat-template vectors (tools/chat_cases.py):
inputs of `render_jinja_template`, each with the reason it is there.

A conversation is a dict with "id", "messages" and, where they differ from
the defaults, "tools", "documents", "add_generation_prompt",
"continue_final_message" and "kwargs" (which, as in apply_chat_template,
hold bos_token and eos_token in all but a few). `conversations()` returns them in a
fixed order; the ids are unique and never reused for other content.
"""

from __future__ import annotations

import copy

# ---------------------------------------------------------------------------
# Tool definitions (OpenAI style)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
            },
            "required": ["city"],
        },
    },
}

SEARCH = {
    "type": "function",
    "function": {
        "name": "search_docs",
        "description": "Search the documentation.\nReturns the best matches first.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for"},
                "limit": {"type": "integer", "description": "How many results", "default": 5},
                "filters": {
                    "type": "object",
                    "properties": {
                        "lang": {"type": "string"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
            "required": ["query"],
        },
    },
}

CLOCK = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time (UTC).",
        "parameters": {"type": "object", "properties": {}},
    },
}

PLOT = {
    "type": "function",
    "function": {
        "name": "plot",
        "description": "Plot points — «unicode» in a description.",
        "parameters": {
            "type": "object",
            "properties": {
                "points": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}},
                },
                "title": {"type": ["string", "null"]},
                "log_scale": {"type": "boolean", "default": False},
            },
            "required": ["points"],
        },
    },
}

TOOLS = [WEATHER, SEARCH]
ALL_TOOLS = [WEATHER, SEARCH, CLOCK, PLOT]

DOCS = [
    {"title": "Solar panels", "text": "Panels convert sunlight into electricity.\nEfficiency is about 20%."},
    {"title": "Wind turbines", "text": "Turbines use wind to spin a generator."},
]

SPECIAL = {"bos_token": "<s>", "eos_token": "</s>"}


def call(name, arguments, id_=None):
    c = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if id_ is not None:
        c = {"id": id_, **c}
    return c


def sys_(text):
    return {"role": "system", "content": text}


def user(text):
    return {"role": "user", "content": text}


def asst(text, **extra):
    return {"role": "assistant", "content": text, **extra}


def tool(content, call_id=None, name=None):
    m = {"role": "tool", "content": content}
    if call_id is not None:
        m["tool_call_id"] = call_id
    if name is not None:
        m["name"] = name
    return m


SYSTEM = sys_("You are a helpful assistant.")
Q1 = user("What is the capital of France?")
A1 = asst("The capital of France is Paris.")
Q2 = user("And of Germany?")
A2 = asst("Berlin.")

WEATHER_CALL = call("get_weather", {"city": "Paris", "unit": "celsius"}, "call_1")
WEATHER_RESULT = tool('{"temperature": 21, "sky": "clear"}', "call_1", "get_weather")


def conv(id_, messages, special=True, **extra):
    """A conversation. Like apply_chat_template, which passes the tokenizer's
    special tokens to every template, it gets bos_token and eos_token unless
    `special` is false (or its kwargs set them)."""
    if special:
        extra["kwargs"] = {**SPECIAL, **extra.get("kwargs", {})}
    return {"id": id_, "messages": messages, **extra}


def conversations() -> list[dict]:
    out = [
        # The plainest inputs.
        conv("user-gen", [Q1], add_generation_prompt=True),
        conv("user-nogen", [Q1]),
        conv("system-user-gen", [SYSTEM, Q1], add_generation_prompt=True),
        conv("system-user-assistant", [SYSTEM, Q1, A1]),
        conv("multi-turn-system", [SYSTEM, Q1, A1, Q2, A2, user("Thanks!")], add_generation_prompt=True),
        conv("multi-turn-nosystem", [Q1, A1, Q2, A2]),
        conv("long-history", [SYSTEM] + [m for i in range(6) for m in (user(f"Question {i}?"), asst(f"Answer {i}."))]
             + [user("Last one?")], add_generation_prompt=True),
        # Tools: definitions, calls with dict and JSON-string arguments, results.
        conv("tools-defined", [Q1], tools=TOOLS, add_generation_prompt=True),
        conv("tools-system", [SYSTEM, user("Weather in Paris?")], tools=ALL_TOOLS, add_generation_prompt=True),
        conv("tool-call-dict", [user("Weather in Paris?"), asst("", tool_calls=[WEATHER_CALL]), WEATHER_RESULT],
             tools=TOOLS, add_generation_prompt=True),
        conv("tool-call-string-args",
             [user("Weather in Paris?"),
              asst("", tool_calls=[call("get_weather", '{"city": "Paris", "unit": "celsius"}', "call_1")]),
              WEATHER_RESULT], tools=TOOLS, add_generation_prompt=True),
        conv("tool-calls-parallel",
             [SYSTEM, user("Weather in Paris and Rome?"),
              asst(None, tool_calls=[call("get_weather", {"city": "Paris"}, "call_a"),
                                     call("get_weather", {"city": "Rome"}, "call_b")]),
              tool("18C", "call_a", "get_weather"), tool("24C", "call_b", "get_weather"),
              asst("Paris is at 18C and Rome at 24C.")], tools=TOOLS),
        conv("tool-call-with-content",
             [user("Find the docs on wind."),
              asst("Let me search for that.", tool_calls=[call("search_docs", {"query": "wind", "limit": 3}, "c1")]),
              tool('["Wind turbines"]', "c1", "search_docs")], tools=TOOLS, add_generation_prompt=True),
        conv("tool-multi-step",
             [SYSTEM, user("What time is it, and the weather in Oslo?"),
              asst("", tool_calls=[call("get_time", {}, "t1")]), tool("12:00", "t1", "get_time"),
              asst("", tool_calls=[call("get_weather", {"city": "Oslo"}, "t2")]), tool("-3C, snow", "t2", "get_weather"),
              asst("It is 12:00 and -3C with snow in Oslo."), user("Thanks")], tools=ALL_TOOLS,
             add_generation_prompt=True),
        conv("tool-call-no-id",
             [user("Time?"), asst("", tool_calls=[call("get_time", {})]), tool("09:30")], tools=[CLOCK],
             add_generation_prompt=True),
        conv("tool-result-dict-content",
             [user("Weather?"), asst("", tool_calls=[WEATHER_CALL]),
              tool({"temperature": 21.5, "ok": True, "alerts": None}, "call_1", "get_weather")], tools=TOOLS,
             add_generation_prompt=True),
        conv("tool-args-special-chars",
             [user("Search this."),
              asst("", tool_calls=[call("search_docs", {"query": 'say "hi"\\n\tthen <b>bye</b> & é 中 😀',
                                                         "filters": {"lang": "", "tags": ["a\"b", "</tool_call>"]}},
                                        "c1")]),
              tool("nothing found", "c1", "search_docs")], tools=TOOLS, add_generation_prompt=True),
        conv("tool-args-numbers",
             [user("Plot it."),
              asst("", tool_calls=[call("plot", {"points": [{"x": 0, "y": -0.0}, {"x": 1.5, "y": 1e-07},
                                                            {"x": 100.0, "y": 1e21}, {"x": 12345678901234567890,
                                                                                     "y": 0.1}],
                                                 "title": None, "log_scale": True}, "p1")]),
              tool("done", "p1", "plot")], tools=[PLOT], add_generation_prompt=True),
        conv("tool-args-nested",
             [user("Complex call."),
              asst("", tool_calls=[call("search_docs", {"query": "x", "filters": {"lang": "en", "tags": [],
                                                                                 "deep": {"a": [[1, 2], {"b": []}]}}},
                                        "n1")])], tools=TOOLS),
        # Reasoning in history, under each name.
        conv("reasoning-content",
             [Q1, asst("Paris.", reasoning_content="The user asks about France. Paris."), Q2],
             add_generation_prompt=True),
        conv("reasoning-thinking-alias", [Q1, asst("Paris.", thinking="France -> Paris.")],
             add_generation_prompt=False),
        conv("reasoning-reasoning-alias", [SYSTEM, Q1, asst("Paris.", reasoning="Recall: Paris.")]),
        conv("reasoning-in-content",
             [Q1, asst("<think>\nFrance's capital is Paris.\n</think>\n\nParis."), Q2, asst("<think>Berlin</think>Berlin.")]),
        conv("reasoning-last-turn", [SYSTEM, Q1, A1, Q2, asst("Berlin.", reasoning_content="\nGermany: Berlin.\n")]),
        conv("reasoning-with-tool-call",
             [user("Weather in Paris?"),
              asst("", reasoning_content="I should call the weather tool.", tool_calls=[WEATHER_CALL]),
              WEATHER_RESULT, asst("It is 21C and clear.", reasoning_content="The tool says 21C.")], tools=TOOLS),
        conv("reasoning-empty", [Q1, asst("Paris.", reasoning_content="")], add_generation_prompt=False),
        # Documents.
        conv("documents", [user("Summarise the documents.")], documents=DOCS, add_generation_prompt=True),
        conv("documents-system", [SYSTEM, user("Which is cheaper?")],
             documents=[{"doc_id": 7, "title": "Prices", "text": "Solar: 1.2 EUR/W"}, {"text": "No title here."}],
             add_generation_prompt=True),
        # Generation prompt and continuation.
        conv("gen-after-assistant", [Q1, A1], add_generation_prompt=True),
        conv("continue-final", [Q1, asst("The capital of France is")], continue_final_message=True),
        conv("continue-final-spaces", [Q1, asst("The capital is  ")], continue_final_message=True),
        conv("continue-reasoning", [Q1, asst("", reasoning_content="Let me think about Fra")],
             continue_final_message="reasoning_content"),
        conv("continue-list-content",
             [Q1, asst([{"type": "text", "text": "Well,"}, {"type": "text", "text": " the answer is"}])],
             continue_final_message=True),
        conv("continue-user", [SYSTEM, user("Complete my sentence: the sky is")], continue_final_message=True),
        conv("continue-missing-field", [Q1, asst("Paris")], continue_final_message="reasoning_content"),
        # Thinking switches and effort.
        conv("enable-thinking-true", [Q1], add_generation_prompt=True, kwargs={"enable_thinking": True}),
        conv("enable-thinking-false", [SYSTEM, Q1], add_generation_prompt=True, kwargs={"enable_thinking": False}),
        conv("enable-thinking-false-history",
             [Q1, asst("Paris.", reasoning_content="easy"), Q2], add_generation_prompt=True,
             kwargs={"enable_thinking": False}),
        conv("reasoning-effort-high", [Q1], add_generation_prompt=True, kwargs={"reasoning_effort": "high"}),
        conv("reasoning-effort-low-system", [SYSTEM, Q1, A1, Q2], add_generation_prompt=True,
             kwargs={"reasoning_effort": "low", "enable_thinking": True}),
        conv("reasoning-effort-unknown", [Q1], add_generation_prompt=True, kwargs={"reasoning_effort": "extreme"}),
        # Unicode.
        conv("unicode-cjk", [sys_("你是一个乐于助人的助手。"), user("日本の首都はどこですか？"),
                             asst("東京です。"), user("한국은요?")], add_generation_prompt=True),
        conv("unicode-emoji", [user("👋🏽 hi! 👨‍👩‍👧‍👦 family, 🇫🇷 flag"), asst("🙂 Hello!")],
             add_generation_prompt=True),
        conv("unicode-combining", [user("e\u0301 vs é, A\u030a vs Å, z\u0335\u0321a\u0336lgo"),
                                   asst("Ǆ ǅ ǆ ß ẞ ﬁ")]),
        conv("unicode-rtl", [sys_("أنت مساعد مفيد."), user("שלום! \u202bmixed\u202c עברית and English"),
                             asst("مرحبا \u200f!")], add_generation_prompt=True),
        conv("unicode-controls", [user("tab\there\r\nwindows line\x0bvertical \u2028 sep \u00a0nbsp")],
             add_generation_prompt=True),
        # Empty and odd content.
        conv("empty-content", [sys_(""), user(""), asst("")], add_generation_prompt=False),
        conv("empty-user-gen", [user("")], add_generation_prompt=True),
        conv("none-content", [Q1, asst(None)]),
        conv("whitespace-content", [sys_("  padded system  \n"), user("\n\n  indented question\n\t\n"),
                                    asst("\nanswer with newlines\n\n")], add_generation_prompt=True),
        conv("template-syntax-in-content",
             [user("{{ messages }} {% if %} {# x #} <|im_end|> <|eot_id|> </s> [INST]"), asst("<tool_call>not a call")],
             add_generation_prompt=True),
        # Content as a list of blocks.
        conv("content-blocks", [user([{"type": "text", "text": "What is in this picture?"}, {"type": "image"}])],
             add_generation_prompt=True),
        conv("content-blocks-multi",
             [sys_([{"type": "text", "text": "Be brief."}]),
              user([{"type": "image", "url": "https://example.com/a.png"}, {"type": "text", "text": "Describe."},
                    {"type": "text", "text": "In one line."}]), asst([{"type": "text", "text": "A cat."}])],
             add_generation_prompt=False),
        conv("content-blocks-unknown", [user([{"type": "audio"}, {"type": "text", "text": "Transcribe."}])],
             add_generation_prompt=True),
        # Special tokens.
        # Special tokens: every other conversation has bos_token "<s>" and
        # eos_token "</s>"; these have none, or others.
        conv("no-special-tokens", [SYSTEM, Q1], special=False, add_generation_prompt=True),
        conv("no-special-tokens-history", [Q1, A1, Q2, A2], special=False, add_generation_prompt=True),
        conv("no-special-tokens-tools", [user("Weather in Paris?"), asst("", tool_calls=[WEATHER_CALL]),
                                         WEATHER_RESULT, asst("21C.")], special=False, tools=TOOLS,
             kwargs={"enable_thinking": True}),
        conv("special-tokens-other", [Q1, A1, Q2], add_generation_prompt=True,
             kwargs={"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>", "pad_token": "<pad>"}),
        # Extra kwargs templates may read.
        conv("kwargs-misc", [Q1], add_generation_prompt=True,
             kwargs={"date_string": "01 Feb 2026", "custom_instructions": "Answer in French.", "temperature": 0.25,
                     "max_tokens": 512, "flags": {"a": True, "b": None}}),
        # Inputs templates reject (or not): whatever each raises is recorded.
        conv("roles-out-of-order", [user("one"), user("two")], add_generation_prompt=True),
        conv("assistant-first", [asst("I speak first."), user("ok")], add_generation_prompt=True),
        conv("tool-without-call", [user("Hi"), tool("orphan result", "x9", "get_weather")], tools=TOOLS,
             add_generation_prompt=True),
        conv("system-not-first", [Q1, sys_("Late system message."), A1]),
        conv("multiple-systems", [sys_("First system."), sys_("Second system."), Q1], add_generation_prompt=True),
        conv("unknown-role", [SYSTEM, {"role": "developer", "content": "Dev note."}, Q1], add_generation_prompt=True),
        conv("empty-messages", [], add_generation_prompt=True),
        conv("message-without-content", [{"role": "user"}], add_generation_prompt=True),
    ]
    ids = [c["id"] for c in out]
    assert len(ids) == len(set(ids)), "duplicate conversation ids"
    return copy.deepcopy(out)
