"""Generates engine/tests/data/py_cases.jsonl: inputs for retort's Python
value layer (engine/src/py, content.rs, transform.rs) with the results the
reference produces for them. engine/tests/py_conformance.rs replays them.

    $(tools/reference/setup.sh) tools/py_cases.py > engine/tests/data/py_cases.jsonl

One JSON object per line:

    {"kind": "strip" | "int" | "float" | "json" | "validate" | "field", ...inputs...,
     "expect": {"ok": VALUE} | {"err": {"type": NAME, "message": STR}}}

VALUEs are tagged so that nothing is lost: ints are {"$int": "digits"},
floats {"$float": "<16 hex digits of the IEEE bits>"}, dicts
{"$dict": [[key, VALUE], ...]} (in order); strings, bools, null and lists are
plain. A lone surrogate in a result becomes U+FFFD (retort's documented
divergence: Rust strings cannot hold one).

`field` cases run a whole region through a real ResponseParser (content
parser, transform, tool coercion) and record its region_close value or the
exception, from the same call depth as tools/reference/oracle.py, so that
recursion limits line up.
"""

from __future__ import annotations

import json
import os
import random
import struct
import sys
import warnings

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
warnings.filterwarnings("ignore")

from transformers.utils.chat_parsing import ResponseParser  # noqa: E402
from transformers.utils.chat_parsing.content_parsers import validate_transform_strings  # noqa: E402
from transformers.utils.chat_parsing.response_templates import load_response_template  # noqa: E402

OPEN, CLOSE, SEP = "\ue000", "\ue001", "\ue002"


def fix_str(s: str) -> str:
    return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace") if any(
        0xD800 <= ord(c) <= 0xDFFF for c in s
    ) else s


def tag(v):
    """Python value -> tagged JSON (see the module docs). Iterative enough:
    the caller raises the recursion limit for deep values."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return {"$int": str(v)}
    if isinstance(v, float):
        return {"$float": struct.pack(">d", v).hex()}
    if isinstance(v, str):
        return fix_str(v)
    if isinstance(v, list):
        return [tag(x) for x in v]
    if isinstance(v, dict):
        return {"$dict": [[fix_str(k), tag(x)] for k, x in v.items()]}
    raise TypeError(type(v))


def tag_deep(v):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(20000)
    try:
        return tag(v)
    finally:
        sys.setrecursionlimit(old)


def err_of(e: BaseException):
    return {"err": {"type": type(e).__name__, "message": fix_str(str(e))}}


def capture(f):
    try:
        return {"ok": tag_deep(f())}
    except Exception as e:  # noqa: BLE001
        return err_of(e)


# ---------------------------------------------------------------------------
# field cases: the oracle's call structure (main -> run_case -> run_stream -> feed)


def field_template(case):
    field = {"close": CLOSE, "content": case["content"]}
    caps = case.get("captures") or {}
    if caps:
        field["open_pattern"] = OPEN + "".join(f"(?P<{k}>[^{SEP}]*){SEP}" for k in caps)
    else:
        field["open"] = OPEN
    if "content_args" in case:
        field["content_args"] = case["content_args"]
    if "transform" in case:
        field["transform"] = case["transform"]
    if case.get("transform_each"):
        field["transform_each"] = True
    return {"start_anchor": "\ue003", "fields": {"f": field}}


def run_stream(template, case, chunks):
    try:
        parser = ResponseParser(template, prefix="", tools=case.get("tools"))
    except Exception as exc:  # noqa: BLE001
        return err_of(exc)
    events = []
    try:
        for piece in chunks:
            events.extend(parser.feed(piece))
    except Exception as exc:  # noqa: BLE001
        return err_of(exc)
    closes = [e for e in events if e["type"] == "region_close"]
    assert len(closes) == 1, closes
    return {"ok": tag_deep(closes[0]["value"])}


def run_case(case):
    template = load_response_template(field_template(case))
    caps = case.get("captures") or {}
    opener = OPEN + "".join(v + SEP for v in caps.values())
    return run_stream(template, case, [opener + case["text"] + CLOSE])


# ---------------------------------------------------------------------------
# inputs

R = random.Random(20261122)

SPACES = [" ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u3000",
          "\u2028", "\u200b", "\u1680", "\x00", "\x7f"]
DIGIT_ZEROS = [0x30, 0x660, 0x6F0, 0x966, 0xFF10, 0x1D7CE, 0x1D7EC, 0x104A0, 0x1E950]
WORDS = ["inf", "Infinity", "nan", "NaN", "iNf", "INFINITY", "infinit", "nanx", "e", "E", ".", "_", "x", "?", "é",
         "²", "0x", "++", "--"]


def digit():
    z = R.choice(DIGIT_ZEROS) if R.random() < 0.3 else 0x30
    return chr(z + R.randrange(10))


def digits(n=None):
    n = n if n is not None else R.choice([1, 1, 2, 3, 5, 10, 18, 19, 20, 25])
    out = []
    for _ in range(n):
        out.append(digit())
        if R.random() < 0.08:
            out.append("_" * R.choice([1, 1, 1, 2]))
    return "".join(out)


def ws():
    return "".join(R.choice(SPACES) for _ in range(R.choice([0, 0, 0, 1, 1, 2])))


def numeric():
    parts = [ws(), R.choice(["", "", "+", "-", "+-", "_"])]
    shape = R.random()
    if shape < 0.15:
        parts.append(R.choice(WORDS))
    elif shape < 0.5:
        parts.append(digits())
    else:
        parts.append(R.choice(["", digits()]))
        parts.append(R.choice([".", ".", "", "._"]))
        parts.append(R.choice(["", digits()]))
        if R.random() < 0.5:
            parts.append(R.choice(["e", "E", "e_"]) + R.choice(["", "+", "-"]) + R.choice(["", digits(R.choice([1, 2, 3, 4, 10]))]))
    if R.random() < 0.1:
        parts.insert(R.randrange(len(parts) + 1), R.choice(WORDS))
    parts.append(ws())
    return "".join(parts)


HAND_NUMBERS = [
    "", " ", "0", "-0", "+0", "00", "007", "1_000", "1__000", "_1", "1_", "+_1", "1 2", "\x1c5\x1f", " 5\x85",
    "\u30005\u3000", "\x0b1\x0c", "5\x00", "\x005", "١٢٣", "５", "５x", "x５", "٣.٥", "1.", ".5", ".", "1.e5",
    ".e5", "e5", "1e", "1e+", "1e-5", "1E5", "1e5_0", "1_e5", "1e_5", "1_0.5_5", "5._5", "._5", "inf", "-inf",
    "+inf", "--inf", "+-inf", "infinity", "INFINITY", "-Infinity", "infinityx", "infin", "nan", "-nan", "+NaN",
    "nan_", "0x10", "0b1", "1e999999999999999999", "-1e-999999", "2.4703282292062327e-324",
    "2.4703282292062328e-324", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "18446744073709551615", "18446744073709551616", "123456789012345678901234567890", "0.1", "3.0", "3.5",
    "1e3", "1" * 4300, "1" * 4301, "-" + "9" * 4301, "1" * 4301 + "x", "x" + "1" * 4301, "1" * 5000 + "__1",
    "1" * 5000 + "_", "1_" * 4300 + "1", "٣" * 4301, "1" * 4301 + "é", "0." + "0" * 400 + "1e400",
    "1" + "0" * 400 + "e-400", "1" * 800 + "e-800", "x" * 300, "é" * 250, "\x7f", "1\u2028", "\u20281",
]


def json_scalar():
    r = R.random()
    if r < 0.15:
        return R.choice(["null", "true", "false", "NaN", "Infinity", "-Infinity", "nul", "tru", "-Inf", "nan",
                         "-NaN", "infinity"])
    if r < 0.45:
        return R.choice(["0", "-0", "1", "-1", "01", "-01", "1.5", "1.", ".5", "-", "1e5", "1E+5", "1e", "1e+",
                         "2e-400", "1e400", "-0.0", "123456789012345678901234567890", "1.5e-320", "1" * 30,
                         "9" * 19, "-" + "9" * 19, "3.0e0"])
    pieces = []
    for _ in range(R.randrange(0, 6)):
        pieces.append(R.choice(["a", "é", "😀", "\\n", "\\t", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r",
                                "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00", "\\ud83dx", "\\u12", "\\uzzzz",
                                "\\x", "\x01", "\x1f", "\x7f", " ", "'", "\\ud83d\\u0041", "\\ud83d\\udZ00"]))
    return '"' + "".join(pieces) + '"'


def json_text(depth=0):
    r = R.random()
    if depth > 3 or r < 0.4:
        return json_scalar()
    sp = lambda: R.choice(["", "", " ", "\n", "\t", "\r", "\x0b", "\xa0"])  # noqa: E731
    if r < 0.7:
        items = [json_text(depth + 1) for _ in range(R.randrange(0, 4))]
        body = ("," + sp()).join(sp() + i + sp() for i in items)
        if R.random() < 0.05:
            body += ","
        return "[" + body + "]"
    keys = [R.choice(['"a"', '"b"', '"a"', '"é"', '""', "a", "'a'", '"\\u0061"']) for _ in range(R.randrange(0, 4))]
    body = ("," + sp()).join(sp() + k + sp() + R.choice([":", ":", " :", "", "::"]) + sp() + json_text(depth + 1)
                             for k in keys)
    if R.random() < 0.05:
        body += ","
    return "{" + body + "}"


def mutate(s):
    if not s or R.random() < 0.5:
        return s
    i = R.randrange(len(s))
    op = R.random()
    if op < 0.33:
        return s[:i] + s[i + 1:]
    if op < 0.66:
        return s[:i] + R.choice(['"', ",", "]", "}", "[", "{", ":", "\\", " ", "x", "\n"]) + s[i:]
    return s[:i] + R.choice(["0", "\x00", "é"]) + s[i + 1:]


HAND_JSON = [
    "", " ", "\ufeff1", "\ufeff", "1 2", "[1,]", '{"a":1,}', "[1 2]", '{"a" 1}', '{"a":}', "{a:1}", "-",
    '"abc', '"a\x01"', '"\\u12"', '"\\u1234', '"\\ud83d\\ude00"', '"\\ud800"', '"\\ud800\\u0041"',
    '"\\ud83d\\ude0"', '"\\ud83d\\ude00', '"\\ud83d\\', '"\\', "1.5e99999", "[NaN, Infinity, -Infinity]",
    '{"a": 1, "b": 2, "a": 3}', '{"a": {"x": 1}, "a": [2]}', "\n\n  x", "[\n1,\n2\n", " [] ", "{}", "[]",
    "1" * 4300, "1" * 4301, "-" + "1" * 4301, "[" + "1" * 4301 + "]", '{"a": ' + "2" * 4301 + "}",
    "1." + "1" * 5000, "[1]x", "nul", "tru", "fals", "-Infinit", "NaNx", "0123", "-01", "1.e5", "1e5.0",
    "[" * 984 + "]" * 984, "[" * 985 + "]" * 985, "[" * 983 + "{}" + "]" * 983, "[" * 984 + "{}" + "]" * 984,
    '{"a":' * 984 + "1" + "}" * 984, '{"a":' * 985 + "1" + "}" * 985, "[" * 2000, "[" * 984, "\t1\r\n",
    "\x0b1", "\xa01", '"\t"', '"\\/\\b\\f"', '{"":0}', '"\x7f\x80"',
]


NON_ASCII_JSON = [
    "é", "[é]", '["é", 1,]', '{"ключ": 1 2}', '{"ключ" 1}', '{"é": 1, é: 2}', '"😀\x01"', '"é\\x"',
    '"é\\u12"', '"\\u12é"', '"é\\ud800\\u12é"', '"é\\ud83d\\ude00"', '[\n"é",\n 1 x]',
    '"日本語', "[1, 2] é", '{"a":"😀😀"} x', '"é\\u', "1.5é", "-é", "nullé", "[1é]",
    '"\\ud83d\\udeé0"', '"abc\\é"', '  \n 😀 ', '["😀",\n\n  "é"\n  "x"]', '{"😀": [1, {"é": tru}]}',
    "\u00a0[]", '"\u2028"', '["é"]\n\n\u3000',
]


def strip_cases():
    out = [s for s in HAND_NUMBERS[:40]]
    out += ["".join(R.choice(SPACES + ["a", "é", "b c"]) for _ in range(R.randrange(0, 8))) for _ in range(150)]
    return out


# ---------------------------------------------------------------------------
# content-parser and transform inputs

TRUTHY = [True, False, 0, 1, "", "x", [], [0], {}, {"a": 1}, None, 0.0, 2.5]


def texts_for(parser):
    if parser in ("int", "float", "bool", "text"):
        return [numeric() for _ in range(4)] + R.sample(HAND_NUMBERS[:60], 3) + [" TRUE ", "1", "yes", "", "True\x1c"]
    if parser == "json":
        return [mutate(json_text()) for _ in range(6)] + R.sample(HAND_JSON[:30], 2) + [
            "{a: 1, b_2: {c: [1]}, é: 2, 'x': 3}", "<<he said \"hi\"\n é 😀>>", "{\"k\": <<v\x01>>}",
            "{\"k\": <<v>>, \"j\": <<w>>}", "{k: <<v>>}", "[<<a>>, <<b>>, <<c", "  not json  ", "{k:'v'}",
            "{\"a\": |x|, \"b\": |y|}", "{a:1,b :2,c:{d:3}}", "",
        ]
    if parser == "kv-lines":
        return ["a: 1\nb: 2", "a: 1\n\nb:2:3\nnoval\n a : x ", "a=1;b=2", " k :  v \r\nk2:v2\r\n", "", "\n\n",
                "a:1\na:2", "a: 1 2\tb: 3", "x", ": v", "k:", "é: ü\u2028f: g", "a:[1,2]\nb:{\"c\": 1}\nc: x y"]
    if parser == "xml-inline":
        return ["<p=a>1</p><p=b> x </p>", "<p=a>1</p><p=a>2</p><p=a>3</p>", "", "no tags",
                "<p=a>[1,2]</p><p=a>3</p>", "<p=é>\n{\"x\": 1}\n</p>", "<p=a></p>", "<p=a>1</p>\x01",
                "<k>v</k><k2>w</k2>"]
    return [""]


def args_for(parser):
    out = [{}, None, [], "x", 5, {"strip": R.choice(TRUTHY)}]
    if parser == "json":
        out += [
            {"unquoted_keys": R.choice(TRUTHY)},
            {"allow_non_json": R.choice(TRUTHY), "strip": R.choice(TRUTHY)},
            {"string_delims": [["<<", ">>"]]},
            {"string_delims": [["<<", ">>"]], "unquoted_keys": True},
            {"string_delims": [["|", "|"]], "allow_non_json": 1},
            {"string_delims": [["<<", ">>"], ["|", "|"]]},
            {"string_delims": [["", ""]]},
            {"string_delims": [["", ">>"]]},
            {"string_delims": [["<<", ""]]},
            {"string_delims": ["<>"]},
            {"string_delims": {"<>": 1}},
            {"string_delims": "ab"},
            {"string_delims": ""},
            {"string_delims": 5},
            {"string_delims": 0},
            {"string_delims": None},
            {"string_delims": True},
            {"string_delims": [5]},
            {"string_delims": [None]},
            {"string_delims": [["a"]]},
            {"string_delims": [["a", "b", "c"]]},
            {"string_delims": [[1, 2]]},
            {"string_delims": [[None, ">"]]},
            {"string_delims": [[["<", "<"], [">", ">"]]]},
            {"string_delims": [[{"<": 1}, ">"]]},
            {"string_delims": [[[5], ">"]]},
            {"string_delims": [[[[]], ">"]]},
            {"string_delims": [[[" "], [">"]]]},
            {"string_delims": [[["<<"], ">>"]]},
            {"string_delims": [[["<", "<"], ">>"]], "allow_non_json": True},
            {"string_delims": [["<<", ">>"], 5]},
            {"string_delims": [["<<", ">>"]], "allow_non_json": True},
        ]
    if parser == "kv-lines":
        vp = R.choice([None, {"name": "int"}, {"name": "json", "args": {"allow_non_json": True}}, "int",
                       {"name": "nope"}, {"name": 5}, {"name": ["a"]}, {"name": None}, {"args": {"strip": False}},
                       {"name": "int", "args": 3}, {"name": "kv-lines", "args": {"kv_sep": "="}}, {}])
        out += [
            {"line_sep": ";", "kv_sep": "="}, {"line_sep": ""}, {"line_sep": None}, {"line_sep": 5},
            {"line_sep": "\r\n"}, {"kv_sep": ""}, {"kv_sep": 5}, {"kv_sep": None}, {"kv_sep": "::"},
            {"strip": False, "kv_sep": ":"}, {"value_parser": vp}, {"value_parser": {"name": "float"}},
            {"value_parser": {"name": "bool"}}, {"value_parser": {"name": "json"}},
        ]
    if parser == "xml-inline":
        std = r"<p=(?P<key>[^>]*)>(?P<value>.*?)</p>"
        out += [
            {"tag_pattern": std},
            {"tag_pattern": std, "merge_duplicates": True},
            {"tag_pattern": std, "merge_duplicates": 1, "value_parser": {"name": "json", "args": {"allow_non_json": True}}},
            {"tag_pattern": std, "value_parser": {"name": "int"}},
            {"tag_pattern": std, "value_parser": "int"},
            {"tag_pattern": std, "value_parser": {"name": "nope"}},
            {"tag_pattern": r"<p=(?P<key>[^>]*)>.*?</p>"},
            {"tag_pattern": r"<p=[^>]*>(?P<value>.*?)</p>"},
            {"tag_pattern": r"<p=(?P<key>[^>]*)>(?:(?P<value>\d+)|.*?)</p>"},
            {"tag_pattern": r"<p=(?P<key>[^>]*)>(?:(?P<value>\d+)|.*?)</p>", "value_parser": {"name": "text", "args": {"strip": False}}},
            {"tag_pattern": r"<p=(?P<key>[^>]*)>(?:(?P<value>\d+)|.*?)</p>", "value_parser": {"name": "text"}},
            {"tag_pattern": r"<p=(?P<key>[^>]*)>(?:(?P<value>\d+)|.*?)</p>", "value_parser": {"name": "json"}},
            {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"},
            {"tag_pattern": "("},
            {"tag_pattern": 5},
            {"tag_pattern": None},
            {"tag_pattern": ["a"]},
            {"tag_pattern": {"a": 1}},
            {"tag_pattern": True},
        ]
    return out


def field_cases():
    cases = []
    for parser in ["text", "int", "float", "bool", "json", "kv-lines", "xml-inline"]:
        for args in args_for(parser):
            for text in texts_for(parser):
                if OPEN in text or CLOSE in text:
                    continue
                case = {"kind": "field", "content": parser, "text": text}
                if args is not None or R.random() < 0.5:
                    case["content_args"] = args
                cases.append(case)
    # xml-inline: optional `value` groups hand None to every value parser;
    # empty matches; keys that do not take part; nested parsers.
    opt = r"<p=(?P<key>[^>]*)>(?:(?P<value>\d+)|.*?)</p>"
    none_parsers = [None, {"name": "text"}, {"name": "text", "args": {"strip": False}}, {"name": "int"},
                    {"name": "int", "args": {"strip": 0}}, {"name": "float"}, {"name": "float", "args": {"strip": ""}},
                    {"name": "bool"}, {"name": "bool", "args": {"strip": False}}, {"name": "json"},
                    {"name": "json", "args": {"string_delims": [["<", ">"]]}},
                    {"name": "json", "args": {"string_delims": [[["<<"], ">"]]}},
                    {"name": "json", "args": {"string_delims": [[["(("], ">"]]}},
                    {"name": "json", "args": {"string_delims": [5]}},
                    {"name": "json", "args": {"unquoted_keys": 1}},
                    {"name": "json", "args": {"allow_non_json": True}},
                    {"name": "xml-inline", "args": {"tag_pattern": "a"}}, {"name": "xml-inline", "args": {"tag_pattern": "("}},
                    {"name": "xml-inline", "args": {}}, {"name": "kv-lines"}, {"name": "kv-lines", "args": []}]
    for vp in none_parsers:
        for text in ["<p=a>x</p>", "<p=a>12</p><p=a>x</p>", "<p=b>[1]</p>"]:
            cases.append({"kind": "field", "content": "xml-inline", "text": text,
                          "content_args": {"tag_pattern": opt, "value_parser": vp, "merge_duplicates": True}})
    for pattern in [r"(?P<key>)", r"(?P<key>a*)(?P<value>b*)", r"(?:(?P<key>k)|x)(?P<value>\w)", r"(?P<value>.)",
                    r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", r"(?P<key>\w+)=(?P<value>[^;]*);?",
                    r"(?i)<P=(?P<key>\w)>(?P<value>.*?)</P>", r"(?P<key>.)(?P<value>)", r"(?P<key>\d)\b"]:
        for text in ["", "ab", "kax", "<a>1</a><b>2</b><a>3</a>", "a=1;b=2;a=[3];c=", "<p=x>1</P><P=y>2</p>", "12 3"]:
            for vp in [None, {"name": "json", "args": {"allow_non_json": True}}]:
                cases.append({"kind": "field", "content": "xml-inline", "text": text,
                              "content_args": {"tag_pattern": pattern, "value_parser": vp, "merge_duplicates": R.choice([True, False])}})
    for delims in [[[["a.b"], "x"]], [[["(x)?"], "|"]], [[["<", "<<"], [">>"]]], [[["\\d"], ";"]], [["|", ["|"]]]]:
        for text in ["[a-bcx, aXbx]", "{\"k\": |v|}", "[<<<1>>, 2]", "[\\d5;]", "[1]", "[|a|, |b|]"]:
            cases.append({"kind": "field", "content": "json", "text": text,
                          "content_args": {"string_delims": delims, "allow_non_json": R.choice([True, False])}})
    # kv-lines and xml-inline nested in each other.
    for text in ["a: <k>1</k><k>2</k>\nb: <j>x</j>", "a: x=1;y=2", "a:\nb: "]:
        for vp in [{"name": "xml-inline", "args": {"tag_pattern": r"<(?P<key>\w)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": 1,
                                                     "value_parser": {"name": "int"}}},
                   {"name": "kv-lines", "args": {"line_sep": ";", "kv_sep": "=", "value_parser": {"name": "float"}}}]:
            cases.append({"kind": "field", "content": "kv-lines", "text": text, "content_args": {"value_parser": vp}})
    # The json depth limit through the whole call chain, with the value kept
    # small enough to record.
    for d in (983, 984, 985, 986):
        cases.append({"kind": "field", "content": "json", "text": "[" * d + "]" * d, "transform": {"x": 1}})
        cases.append({"kind": "field", "content": "xml-inline", "text": "<k>" + "[" * (d - 3) + "]" * (d - 3) + "</k>",
                      "content_args": {"tag_pattern": "<(?P<key>k)>(?P<value>.*)</k>", "value_parser": {"name": "json"}},
                      "transform": {"x": 1}})
    cases += transform_cases()
    return cases


TOOLS = [
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"}, "z": {"type": "null"},
        "o": {"type": "object"}, "a": {"type": "array"}, "s": {"type": "string"},
        "u": {"type": ["integer", "string"]}, "v": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        "w": {"oneOf": [{"type": "boolean"}, {"anyOf": [{"type": "integer"}]}], "nullable": True},
        "x": {"type": "integer", "nullable": True}, "y": {"type": ["array", "integer"]},
        "q": {"type": "unknown"}, "r": {"anyOf": {"type": "integer"}}, "t": {"anyOf": "integer"},
        "e": {"anyOf": []}, "m": {"type": ["null", "null"], "nullable": 1}}}}},
    {"name": "g", "parameters": {"properties": {"i": {"type": "string"}, "s": {"type": "integer"}}}},
    {"name": "h", "parameters": {"properties": {"i": {"anyOf": 5}}}},
    {"name": "k", "parameters": {"properties": {"i": {"oneOf": True}}}},
    {"function": None, "name": "ignored"},
    {"function": {"name": 5}},
    {"name": "p", "parameters": "x"},
    {"name": "q", "parameters": {"properties": []}},
    "junk", 5, None,
]

ARG_STRINGS = ["3", "3.0", "3.5", " 4 ", "1_0", "١٢", "1e3", "1e400", "-0", "inf", "nan", "true", " FALSE ", "0",
               "1", "None", "null", " null ", '{"a": 1}', "[1, 2]", "[1,", "x", "", "٣.٥", "9" * 25, "1e300",
               "-2.5e-3", "True", "ｔｒｕｅ", "\x1c1", "1\x00"]
# Long ones, each tried once per parameter below rather than at random.
HEAVY_ARGS = ["1" * 4301, "1" * 4300, "[" * 986 + "]" * 986, "[" * 985 + "]" * 985, "[" * 983 + "]" * 983,
              "1" * 400 + ".0"]


def transform_cases():
    cases = []
    call = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    for name in ["f", "g", "h", "k", "p", "q", "nope"]:
        for _ in range(25):
            keys = R.sample(list("inbzoasuvwxyqrtem"), R.randrange(1, 5))
            args = {}
            for k in keys:
                if R.random() < 0.15:
                    args[k] = [R.choice(ARG_STRINGS), R.choice([1, None, "2", [3]])]
                elif R.random() < 0.1:
                    args[k] = R.choice([5, None, True, {"a": "1"}])
                else:
                    args[k] = R.choice(ARG_STRINGS)
            cases.append({"kind": "field", "content": "json", "text": json.dumps(args), "captures": {"name": name},
                          "transform": call, "tools": TOOLS})
    for heavy in HEAVY_ARGS:
        deep = heavy.startswith("[")
        for key in ["a", "y"] if deep else ["i", "n"]:
            for wrap in (False, True) if deep else (False,):
                transform = [call] if wrap else call
                cases.append({"kind": "field", "content": "json", "text": json.dumps({key: heavy}),
                              "captures": {"name": "f"}, "transform": transform, "tools": TOOLS})
    # Aliasing: the same arguments dict reached from several places.
    body = json.dumps({"i": "4", "s": "5", "l": ["1", "x"], "a": "[1]"})
    for transform in [
        {"function": {"name": "{name}", "arguments": "{content}"}, "raw": "{content}"},
        {"function": {"name": "{name}", "arguments": "{content}"}, "copy": "{content.i}", "l": "{content.l}"},
        [{"function": {"name": "f", "arguments": "{content}"}}, {"function": {"name": "g", "arguments": "{content}"}}],
        [{"function": {"name": "g", "arguments": "{content}"}}, {"function": {"name": "f", "arguments": "{content}"}}],
        ["{content}", {"function": {"name": "f", "arguments": "{content}"}}, "{content}"],
        {"function": {"name": "f", "arguments": {"i": "{content.i}", "s": ["{content.s}", "{content.l}"]}}},
        {"function": "{content.fn}", "again": {"function": "{content.fn}"}},
        {"function": {"name": "{name}", "arguments": "{content.missing}"}},
        {"function": {"name": "{name}", "arguments": "{content.i.x}"}},
        {"function": {"name": "{nope}", "arguments": "{content}"}},
        {"a": [1, 2.5, None, True, "lit", {"b": "{name}"}]},
        "{content}",
        "{name}",
        "plain",
        7,
        None,
    ]:
        for tools in [TOOLS, None, [], 5, "abc", {"f": 1}, [{"name": "f"}]]:
            text = body if "fn" not in json.dumps(transform) else json.dumps({"fn": {"name": "f", "arguments": {"i": "4"}}})
            cases.append({"kind": "field", "content": "json", "text": text,
                          "captures": {"name": "f"} if transform is not None else {},
                          "transform": transform, "tools": tools})
    # Dotted placeholders into random content: found, missing keys, indexing
    # into non-dicts of every type.
    def nested(depth=0):
        r = R.random()
        if depth > 2 or r < 0.3:
            return R.choice([1, 2.5, None, True, "s", [1, {"a": 1}], {}])
        return {k: nested(depth + 1) for k in R.sample(["a", "b", "é", "1", "_"], R.randrange(1, 4))}
    for _ in range(80):
        root = R.choice(["content", "content", "content", "name", "other"])
        path = root + "".join("." + R.choice(["a", "b", "é", "1", "_", "x"]) for _ in range(R.randrange(0, 4)))
        transform = R.choice([{"v": "{" + path + "}"}, ["{" + path + "}", "{content}"], "{" + path + "}"])
        cases.append({"kind": "field", "content": "json", "text": json.dumps(nested()), "captures": {"name": "n"},
                      "transform": transform})
    # Captures and content that collide; transform_each.
    cases.append({"kind": "field", "content": "json", "text": '{"x": 1}', "captures": {"content": "cap"},
                  "transform": {"c": "{content}"}})
    each = {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}, "n": "{name}"}
    for text in ['[{"tool_name": "f", "parameters": {"i": "2", "b": "yes"}}, {"tool_name": "g", "parameters": {"i": 3}}]',
                 '[{"tool_name": "f", "parameters": {"i": "2"}, "name": "item"}]', '[]', '{"tool_name": "f"}',
                 '[{"tool_name": "f", "parameters": {}}, 5]', '[5, {"tool_name": "zz"}]', '[{"parameters": {}}]',
                 '"s"', '[{"tool_name": "f", "parameters": {"i": "2"}}, {"tool_name": "f"}]']:
        for tools in [TOOLS, None]:
            cases.append({"kind": "field", "content": "json", "text": text, "captures": {"name": "cap"},
                          "transform": each, "transform_each": True, "tools": tools})
    # Tool calls straight from the content (no transform), nested lists.
    for text in ['{"function": {"name": "f", "arguments": {"i": "7", "b": "0"}}}',
                 '[{"function": {"name": "f", "arguments": {"i": "7"}}}, [{"function": {"name": "f", "arguments": {"n": "2"}}}]]',
                 '{"function": {"name": "f", "arguments": [1]}}', '{"function": {"name": 5, "arguments": {}}}',
                 '{"function": "f"}', "[" * 494 + "]" * 494, "[" * 495 + "]" * 495, "[" * 496 + "]" * 496,
                 "[" * 497 + "]" * 497]:
        for tools in [TOOLS, None]:
            cases.append({"kind": "field", "content": "json", "text": text, "tools": tools})
    # xml-inline tool calls with merged duplicates.
    for text in ["<p=i>1</p><p=i>x</p><p=i>2.0</p><p=n>3</p><p=a>[1]</p><p=a>[2]</p>", "<p=s>1</p><p=u>2</p><p=u>y</p>"]:
        cases.append({"kind": "field", "content": "xml-inline", "text": text, "captures": {"name": "f"},
                      "content_args": {"tag_pattern": r"<p=(?P<key>[^>]*)>(?P<value>.*?)</p>", "merge_duplicates": True},
                      "transform": call, "tools": TOOLS})
    return cases


def validate_cases():
    out = []
    for t in ["{content}", "{a.b.c}", "x {a} y", "{a}{b}", "{{a}}", "{a.}", "{.a}", "{a..b}", "{}", "{a b}",
              "{é_1.ü}", "pre{x}", "{x}post", "{ x }", "{a-b}", "{a}}", "{{a}", ["ok", "{a} b"], {"k": {"k": "z{q}"}},
              [1, None, 2.5, True], {"{a} b": "key is not checked"}, "{\u0660}", "{a\u200bb}", "{\u00b2}"]:
        try:
            validate_transform_strings("Field 'f'", t)
            res = {"ok": None}
        except Exception as e:  # noqa: BLE001
            res = err_of(e)
        out.append({"kind": "validate", "transform": t, "expect": res})
    return out


def main():
    out = []
    for s in strip_cases():
        out.append({"kind": "strip", "input": s, "expect": {"ok": s.strip()}})
    numbers = HAND_NUMBERS + [numeric() for _ in range(1200)]
    for s in numbers:
        out.append({"kind": "int", "input": s, "expect": capture(lambda: int(s))})
        out.append({"kind": "float", "input": s, "expect": capture(lambda: float(s))})
    # `json.loads` raises RecursionError at a nesting that depends on how deep
    # the caller's stack is; record the one of this harness with each case.
    depth = max(d for d in range(900, 1000) if "ok" in capture(lambda: json.loads("[" * d + "]" * d)))
    for s in HAND_JSON + [mutate(json_text()) for _ in range(1300)]:
        out.append({"kind": "json", "input": s, "max_depth": depth, "expect": capture(lambda: json.loads(s))})
    out += validate_cases()
    for case in field_cases():
        case["expect"] = run_case(case)
        out.append(case)
    # Error positions count characters, not bytes: text that is not ASCII
    # before (and inside) every kind of error. Last, so that the random
    # cases above stay as they were.
    for s in NON_ASCII_JSON:
        out.append({"kind": "json", "input": s, "max_depth": depth, "expect": capture(lambda: json.loads(s))})
    sys.setrecursionlimit(20000)
    for case in out:
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
