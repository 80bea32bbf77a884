"""Hand-written conformance cases: the edge cases of the engine's design,
each with a reason. Prints cases without expected results; add them with
`python3 tools/fuzz.py expect`:

    python3 tools/hand_cases.py > raw.jsonl
    python3 tools/fuzz.py expect raw.jsonl > tests/conformance/cases/hand.jsonl
"""

import json
import random
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fuzz import chunkings  # noqa: E402

ANY = {"defaults": {"role": "assistant"}, "start_anchor": "<ai>"}


def t(fields, **extra):
    return {**ANY, **extra, "fields": fields}


CASES = [
    # The prompt ends inside a delimiter: the reference holds it, and the
    # generation completes it.
    ("prefix-partial-open", t({"th": {"open": "<think>", "close": "</think>"}, "c": {}}), "<ai><thi", "nk>x</think>y"),
    # A regex delimiter complete at the prompt's end is held (it could grow):
    # its region opens in the events, not the initial events.
    ("prefix-regex-at-end", t({"tc": {"open_pattern": r"<tc>\s*", "close": "</tc>"}, "c": {}}), "<ai>hi <tc>", "  body</tc>"),
    # A literal complete at the prompt's end commits at once.
    ("prefix-literal-at-end", t({"tc": {"open": "<tc>", "close": "</tc>"}, "c": {}}), "<ai>hi <tc>", "body</tc>"),
    # At the prompt's end the reference prefers a complete match anywhere to
    # a partial one earlier (regex partial search), and commits "c".
    ("prefix-complete-beats-earlier-partial", t({"x": {"open_pattern": "a.*z|c", "close": "</x>"}, "c": {}}), "<ai>a bc", "z</x>"),
    # The optional tail: the one-shot result keeps the longer close.
    ("optional-tail-across-chunks", t({"k": {"open": "<k>", "close_pattern": r"</k>\s*(?:</ks>)?"}, "c": {"close": "<end>"}}), "", "<k>v</k>\n</ks>after<end>"),
    # A zero-width close of an implicit region that received nothing stops
    # the reference's loop for good: nothing after it is read.
    ("zero-width-close-stops", t({"c": {"close_pattern": "(?=x)"}, "o": {"open": "<o>", "close": "</o>"}}), "", "x<o>never</o>"),
    # Lookbehind guards at the start of branches.
    ("lookbehind-guards", t({"th": {"open_pattern": r"(?<=^)<t>|(?<=\n)<t>", "close": "</t>"}, "c": {}}), "", "<t>a</t> x <t>b</t>\n<t>c</t>"),
    # A trailing lookahead closes one call just before the next opens.
    ("lookahead-close", t({"call": {"open_pattern": r"<call>(?P<n>\w+):", "close_pattern": "(?=<call>)|<end>", "repeats": True, "content": "json", "transform": {"name": "{n}", "args": "{content}"}}}), "", '<call>a:{"x": 1}<call>b:[2]<end>'),
    # Literal lists where one literal extends another.
    ("literal-can-extend", t({"e": {"open": "<e>", "close": ["END", "ENDX"]}, "c": {}}), "", "<e>abcENDXtail <e>zEND"),
    # join concatenates; a default that is not a string makes join fail.
    ("join", t({"th": {"open": "<t>", "close": "</t>", "repeats": True, "join": " | "}}), "", "<t>a</t><t>b</t><t> c </t>"),
    ("join-over-bad-default", t({"th": {"open": "<t>", "close": "</t>", "repeats": True, "join": ""}}, defaults={"th": 3}), "", "<t>a</t>"),
    ("repeats-over-null-default", t({"th": {"open": "<t>", "close": "</t>", "repeats": True}}, defaults={"th": None}), "", "<t>a</t>"),
    # Empty values are dropped unless they come from defaults.
    ("empties-dropped", t({"a": {"open": "<a>", "close": "</a>"}, "b": {"open": "<b>", "close": "</b>", "content": "json"}}, defaults={"role": "assistant", "a": "x"}), "", "<a> </a><b>[]</b>"),
    # A required field never written is an error at finalize.
    ("required-missing", t({"a": {"open": "<a>", "close": "</a>", "optional": False}, "c": {}}), "", "just text"),
    # Transforms: dotted placeholders, and a missing key.
    ("transform-dotted", t({"tc": {"open": "<tc>", "close": "</tc>", "content": "json", "transform": {"name": "{content.f.name}", "args": "{content.f}"}}}), "", '<tc>{"f": {"name": "g", "x": 1}}</tc>'),
    ("transform-missing-key", t({"tc": {"open": "<tc>", "close": "</tc>", "content": "json", "transform": {"name": "{content.nope}"}}}), "", '<tc>{"f": 1}</tc>'),
    # Unicode: classes, case, and a delimiter made of non-ASCII characters.
    ("unicode-delimiters", t({"tc": {"open_pattern": r"<｜call｜>(?P<n>\w+)\n", "close": "<｜end｜>", "content": "json", "transform": {"n": "{n}", "a": "{content}"}}, "c": {}}), "", "前言<｜call｜>函数\n{\"é\": 1}<｜end｜>後"),
    # A region still open at the end of the stream closes at finalize.
    ("unclosed-region", t({"th": {"open": "<t>", "close": "</t>"}, "c": {}}), "", "<t>still thinking"),
    # Text outside any region (no implicit field) is dropped.
    ("no-implicit-drops-text", t({"th": {"open": "<t>", "close": "</t>"}}), "", "before <t>in</t> after"),
    # Leftmost, then longest, then opens before closes, then by name.
    ("tie-break-by-length-and-name", t({"b": {"open": "<x", "close": ">"}, "a": {"open": "<xy", "close": ">"}, "c": {"close": "<xyz"}}), "", "1<xyz>2<xy>3<x>"),
    # Tool-argument coercion, including the aliasing of a shared dict.
    ("tools-aliasing", t({"tc": {"open": "<tc>", "close": "</tc>", "repeats": True, "content": "json", "transform": {"function": {"name": "{content.name}", "arguments": "{content.arguments}"}, "raw": "{content}"}}}), "", '<tc>{"name": "f", "arguments": {"a": "1.5", "s": "7"}}</tc>'),
    # The start anchor's matches do not overlap (finditer): the last one wins.
    ("anchor-non-overlapping", {**ANY, "start_anchor": "aa", "fields": {"c": {}}}, "aaa prompt aaa", "gen"),
    # ERNIE-style `^` alternative opens a region at offset 0 only.
    ("caret-open-at-start", t({"th": {"open_pattern": r"(?:^|<think>\s*)", "close": "</think>"}, "c": {}}), "", "<think>x</think>y"),
    ("caret-open-after-prefix", t({"th": {"open_pattern": r"(?:^|<think>\s*)", "close": "</think>"}, "c": {}}), "<ai>", "x</think>y"),
    # `$` matches before a final newline, `\Z` only at the very end.
    ("dollar-before-final-newline", t({"c": {"close_pattern": "$"}, "o": {"open": "<o>", "close": "</o>"}}), "", "text\n"),
    ("backreference-in-tag-pattern", t({"x": {"open": "<x>", "close": "</x>", "content": "xml-inline", "content_args": {"tag_pattern": r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</(?P=key)>", "merge_duplicates": True}}}), "", "<x><a>1</a><b> 2 </b><a>3</a></x>"),
    # At the end of the stream the reference never commits a match that
    # starts at the very end of the text (zero-width there): it is no
    # earlier than the hold point, which is the text's end.
    ("zero-width-at-end-of-empty-text", t({"r": {"open_pattern": "^x?", "close": "!"}, "c": {}}), "", ""),
    ("zero-width-at-end-after-text", t({"r": {"open_pattern": r"\Z", "close": "!"}, "c": {}}), "", "abc"),
]

# Deeply nested JSON in a tool call: the reference's json.loads raises
# RecursionError past a depth that its own call stack decides; the cases
# straddle it, with and without a transform over the value.
TOOL_JSON = {"open": "<tc>", "close": "</tc>", "repeats": True, "content": "json"}
TOOL_JSON_T = {**TOOL_JSON, "transform": {"name": "{content.name}", "arguments": "{content.arguments}"}}
for depth in (985, 986, 987):
    deep_list = "[" * depth + "]" * depth
    deep_obj = '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)
    CASES.append((f"deep-json-list-{depth}", t({"tc": TOOL_JSON, "c": {}}), "", f"call <tc>{deep_list}</tc> done"))
    CASES.append((f"deep-json-args-{depth}", t({"tc": TOOL_JSON_T, "c": {}}), "",
                  f'<tc>{{"name": "f", "arguments": {deep_obj}}}</tc>'))

# Appended after the others so that their chunkings (drawn from one seeded
# generator) stay as recorded.
CASES += [
    # A lookbehind at the start of a branch of a leading group (LFM2's and
    # Gemma 3's tool-call openers): the DFA plan runs it as `AC|BC`.
    ("lookbehind-in-leading-group", t({"call": {"open_pattern": r"(?:<calls>\s*\[|(?<=\)),\s*)(?P<n>[a-z]+)\(", "close_pattern": r"\)\s*(?:\]|(?=,\s*[a-z]+\())", "repeats": True, "transform": {"name": "{n}", "args": "{content}"}}, "c": {}}), "",
     "x, f(1) <calls> [f(1), g(2), h(3)] y), k(4) z <calls>[m(5)]"),
    ("lookbehind-in-leading-group-priority", t({"o": {"open_pattern": r"(?:ab|(?<=x)a)(?:bc|b)", "close": "!"}, "c": {}}), "", "xabc! ab! xab! xabbc! xabbc"),
    # A trailing negative lookahead of fixed length runs on automata: the
    # text after the body is read until it leaves the run (or the text ends).
    ("negative-lookahead-close", t({"x": {"open": "<x>", "close_pattern": r"END(?!ING|ED)"}, "c": {}}), "",
     "<x>a ENDING b ENDED c END here <x>ENDIN"),
    ("negative-lookahead-class", t({"x": {"open_pattern": r"\[(?![\d\]])", "close": "]"}, "c": {}}), "",
     "[1] [] [a] x[[b]] [ [2"),
    ("negative-lookahead-at-end", t({"x": {"open": "<x>", "close_pattern": r"\.(?!\.\.)"}, "c": {}}), "",
     "<x>wait... ok. more.. <x>the end."),
]

# A state watching more than 64 automaton delimiters: the scanner tracks
# the first 64 entries in bit masks and visits the others at every byte.
WIDE = {f"f{i:02}": {"open_pattern": f"<f{i:02}\\s*>", "close": f"</f{i:02}>"} for i in range(70)}
CASES += [
    ("wide-state", t({**WIDE, "c": {}}), "",
     "<ai>x <f66 >a</f66> <f03>b</f03> <f69  >c</f69> <f6>d <f64>e</f64> <f63\n>f</f63> tail"),
]

# The typed message of a compiled template is read field by field, with
# the defaults applied as the reference's dict has them: a `null` default
# (an `Option` member), a default whose type is not the field's (an untyped
# member), a default the model overwrites with an empty value (kept), an
# empty value without a default (dropped), a list default under `repeats`.
TYPED = t(
    {"n": {"open": "<n>", "close": "</n>"}, "i": {"open": "<i>", "close": "</i>"},
     "d": {"open": "<d>", "close": "</d>"}, "e": {"open": "<e>", "close": "</e>", "optional": True},
     "calls": {"open": "<calls>", "close": "</calls>", "repeats": True, "content": "json"}, "c": {}},
    defaults={"role": "assistant", "n": None, "i": 3, "d": "dflt", "calls": []},
)
CASES += [
    ("typed-defaults-written", TYPED, "", '<ai>x<n>v</n><i>w</i><d></d><e></e><calls>[1]</calls><calls>{"a": 2}</calls>y'),
    ("typed-defaults-unwritten", TYPED, "", "<ai>only text"),
]

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"a": {"type": "number"}, "s": {"type": "integer"}}}}}]


def main():
    rng = random.Random(7)
    for name, template, prefix, text in CASES:
        cuts = chunkings(text, rng)
        if name.startswith("deep-json"):
            # Long texts: two chunkings keep the vectors small.
            third = len(text) // 3
            cuts = [[text[:third], text[third:2 * third], text[2 * third:]], [text[:7], text[7:]]]
        case = {"id": f"hand/{name}", "template": template, "prefix": prefix, "text": text, "chunkings": cuts}
        if name.startswith("tools"):
            case["tools"] = TOOLS
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
