"""Differential fuzzing of retort against the reference implementation.

Generates conformance cases (templates and model-like outputs), gets the
reference's results from tools/reference/oracle.py (transformers pinned by
tools/reference/requirements.txt, in a venv that tools/reference/setup.sh
makes on first use), runs retort's conformance runner on the same cases, and
compares with tools/compare.py. Nothing outside the repository is needed.

    python3 tools/fuzz.py gen --seed 1 --count 500 > cases.jsonl
    python3 tools/fuzz.py expect cases.jsonl > vectors.jsonl      # adds "expected" from the oracle
    python3 tools/fuzz.py check --seed 1 --count 2000              # the whole loop, prints the tally

`check` keeps the vectors of a failing batch in target/fuzz-failures-SEED.jsonl
and ends with the line `N passed, M failed` (exit status 1 on failures).
`check --compiled` runs the cases through compiled parsers, building the batch's
templates into one binary per checkout; concurrent runs in one checkout take
turns (a lock under target/fuzz-compiled), so run parallel loops in separate
worktrees.

Cases come from two families:

- random templates (inline): fields with literal, literal-list and regex
  delimiters drawn from a small, overlapping vocabulary (so that delimiters
  collide, nest and nearly match), regex pieces the real templates use
  (`\\s*`, named captures, lazy gaps, optional tails, trailing lookaheads,
  leading lookbehinds, `$`, `\\Z`, `^`), every content parser with odd
  arguments, repeats/join/optional/transform;
- the model templates in templates/ (the project's own), with outputs in
  each model's format.

Texts mix real delimiters, near misses (prefixes, one character off),
unicode, odd whitespace and truncation; every case gets four chunkings
(one character, random sizes, cuts around delimiters, and a mix).
Open delimiters never match the empty string: the reference loops forever
on such templates, so no expected result exists for them.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORACLE = os.path.join(HERE, "reference", "oracle.py")
COMPARE = os.path.join(HERE, "compare.py")

# ---------------------------------------------------------------------------
# Regex pieces that can both be written as a pattern and sampled as text.


def esc(s: str) -> str:
    out = []
    for c in s:
        if c.isascii() and not c.isalnum() and c != "_":
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


class Node:
    def regex(self) -> str:
        raise NotImplementedError

    def sample(self, rng: random.Random) -> str:
        raise NotImplementedError

    def nonempty(self) -> bool:
        """Whether every match consumes at least one character."""
        raise NotImplementedError


class Lit(Node):
    def __init__(self, s):
        self.s = s

    def regex(self):
        return esc(self.s)

    def sample(self, rng):
        return self.s

    def nonempty(self):
        return bool(self.s)


class Cat(Node):
    def __init__(self, *parts):
        self.parts = parts

    def regex(self):
        return "".join(p.regex() for p in self.parts)

    def sample(self, rng):
        return "".join(p.sample(rng) for p in self.parts)

    def nonempty(self):
        return any(p.nonempty() for p in self.parts)


class Alt(Node):
    def __init__(self, *alts):
        self.alts = alts

    def regex(self):
        return "(?:" + "|".join(a.regex() for a in self.alts) + ")"

    def sample(self, rng):
        return rng.choice(self.alts).sample(rng)

    def nonempty(self):
        return all(a.nonempty() for a in self.alts)


class TopAlt(Alt):
    """A top-level alternation (no group around it)."""

    def regex(self):
        return "|".join(a.regex() for a in self.alts)


class Opt(Node):
    def __init__(self, inner):
        self.inner = inner

    def regex(self):
        return "(?:" + self.inner.regex() + ")?"

    def sample(self, rng):
        return self.inner.sample(rng) if rng.random() < 0.6 else ""

    def nonempty(self):
        return False


class Ws(Node):
    """\\s* or \\s+ or \\n?"""

    def __init__(self, kind):
        self.kind = kind

    def regex(self):
        return {"*": r"\s*", "+": r"\s+", "nl": r"\n?"}[self.kind]

    def sample(self, rng):
        if self.kind == "nl":
            return rng.choice(["", "\n"])
        n = rng.choice([0, 0, 1, 1, 2, 3]) + (1 if self.kind == "+" else 0)
        return "".join(rng.choice([" ", "\n", "\t", " ", "\u3000", "\x1c"]) for _ in range(n))

    def nonempty(self):
        return self.kind == "+"


class Word(Node):
    """A named capture of a word or of a run without '>' and newline."""

    def __init__(self, name, kind="w"):
        self.name = name
        self.kind = kind

    def regex(self):
        body = r"\w+" if self.kind == "w" else r"[^>\n]+"
        return f"(?P<{self.name}>{body})"

    def sample(self, rng):
        return rng.choice(["get_weather", "f", "search_web", "x1", "Ünïcode", "a_b", "名前", "fn2"])

    def nonempty(self):
        return True


class Gap(Node):
    """A lazy gap `.*?`."""

    def regex(self):
        return ".*?"

    def sample(self, rng):
        return rng.choice(["", " ", " <|constrain|>json", " x", "<", "\n"])

    def nonempty(self):
        return False


class Raw(Node):
    """A fixed regex with fixed sample strings (lookarounds, anchors)."""

    def __init__(self, rx, samples, nonempty=False):
        self.rx = rx
        self.samples = samples
        self._nonempty = nonempty

    def regex(self):
        return self.rx

    def sample(self, rng):
        return rng.choice(self.samples)

    def nonempty(self):
        return self._nonempty


# ---------------------------------------------------------------------------
# Random templates

ALL_NAMES = ("name", "n2", "fn", "n3", "n4", "n5", "n6", "n7", "n8")

TAGS = ["t", "think", "tool", "tool_call", "c", "x", "call", "a", "ab"]


def tag_forms(name):
    return [
        (f"<{name}>", f"</{name}>"),
        (f"<|{name}|>", f"<|/{name}|>"),
        (f"[{name.upper()}]", f"[/{name.upper()}]"),
        (f"<{name}>", "END"),
    ]


class TemplateGen:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.samplers = {}  # (field, "open"/"close") -> Node or list of literals

    def literal_or_list(self, lit, key):
        rng = self.rng
        r = rng.random()
        if r < 0.65:
            return lit
        if r < 0.85:
            # a list where one literal extends another (can_extend)
            return [lit, lit + rng.choice(["X", ">", "!", "\n"])]
        return [lit, lit.upper() if lit.upper() != lit else lit + "2"]

    def pattern_for(self, lit, role, names):
        rng = self.rng
        r = rng.random()
        if role == "open":
            choices = [
                lambda: Cat(Ws("*"), Lit(lit)),
                lambda: Cat(Lit(lit), Ws("*"), Lit("<fn="), Word(names.pop(0)), Lit(">")),
                lambda: Cat(Lit(lit[:-1] if len(lit) > 2 else lit), Lit(" to="), Word(names.pop(0)), Gap(), Lit("|>")),
                lambda: Cat(Opt(Lit("<calls>")), Ws("*"), Lit(lit)),
                lambda: TopAlt(Cat(Raw(r"(?<=^)", [""]), Lit(lit)), Cat(Raw(r"(?<=\n)", [""]), Lit(lit))),
                lambda: Cat(Lit(lit), Word(names.pop(0), "nl"), Lit(":")),
                lambda: Cat(Opt(Lit("<m>")), Raw(r"[^<]*", ["", "ab ", "x"]), Lit(lit)),
                lambda: Alt(Lit(lit), Lit(lit.upper() + "!")),
            ]
        else:
            choices = [
                lambda: Cat(Ws("*"), Lit(lit)),
                lambda: Cat(Lit(lit), Ws("*"), Opt(Lit("</calls>"))),
                lambda: Cat(Ws("nl"), Lit(lit)),
                lambda: TopAlt(Raw("(?=<call>)", [""]), Lit(lit)),
                lambda: TopAlt(Cat(Ws("*"), Lit(lit)), Raw(r"\Z", [""])),
                lambda: Cat(Lit(lit), Raw("$", [""])),
                lambda: Cat(Lit(lit), Opt(Lit("\n"))),
                lambda: Cat(Lit(lit), Raw(r"(?=\s)", [" ", "\n"])),
            ]
        return rng.choice(choices)()

    def delimiters(self, fname, role, lit, names):
        """Returns (template key, template value, sampler)."""
        rng = self.rng
        if rng.random() < 0.55:
            v = self.literal_or_list(lit, role)
            lits = v if isinstance(v, list) else [v]
            return role, v, TopAlt(*[Lit(x) for x in lits])
        node = self.pattern_for(lit, role, names)
        return role + "_pattern", node.regex(), node

    def content(self):
        rng = self.rng
        kind = rng.choice(["text", "text", "text", "json", "json", "int", "float", "bool", "xml-inline", "kv-lines"])
        args = None
        if kind == "text" and rng.random() < 0.25:
            args = {"strip": rng.choice([False, 0, "", True])}
        elif kind == "json":
            r = rng.random()
            if r < 0.2:
                args = {"allow_non_json": True}
            elif r < 0.3:
                args = {"unquoted_keys": True}
            elif r < 0.4:
                args = {"string_delims": [["<|\"|>", "<|\"|>"]], "unquoted_keys": True}
        elif kind == "xml-inline":
            args = {
                "tag_pattern": rng.choice(
                    [
                        r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                        # Qwen3-Coder's: the shape pyre finds without its VM.
                        r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>",
                        r"<(?P<key>\w+)=(?P<value>[^>]+)>",
                        r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>",
                    ]
                )
            }
            if rng.random() < 0.4:
                args["value_parser"] = rng.choice(
                    [{"name": "json", "args": {"allow_non_json": True}}, {"name": "int"}, {"name": "text"}]
                )
            if rng.random() < 0.3:
                args["merge_duplicates"] = True
        elif kind == "kv-lines" and rng.random() < 0.5:
            args = rng.choice(
                [{"kv_sep": "="}, {"value_parser": {"name": "json", "args": {"allow_non_json": True}}}, {"strip": False}]
            )
        return kind, args

    def template(self):
        rng = self.rng
        nfields = rng.randint(1, 4)
        names = ["name", "n2", "fn", "n3", "n4", "n5", "n6", "n7", "n8"]
        fields = {}
        samplers = {}
        used_tags = rng.sample(TAGS, nfields)
        implicit_done = False
        field_names = ["thinking", "content", "tool_calls", "answer", "meta", "score"]
        rng.shuffle(field_names)
        for i in range(nfields):
            fname = field_names[i]
            f = {}
            o, c = rng.choice(tag_forms(used_tags[i]))
            implicit = not implicit_done and rng.random() < 0.4
            if implicit:
                implicit_done = True
                r = rng.random()
                if r < 0.7:
                    key, val, node = self.delimiters(fname, "close", rng.choice(["<end>", "<|im_end|>", "<eot>"]), names)
                    f[key] = val
                    samplers[(fname, "close")] = node
            else:
                key, val, node = self.delimiters(fname, "open", o, names)
                if not node.nonempty():
                    node = Lit(o)
                    key, val = "open", o
                f[key] = val
                samplers[(fname, "open")] = node
                if rng.random() < 0.85:
                    key, val, node = self.delimiters(fname, "close", c, names)
                    f[key] = val
                    samplers[(fname, "close")] = node
            kind, args = self.content()
            if kind != "text" or rng.random() < 0.5:
                f["content"] = kind
            if args is not None:
                f["content_args"] = args
            captured = [n for n in ALL_NAMES if n not in names and f"(?P<{n}>" in json.dumps(f)]
            r = rng.random()
            if r < 0.3 and kind != "json":
                f["repeats"] = True
                if rng.random() < 0.5 and kind in ("text",):
                    f["join"] = rng.choice(["", "\n", " | "])
            elif r < 0.5:
                f["repeats"] = True
            if captured or (kind == "json" and rng.random() < 0.5):
                if kind == "json" and rng.random() < 0.3:
                    f["transform"] = {"type": "function", "function": "{content}"}
                else:
                    name_ref = "{" + captured[0] + "}" if captured else "{content.name}"
                    f["transform"] = {"type": "function", "function": {"name": name_ref, "arguments": "{content}"}}
                    if kind == "json" and not captured:
                        f["transform"]["function"]["arguments"] = rng.choice(["{content.arguments}", "{content}"])
            if rng.random() < 0.1:
                f["optional"] = False
            fields[fname] = f
        t = {"defaults": {"role": "assistant"}, "fields": fields}
        r = rng.random()
        if r < 0.7:
            t["start_anchor"] = "<|assistant|>"
        elif r < 0.85:
            t["start_anchor"] = ["<|assistant|>", "<|tool_result|>"]
        else:
            t["start_anchor_pattern"] = r"<\|assistant\|>\n?"
        if rng.random() < 0.1:
            t["defaults"]["content"] = ""
        self.samplers = samplers
        return t


# ---------------------------------------------------------------------------
# Texts

FILLER = [
    "Hello", "world", " ", "  ", "\n", "\n\n", "\t", "ok.", "Sure!", "3.5", "42", "é", "中文", "🙂", "a<b", "<", ">",
    "</", "<|", "|>", "[", "]", "::", "END", "x", "\u00a0", "\u2028", "\x85", "\u200b", "{", "}", "\"", "\\",
]


def body_for(field, rng):
    kind = field.get("content", "text")
    if kind == "text":
        return rng.choice(["", " ", "plain text", "  padded  ", "line1\nline2", "Ünï 🙂", "\x1c tab\t", "a<b>c"])
    if kind == "int":
        return rng.choice(["42", " -7 ", "1_000", "٣", "x", "", "99999999999999999999", "+3", "0x10"])
    if kind == "float":
        return rng.choice(["1.5", " -0.25 ", "1e3", "inf", "nan", "1_0.5", "x", "", "1e400", ".5"])
    if kind == "bool":
        return rng.choice(["true", "True", "1", "false", "0", "yes", "", " TRUE "])
    if kind == "json":
        return rng.choice(
            [
                '{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}',
                '{"name": "f", "arguments": {}}',
                '[{"tool_name": "f", "parameters": {"a": 1}}]',
                "[1, 2.5, NaN, Infinity, 123456789012345678901234567890]",
                '{"a": 1, "a": 2}',
                "{name: \"x\", arguments: {k: 1}}",
                '{bad json',
                '"just a string"',
                "",
                '  {"nested": {"deep": [true, false, null]}}  ',
                '{"name": "f", "arguments": {"s": <|"|>quoted<|"|>}}',
            ]
        )
    if kind == "xml-inline":
        return rng.choice(
            [
                "<parameter=city>\nParis\n</parameter><parameter=days>3</parameter>",
                "<a=1><b=x><a=2>",
                "<k>v</k><n> 7 </n><k>w</k>",
                "no tags here",
                "<parameter=x>[1, 2]</parameter>",
                "<parameter=a b>\n\nParis\n\n</parameter><parameter=>x</parameter><parameter=k\n>y</parameter>",
                "<parameter=n>\n</parameter>\n<parameter=m>7\n</parameter",
                "",
            ]
        )
    if kind == "kv-lines":
        return rng.choice(["a: 1\nb: two\n\nc:3", "k=v\nx = 1", "no separator", "k: {\"j\": 1}\n", ":\n: x", ""])
    return "?"


def near_miss(lit, rng):
    if len(lit) < 2:
        return lit + "?"
    r = rng.random()
    if r < 0.5:
        return lit[: rng.randint(1, len(lit) - 1)]
    i = rng.randrange(len(lit))
    return lit[:i] + rng.choice(["x", " ", "|", ">"]) + lit[i + 1 :]


def text_for(template, samplers, rng):
    fields = template["fields"]
    explicit = [n for n, f in fields.items() if "open" in f or "open_pattern" in f]
    parts = []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.3 or not explicit:
            parts.append("".join(rng.choice(FILLER) for _ in range(rng.randint(0, 4))))
        elif r < 0.85:
            name = rng.choice(explicit)
            f = fields[name]
            parts.append(samplers[(name, "open")].sample(rng))
            parts.append(body_for(f, rng))
            if (name, "close") in samplers and rng.random() < 0.9:
                parts.append(samplers[(name, "close")].sample(rng))
        else:
            node = samplers.get((rng.choice(list(fields)), rng.choice(["open", "close"])))
            if node is not None:
                parts.append(near_miss(node.sample(rng) or "<x>", rng))
    for (name, role), node in samplers.items():
        if role == "close" and not ("open" in fields[name] or "open_pattern" in fields[name]) and rng.random() < 0.5:
            parts.append(node.sample(rng))
    text = "".join(parts)
    if rng.random() < 0.15 and text:
        text = text[: rng.randrange(len(text))]
    return text


def prefix_for(template, samplers, rng):
    r = rng.random()
    if r < 0.55:
        return ""
    anchor = template.get("start_anchor", "<|assistant|>")
    if isinstance(anchor, list):
        anchor = anchor[0]
    history = "<|user|>hi<|assistant|>old answer<|user|>again"
    tail = ""
    r = rng.random()
    if r < 0.4:
        opens = [k for k in samplers if k[1] == "open"]
        if opens:
            tail = samplers[rng.choice(opens)].sample(rng)
            if rng.random() < 0.5:
                tail += rng.choice(["\n", "partial body", ""])
    elif r < 0.6:
        opens = [k for k in samplers if k[1] == "open"]
        if opens:
            tail = near_miss(samplers[rng.choice(opens)].sample(rng), rng)
    elif r < 0.8:
        tail = "Sure, "
    return rng.choice([history + anchor + tail, anchor + tail, tail])


def chunkings(text, rng):
    out = [list(text) or [""]]
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, 7)
        pieces.append(text[i : i + n])
        i += n
    out.append(pieces or [""])
    cuts = sorted({rng.randrange(len(text) + 1) for _ in range(max(1, len(text) // 5))} | {0, len(text)})
    out.append([text[a:b] for a, b in zip(cuts, cuts[1:])] or [""])
    pieces, i = [], 0
    while i < len(text):
        n = rng.choice([1, 1, 2, 3, 16])
        pieces.append(text[i : i + n])
        i += n
    if pieces and rng.random() < 0.5:
        pieces.insert(rng.randrange(len(pieces)), "")
    out.append(pieces or [""])
    return out


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "x": {"type": ["number", "null"]},
                    "a": {"anyOf": [{"type": "boolean"}, {"type": "array"}]},
                    "k": {"type": "object", "nullable": True},
                },
            },
        },
    },
    {"name": "f", "parameters": {"properties": {"a": {"type": "number"}, "s": {"type": "integer"}}}},
]



# Realistic pieces of each model's output, in its own format; cases for the
# templates in templates/ are random sequences of them, with near misses and
# truncation. (Written for this project from the documented formats.)
MODEL_PARTS = {
    "smollm3": ["<think>\nLet me think.\n</think>\n", "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}</tool_call>",
                "The answer is 4.", "<|im_end|>", "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n"],
    "qwen3": ["<think>\nreasoning here\n</think>\n\n", "\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
              "Final answer.", "\n<|im_end|>", "<|endoftext|>"],
    "qwen3-coder": ["I'll check.\n", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=f>\n<parameter=x>\n[1, 2]\n</parameter>\n</function>\n</tool_call>\n", "<|im_end|>"],
    "gpt-oss": ["<|channel|>analysis<|message|>Need weather.<|end|>", "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"SF\", \"days\": \"2\"}<|call|>",
                "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>", "<|channel|>final<|message|>Done<|end|>"],
    "command-r7b": ["<|START_THINKING|>I should call a tool.<|END_THINKING|>", "<|START_ACTION|>[\n  {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>",
                    "<|START_RESPONSE|>Here you go.<|END_RESPONSE|>", "<|END_OF_TURN_TOKEN|>"],
    "deepseek-r1": ["Thinking it over.\n</think>\n\n", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>",
                    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>", "Answer.", "<｜end▁of▁sentence｜>"],
    "mistral-small-3.2": ["Let me check.", "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}", "[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{\"x\": 1}", "</s>"],
    "hermes-2-pro": ["<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", "Sure thing.", "<|im_end|>"],
    "kimi-k2": ["<think>plan it</think>", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>",
                "<|tool_call_begin|>functions.f:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>", "Calling tools.", "<|im_end|>"],
    "minimax-m2": ["<think>\nhmm\n</think>\n", "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n",
                   "<invoke name=\"f\">\n</invoke>\n</minimax:tool_call>", "OK.", "[e~["],
    "glm-4.5": ["<think>x</think>\n", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
                "Answer.", "<|user|>", "<|observation|>"],
    "gemma4": ["<|channel>thought\nThinking.<channel|>", "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3}<tool_call|>", "Here.", "<turn|>", "<eos>"],
    "granite-3.3": ["<think>t</think>", "<response>r</response>", "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]<|end_of_text|>"],
    "seed-oss": ["<seed:think>hmm</seed:think>", "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>", "Done.", "<seed:eos>"],
    "nemotron-nano-v2": ["<think>\nplan\n</think>", "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]</TOOLCALL>", "Answer", "<SPECIAL_12>"],
    "magistral": ["[THINK]reasoning[/THINK]", "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}", "Final.", "</s>"],
    "phi-4-mini": ["functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]", "Hello.", "<|end|>", " functools[[1]]"],
}

MODEL_PROMPTS = {
    "deepseek-r1": "<｜User｜>hi<｜Assistant｜><think>\n",
    "minimax-m2": "]~b]user\nhi[e~[\n]~b]ai\n<think>\n",
    "qwen3": "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "gpt-oss": "<|start|>user<|message|>hi<|end|><|start|>assistant",
    "smollm3": "<|im_start|>assistant\n<think>\n",
    "nemotron-nano-v2": "<SPECIAL_11>Assistant\n<think>\n",
}


def gen_model_case(rng, name, ident):
    parts = MODEL_PARTS[name]
    pieces = []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        part = rng.choice(parts)
        if r < 0.12:
            part = near_miss(part, rng)
        elif r < 0.2:
            part = rng.choice(FILLER)
        pieces.append(part)
    text = "".join(pieces)
    if rng.random() < 0.15 and text:
        text = text[: rng.randrange(len(text))]
    prefix = MODEL_PROMPTS.get(name, "") if rng.random() < 0.5 else ""
    case = {"id": ident, "template": name, "prefix": prefix, "text": text, "chunkings": chunkings(text, rng)}
    if rng.random() < 0.25:
        case["tools"] = TOOLS
    return case


def gen_cases(seed, count):
    rng = random.Random(seed)
    names = sorted(MODEL_PARTS)
    for n in range(count):
        if rng.random() < 0.3:
            yield gen_model_case(rng, rng.choice(names), f"fuzz/{seed}/{n}")
            continue
        tg = TemplateGen(rng)
        template = tg.template()
        text = text_for(template, tg.samplers, rng)
        case = {
            "id": f"fuzz/{seed}/{n}",
            "template": template,
            "prefix": prefix_for(template, tg.samplers, rng),
            "text": text,
            "chunkings": chunkings(text, rng),
        }
        if rng.random() < 0.2:
            case["tools"] = TOOLS
        yield case


# ---------------------------------------------------------------------------
# Plumbing


def reference_python():
    """The venv's python (made on first use; later calls return at once)."""
    setup = subprocess.run(["bash", os.path.join(HERE, "reference", "setup.sh")], stdout=subprocess.PIPE, text=True)
    if setup.returncode != 0:
        sys.exit("fuzz.py: tools/reference/setup.sh failed (see above)")
    return setup.stdout.strip()


def expect(cases_path, templates, out):
    """Writes the cases of `cases_path` with the reference's `expected` to `out`."""
    subprocess.run([reference_python(), ORACLE, "--expect", cases_path, "--templates", templates], check=True,
                   stdout=out)


def retort_binary():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "retort-cli"], check=True, cwd=ROOT)
    # Where cargo put it: CARGO_TARGET_DIR (relative to the workspace) when set.
    target = os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR") or "target")
    return os.path.join(target, "release", "retort")


def compiled_binary(vectors):
    """Builds `conformance-compiled` with every template of `vectors` (named ones from templates/,
    inline ones by content) compiled in, and returns its path. A debug build: the generated code of a
    batch's templates compiles several times faster than with optimisations, and the engine it runs
    on is optimised in dev builds too (the workspace's profile)."""
    env = dict(os.environ)
    env["RETORT_CONFORMANCE_TEMPLATES"] = os.path.join(ROOT, "templates")
    env["RETORT_CONFORMANCE_CASES"] = vectors
    # Only the binary is built: the build script skips the modules of the repository's own vectors.
    env["RETORT_CONFORMANCE_ONLY"] = "1"
    subprocess.run(["cargo", "build", "-q", "-p", "retort-tests", "--bin", "conformance-compiled"],
                   check=True, cwd=ROOT, env=env)
    target = os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR") or "target")
    return os.path.join(target, "debug", "conformance-compiled")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="write cases without expected results")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--count", type=int, default=100)
    e = sub.add_parser("expect", help="add the reference's expected results to a case file")
    e.add_argument("cases")
    e.add_argument("--templates", default=os.path.join(ROOT, "templates"))
    c = sub.add_parser("check", help="generate, run both implementations, compare")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--count", type=int, default=1000)
    c.add_argument("--batch", type=int, default=500)
    c.add_argument("--show", type=int, default=5)
    c.add_argument("--compiled", action="store_true",
                   help="run the cases through compiled parsers: each batch's templates are compiled "
                        "into the conformance-compiled binary (RETORT_CONFORMANCE_CASES) and run there")
    args = ap.parse_args()

    if args.cmd == "gen":
        for case in gen_cases(args.seed, args.count):
            print(json.dumps(case, ensure_ascii=False))
    elif args.cmd == "expect":
        sys.stdout.flush()
        expect(args.cases, args.templates, sys.stdout)
    elif args.cmd == "check":
        binary = None if args.compiled else retort_binary()
        passed = failed = 0
        done = 0
        seed = args.seed
        while done < args.count:
            n = min(args.batch, args.count - done)
            # The compiled runner's build reads the batch's file: keep it where cargo can see it
            # change (under target/, one file reused per batch).
            tmp_ctx = tempfile.TemporaryDirectory()
            with tmp_ctx as tmp, contextlib.ExitStack() as held:
                if args.compiled:
                    tmp = os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR") or "target", "fuzz-compiled")
                    os.makedirs(tmp, exist_ok=True)
                    # The batch's files, and the binary built from them, are one per checkout: a
                    # second `check --compiled` in the same checkout waits here for the batch to
                    # end, instead of overwriting them under it (which reads as failures).
                    lock = held.enter_context(open(os.path.join(tmp, ".lock"), "w"))
                    fcntl.flock(lock, fcntl.LOCK_EX)
                raw = os.path.join(tmp, "cases.jsonl")
                with open(raw, "w", encoding="utf-8") as fh:
                    for case in gen_cases(seed, n):
                        fh.write(json.dumps(case, ensure_ascii=False) + "\n")
                vectors = os.path.join(tmp, "vectors.jsonl")
                with open(vectors, "w", encoding="utf-8") as fh:
                    expect(raw, os.path.join(ROOT, "templates"), fh)
                actual = os.path.join(tmp, "actual.jsonl")
                with open(actual, "w", encoding="utf-8") as fh:
                    if args.compiled:
                        subprocess.run([compiled_binary(vectors), vectors], check=True, stdout=fh)
                    else:
                        subprocess.run([binary, "conformance", vectors, "--templates",
                                        os.path.join(ROOT, "templates")], check=True, stdout=fh)
                cmp = subprocess.run(
                    [sys.executable, COMPARE, vectors, "--actual", actual, "--show", str(args.show)],
                    capture_output=True, text=True,
                )
                if cmp.returncode not in (0, 1):
                    sys.exit(f"fuzz.py: tools/compare.py failed on seed {seed}:\n{cmp.stderr}")
                lines = cmp.stdout.strip().split("\n")
                counts = lines[-1].split(", ")
                p, f = [int(x.split()[0]) for x in counts[:2]]
                # A skipped case is a failure of the harness: every template must run.
                f += sum(int(x.split()[0]) for x in counts[2:] if x.endswith("skipped"))
                passed += p
                failed += f
                print(f"seed {seed}: {p} passed, {f} failed", file=sys.stderr, flush=True)
                if f:
                    print(f"seed {seed}:")
                    print("\n".join(lines[:-1][: 40]))
                    keep = os.path.join(ROOT, "target", f"fuzz-failures-{seed}.jsonl")
                    os.makedirs(os.path.dirname(keep), exist_ok=True)
                    with open(vectors, encoding="utf-8") as src, open(keep, "w", encoding="utf-8") as dst:
                        dst.write(src.read())
            done += n
            seed += 1
        print(f"{passed} passed, {failed} failed")
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
