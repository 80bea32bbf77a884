"""Tests of the reference tooling: tools/compare.py (in process) and
tools/reference/oracle.py and bench.py (as commands, on the pinned reference,
which tools/reference/setup.sh installs on first use).

    python3 -m unittest discover -s tools/tests -v

Expected values here are either structural (how a result is shaped, what the
comparison accepts) or properties of Python itself (how big an int is, that
float('nan') is not a number); none is a recorded result of the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import compare  # noqa: E402

ORACLE = os.path.join(TOOLS, "reference", "oracle.py")
BENCH = os.path.join(TOOLS, "reference", "bench.py")
COMPARE = os.path.join(TOOLS, "compare.py")


def ok_run(message, events=()):
    return {"initial_events": [], "events": list(events), "message": message}


def chunk(field, text, dirty=False):
    return {"type": "region_chunk", "field": field, "text": text, "dirty": dirty}


class StrictEqual(unittest.TestCase):
    def test_keeps_bool_int_float_apart(self):
        self.assertFalse(compare.strict_equal(1, 1.0))
        self.assertFalse(compare.strict_equal(1, True))
        self.assertFalse(compare.strict_equal(0.0, False))
        self.assertFalse(compare.strict_equal({"a": [1]}, {"a": [1.0]}))
        self.assertTrue(compare.strict_equal({"a": [1, 2.5, True, None]}, {"a": [1, 2.5, True, None]}))

    def test_sign_of_zero(self):
        self.assertFalse(compare.strict_equal(0.0, -0.0))
        self.assertTrue(compare.strict_equal(-0.0, -0.0))

    def test_dict_keys_and_list_lengths(self):
        self.assertFalse(compare.strict_equal({"a": 1}, {"a": 1, "b": 2}))
        self.assertFalse(compare.strict_equal([1], [1, 1]))

    def test_deep_values_do_not_exhaust_the_stack(self):
        a = b = None
        for _ in range(50_000):
            a, b = [a], [b]
        self.assertTrue(compare.strict_equal(a, b))


class MergeChunks(unittest.TestCase):
    def test_merges_runs_of_one_field_and_flag(self):
        events = [chunk("c", "a"), chunk("c", "b"), chunk("c", "x", dirty=True), chunk("t", "y"), chunk("t", "z")]
        self.assertEqual(
            compare.merge_chunks(events),
            [chunk("c", "ab"), chunk("c", "x", dirty=True), chunk("t", "yz")],
        )

    def test_other_events_break_runs(self):
        close = {"type": "region_close", "field": "c", "value": "a"}
        self.assertEqual(compare.merge_chunks([chunk("c", "a"), close, chunk("c", "b")]),
                         [chunk("c", "a"), close, chunk("c", "b")])


class CompareCase(unittest.TestCase):
    case = {"id": "x", "chunkings": [["a"], ["a"], ["a"]],
            "expected": {"whole": ok_run({"content": "a"}, [chunk("content", "a")]),
                         "reference_streams_differ": [1]}}

    def result(self, streams):
        return {"id": "x", "whole": ok_run({"content": "a"}, [chunk("content", "a")]), "streams": streams}

    def test_chunked_events_equal_merged(self):
        split = ok_run({"content": "a"}, [chunk("content", ""), chunk("content", "a")])
        self.assertEqual(compare.compare_case(self.case, self.result([split] * 3), False), [])

    def test_every_stream_is_checked(self):
        wrong = ok_run({"content": "b"}, [chunk("content", "b")])
        good = self.case["expected"]["whole"]
        problems = compare.compare_case(self.case, self.result([good, wrong, good]), False)
        self.assertTrue(problems)
        self.assertTrue(all(p.startswith("stream #1:") for p in problems), problems)

    def test_reference_mode_skips_only_listed_streams(self):
        wrong = ok_run({"content": "b"}, [chunk("content", "b")])
        good = self.case["expected"]["whole"]
        self.assertEqual(compare.compare_case(self.case, self.result([good, wrong, good]), True), [])
        self.assertNotEqual(compare.compare_case(self.case, self.result([wrong, good, good]), True), [])

    def test_missing_stream_fails(self):
        good = self.case["expected"]["whole"]
        self.assertIn("stream #2: missing", compare.compare_case(self.case, self.result([good, good]), False))

    def test_any_error_passes_where_one_is_expected(self):
        case = {"id": "e", "chunkings": [["a"]],
                "expected": {"whole": {"error": {"kind": "parse", "type": "ValueError", "message": "m"}, "at": "feed"}}}
        other = {"error": {"kind": "parse", "type": "Whatever", "message": "other"}, "at": "finalize"}
        self.assertEqual(compare.compare_case(case, {"id": "e", "whole": other, "streams": [other]}, False), [])
        message = ok_run({"content": "a"})
        self.assertNotEqual(compare.compare_case(case, {"id": "e", "whole": message, "streams": [other]}, False), [])

    def test_unexpected_error_fails(self):
        err = {"error": {"kind": "parse", "type": "ValueError", "message": "m"}, "at": "feed"}
        problems = compare.compare_case(self.case, {"id": "x", "whole": err, "streams": [err] * 3}, False)
        self.assertEqual([p.split(":")[0] for p in problems], ["whole", "stream #0", "stream #1", "stream #2"])

    def test_template_errors(self):
        case = {"id": "t", "expected": {"template_error": {"kind": "template", "type": "ValueError", "message": "m"}}}
        self.assertEqual(compare.compare_case(case, {"id": "t", "template_error": {"message": "other"}}, False), [])
        self.assertNotEqual(compare.compare_case(case, self.result([]), False), [])
        self.assertNotEqual(compare.compare_case(self.case, {"id": "x", "template_error": {"message": "m"}}, False), [])


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class CompareCommand(unittest.TestCase):
    def run_compare(self, cases, results, *flags):
        with tempfile.TemporaryDirectory() as tmp:
            c, r = os.path.join(tmp, "c.jsonl"), os.path.join(tmp, "r.jsonl")
            write_jsonl(c, cases)
            if isinstance(results, str):
                with open(r, "w", encoding="utf-8") as fh:
                    fh.write(results)
            else:
                write_jsonl(r, results)
            return subprocess.run([sys.executable, COMPARE, c, "--actual", r, *flags], capture_output=True, text=True)

    def test_tally_and_exit_status(self):
        case = CompareCase.case
        good = CompareCase.case["expected"]["whole"]
        bad = ok_run({"content": "b"})
        cases = [case, {**case, "id": "y"}, {**case, "id": "z"}, {**case, "id": "w"}]
        results = [{**CompareCase().result([good] * 3)}, {"id": "y", "whole": bad, "streams": [good] * 3},
                   {"id": "z", "skipped": "inline template"}]
        out = self.run_compare(cases, results)
        self.assertEqual(out.returncode, 1)
        self.assertEqual(out.stdout.strip().splitlines()[-1], "1 passed, 2 failed, 1 skipped")
        self.assertIn("FAIL y", out.stdout)
        self.assertIn("FAIL w: no result", out.stdout)
        out = self.run_compare([case], [CompareCase().result([good] * 3)])
        self.assertEqual((out.returncode, out.stdout.strip()), (0, "1 passed, 0 failed"))

    def test_unreadable_results_exit_2(self):
        out = self.run_compare([CompareCase.case], "{not json\n")
        self.assertEqual(out.returncode, 2)
        self.assertIn("r.jsonl:1", out.stderr)


# ---------------------------------------------------------------------------
# The oracle and the timing script, on the pinned reference

ANY = {"defaults": {"role": "assistant"}, "start_anchor": "<ai>"}


def template(fields):
    return {**ANY, "fields": fields}


NUMBERS = template({"n": {"open": "<n>", "close": "</n>", "content": "int", "repeats": True},
                    "f": {"open": "<f>", "close": "</f>", "content": "float", "repeats": True},
                    "content": {}})
TAIL = template({"calls": {"open": "<call>", "close_pattern": r"</call>\s*(?:</calls>)?", "repeats": True},
                 "content": {}})
TAIL_TEXT = "<call>a</call>\n</calls>b"


class Oracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        numbers = "".join(f"<n>{n}</n>" for n in (2**64 - 1, 2**64, -(2**63), -(2**63) - 1)) + (
            "<f>nan</f><f>-inf</f><f>2.5</f>the end")
        cases = [
            {"id": "numbers", "template": NUMBERS, "prefix": "", "text": numbers,
             "chunkings": [list(numbers), [numbers[:7], numbers[7:]]]},
            {"id": "bad-template", "template": template({"a": {"content": "nope"}}), "prefix": "", "text": "x",
             "chunkings": [["x"]]},
            {"id": "required", "template": template({"a": {"open": "<a>", "optional": False}, "content": {}}),
             "prefix": "", "text": "x", "chunkings": [["x"]]},
            {"id": "tail", "template": TAIL, "prefix": "", "text": TAIL_TEXT,
             "chunkings": [[TAIL_TEXT], [TAIL_TEXT[:16], TAIL_TEXT[16:]]]},
            {"id": "named", "template": "smollm3", "prefix": "", "text": "<think>hm</think>Hi<|im_end|>",
             "chunkings": [["<think>hm</thi", "nk>Hi<|im_end|>"]]},
        ]
        cls.cases = os.path.join(cls.tmp.name, "cases.jsonl")
        write_jsonl(cls.cases, cases)
        templates = os.path.join(ROOT, "templates")
        for mode, attr in (([], "results"), (["--expect"], "vectors")):
            out = subprocess.run([sys.executable, ORACLE, *mode, cls.cases, "--templates", templates],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                raise AssertionError(f"oracle.py failed: {out.stderr}")
            setattr(cls, attr, {r["id"]: r for r in read_jsonl(out.stdout)})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_one_line_per_case_with_a_run_per_chunking(self):
        self.assertEqual(set(self.results), {"numbers", "bad-template", "required", "tail", "named"})
        self.assertEqual(len(self.results["numbers"]["streams"]), 2)

    def test_values_json_cannot_hold_are_tagged(self):
        message = self.results["numbers"]["whole"]["message"]
        self.assertEqual(message["n"], [2**64 - 1, {"$bigint": str(2**64)}, -(2**63), {"$bigint": str(-(2**63) - 1)}])
        self.assertEqual(message["f"], [{"$float": "nan"}, {"$float": "-inf"}, 2.5])
        self.assertIsInstance(message["f"][2], float)

    def test_chunk_events_are_merged(self):
        one_char = self.results["numbers"]["streams"][0]
        chunks = [e for e in one_char["events"] if e["type"] == "region_chunk" and e["field"] == "content"]
        self.assertEqual(chunks, [chunk("content", "the end")])

    def test_template_errors_and_run_errors(self):
        self.assertEqual(self.results["bad-template"]["template_error"]["kind"], "template")
        self.assertNotIn("whole", self.results["bad-template"])
        run = self.results["required"]["whole"]
        self.assertEqual((run["at"], run["error"]["kind"], run["error"]["type"]), ("finalize", "parse", "ValueError"))

    def test_expect_records_where_the_reference_streams_differ(self):
        self.assertEqual(self.vectors["tail"]["expected"]["reference_streams_differ"], [1])
        self.assertNotIn("reference_streams_differ", self.vectors["numbers"]["expected"])
        self.assertEqual(self.vectors["tail"]["expected"]["whole"], self.results["tail"]["whole"])
        self.assertEqual(self.vectors["tail"]["text"], TAIL_TEXT)

    def test_named_templates_are_read_from_the_directory(self):
        self.assertEqual(self.results["named"]["whole"]["message"]["content"], "Hi")

    def test_its_own_results_pass_the_comparison(self):
        with tempfile.TemporaryDirectory() as tmp:
            vectors, results = os.path.join(tmp, "v.jsonl"), os.path.join(tmp, "r.jsonl")
            write_jsonl(vectors, self.vectors.values())
            write_jsonl(results, self.results.values())
            strict = subprocess.run([sys.executable, COMPARE, vectors, "--actual", results], capture_output=True,
                                    text=True)
            lenient = subprocess.run([sys.executable, COMPARE, vectors, "--actual", results, "--reference"],
                                     capture_output=True, text=True)
        # Without --reference the reference's own streaming bug counts against it.
        self.assertEqual(strict.stdout.strip().splitlines()[-1], "4 passed, 1 failed")
        self.assertEqual((lenient.returncode, lenient.stdout.strip()), (0, "5 passed, 0 failed"))


class Bench(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        setup = subprocess.run(["bash", os.path.join(TOOLS, "reference", "setup.sh")], capture_output=True, text=True)
        if setup.returncode != 0:
            raise AssertionError(f"setup.sh failed: {setup.stderr}")
        cls.python = setup.stdout.strip()

    def run_bench(self, workloads, min_seconds="0"):
        with tempfile.TemporaryDirectory() as templates, tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(templates, "numbers.json"), "w", encoding="utf-8") as fh:
                json.dump(NUMBERS, fh)
            for name, w in workloads.items():
                with open(os.path.join(tmp, name + ".json"), "w", encoding="utf-8") as fh:
                    json.dump(w, fh)
            return subprocess.run([self.python, BENCH, tmp, "--templates", templates, "--repeat", "2",
                                   "--min-seconds", min_seconds, "--modes", "whole,stream3"],
                                  capture_output=True, text=True)

    def test_one_row_per_workload(self):
        w = {"template": "numbers", "prefix": "<ai>", "text": "<n>12</n>some text<f>1.5</f>"}
        out = self.run_bench({"b": w, "a": w})
        self.assertEqual(out.returncode, 0, out.stderr)
        rows = read_jsonl(out.stdout)
        self.assertEqual([r["workload"] for r in rows], ["a", "b"])
        self.assertEqual(rows[0]["bytes"], len(w["text"].encode()))
        self.assertTrue(all(r["whole_s"] > 0 and r["stream3_s"] > 0 for r in rows))
        self.assertTrue(all(r["whole_runs"] == 2 and r["stream3_runs"] == 2 for r in rows))

    def test_a_mode_runs_until_its_runs_add_up_to_min_seconds(self):
        # A parse of this text takes well under a millisecond: a tenth of a
        # second of them is many more than --repeat.
        w = {"template": "numbers", "prefix": "<ai>", "text": "<n>12</n>some text<f>1.5</f>"}
        out = self.run_bench({"a": w}, min_seconds="0.1")
        self.assertEqual(out.returncode, 0, out.stderr)
        [row] = read_jsonl(out.stdout)
        self.assertGreater(row["whole_runs"], 2)
        self.assertLessEqual(row["whole_runs"], 1000)

    def test_a_workload_the_reference_rejects_is_an_error(self):
        w = {"template": "numbers", "prefix": "", "text": "<n>twelve</n>"}
        out = self.run_bench({"broken": w})
        self.assertEqual(out.returncode, 1)
        self.assertIn("broken", out.stderr)
        self.assertEqual(out.stdout, "")


if __name__ == "__main__":
    unittest.main()
