"""Chat templates written for this repository (tools/chat_cases.py renders
them over tools/chat_conversations.py): plausible chat templates composed
from parameterised pieces, to exercise what real templates use.

A template is described by a `Spec` (turn markers, whitespace style, system
handling, tool definitions, tool calls, tool results, reasoning, content
handling, `{% generation %}` placement, input validation, documents, and a
few extras). `build(spec)` turns it into a tree-less list of nodes:

    ("tag", "if x")       a block tag: {% if x %}
    ("out", "expr")       an output: {{ expr }}
    ("text", "literal")   literal text the template writes
    ("comment", "words")  a comment

and `emit(nodes, style, quote)` writes the nodes as template source in one
of five whitespace styles, which must all render the same:

    dash_left   {%- tag %} / {{- expr }} / {{- 'text' }} on indented lines
    dash_joined the same, with each run of outputs joined into one
                {{- 'text' ~ expr ~ 'text' }}
    dash_both   {%- tag -%} on indented lines, text and {{ expr }} between
    trim        {% tag %} on indented lines, relying on trim_blocks and
                lstrip_blocks, text raw at the start of lines
    inline      {% tag %}{{ expr }}text on long lines

`templates()` lists the repository's templates: (id, source) pairs in a
fixed order. Everything here is deterministic.
"""

from __future__ import annotations

import dataclasses
import re

# ---------------------------------------------------------------------------
# Nodes and emitters

OPENERS = {"if", "for", "macro", "call", "filter", "generation"}
MIDDLES = {"elif", "else"}
CLOSERS = {"endif", "endfor", "endmacro", "endcall", "endfilter", "endgeneration", "endset"}
STYLES = ("dash_left", "dash_both", "trim", "inline", "dash_joined")


def tag_word(stmt: str) -> str:
    return re.match(r"[a-z]+", stmt).group(0)


def opens(stmt: str) -> bool:
    word = tag_word(stmt)
    if word == "set":
        return "=" not in stmt  # {% set name %}...{% endset %}
    return word in OPENERS


def jstr(s: str, q: str) -> str:
    """A Jinja string literal for s, quoted with q."""
    out = [q]
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == q:
            out.append("\\" + q)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    out.append(q)
    return "".join(out)


def raw_ok(text: str) -> bool:
    """Whether text can stand in the template as template data at all: no
    delimiter in it, none made with a neighbouring tag ("{" + "{%", "}}" +
    "}"), no character Jinja's lexer would normalise."""
    return (bool(text) and not re.search(r"\{[{%#]|\r|[\x00-\x08\x0b-\x1f\x7f]", text)
            and not text.endswith("{") and not text.startswith("}"))


def emit(nodes, style: str, quote: str = "'", indent: str = "    ") -> str:
    if style == "dash_left":
        return _emit_dash_left(nodes, quote, indent)
    if style == "dash_joined":
        return _emit_dash_joined(nodes, quote, indent)
    if style == "dash_both":
        return _emit_dash_both(nodes, quote, indent)
    if style == "trim":
        return _emit_trim(nodes, quote, indent)
    if style == "inline":
        return _emit_inline(nodes, quote)
    raise ValueError(style)


def _depths(nodes):
    """(node, depth at which it is written) for each node."""
    depth = 0
    for kind, x in nodes:
        if kind == "tag":
            word = tag_word(x)
            if word in CLOSERS:
                depth -= 1
                yield (kind, x), depth
            elif word in MIDDLES:
                yield (kind, x), depth - 1
            else:
                yield (kind, x), depth
                if opens(x):
                    depth += 1
        else:
            yield (kind, x), depth
    assert depth == 0, "unbalanced blocks"


def _emit_dash_left(nodes, q, ind):
    lines = []
    for (kind, x), d in _depths(nodes):
        pad = ind * d
        if kind == "tag":
            lines.append(f"{pad}{{%- {x} %}}")
        elif kind == "out":
            lines.append(f"{pad}{{{{- {x} }}}}")
        elif kind == "text":
            lines.append(f"{pad}{{{{- {jstr(x, q)} }}}}")
        else:
            lines.append(f"{pad}{{#- {x} #}}")
    return "\n".join(lines)


def _operand(kind, x, q):
    """One piece of a `~` chain: a literal, or an expression (in parentheses
    unless it is a plain name, attribute, item or call)."""
    if kind == "text":
        return jstr(x, q)
    if re.fullmatch(r"[\w.]+(\[[^\]\[]*\]|\([^()]*\))?", x):
        return x
    return f"({x})"


def _emit_dash_joined(nodes, q, ind):
    lines = []
    for kind, x, d in _runs(nodes):
        pad = ind * d
        if kind == "tag":
            lines.append(f"{pad}{{%- {x} %}}")
        elif kind == "comment":
            lines.append(f"{pad}{{#- {x} #}}")
        elif len(x) == 1 and x[0][0] == "out":
            lines.append(f"{pad}{{{{- {x[0][1]} }}}}")
        else:
            lines.append(f"{pad}{{{{- " + " ~ ".join(_operand(k, v, q) for k, v in x) + " }}")
    return "\n".join(lines)


def _runs(nodes):
    """Groups consecutive out/text nodes: yields ("tag"|"comment", x, depth)
    or ("run", [(kind, x), ...], depth)."""
    run, run_depth = [], 0
    for (kind, x), d in _depths(nodes):
        if kind in ("out", "text"):
            if not run:
                run_depth = d
            run.append((kind, x))
            continue
        if run:
            yield "run", run, run_depth
            run = []
        yield kind, x, d
    if run:
        yield "run", run, run_depth


def _emit_dash_both(nodes, q, ind):
    lines = []
    for kind, x, d in _runs(nodes):
        pad = ind * d
        if kind == "tag":
            lines.append(f"{pad}{{%- {x} -%}}")
        elif kind == "comment":
            lines.append(f"{pad}{{#- {x} -#}}")
        else:
            parts = []
            for i, (k, v) in enumerate(x):
                if k == "out":
                    parts.append(f"{{{{ {v} }}}}")
                    continue
                # The tags on either side eat the whitespace next to them.
                first_bad = i == 0 and v[:1].isspace()
                last_bad = i == len(x) - 1 and v[-1:].isspace()
                if raw_ok(v) and not first_bad and not last_bad:
                    parts.append(v)
                else:
                    parts.append(f"{{{{ {jstr(v, q)} }}}}")
            lines.append(pad + "".join(parts))
    return "\n".join(lines)


def _tail_blank(text: str) -> bool:
    """Whether the text ends in spaces or tabs after its last newline (or is
    only spaces and tabs): lstrip_blocks would strip them before a tag."""
    tail = text.rsplit("\n", 1)[-1]
    return bool(tail) and not tail.strip(" \t")


def _emit_trim(nodes, q, ind):
    items = list(_runs(nodes))
    src = []
    for n, (kind, x, d) in enumerate(items):
        last = n == len(items) - 1
        if kind in ("tag", "comment"):
            open_, close = ("{%", "%}") if kind == "tag" else ("{#", "#}")
            # A tag starts its own line unless the run before it did not end
            # one (then it follows on that line, and the run's text is kept).
            at_line_start = not src or src[-1].endswith("\n")
            src.append((ind * d if at_line_start else "") + f"{open_} {x} {close}")
            if not last:
                src.append("\n")  # eaten by trim_blocks
            continue
        parts = []
        for i, (k, v) in enumerate(x):
            if k == "out":
                parts.append(f"{{{{ {v} }}}}")
                continue
            ok = raw_ok(v)
            if i == len(x) - 1:
                # Before the next tag lstrip_blocks eats a blank tail; at the
                # very end Jinja drops one trailing newline.
                if not last and _tail_blank(v):
                    ok = False
                if last and v.endswith("\n"):
                    ok = False
            if i == 0 and _tail_blank(v) and len(x) == 1 and not last:
                ok = False
            parts.append(v if ok else f"{{{{ {jstr(v, q)} }}}}")
        src.append("".join(parts))
    return "".join(src)


def _emit_inline(nodes, q):
    items = list(_runs(nodes))
    src = []
    for n, (kind, x, d) in enumerate(items):
        last = n == len(items) - 1
        if kind in ("tag", "comment"):
            open_, close = ("{%", "%}") if kind == "tag" else ("{#", "#}")
            src.append(f"{open_} {x} {close}")
            # A newline after a top-level block's end keeps lines short;
            # trim_blocks removes it.
            if d == 0 and not last and kind == "tag" and (tag_word(x) in CLOSERS or tag_word(x) == "set"):
                src.append("\n")
            continue
        prev_tag = n > 0 and items[n - 1][0] in ("tag", "comment") and not src[-1] == "\n"
        parts = []
        for i, (k, v) in enumerate(x):
            if k == "out":
                parts.append(f"{{{{ {v} }}}}")
                continue
            ok = raw_ok(v)
            if i == 0 and v.startswith("\n") and prev_tag:
                ok = False  # trim_blocks would eat it
            if i == len(x) - 1 and not last and _tail_blank(v):
                ok = False  # lstrip_blocks would eat it
            if i == 0 and n > 0 and src[-1] == "\n" and _tail_blank(v) and len(x) == 1:
                ok = False
            if last and i == len(x) - 1 and v.endswith("\n"):
                ok = False
            parts.append(v if ok else f"{{{{ {jstr(v, q)} }}}}")
        src.append("".join(parts))
    return "".join(src)


# ---------------------------------------------------------------------------
# A node builder


class B:
    def __init__(self):
        self.nodes = []

    def tag(self, stmt):
        self.nodes.append(("tag", stmt))

    def out(self, expr):
        self.nodes.append(("out", expr))

    def text(self, literal):
        if literal:
            if self.nodes and self.nodes[-1][0] == "text":
                self.nodes[-1] = ("text", self.nodes[-1][1] + literal)
            else:
                self.nodes.append(("text", literal))

    def comment(self, words):
        self.nodes.append(("comment", words))

    def raise_(self, message_expr):
        self.out(f"raise_exception({message_expr})")

    def block(self, stmt):
        return _Block(self, stmt)

    def add(self, nodes):
        for kind, x in nodes:
            if kind == "text":
                self.text(x)
            else:
                self.nodes.append((kind, x))


class _Block:
    def __init__(self, b, stmt):
        self.b, self.stmt = b, stmt

    def __enter__(self):
        self.b.tag(self.stmt)
        return self.b

    def __exit__(self, *exc):
        if exc[0] is None:
            word = tag_word(self.stmt)
            self.b.tag("endset" if word == "set" else "end" + word)


# ---------------------------------------------------------------------------
# Turn markers


class Markers:
    """How a turn starts and ends. head/end take a literal role; head_dyn and
    end_dyn a Jinja expression for it."""

    name = ""
    bos = False
    tool_role = "tool"
    gen = None  # the generation prompt's text, when not head("assistant")

    def head(self, b, role):
        raise NotImplementedError

    def end(self, b, role):
        raise NotImplementedError

    def head_dyn(self, b, expr):
        raise NotImplementedError

    def end_dyn(self, b, expr):
        self.end(b, "user")


class ChatML(Markers):
    name = "chatml"

    def head(self, b, role):
        b.text(f"<|im_start|>{role}\n")

    def head_dyn(self, b, expr):
        b.text("<|im_start|>")
        b.out(expr)
        b.text("\n")

    def end(self, b, role):
        b.text("<|im_end|>\n")


class Llama3(Markers):
    name = "llama3"
    bos = True
    tool_role = "ipython"

    def head(self, b, role):
        b.text(f"<|start_header_id|>{role}<|end_header_id|>\n\n")

    def head_dyn(self, b, expr):
        b.out(f"'<|start_header_id|>' + {expr} + '<|end_header_id|>\\n\\n'")

    def end(self, b, role):
        b.text("<|eot_id|>")


class Granite(Markers):
    name = "granite"

    def head(self, b, role):
        b.text(f"<|start_of_role|>{role}<|end_of_role|>")

    def head_dyn(self, b, expr):
        b.text("<|start_of_role|>")
        b.out(expr)
        b.text("<|end_of_role|>")

    def end(self, b, role):
        b.text("<|end_of_text|>\n")


class Gemma(Markers):
    name = "gemma"
    bos = True

    def head(self, b, role):
        b.text(f"<start_of_turn>{'model' if role == 'assistant' else role}\n")

    def head_dyn(self, b, expr):
        b.text("<start_of_turn>")
        b.out(f"'model' if {expr} == 'assistant' else {expr}")
        b.text("\n")

    def end(self, b, role):
        b.text("<end_of_turn>\n")


class Phi(Markers):
    name = "phi"

    def head(self, b, role):
        b.out(f"'<|' + '{role}' + '|>'")
        b.text("\n")

    def head_dyn(self, b, expr):
        b.out(f"'<|' + {expr} + '|>\\n'")

    def end(self, b, role):
        b.text("<|end|>\n")


class DeepSeek(Markers):
    name = "deepseek"
    bos = True
    HEADS = {"user": "<｜User｜>", "assistant": "<｜Assistant｜>", "tool": "<｜tool▁output▁begin｜>", "system": ""}
    ENDS = {"assistant": "<｜end▁of▁sentence｜>", "tool": "<｜tool▁output▁end｜>"}

    def head(self, b, role):
        b.text(self.HEADS[role])

    def head_dyn(self, b, expr):
        b.out(f"{{'user': '<｜User｜>', 'assistant': '<｜Assistant｜>'}}.get({expr}, '<｜' ~ {expr} ~ '｜>')")

    def end(self, b, role):
        b.text(self.ENDS.get(role, ""))

    def end_dyn(self, b, expr):
        pass


class Markdown(Markers):
    name = "markdown"

    def head(self, b, role):
        b.text(f"### {role.title()}:\n")

    def head_dyn(self, b, expr):
        b.text("### ")
        b.out(f"{expr} | title")
        b.text(":\n")

    def end(self, b, role):
        b.text("\n\n")


class Zephyr(Markers):
    name = "zephyr"

    def head(self, b, role):
        b.text(f"<|{role}|>\n")

    def head_dyn(self, b, expr):
        b.text("<|")
        b.out(f"{expr}.title()")
        b.text("|>\n")

    def end(self, b, role):
        b.out("eos_token | default('</s>')")
        b.text("\n")


class Kimi(Markers):
    name = "kimi"

    def head(self, b, role):
        kind = role if role in ("user", "assistant") else "system"
        b.text(f"<|im_{kind}|>{role}<|im_middle|>")

    def head_dyn(self, b, expr):
        b.out(f"'<|im_' ~ ({expr} if {expr} in ['user', 'assistant'] else 'system') ~ '|>' ~ {expr} ~ '<|im_middle|>'")

    def end(self, b, role):
        b.text("<|im_end|>")


class Command(Markers):
    name = "command"
    bos = True
    TOKENS = {"system": "<|SYSTEM_TOKEN|>", "user": "<|USER_TOKEN|>", "assistant": "<|CHATBOT_TOKEN|>",
              "tool": "<|SYSTEM_TOKEN|>"}

    def head(self, b, role):
        b.text("<|START_OF_TURN_TOKEN|>" + self.TOKENS[role])

    def head_dyn(self, b, expr):
        b.text("<|START_OF_TURN_TOKEN|>")
        b.out(f"role_tokens[{expr}]")

    def end(self, b, role):
        b.text("<|END_OF_TURN_TOKEN|>")


class Mistral(Markers):
    name = "mistral"
    bos = True
    HEADS = {"user": "[INST] ", "system": "[SYSTEM_PROMPT]", "tool": "[TOOL_RESULTS]", "assistant": ""}
    ENDS = {"user": " [/INST]", "system": "[/SYSTEM_PROMPT]", "tool": "[/TOOL_RESULTS]"}

    def head(self, b, role):
        b.text(self.HEADS[role])

    def head_dyn(self, b, expr):
        b.text("[")
        b.out(f"{expr}.upper()")
        b.text("]")

    def end(self, b, role):
        if role == "assistant":
            b.out("eos_token")
        else:
            b.text(self.ENDS[role])

    def end_dyn(self, b, expr):
        b.text("[/")
        b.out(f"{expr}.upper()")
        b.text("]")


MARKERS = [ChatML(), Llama3(), Granite(), Gemma(), Phi(), DeepSeek(), Markdown(), Zephyr(), Kimi(), Command(),
           Mistral()]

# ---------------------------------------------------------------------------
# The spec

SYSTEMS = ("first_only", "default_date", "anywhere", "merge", "collect")
TOOL_DEFS = ("json_lines", "json_indent", "json_sorted_ascii", "compact", "typescript", "signature", "none")
TOOL_CALLS = ("hermes", "json_list", "pythonic", "xml", "tokens")
TOOL_RESULTS = ("grouped", "role", "named", "json")
REASONINGS = ("none", "qwen_split", "always", "thinking_channel", "strip_history", "effort")
CONTENTS = ("plain", "blocks", "tilde")
GENERATIONS = ("off", "on", "macro")
VALIDATIONS = ("none", "alternate", "strict")
DOCS = ("none", "list", "json", "dictsort")
EXTRAS = ("date", "stats", "settings_repr", "format_method", "roles_list", "filter_block", "call_block",
          "numbers", "counter", "skip_empty", "last_user_switch", "first_filter")
DATE_FORMATS = ("%Y-%m-%d", "%d %b %Y", "%B %d, %Y", "%A, %B %d, %Y", "%d/%m/%y %H:%M", "%Y-%m-%dT%H:%M:%S")


@dataclasses.dataclass(frozen=True)
class Spec:
    markers: int
    ws: str
    system: str
    tool_defs: str
    tool_calls: str
    tool_results: str
    reasoning: str
    content: str
    generation: str
    validation: str
    docs: str
    extras: tuple
    date_format: str
    quote: str
    json_indent: int = 4
    indent: str = "    "

    @property
    def m(self) -> Markers:
        return MARKERS[self.markers]

    def id(self, n: int) -> str:
        return f"t{n:03d}-{self.m.name}-{self.ws.replace('_', '-')}"


# ---------------------------------------------------------------------------
# The template


class Builder:
    def __init__(self, spec: Spec):
        self.s = spec
        self.m = spec.m
        self.b = B()
        # `+` or `~` between strings.
        self.j = " ~ " if spec.content == "tilde" else " + "

    def cat(self, *parts):
        return self.j.join(parts)

    def content(self, expr):
        """The expression a message's content is rendered with."""
        if self.s.content == "blocks":
            return f"render_content({expr})"
        return expr

    def tool_content(self, expr):
        if self.s.content == "blocks":
            return f"render_content({expr})"
        return f"{expr} if {expr} is string else {expr} | tojson"

    # -- macros ------------------------------------------------------------

    def macros(self):
        b, s = self.b, self.s
        if s.content == "blocks":
            b.comment("Content is a string, null, a JSON object (a tool result) or a list of blocks.")
            with b.block("macro render_content(content)"):
                with b.block("if content is string"):
                    b.out("content")
                    b.tag("elif content is none")
                    b.tag("elif content is mapping")
                    b.out("content | tojson")
                    b.tag("elif content is iterable")
                    with b.block("for block in content"):
                        with b.block("if block.type == 'text'"):
                            b.out("block.text")
                            b.tag("elif block.type in ['image', 'image_url'] or 'image' in block")
                            b.text("<image>")
                            b.tag("else")
                            b.raise_("'Unsupported content block: ' ~ block.type")
                    b.tag("else")
                    b.out("content | string")
        if s.tool_defs == "typescript":
            b.comment("JSON schema to a TypeScript-like type (recursive, cut off below depth 4).")
            with b.block("macro ts_type(schema, depth=0)"):
                with b.block("if depth > 4"):
                    b.text("unknown")
                    b.tag("elif schema.enum is defined")
                    b.out("schema.enum | map('tojson') | join(' | ')")
                    b.tag("elif schema.type is not defined")
                    b.text("any")
                    b.tag("elif schema.type is not string")
                    b.out("schema.type | join(' | ')")
                    b.tag("elif schema.type == 'array'")
                    b.out("ts_type(schema['items'], depth + 1) if schema['items'] is defined else 'any'")
                    b.text("[]")
                    b.tag("elif schema.type == 'object'")
                    with b.block("if schema.properties"):
                        b.text("{")
                        with b.block("for name, prop in schema.properties | dictsort"):
                            b.out("name")
                            with b.block("if name not in schema.required | default([])"):
                                b.text("?")
                            b.text(": ")
                            b.out("ts_type(prop, depth=depth + 1)")
                            with b.block("if not loop.last"):
                                b.text(", ")
                        b.text("}")
                        b.tag("else")
                        b.text("object")
                    b.tag("elif schema.type in ['integer', 'number']")
                    b.text("number")
                    b.tag("else")
                    b.out("schema.type")
        if "call_block" in s.extras:
            with b.block("macro section(title, level=2)"):
                b.out("'#' * level ~ ' ' ~ title")
                b.text("\n")
                b.out("caller() | trim")
        if s.generation == "macro":
            b.comment("The assistant turn; generation spans are marked inside the macro.")
            with b.block("macro render_assistant(message, idx, is_last)"):
                self.assistant("idx", "is_last")

    # -- defaults and state ------------------------------------------------

    def defaults(self):
        b, s = self.b, self.s
        if isinstance(self.m, Command):
            b.tag("set role_tokens = {'system': '<|SYSTEM_TOKEN|>', 'user': '<|USER_TOKEN|>', "
                  "'assistant': '<|CHATBOT_TOKEN|>', 'tool': '<|SYSTEM_TOKEN|>'}")
        if s.reasoning == "effort":
            with b.block("if reasoning_effort is defined and reasoning_effort not in ['low', 'medium', 'high']"):
                b.raise_("'Unknown reasoning effort: ' ~ reasoning_effort")
        if s.reasoning in ("always", "effort"):
            with b.block("if enable_thinking is not defined"):
                b.tag("set enable_thinking = true")
        fields = ["call_index=0", "sys_done=false", "turn=0", "last_user=-1"]
        b.tag("set ns = namespace(" + ", ".join(fields) + ")")

    # -- the system turn ---------------------------------------------------

    def extract_system(self):
        b, s = self.b, self.s
        if s.system == "collect":
            b.tag("set system_message = messages | selectattr('role', 'equalto', 'system') "
                  "| map(attribute='content') | join('\\n\\n')")
            b.tag("set loop_messages = messages | rejectattr('role', 'equalto', 'system') | list")
            return
        if s.system == "anywhere":
            b.tag("set system_message = ''")
            b.tag("set loop_messages = messages")
            return
        test = ("messages and (messages | first).role == 'system'" if "first_filter" in s.extras
                else "messages and messages[0]['role'] == 'system'")
        with b.block("if " + test):
            b.tag(f"set system_message = {self.content('messages[0].content')}")
            b.tag("set loop_messages = messages[1:]")
            b.tag("else")
            if s.system == "default_date":
                b.tag("set system_message = 'You answer questions for the retort test suite. Today is ' ~ "
                      f"strftime_now({jstr(s.date_format, chr(39))}) ~ '.'")
            else:
                b.tag("set system_message = ''")
            b.tag("set loop_messages = messages")

    def tool_defs(self):
        b, s = self.b, self.s
        kind = s.tool_defs
        if kind == "json_lines":
            b.text("# Tools\n\nThese functions can be used; their JSON schemas are listed between <tools> and "
                   "</tools>, one per line:\n<tools>")
            with b.block("for tool in tools"):
                b.text("\n")
                b.out("tool | tojson")
            b.text("\n</tools>")
        elif kind == "json_indent":
            b.text("Functions you can call (JSON):\n")
            b.out(f"tools | tojson(indent={s.json_indent})")
        elif kind == "json_sorted_ascii":
            b.text("Functions (JSON Schema, keys sorted):")
            with b.block("for tool in tools"):
                b.text("\n")
                b.out("(tool.function if tool.function is defined else tool) "
                      "| tojson(indent=2, sort_keys=true, ensure_ascii=true)")
        elif kind == "compact":
            b.text("<|tool_list_start|>")
            b.out("tools | map(attribute='function') | list | tojson(separators=(',', ':'))")
            b.text("<|tool_list_end|>")
        elif kind == "typescript":
            b.text("## Tools as TypeScript\n\nnamespace tools {\n\n")
            with b.block("for tool in tools"):
                b.tag("set fn = tool.function")
                with b.block("if fn.description"):
                    b.text("// ")
                    b.out("fn.description.strip().replace('\\n', '\\n// ')")
                    b.text("\n")
                b.text("type ")
                b.out("fn.name")
                b.text(" = (_: ")
                b.out("ts_type(fn.parameters)")
                b.text(") => any;\n\n")
            b.text("} // end of tools")
        elif kind == "signature":
            b.tag("set type_map = {'string': 'str', 'integer': 'int', 'number': 'float', 'boolean': 'bool', "
                  "'array': 'list', 'object': 'dict'}")
            b.text("You can call these Python functions:\n")
            with b.block("for tool in tools"):
                b.tag("set fn = tool.function")
                b.tag("set required = fn.parameters.required | default([])")
                b.text("\ndef ")
                b.out("fn.name")
                b.text("(")
                with b.block("for pname, param in (fn.parameters.properties | default({})) | items"):
                    if s.markers % 2:
                        b.out("pname ~ ': ' ~ type_map.get(param.type, 'Any')")  # a list of types: TypeError
                    else:
                        b.out("pname ~ ': ' ~ (type_map.get(param.type, 'Any') if param.type is string "
                              "else param.type | map('string') | join(' | '))")
                    with b.block("if pname not in required"):
                        b.out("' = ' ~ (param.default if param.default is defined else none)")
                    with b.block("if not loop.last"):
                        b.text(", ")
                b.text("):\n    \"\"\"")
                b.out("fn.description | trim")
                with b.block("for pname, param in (fn.parameters.properties | default({})) | items"):
                    with b.block("if loop.first"):
                        b.text("\n\n    Args:")
                    b.out("'\\n        %s (%s): %s' % (pname, param.type | default('any'), "
                          "param.description | default(''))")
                b.text("\n    \"\"\"\n")
        # How to call.
        calls = {
            "hermes": "\n\nTo use a function, answer with <tool_call>{\"name\": ..., \"arguments\": {...}}"
                      "</tool_call>, one block per call.",
            "json_list": "\n\nCall functions as a JSON list of {\"name\", \"arguments\"} objects.",
            "pythonic": "\n\nCall functions as a Python list: [func(arg=value)].",
            "xml": "\n\nCall a function as <tool_call><function=NAME><parameter=ARG>VALUE</parameter></function>"
                   "</tool_call>.",
            "tokens": "\n\nWrap calls in <|tool_calls_section_begin|> and <|tool_calls_section_end|>.",
        }
        b.text(calls[s.tool_calls])

    def docs(self):
        b, s = self.b, self.s
        if s.docs == "list":
            b.text("<documents>")
            with b.block("for doc in documents"):
                b.text("\n<document index=\"")
                b.out("loop.index")
                b.text("\">\n")
                b.out("doc.title | default('Untitled')")
                b.text("\n")
                b.out("doc.text | trim | safe")
                b.text("\n</document>")
            b.text("\n</documents>")
        elif s.docs == "json":
            b.text("Documents:\n")
            b.out("documents | tojson(indent=2)")
        elif s.docs == "dictsort":
            with b.block("for doc in documents"):
                with b.block("if not loop.first"):
                    b.text("\n")
                b.text("Document ")
                b.out("loop.index0")
                b.text(":")
                with b.block("for key, value in doc | dictsort"):
                    b.text("\n  ")
                    b.out("key ~ ': ' ~ value")

    def system_body(self):
        """The system turn's text: the system message, tools, documents,
        settings. Each part after the first starts with a blank line."""
        b, s = self.b, self.s
        b.tag("set ns.parts = 0")
        if "filter_block" in s.extras:
            with b.block("filter trim"):
                b.out("system_message")
                b.text("\n")
        elif "call_block" in s.extras:
            with b.block("if system_message"):
                with b.block("call section('Instructions', level=3)"):
                    b.out("system_message")
        else:
            b.out("system_message")
        b.tag("set ns.parts = 1 if system_message else 0")

        def part(cond, fill):
            def body():
                b.out("'\\n\\n' if ns.parts else ''")
                fill()
                b.tag("set ns.parts = ns.parts + 1")
            if cond is None:
                body()
            else:
                with b.block("if " + cond):
                    body()

        if s.tool_defs != "none":
            part("tools", self.tool_defs)
        if s.docs != "none":
            part("documents", self.docs)
        if s.reasoning == "thinking_channel":
            part(None, lambda: (b.text("Reasoning: "), b.out("reasoning_effort | default('medium')")))
        if s.reasoning == "effort":
            part(None, lambda: (b.text("Reasoning effort: "),
                                  b.out("'none' if not enable_thinking else reasoning_effort | default('medium') | upper")))
        if "date" in s.extras and s.system != "default_date":
            part(None, lambda: (b.text("Current date: "), b.out(f"strftime_now({jstr(s.date_format, chr(39))})")))
        if "stats" in s.extras:
            part("messages", lambda: b.out(
                "'Conversation: %d message(s), %d from the user.' % (messages | length, "
                "messages | selectattr('role', 'equalto', 'user') | list | length)"))
        if "settings_repr" in s.extras:
            part(None, lambda: (b.text("Settings: "), b.out(
                "{'thinking': enable_thinking | default(false), 'effort': reasoning_effort | default(none), "
                "'tools': tools | length if tools else 0, 'temperature': temperature | default(0.7)}")))
        if "format_method" in s.extras:
            part("tools or documents", lambda: b.out(
                "'{} tool(s), {} document(s)'.format(tools | length if tools else 0, "
                "documents | length if documents else 0)"))
            part("tools", lambda: (b.text("Besides the clock: "), b.out(
                "tools | map(attribute='function') | map(attribute='name') | reject('equalto', 'get_time') "
                "| sort | join(', ')")))
        if "roles_list" in s.extras:
            part("messages", lambda: (b.text("Roles: "), b.out("messages | map(attribute='role') | map('lower') | unique | list")))
        if "numbers" in s.extras:
            part(None, lambda: (
                b.text("Budget: "), b.out("(max_tokens | default(1024)) // 4"),
                b.text(" tokens; "), b.out("messages | length"), b.text(" messages = "),
                b.out("(messages | length) / 2"), b.text(" exchanges; top_p "), b.out("1 - 0.05"),
                b.text("; scale "), b.out("2 ** 3 * 1.5"), b.text("; "), b.out("(10 / 3) | round(2)"),
                b.text("; "), b.out("(temperature | default(0.7) * 100) | int"), b.text("%; "),
                b.out("-7 % 3"), b.text(" "), b.out("(-7) // 2"), b.text(" "), b.out("0.1 + 0.2"), b.text(" "),
                b.out("(2 ** 64) | string | length")))

    def system_turn(self):
        b, s, m = self.b, self.s, self.m
        always = s.reasoning in ("thinking_channel", "effort") or any(
            e in s.extras for e in ("date", "stats", "settings_repr", "numbers"))
        conds = ["system_message"]
        if s.tool_defs != "none":
            conds.append("tools")
        if s.docs != "none":
            conds.append("documents")
        if s.system == "merge":
            # Into the first user message.
            with b.block("set system_block"):
                self.system_body()
            return
        if always:
            m.head(b, "system")
            self.system_body()
            m.end(b, "system")
            return
        with b.block("if " + " or ".join(conds)):
            m.head(b, "system")
            self.system_body()
            m.end(b, "system")

    # -- state over the conversation ---------------------------------------

    def scans(self):
        b, s = self.b, self.s
        if s.reasoning == "qwen_split":
            b.comment("Where the current query starts: the last user turn that is not wrapped tool output.")
            b.tag("set ns.last_query = loop_messages | length - 1")
            b.tag("set ns.searching = true")
            with b.block("for message in loop_messages | reverse"):
                b.tag("set wrapped = message.content is string and message.content.strip().startswith("
                      "'<tool_response>') and message.content.strip().endswith('</tool_response>')")
                with b.block("if ns.searching and message.role == 'user' and not wrapped"):
                    b.tag("set ns.searching = false")
                    b.tag("set ns.last_query = loop.revindex0")
        if "last_user_switch" in s.extras:
            with b.block("for message in loop_messages[::-1]"):
                with b.block("if message.role == 'user'"):
                    b.tag("set ns.last_user = (loop_messages | length) - loop.index")
                    b.tag("break")

    # -- turns -------------------------------------------------------------

    def assistant(self, idx, last):
        """The assistant turn of `message`; idx and last are the expressions
        for its index in loop_messages and whether it is the last one."""
        b, s, m = self.b, self.s, self.m
        m.head(b, "assistant")
        gen = s.generation in ("on", "macro")
        if gen:
            b.tag("generation")
        if s.content == "plain":
            b.tag("set content = message.content | default('', true)")
        elif s.content == "blocks":
            b.tag("set content = render_content(message.content)")
        else:
            b.tag("set content = '' ~ message.content")
        r = s.reasoning
        if r == "none":
            b.out("content")
        elif r == "qwen_split":
            b.tag("set reasoning = ''")
            with b.block("if message.reasoning_content is string"):
                b.tag("set reasoning = message.reasoning_content")
                b.tag("elif '</think>' in content")
                b.tag("set halves = content.split('</think>')")
                b.tag("set reasoning = ((halves | first).split('<think>') | last).strip('\\n')")
                b.tag("set content = (halves | last).lstrip('\\n')")
            with b.block(f"if {idx} > ns.last_query and ({last} or reasoning)"):
                b.text("<think>\n")
                b.out("reasoning.strip('\\n')")
                b.text("\n</think>\n\n")
                b.out("content.lstrip('\\n')")
                b.tag("else")
                b.out("content")
        elif r == "always":
            with b.block("if message.reasoning_content"):
                b.text("<think>")
                b.out("message.reasoning_content | trim")
                b.text("</think>\n")
            b.out("content")
        elif r == "thinking_channel":
            with b.block("if message.thinking is defined and message.thinking"):
                b.text("<|channel|>analysis<|message|>")
                b.out("message.thinking")
                b.text("<|end|>")
            b.text("<|channel|>final<|message|>")
            b.out("content")
        elif r == "strip_history":
            with b.block(f"if {last} and message.reasoning_content"):
                b.text("<think>\n")
                b.out("message.reasoning_content | trim")
                b.text("\n</think>\n")
            b.out("(content.split('</think>') | last) | trim")
        elif r == "effort":
            with b.block("if enable_thinking and message.reasoning_content is defined"):
                b.text("<reasoning>")
                b.out("message.reasoning_content.rstrip()")
                b.text("</reasoning>")
            b.out("content")
        self.tool_calls()
        m.end(b, "assistant")
        if gen:
            b.tag("endgeneration")

    def tool_calls(self):
        b, s = self.b, self.s
        with b.block("if message.tool_calls is defined and message.tool_calls"):
            with b.block("for tool_call in message.tool_calls"):
                b.tag("set fn = tool_call.function if tool_call.function is defined else tool_call")
                args = "(fn.arguments if fn.arguments is string else fn.arguments | tojson)"
                f = s.tool_calls
                if f == "hermes":
                    with b.block("if content or not loop.first"):
                        b.text("\n")
                    b.text("<tool_call>\n{\"name\": \"")
                    b.out("fn.name")
                    b.text("\", \"arguments\": ")
                    with b.block("if fn.arguments is string"):
                        b.out("fn.arguments")
                        b.tag("else")
                        b.out("fn.arguments | tojson")
                    b.text("}\n</tool_call>")
                elif f == "json_list":
                    with b.block("if loop.first"):
                        b.text("[TOOL_CALLS][" if isinstance(self.m, Mistral) else "<|tool_calls|>[")
                    b.out("'{\"name\": ' ~ fn.name | tojson ~ ', \"arguments\": ' ~ (fn.arguments if fn.arguments "
                          "is string else fn.arguments | tojson(sort_keys=true)) ~ '}'")
                    with b.block("if not loop.last"):
                        b.text(", ")
                        b.tag("else")
                        b.text("]")
                elif f == "pythonic":
                    with b.block("if loop.first"):
                        b.text("[")
                    b.out("fn.name")
                    b.text("(")
                    with b.block("for key, value in fn.arguments | items"):
                        if s.markers % 2:
                            b.out("key ~ '=' ~ (value | tojson if value is string else value)")  # Python's repr
                        else:
                            b.out("key ~ '=' ~ (value | tojson if value is string or value is none "
                                  "else (value | string | lower if value is boolean else value))")
                        with b.block("if not loop.last"):
                            b.text(", ")
                    b.text(")")
                    with b.block("if not loop.last"):
                        b.text(", ")
                        b.tag("else")
                        b.text("]")
                elif f == "xml":
                    b.text("\n<tool_call>\n<function=")
                    b.out("fn.name")
                    b.text(">\n")
                    with b.block("if fn.arguments is mapping"):
                        with b.block("for key, value in fn.arguments.items()"):
                            b.text("<parameter=")
                            b.out("key")
                            b.text(">\n")
                            b.out("value if value is string else value | tojson")
                            b.text("\n</parameter>\n")
                        b.tag("else")
                        b.out("fn.arguments")
                        b.text("\n")
                    b.text("</function>\n</tool_call>")
                elif f == "tokens":
                    with b.block("if loop.first"):
                        b.text("<|tool_calls_section_begin|>")
                    b.text("<|tool_call_begin|>functions.")
                    b.out("fn.name ~ ':' ~ ns.call_index")
                    b.text("<|tool_call_argument_begin|>")
                    b.out(args)
                    b.text("<|tool_call_end|>")
                    b.tag("set ns.call_index = ns.call_index + 1")
                    with b.block("if loop.last"):
                        b.text("<|tool_calls_section_end|>")

    def tool_result(self):
        b, s, m = self.b, self.s, self.m
        r = s.tool_results
        if r == "grouped":
            with b.block("if loop.first or loop.previtem.role != 'tool'"):
                m.head(b, "user")
                b.tag("else")
                b.text("\n")
            b.text("<tool_response>\n")
            b.out(self.tool_content("message.content"))
            b.text("\n</tool_response>")
            with b.block("if loop.last or loop.nextitem.role != 'tool'"):
                m.end(b, "user")
        elif r == "role":
            m.head(b, m.tool_role)
            b.out(self.tool_content("message.content"))
            m.end(b, "tool")
        elif r == "named":
            b.tag("set ns.tool_name = none")
            b.tag("set idx = loop.index0")
            with b.block("for prev in loop_messages[:idx][::-1]"):
                with b.block("if prev.role == 'assistant' and prev.tool_calls"):
                    with b.block("for tc in prev.tool_calls"):
                        with b.block("if tc.id is defined and tc.id == message.tool_call_id"):
                            b.tag("set ns.tool_name = tc.function.name")
                    b.tag("break")
            with b.block("if ns.tool_name is none"):
                b.tag("set ns.tool_name = message.name | default('unknown')")
            m.head(b, "tool")
            b.text("[")
            b.out("ns.tool_name")
            b.text("] ")
            b.out(self.tool_content("message.content"))
            m.end(b, "tool")
        elif r == "json":
            m.head(b, "tool")
            b.out("dict(name=message.name | default('tool'), id=message.tool_call_id | default(none), "
                  "content=message.content) | tojson")
            m.end(b, "tool")

    def validate(self):
        b, s = self.b, self.s
        if s.validation == "alternate":
            with b.block("if loop.first and message.role == 'assistant'"):
                b.raise_("'The conversation has to open with a user turn.'")
            with b.block("if message.role in ['user', 'assistant'] and loop.previtem is defined "
                         "and loop.previtem.role == message.role"):
                b.raise_("'User and assistant turns must take turns, one each.'")
        elif s.validation == "strict":
            with b.block("if message.role | lower not in ['system', 'user', 'assistant', 'tool']"):
                b.raise_("'Unexpected message role: ' ~ message.role")
            with b.block("if message.role == 'tool' and (loop.first or loop.previtem.role not in "
                         "['assistant', 'tool'])"):
                b.raise_("'A tool result needs an assistant tool call before it.'")

    def loop(self):
        b, s, m = self.b, self.s, self.m
        with b.block("for message in loop_messages"):
            self.validate()
            if "skip_empty" in s.extras:
                with b.block("if message.role == 'assistant' and not message.content and not message.tool_calls "
                             "and not message.reasoning_content"):
                    b.tag("continue")
            with b.block("if message.role == 'user'"):
                m.head(b, "user")
                if s.system == "merge":
                    with b.block("if not ns.sys_done and system_block"):
                        b.out("system_block ~ '\\n\\n'")
                    b.tag("set ns.sys_done = true")
                if "counter" in s.extras:
                    b.tag("set ns.turn = ns.turn + 1")
                    b.out("'[%d/%d] ' % (ns.turn, loop.length)")
                if s.content == "plain":
                    b.out("message['content'] | trim" if s.markers % 2 else "message.content")
                elif s.content == "tilde":
                    b.out("message.content ~ ''")
                else:
                    b.out(self.content("message.content"))
                if "last_user_switch" in s.extras:
                    with b.block("if loop.index0 == ns.last_user and enable_thinking is defined"):
                        b.out("' /think' if enable_thinking else ' /no_think'")
                m.end(b, "user")
                b.tag("elif message.role == 'assistant'")
                if s.generation == "macro":
                    b.out("render_assistant(message, loop.index0, loop.last)")
                else:
                    self.assistant("loop.index0", "loop.last")
                b.tag("elif message.role == 'tool'")
                self.tool_result()
                b.tag("elif message.role == 'system'")
                if s.system in ("first_only", "merge"):
                    b.raise_("'Only the first message can be a system message.'")
                else:
                    m.head(b, "system")
                    b.out(self.content("message.content"))
                    m.end(b, "system")
                b.tag("else")
                m.head_dyn(b, "message.role")
                b.out(self.content("message.content"))
                m.end_dyn(b, "message.role")

    def generation_prompt(self):
        b, s, m = self.b, self.s, self.m
        with b.block("if add_generation_prompt"):
            m.head(b, "assistant")
            if s.reasoning == "qwen_split":
                with b.block("if enable_thinking is defined and enable_thinking is sameas false"):
                    b.text("<think>\n\n</think>\n\n")
            elif s.reasoning == "always":
                with b.block("if enable_thinking"):
                    b.text("<think>\n")
                    b.tag("else")
                    b.text("<think></think>\n")
            elif s.reasoning == "thinking_channel":
                b.text("<|channel|>")

    def build(self):
        b, s = self.b, self.s
        b.comment(f"retort test template ({self.m.name}, {s.reasoning})")
        self.macros()
        self.defaults()
        if self.m.bos:
            b.out("bos_token")
        self.extract_system()
        self.system_turn()
        self.scans()
        self.loop()
        self.generation_prompt()
        return b.nodes


def build(spec: Spec):
    return Builder(spec).build()


def source(spec: Spec, ws: str | None = None) -> str:
    return emit(build(spec), ws or spec.ws, spec.quote, spec.indent)


# ---------------------------------------------------------------------------
# The repository's templates

COUNT = 100


def spec_for(i: int) -> Spec:
    """The i-th template: each dimension steps through its options at its own
    pace, so that every option appears with many others."""

    def pick(options, step, offset=0):
        return options[(i * step + offset) % len(options)]

    markers = i % len(MARKERS)
    system = pick(SYSTEMS, 3, i // 55)
    if isinstance(MARKERS[markers], Gemma):
        system = "merge"  # no system turn in that family
    extras = tuple(sorted({pick(EXTRAS, 5), pick(EXTRAS, 7, 3), pick(EXTRAS, 11, 6)} if i % 3 else
                          {pick(EXTRAS, 5)}))
    return Spec(
        markers=markers,
        ws=pick(STYLES, 1, i // 44),
        system=system,
        tool_defs=pick(TOOL_DEFS, 3, 1),
        tool_calls=pick(TOOL_CALLS, 2, i // 25),
        tool_results=pick(TOOL_RESULTS, 3, i // 12),
        reasoning=pick(REASONINGS, 5, i // 30),
        content=pick(CONTENTS, 2, i // 9),
        generation=pick(GENERATIONS, 1, i // 6),
        validation=pick(VALIDATIONS, 2, i // 15),
        docs=pick(DOCS, 3, i // 20),
        extras=extras,
        date_format=pick(DATE_FORMATS, 5),
        quote="'" if i % 5 else '"',
        json_indent=2 if i % 2 else 4,
        indent="    " if i % 4 == 3 else "  ",
    )


def templates():
    """[(id, source)] of the repository's templates, all distinct."""
    out, seen = [], set()
    for i in range(COUNT):
        spec = spec_for(i)
        text = source(spec)
        assert text not in seen, f"template {i} repeats another"
        seen.add(text)
        out.append((spec.id(i), text))
    return out
