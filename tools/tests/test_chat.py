"""Tests of the chat-template tooling: tools/compare_render.py (in process
and as a command), tools/reference/render.py (as a command, on the pinned
reference, which tools/reference/setup.sh installs on first use),
tools/chat_templates.py's emitters, tools/chat_cases.py and
tools/chat_check.sh.

    python3 -m unittest discover -s tools/tests -v

Expected values are structural (how a result is shaped, what the comparison
accepts), follow from the definitions (a fixed clock, the span a
{% generation %} block covers, Jinja's documented whitespace control) or are
counts the brief sets; none is a recorded render of the reference.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import chat_cases  # noqa: E402
import chat_conversations  # noqa: E402
import chat_templates  # noqa: E402
import compare_render  # noqa: E402

RENDER = os.path.join(TOOLS, "reference", "render.py")
COMPARE = os.path.join(TOOLS, "compare_render.py")
CHAT_CASES = os.path.join(TOOLS, "chat_cases.py")
CHAT_CHECK = os.path.join(TOOLS, "chat_check.sh")
VECTORS = os.path.join(ROOT, "tests", "conformance", "chat", "cases.jsonl")


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_jsonl(text):
    # Split on "\n" only: results may hold a raw U+2028, which splitlines() would cut at.
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def render(cases, *flags, timeout=120):
    """render.py's result lines for `cases`, fed on stdin."""
    text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
    out = subprocess.run([sys.executable, RENDER, *flags], input=text, capture_output=True, text=True,
                         timeout=timeout)
    if out.returncode != 0:
        raise AssertionError(f"render.py failed: {out.stderr}")
    return read_jsonl(out.stdout), out.stderr


# ---------------------------------------------------------------------------
# compare_render.py


def rendered(text, spans=()):
    return {"rendered": text, "generation": [list(s) for s in spans]}


def error(kind, message):
    return {"error": {"type": kind, "message": message}}


class FirstDifference(unittest.TestCase):
    def test_offsets(self):
        fd = compare_render.first_difference
        self.assertEqual(fd("abc", "abc"), -1)
        self.assertEqual(fd("abc", "abd"), 2)
        self.assertEqual(fd("abc", "ab"), 2)
        self.assertEqual(fd("", "x"), 0)
        long = "x" * 10_000
        self.assertEqual(fd(long + "a" + long, long + "b" + long), 10_000)

    def test_diff_names_offset_line_and_column(self):
        diff = compare_render.render_diff("one\ntwo\nthree", "one\ntwo\nthr3e", context=5)
        self.assertIn("offset 11 (line 3, column 4", diff)
        self.assertIn('expected …"o\\nthr" ▶ "ee"', diff)
        self.assertIn('actual   …"o\\nthr" ▶ "3e"', diff)

    def test_diff_shows_whitespace(self):
        diff = compare_render.render_diff("a\n b", "a\nb")
        self.assertIn('"a\\n" ▶ " b"', diff)


class CompareCase(unittest.TestCase):
    def case(self, expected, **extra):
        return {"id": "x", "chat_template": "", "expected": expected, **extra}

    def test_equal_render_passes(self):
        case = self.case(rendered("hi", [(0, 2)]))
        self.assertEqual(compare_render.compare_case(case, {"id": "x", **rendered("hi", [(0, 2)])}), [])

    def test_render_and_spans_are_compared(self):
        case = self.case(rendered("hi", [(0, 2)]))
        [p] = compare_render.compare_case(case, {"id": "x", **rendered("ho", [(0, 2)])})
        self.assertTrue(p.startswith("rendered differs at offset 1"), p)
        [p] = compare_render.compare_case(case, {"id": "x", **rendered("hi", [(0, 1)])})
        self.assertTrue(p.startswith("generation differs at #0"), p)
        [p] = compare_render.compare_case(case, {"id": "x", **rendered("hi")})
        self.assertIn("expected 1 spans, actual 0", p)

    def test_errors_compare_type_and_message(self):
        case = self.case(error("TemplateError", "no"))
        self.assertEqual(compare_render.compare_case(case, {"id": "x", **error("TemplateError", "no")}), [])
        [p] = compare_render.compare_case(case, {"id": "x", **error("TemplateError", "nope")})
        self.assertTrue(p.startswith("TemplateError message differs"), p)
        [p] = compare_render.compare_case(case, {"id": "x", **error("ValueError", "no")})
        self.assertTrue(p.startswith("error type differs"), p)
        [p] = compare_render.compare_case(case, {"id": "x", **rendered("no")})
        self.assertTrue(p.startswith("expected TemplateError"), p)

    def test_error_match_relaxes(self):
        loose = self.case(error("RecursionError", "maximum recursion depth exceeded"), error_match="type")
        other = {"id": "x", **error("RecursionError", "maximum recursion depth exceeded in comparison")}
        self.assertEqual(compare_render.compare_case(loose, other), [])
        self.assertNotEqual(compare_render.compare_case(loose, {"id": "x", **error("TypeError", "x")}), [])
        anything = self.case(error("RecursionError", "m"), error_match="any")
        self.assertEqual(compare_render.compare_case(anything, {"id": "x", **error("TypeError", "x")}), [])
        self.assertNotEqual(compare_render.compare_case(anything, {"id": "x", **rendered("")}), [])

    def test_unexpected_error_fails(self):
        [p] = compare_render.compare_case(self.case(rendered("a")), {"id": "x", **error("UndefinedError", "u")})
        self.assertEqual(p, 'unexpected UndefinedError: "u"')

    def test_case_without_expected(self):
        self.assertEqual(compare_render.compare_case({"id": "x"}, {"id": "x", **rendered("")}),
                         ["the case has no expected result"])


class CompareCommand(unittest.TestCase):
    def run_compare(self, cases, results):
        with tempfile.TemporaryDirectory() as tmp:
            c, r = os.path.join(tmp, "c.jsonl"), os.path.join(tmp, "r.jsonl")
            write_jsonl(c, cases)
            if isinstance(results, str):
                with open(r, "w", encoding="utf-8") as fh:
                    fh.write(results)
            else:
                write_jsonl(r, results)
            return subprocess.run([sys.executable, COMPARE, c, "--actual", r], capture_output=True, text=True)

    def test_tally_and_exit_status(self):
        cases = [{"id": i, "expected": rendered("a")} for i in "abcd"]
        cases.append({"id": "t", "expected": error("Timeout", "no result after 10 s")})
        results = [{"id": "a", **rendered("a")}, {"id": "b", **rendered("b")}, {"id": "c", "skipped": "why"},
                   {"id": "t", **rendered("x")}]
        out = self.run_compare(cases, results)
        self.assertEqual(out.returncode, 1)
        lines = out.stdout.strip().splitlines()
        self.assertEqual(lines[-1], "1 passed, 2 failed, 2 skipped")
        self.assertIn("FAIL b: rendered differs at offset 0", out.stdout)
        self.assertIn("FAIL d: no result", out.stdout)
        out = self.run_compare(cases[:1], results[:1])
        self.assertEqual((out.returncode, out.stdout.strip()), (0, "1 passed, 0 failed"))

    def test_unreadable_results_exit_2(self):
        out = self.run_compare([{"id": "a", "expected": rendered("a")}], "{not json\n")
        self.assertEqual(out.returncode, 2)
        self.assertIn("r.jsonl:1", out.stderr)


# ---------------------------------------------------------------------------
# render.py, on the pinned reference


def chat_case(id_, template, messages=(), **extra):
    return {"id": id_, "chat_template": template, "messages": list(messages), **extra}


class Render(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        hi = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
        cls.cases = [
            chat_case("spans", "{% for m in messages %}<{{ m.role }}>{% if m.role == 'assistant' %}"
                      "{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}"
                      "{% endfor %}", hi),
            chat_case("clock", "{{ strftime_now('%Y-%m-%d %H:%M:%S %A') }}"),
            chat_case("raise", "{{ raise_exception('no ' ~ messages | length) }}", hi),
            chat_case("syntax", "{% if %}"),
            chat_case("loop", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"),
            chat_case("recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
            chat_case("continue", "{% for m in messages %}[{{ m.content }}]{% endfor %}", hi,
                      continue_final_message=True),
            chat_case("inputs", "{{ tools | length }} {{ documents[0].title }} {{ add_generation_prompt }} {{ x }}",
                      tools=[{"type": "function", "function": {"name": "f"}}], documents=[{"title": "T"}],
                      add_generation_prompt=True, kwargs={"x": {"a": 1.0, "b": None}}),
            chat_case("defaults", "{{ messages | length }} {{ tools }} {{ documents }} {{ add_generation_prompt }}"),
            chat_case("aliases", "{{ messages[0].reasoning_content }}",
                      [{"role": "assistant", "content": "", "thinking": "t"}]),
            # Ten gigabytes: refused by the address-space cap, never allocated.
            chat_case("memory", "{{ ('x' * 10**10) | length }}"),
        ]
        cls.results, cls.stderr = render(cls.cases, "--timeout", "1")
        cls.by_id = {r["id"]: r for r in cls.results}
        cls.vectors, _ = render(cls.cases, "--expect", "--timeout", "1")

    def test_one_line_per_case_in_order(self):
        self.assertEqual([r["id"] for r in self.results], [c["id"] for c in self.cases])

    def test_generation_spans_are_python_offsets(self):
        r = self.by_id["spans"]
        self.assertEqual(r["rendered"], "<user>hi<assistant>yo")
        [[start, end]] = r["generation"]
        self.assertEqual(r["rendered"][start:end], "yo")

    def test_the_clock_is_fixed(self):
        self.assertEqual(self.by_id["clock"]["rendered"], "2026-01-01 00:00:00 Thursday")

    def test_errors_name_the_exception_class(self):
        self.assertEqual(self.by_id["raise"], {"id": "raise", **error("TemplateError", "no 2")})
        self.assertEqual(self.by_id["syntax"]["error"]["type"], "TemplateSyntaxError")
        self.assertEqual(self.by_id["recursion"]["error"]["type"], "RecursionError")

    def test_a_huge_string_is_a_memory_error(self):
        self.assertEqual(self.by_id["memory"]["error"]["type"], "MemoryError")

    def test_a_hanging_case_times_out_and_the_run_goes_on(self):
        self.assertEqual(self.by_id["loop"], {"id": "loop", **error("Timeout", "no result after 1 s")})
        self.assertIn("loop: no result after 1 s", self.stderr)
        self.assertIn("recursion", self.by_id)

    def test_continue_final_message_cuts_the_render(self):
        self.assertEqual(self.by_id["continue"]["rendered"], "[hi][yo")

    def test_inputs_reach_the_template(self):
        self.assertEqual(self.by_id["inputs"]["rendered"], "1 T True {'a': 1.0, 'b': None}")
        self.assertEqual(self.by_id["defaults"]["rendered"], "0 None None False")
        self.assertEqual(self.by_id["aliases"]["rendered"], "t")

    def test_expect_fills_in_expected(self):
        by_id = {v["id"]: v for v in self.vectors}
        for case in self.cases:
            v = by_id[case["id"]]
            self.assertEqual({k: x for k, x in v.items() if k not in ("expected", "error_match")}, case)
            self.assertEqual(v["expected"], {k: x for k, x in self.by_id[case["id"]].items() if k != "id"})
        self.assertEqual(by_id["recursion"]["error_match"], "type")
        self.assertEqual(by_id["memory"]["error_match"], "type")
        self.assertNotIn("error_match", by_id["raise"])

    def test_its_own_results_pass_the_comparison(self):
        with tempfile.TemporaryDirectory() as tmp:
            v, r = os.path.join(tmp, "v.jsonl"), os.path.join(tmp, "r.jsonl")
            write_jsonl(v, self.vectors)
            write_jsonl(r, self.results)
            out = subprocess.run([sys.executable, COMPARE, v, "--actual", r], capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout.strip()), (0, f"{len(self.cases) - 1} passed, 0 failed, 1 skipped"))

    def test_a_case_needs_an_id_and_a_template(self):
        out = subprocess.run([sys.executable, RENDER], input='{"id": "x"}\n', capture_output=True, text=True)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn('"chat_template"', out.stderr)


# ---------------------------------------------------------------------------
# The generators


class Emitters(unittest.TestCase):
    NODES = [("comment", "c"), ("tag", "for x in xs"), ("text", "\n  a{"), ("out", "x"), ("text", "} \n"),
             ("tag", "if loop.last"), ("text", " end\n"), ("tag", "endif"), ("tag", "endfor"), ("text", "tail\n")]

    def test_every_style_balances_and_differs(self):
        sources = {style: chat_templates.emit(self.NODES, style) for style in chat_templates.STYLES}
        self.assertEqual(len(set(sources.values())), len(sources))
        for src in sources.values():
            self.assertEqual(src.count("endfor"), 1)

    def test_every_style_renders_the_same(self):
        cases = [chat_case(style, chat_templates.emit(self.NODES, style), kwargs={"xs": [1, 2]})
                 for style in chat_templates.STYLES]
        results, _ = render(cases)
        self.assertEqual({r.get("rendered") for r in results}, {"\n  a{1} \n\n  a{2} \n end\ntail\n"})

    def test_unbalanced_nodes_are_refused(self):
        with self.assertRaises(AssertionError):
            chat_templates.emit([("tag", "if x")], "trim")


class Generators(unittest.TestCase):
    def test_counts_and_ids(self):
        templates = chat_templates.templates()
        convs = chat_conversations.conversations()
        self.assertGreaterEqual(len(templates), 95)
        self.assertGreaterEqual(len(convs), 50)
        self.assertEqual(len({t for t, _ in templates}), len(templates))
        self.assertEqual(len({text for _, text in templates}), len(templates))
        self.assertEqual(len({c["id"] for c in convs}), len(convs))

    def test_deterministic(self):
        out = [subprocess.run([sys.executable, CHAT_CASES], capture_output=True, check=True).stdout for _ in range(2)]
        self.assertEqual(out[0], out[1])
        self.assertEqual(out[0].count(b"\n"), len(chat_templates.templates()) * len(chat_conversations.conversations()))

    def test_styles_render_alike(self):
        """A sample of the generator's self-test (`chat_cases.py styles`): a
        template renders the same in every whitespace style."""
        convs = chat_conversations.conversations()
        cases = []
        for i in range(0, chat_templates.COUNT, 9):
            spec = chat_templates.spec_for(i)
            for style in chat_templates.STYLES:
                text = chat_templates.source(spec, style)
                cases += [chat_cases.case(f"styles/{style}/{spec.id(i)}", text, c) for c in convs[::3]]
        results, _ = render(cases)
        by = {}
        for r in results:
            _, style, rest = r["id"].split("/", 2)
            by.setdefault(rest, {})[style] = {k: v for k, v in r.items() if k != "id"}
        for rest, runs in by.items():
            first = runs[chat_templates.STYLES[0]]
            self.assertNotEqual(first.get("error", {}).get("type"), "TemplateSyntaxError", rest)
            for style, run in runs.items():
                self.assertEqual(run, first, f"{rest}: {style}")

    def test_the_committed_vectors_are_up_to_date(self):
        out = subprocess.run([sys.executable, CHAT_CASES, "check", VECTORS], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)

    @unittest.skipUnless(os.environ.get("RETORT_SHARED"), "RETORT_SHARED is not set")
    def test_no_shared_template_prose_in_the_repository(self):
        """No sentence of a shared template (a run of six words or more)
        appears in the repository's templates. Token names and Jinja idioms
        ({%- for tool_call in message.tool_calls %}) are everybody's."""
        shared = chat_cases.shared_templates(os.environ["RETORT_SHARED"])
        self.assertGreater(len(shared), 0)
        prose = set()
        for _, text in shared:
            for run in re.findall(r"[A-Za-z][A-Za-z ,;:'()-]{25,}[A-Za-z.!?]", text):
                if len(run.split()) >= 6:
                    prose.add(run)
        ours = "\n".join(text for _, text in chat_templates.templates())
        self.assertEqual(sorted(p for p in prose if p in ours), [])


class ChatCheck(unittest.TestCase):
    def test_the_wrapper_with_the_reference_as_renderer(self):
        cases = [chat_case("a", "{{ messages[0].content }}", [{"role": "user", "content": "x"}]),
                 chat_case("b", "{{ raise_exception('no') }}")]
        vectors, _ = render(cases, "--expect")
        with tempfile.TemporaryDirectory() as tmp:
            good = os.path.join(tmp, "good.jsonl")
            write_jsonl(good, vectors)
            bad = os.path.join(tmp, "bad.jsonl")
            write_jsonl(bad, [{**vectors[0], "expected": rendered("y")}, vectors[1]])
            env = {**os.environ, "RETORT_CHAT_OUT": tmp, "PYTHON": sys.executable}
            ok = subprocess.run(["bash", CHAT_CHECK, "--reference"], env={**env, "RETORT_CHAT_CASES": good},
                                capture_output=True, text=True)
            fail = subprocess.run(["bash", CHAT_CHECK, "--reference"], env={**env, "RETORT_CHAT_CASES": bad},
                                  capture_output=True, text=True)
            stand_in = subprocess.run(["bash", CHAT_CHECK, "unused"],
                                      env={**env, "RETORT_CHAT_CASES": good,
                                           "RETORT_CHAT_RENDER": f"{sys.executable} {RENDER}"},
                                      capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertEqual(ok.stdout.strip().splitlines()[-1], "2 passed, 0 failed")
        self.assertEqual(fail.returncode, 1)
        self.assertEqual(fail.stdout.strip().splitlines()[-1], "1 passed, 1 failed")
        self.assertEqual(stand_in.returncode, 0, stand_in.stderr)

    def test_usage(self):
        out = subprocess.run(["bash", CHAT_CHECK], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("chat_check.sh BIN [SHARED_DIR]", out.stderr)


if __name__ == "__main__":
    unittest.main()
