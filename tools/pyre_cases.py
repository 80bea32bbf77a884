#!/usr/bin/env python3
"""Generates engine/tests/data/pyre_cases.jsonl: patterns x haystacks run
through the real `regex` module (the reference's engine), for the
differential test engine/tests/pyre_conformance.rs.

Run with the reference interpreter (the `regex` pinned by
tools/reference/requirements.txt); an argument writes elsewhere:

    $(tools/reference/setup.sh) tools/pyre_cases.py [OUT.jsonl]

Each line is one pattern:

    {"pattern": str,
     "compile": {"ok": true, "groups": n, "names": [[name, index], ...]}
              | {"ok": false, "msg": str, "pos": int | null},
     "cases": [{"text": str, "pos": byte offset,
                "search": [[start, end] | null, ...] | null,      # groups 0..n
                "partial": {"spans": [...], "partial": bool} | null}],
     "finditer": [{"text": str, "matches": [[[s, e] | null, ...], ...]}]}

All offsets are UTF-8 byte offsets. Cases on which the module times out are
left out. The output is deterministic (fixed seed).
"""

import json
import os
import random
import sys

import regex

SEED = 20261115
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine", "tests", "data", "pyre_cases.jsonl")

# Patterns used by real templates, and hand-written probes of the semantics
# the engine must reproduce (loop/empty-iteration rules, captures in
# lookbehind, partial matching, flags, escapes, errors).
HAND = [
    r"<tool_call>\s*<function=(?P<name>\w+)>",
    r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
    r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
    r"(?:^|<think>\s*)",
    r"\n?</response>",
    r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>",
    r"\s*(?:<\|im_end\|>|<\|endoftext\|>)",
    r"(?=<call>)|<end>",
    r"(?<=^)<t>|(?<=\n)<t>",
    r"</call>\s*(?:</calls>)?",
    r"\s*<eot>|\Z",
    r"$",
    r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>",
    r"(?<=[{,])(\w+):",
    r"\{(\w+(?:\.\w+)*)\}",
    r"<think>", r"</think>", r"<tool_call>|<function_call>", r"\[TOOL_CALLS\]", r"<\|python_tag\|>",
    r"```json\s*", r"\s*```", r"<\|start\|>assistant", r"^\s*\{", r"\}\s*$",
    # Loops and captures.
    r"(a*)*", r"(a*)+", r"(a|)*b", r"(a|)*", r"(|a)*", r"(|a)+", r"(?:x*)*?y", r"(a?)*?b", r"(a*?)*", r"(a*?)+",
    r"(?:a|())*", r"(?:a|())*b", r"(a|b|)*c", r"(?:(a)|b)*", r"(?:(a)|(b))*", r"(a){0}", r"(a)*", r"((a)|b)*",
    r"(a*)*?b", r"(a*){2,}", r"(a*){2,3}b", r"(a?){3}", r"(a??){3}", r"(a|){3}", r"(?:(a)|())*", r"(?:()|a)*",
    r"(?:()|(a))*", r"(?:(a)|())+", r"(()|a)+b", r"(a*)*b", r"(a*)+b", r"(a*)*?", r"(?:a*)*?$", r"(a*?)*?b",
    r"(a|b)*?c", r"(a+|b*)*c", r"(a*|b)*c", r"(?:(a)*)*", r"(?:(a)?)*", r"(?:(a)??)+", r"((a)?)*b",
    r"(?:(a)|b|)*", r"(a(?=b)|)*", r"(\b)*a", r"(?:$)*a", r"(?:\b)+a", r"(x?)*y", r"(x?)+y", r"(x?){2,}y",
    r"(x?){1,3}?y", r"(|a){2}c", r"(?:|a){2}c", r"(?:|(a)){2}c", r"(?:a|ab|b){0,3}c", r"(?:a|ab|b)*c",
    r"(?:(?=(?:ab|a)*b)\w)*", r"(a{2,3}){1,2}", r"(a{2,3}?){1,2}?b", r"((?:ab)+?)+c", r"(a|ab)(c|bcd)(d*)",
    r"(?:a+)+b", r"(a+)+b", r"(x+x+)+y", r"(?:a|a)*b", r"(\w+)\s+\1", r"(?i)(ab)\1", r"(a)?\1", r"(?:(a)|b)\1",
    # Lookarounds and atomics.
    r"(?<=a+)b", r"(?<=(a+))b", r"(?<=(a+?))b", r"(?<=(a)(b|bc))d", r"(?<=a(.*))z", r"(?<!a)b", r"(?<![ab])c",
    r"a(?=b)", r"a(?!b)", r"a(?!b)c", r"a(?=b)c", r"(?=(a+))a*b\1", r"(?>a+)b", r"(?>a|ab)c", r"(?>ab|a)c",
    r"a++b", r"a*+a", r"a?+a", r"a{1,3}+a", r"(?:ab)*+b", r"(?<=\b)a", r"\ba\b", r"\Ba\B", r"\mab\M",
    r"(?<=(?=a)a)b", r"(?=(?<=a)b)", r"(?<=a|bc)d", r"(?<=a\w{1,2})c", r"(?<!^)x", r"(?<=\n|^)x",
    # Anchors and flags.
    r"^abc", r"abc$", r"a$", r"a\Z", r"a\z", r"\Aa", r"(?m)^a", r"(?m)a$", r"(?m)^$", r"^$", r"$\n?", r"a$\n",
    r"(?i)abc", r"(?i)k", r"(?i)s", r"(?i)[a-z]+", r"(?i)[^k]", r"(?i)\W", r"(?i)\p{Lu}", r"(?i)ß", r"(?i)σ+",
    r"a(?i)b", r"(?i)a|b", r"(a(?i)b)c", r"(?i:a)b", r"(?-i:a)b", r"(?i)(?-i:a)b", r"(?x) a b # c\n c",
    r"a(?x) b c", r"(?s).", r"(?-s).", r"(?-s:.)+", r"(?a)\w+", r"(?a)\b\w", r"(?ai)k", r"(?u)\w+", r"\w(?a)",
    r"(?i)k(?a)", r"(?a:(?i)k)", r"(?m)$", r"(?m)(?<=^)x", r"(?i)i", r"(?i)I", "(?i)\u0130", "(?i)\u0131",
    r"(?i)(i)\1", r"(?i)(I)\1",
    # Classes and escapes.
    r"[a-\d]", r"[\d-a]", r"[a-]", r"[]a]", r"[^]a]", r"[]", r"[\s\S]", r"[^\s\S]", r"[\w\W]x", r"[^\d\D]",
    r"x{,3}", r"x{2,}", r"x{a}", r"x{1,2", r"x{}", r"x{,}", r"{1}", r"x{3,2}", r"a**", r"a*?+", r"a{1}*",
    r"\0", r"\08", r"\141", r"\400", r"\8", r"[\8]", r"\x4", r"\x41", r"\u00e9", r"\U0001F600", r"\q", r"[\q]",
    r"\_", r"\-", r"\ ", r"\\", r"[\b]", r"\t\n\r\f\v\a", r"[[:alpha:]]+", r"[[:digit:]]", r"[[:^space:]]+",
    r"[[:punct:]]", r"[[:alnum:]_]", r"[[:xdigit:]]+", r"[[:upper:]][[:lower:]]", r"[[:word:]]", r"[[:blank:]]",
    r"\p{L}+", r"\P{L}+", r"\pL", r"\p{Greek}", r"\p{Script=Latin}+", r"\p{gc=Nd}", r"\p{^L}", r"\P{^L}",
    r"\p{Lu}\p{Ll}*", r"\p{IsGreek}", r"\p{Alphabetic}", r"\p{Alphabetic=No}", r"\p{Nope}", r"\p{gc=Nope}",
    r"\h+", r"\R", r"\G\w", r"\g<1>(a)", r"(a)\g<1>", r"(?P<n>a)\g<n>", r"(?<n>a)(?P=n)", r"\g<0>", r"(a\g<1>)",
    r"(?P<n>a)|(?P<n>b)", r"(?P<1>a)", r"(?P=x)", r"(?P<n>a)(?P=n", r"(?#comment)a", r"(?#x)*a", r"a(?#x)*",
    r"a(?i)*", r"(?)a", r"(*FAIL)|a", r"(*F)", r"(*PRUNE)", r"(*NOPE)", r"(*)", r"a{e<=1}", r"a{e<=0}", r"a{e}",
    r"(?(1)a|b)", r"(a)(?(1)b|c)", r"(?|(a)|(b))", r"(?R)", r"(?1)(a)", r"\Ka", r"\X", r"\N{DIGIT ONE}",
    r"(?V1)a", r"(?V0)a", r"(?r)a", r"(?L)a", r"(?w)a", r"(?f)a", r"(?b)a", r"(?e)a", r"(?p)a",
    r"(", r")", r"(?", r"(?P", r"(?P<", r"(?P<a", r"(?<a>", r"[", r"[a", r"[a-", r"\\", "\\", r"(?<=a", r"(?i",
    r"(?-)", r"(?i-i)a", r"(?z)", r"a|*", r"|", r"||", r"(|)", r"()", r"(?:)", r"(?:)*", r"(?=)", r"(?!)",
    r"(?<=)", r"(?<!)", r"x(?=)", r"x(?!)|y", r"[a-z&&[^aeiou]]", r"[a--b]", r"[[a]]", r"[\p{L}--a]",
    r"\1", r"(a)\2", r"(a)(b)\2\1", r"(a)\10", r"(a)\100", r"(?P<a>x)\g<a>\g<1>",
]

# Delimiter patterns of the templates in templates/ and of the conformance
# vectors' templates, as they were when this list was written (run on
# stream-like prefixes of sample matches, as the reference parser does).
TEMPLATE = [
    "$",
    "(?:<\\|message_model\\|>)?[^<]*<\\|content_invoke_tool_json\\|>",
    "(?:<\\|message_model\\|>)?[^<]*<\\|content_text\\|>",
    "(?:<\\|message_model\\|>)?[^<]*<\\|content_thinking\\|>",
    "(?:<\\|tool_calls_section_begin\\|>)?\\s*<\\|tool_call_begin\\|>\\s*(?P<id>functions\\.(?P<name>[\\w.-]+):\\d+)\\s*<\\|tool_call_argument_begin\\|>",
    "(?:<calls>\\s*)?<call name=\\\"(?P<name>\\w+)\\\">",
    "(?:<minimax:tool_call>\\s*)?<invoke name=\\\"(?P<name>[^\\\"]+)\\\">",
    "(?:<\uff5ctool\u2581calls\u2581begin\uff5c>)?\\s*<\uff5ctool\u2581call\u2581begin\uff5c>function<\uff5ctool\u2581sep\uff5c>(?P<name>[^\\n]+)\\n```json\\n",
    "(?:^|<think>\\s*)",
    "(?<=\\])(?=\\s*(?:<\\|end\\|>|$))",
    "(?<=^)<t>|(?<=\\n)<t>",
    "(?=<call>)|<end>",
    "(?=\\[TOOL_CALLS\\])|</s>",
    "<(?P<key>\\w+)=(?P<value>[^>]+)>",
    "<(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</\\1>",
    "</call>\\s*(?:</calls>)?",
    "</function>\\s*</seed:tool_call>",
    "</function>\\s*</tool_call>",
    "</invoke>\\s*(?:</minimax:tool_call>)?",
    "<\\|channel\\|>commentary to=functions\\.(?P<name>[\\w.-]+)[^<]*(?:<\\|constrain\\|>\\w+)?<\\|message\\|>",
    "<\\|channel\\|>commentary to=functions\\.(?P<name>\\w+).*?<\\|message\\|>",
    "<\\|tool_call>call:(?P<name>\\w+)",
    "<\\|tool_call_end\\|>\\s*(?:<\\|tool_calls_section_end\\|>)?",
    "<arg_key>(?P<key>.*?)</arg_key>\\s*<arg_value>(?P<value>.*?)</arg_value>",
    "<call>(?P<name>\\w+):",
    "<cite source=(?P<name>\\w+)>",
    "<parameter name=\\\"(?P<key>[^\\\"]+)\\\">(?P<value>.*?)</parameter>",
    "<parameter=(?P<key>[^>\\n]+)>(?P<value>.*?)</parameter>",
    "<parameter=(?P<key>[^>\\n]+)>\\n?(?P<value>.*?)\\n?</parameter>",
    "<parameter=(?P<key>[^>\\n]+)>\\s*(?P<value>.*?)\\s*</parameter>",
    "<parameter=(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</parameter>",
    "<think>\\n?",
    "<tool name=(?P<name>\\w+)>",
    "<tool_call>\\s*<function=(?P<name>\\w+)>",
    "<tool_call>\\s*<function=(?P<name>\\w+)>\\n",
    "\\Z",
    "\\[/INST\\]",
    "\\[TOOL_CALLS\\](?P<name>[^\\[]+?)(?:\\[CALL_ID\\](?P<id>\\w+))?\\[ARGS\\]",
    "\\[TOOL_CALLS\\](?P<name>[^\\[]+?)\\[ARGS\\]",
    "\\n?</response>",
    "\\n?</think>",
    "\\n```\\s*<\uff5ctool\u2581call\u2581end\uff5c>\\s*(?:<\uff5ctool\u2581calls\u2581end\uff5c>)?",
    "\\s*(?:<\\|im_end\\|>|<\\|endoftext\\|>)",
    "\\s*(?:<\\|im_end\\|>|<\\|endoftext\\|>|<\\|eot_id\\|>)",
    "\\s*</tool_call>",
    "\\s*<eot>|\\Z",
    "\\s*<seed:tool_call>\\s*<function=(?P<name>[^>\\n]+)>",
    "\\s*<tool_call>",
    "\\s*<tool_call>(?P<name>[^\\n<]+)\\s*",
    "\\s*<tool_call>\\s*",
    "\\s*<tool_call>\\s*<function=(?P<name>[^>\\n]+)>",
]

# Haystacks tried on every pattern (besides ones derived from it).
COMMON_TEXTS = [
    "", "a", "b", "ab", "aab", "abc", "abab", "xaby", "a\n", "\n", "a\nb\n", " a b ", "aaa", "bbb",
    "<tool_call>\n<function=get_weather>", "<parameter=city>\nParis\n</parameter>", "<think>hi</think>",
    "x <eot>", "<end>", "<call>", "<t>", "a<t>\n<t>", "{a:1,b:2}", "{x.y}", "K", "\u212a", "k", "\u017f",
    "ß", "SS", "ẞ", "σς", "Σ", "é", "Éa", "İı", "iI", "1٣", "\u00a0", "a\u2028b", "αβγ", "日本語", "😀", "\x00",
]

ALPHABET = "ab<>/x \n"


def byte_offset(text, i):
    return len(text[:i].encode("utf-8"))


def spans(m, groups, text):
    out = []
    for g in range(groups + 1):
        s, e = m.span(g)
        out.append(None if s < 0 else [byte_offset(text, s), byte_offset(text, e)])
    return out


def gen_atom(rng, depth):
    r = rng.random()
    if depth > 3 or r < 0.35:
        return rng.choice(["a", "b", "x", "<", ">", "/", " ", r"\n", "ab", "a", "b"])
    if r < 0.5:
        return rng.choice([r"\w", r"\d", r"\s", r"\W", r"\S", ".", "[ab]", "[^a]", "[a-c]", "[^<]", r"[\w<]", "[x/]"])
    if r < 0.6:
        return rng.choice(["^", "$", r"\b", r"\B", r"\Z", r"\A", r"\z"])
    if r < 0.75:
        inner = gen_alt(rng, depth + 1)
        kind = rng.choice(["(", "(?:", "(?P<g%d>" % rng.randrange(3), "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?i:"])
        return kind + inner + ")"
    if r < 0.8:
        return rng.choice([r"\1", r"\2", "(?P=g0)"])
    inner = gen_alt(rng, depth + 1)
    return "(" + inner + ")"


def gen_quant(rng):
    q = rng.choice(["", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,3}", "{2,}", "{,2}"])
    if q and rng.random() < 0.35:
        q += rng.choice(["?", "+"])
    return q


def gen_seq(rng, depth):
    n = rng.randrange(1, 4)
    return "".join(gen_atom(rng, depth) + gen_quant(rng) for _ in range(n))


def gen_alt(rng, depth):
    n = 1 if rng.random() < 0.7 else rng.randrange(2, 4)
    return "|".join(gen_seq(rng, depth) for _ in range(n))


def gen_pattern(rng):
    p = gen_alt(rng, 0)
    if rng.random() < 0.08:
        p = rng.choice(["(?i)", "(?m)", "(?s)", "(?a)", "(?x)"]) + p
    return p


SYNTAX_CHARS = "()[]{}?*+\\|^$.-:=!<>P#,0123aAbBdDwWsSpgxuNzZ&_ "


def gen_garbage(rng):
    return "".join(rng.choice(SYNTAX_CHARS) for _ in range(rng.randrange(1, 9)))


def sample(items, rng):
    """A string matching a (stdlib `re`-parsed) pattern, more or less."""
    import sre_constants as C

    out = []
    for op, av in items:
        if op == C.LITERAL:
            out.append(chr(av))
        elif op == C.NOT_LITERAL:
            out.append("z" if av != ord("z") else "y")
        elif op == C.ANY:
            out.append(rng.choice("xy \n"))
        elif op == C.IN:
            chars, neg = [], False
            for o, a in av:
                if o == C.NEGATE:
                    neg = True
                elif o == C.LITERAL:
                    chars.append(chr(a))
                elif o == C.RANGE:
                    chars.append(chr(a[0]))
                elif o == C.CATEGORY:
                    chars.append({C.CATEGORY_WORD: "w", C.CATEGORY_DIGIT: "7", C.CATEGORY_SPACE: " "}.get(a, "-"))
            out.append("q" if neg else (rng.choice(chars) if chars else "a"))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", -1)):
            lo, hi, sub = av
            for _ in range(max(lo, min(hi, rng.choice([lo, lo + 1, lo + 3])))):
                out.append(sample(sub, rng))
        elif op == C.SUBPATTERN:
            out.append(sample(av[-1], rng))
        elif op == C.BRANCH:
            out.append(sample(rng.choice(av[1]), rng))
        elif op == C.GROUPREF:
            out.append("w")
    return "".join(out)


def stream_texts(rng, pattern):
    """Documents containing (near-)matches of `pattern`, cut at many points:
    the buffers a streaming parser searches."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import re
        import sre_parse

        tree = sre_parse.parse(pattern, re.DOTALL)
    docs = set()
    for _ in range(2):
        m = sample(tree, rng)
        docs.add("hello " + m + " tail")
        if len(m) > 2:
            i = rng.randrange(len(m))
            docs.add("ab " + m[:i] + rng.choice(["x", "[", "<", "\n", ""]) + m[i + 1 :] + " zz")
    out = []
    for d in sorted(docs):
        cuts = list(range(len(d) + 1))
        if len(cuts) > 24:
            cuts = sorted(rng.sample(cuts, 24))
        out.extend(d[:c] for c in cuts)
    return out


def texts_for(rng, pattern, compiled, limit):
    texts = list(COMMON_TEXTS)
    chars = [c for c in pattern if c not in "()[]{}?*+\\|^$.:=!#"] + list(ALPHABET)
    for _ in range(6):
        texts.append("".join(rng.choice(chars) for _ in range(rng.randrange(0, 9))))
    # Prefixes of real matches exercise partial matching.
    for t in list(texts):
        try:
            m = compiled.search(t, timeout=0.2)
        except Exception:
            continue
        if m and m.end() > m.start():
            whole = t[: m.end()]
            for cut in range(m.start(), m.end()):
                texts.append(whole[:cut])
    seen = set()
    out = []
    for t in texts:
        if t not in seen:
            seen.add(t)
            out.append(t)
    rng.shuffle(out)
    return out[:limit]


def run_pattern(rng, pattern, limit=8, stream=False):
    rec = {"pattern": pattern}
    try:
        r = regex.compile(pattern, regex.DOTALL)
    except regex.error as e:
        rec["compile"] = {"ok": False, "msg": e.msg, "pos": e.pos}
        return rec
    except (ValueError, TypeError, OverflowError, RecursionError) as e:
        rec["compile"] = {"ok": False, "msg": str(e), "pos": None}
        return rec
    names = sorted(r.groupindex.items(), key=lambda kv: (kv[1], kv[0]))
    rec["compile"] = {"ok": True, "groups": r.groups, "names": [[n, i] for n, i in names]}
    cases = []
    texts = stream_texts(rng, pattern) if stream else texts_for(rng, pattern, r, limit)
    for t in texts:
        positions = [0]
        if len(t) > 1:
            positions.append(rng.randrange(1, len(t) + 1))
        for pos in positions:
            try:
                m = r.search(t, pos, timeout=0.2)
                pm = r.search(t, pos, partial=True, timeout=0.2)
            except Exception:
                continue
            cases.append({
                "text": t,
                "pos": byte_offset(t, pos),
                "search": spans(m, r.groups, t) if m else None,
                "partial": {"spans": spans(pm, r.groups, t), "partial": bool(pm.partial)} if pm else None,
            })
    rec["cases"] = cases
    fi = []
    for t in cases[:3]:
        text = t["text"]
        try:
            ms = [spans(m, r.groups, text) for m in r.finditer(text, timeout=0.2)]
        except Exception:
            continue
        fi.append({"text": text, "matches": ms})
    rec["finditer"] = fi
    return rec


def main():
    rng = random.Random(SEED)
    records = []
    seen = set()
    for p in TEMPLATE:
        seen.add(p)
        records.append(run_pattern(rng, p, stream=True))
    for p in HAND:
        if p not in seen:
            seen.add(p)
            records.append(run_pattern(rng, p, limit=10))
    generated = 0
    while generated < 600:
        p = gen_pattern(rng)
        if p not in seen:
            seen.add(p)
            generated += 1
            records.append(run_pattern(rng, p, limit=4))
    generated = 0
    while generated < 600:
        p = gen_garbage(rng)
        if p not in seen:
            seen.add(p)
            generated += 1
            records.append(run_pattern(rng, p, limit=2))
    out = OUT if len(sys.argv) < 2 else sys.argv[1]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {len(records)} patterns to {out}")


if __name__ == "__main__":
    main()
