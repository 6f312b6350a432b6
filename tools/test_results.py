#!/usr/bin/env python3
"""Host test of tools/results.py's marked numbers (no GPU, standard library only).

  python3 tools/test_results.py          (exit 0: all pass; runs tools/test_checks.py's tests too)

Builds a small course in a temporary folder (course.tsv, one results file, one
lesson and one kernel file with markers) and checks that `render` writes the
numbers the results give, that `render --check` reports a planted mismatch as
one line naming file:line, the marker, the text and the value, that a marker
which cannot be resolved is an error, and that the real tree is up to date.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import results  # noqa: E402
from test_checks import Course, Hooks, MachineCode, NumberLint, ProfileExpectations  # noqa: E402,F401  (the checks' tests run with these)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()

RUN = {
    "schema": 4, "chapter": "42", "binary": "ch42_demo", "title": "Demo", "date": "2026-11-30T00:00:00Z",
    "machine": "H200", "gpu": {"name": "NVIDIA H200", "sms": 132}, "gpu_count": 1, "notes": [], "options": {},
    "exit_code": 0, "problem": "demo", "iters": 5, "metric": "GB/s",
    "peak": {"label": "DRAM", "value": 4000.0, "unit": "GB/s", "how": "test"},
    "baseline": "vendor_copy", "best": "fast",
    "goals": [{"numerator_row": "fast", "denominator": "vendor_copy", "threshold": 0.9, "text": ">= 0.90x vendor_copy",
               "ratio": 0.975, "met": True}],
    "rows": [
        {"name": "vendor_copy", "role": "baseline", "problem": 0, "bytes": 2_000_000_000, "flops": 0, "hw_bytes": 0,
         "median_ms": 0.5, "value": 4000.0, "ratio_to_baseline": 1.0, "pct_of_peak": 100.0, "speedup": None,
         "verified": "yes"},
        {"name": "slow", "role": "version", "problem": 0, "bytes": 3_000_000_000, "flops": 0,
         "hw_bytes": 6_000_000_000, "median_ms": 1.5, "value": 2000.0, "ratio_to_baseline": 0.5,
         "pct_of_peak": 50.0, "speedup": 1.0, "verified": "yes", "extras": {"occ %": 12.5, "KiB/SM": 48}},
        {"name": "fast", "role": "version", "problem": 0, "bytes": 3_000_000_000, "flops": 0, "hw_bytes": 0,
         "median_ms": 0.76923, "value": 3900.0, "ratio_to_baseline": 0.975, "pct_of_peak": 97.5,
         "speedup": 1.95, "verified": "yes"},
    ],
}
SHAPE = dict(RUN, label="2^22 floats (16 MiB)",
             rows=[dict(RUN["rows"][0], value=1000.0), dict(RUN["rows"][2], value=1500.0, ratio_to_baseline=1.5)])

LESSON = """# Demo

v2 reaches <!--n:42:fast:gbps-->0 GB/s, <!--n:42:fast:base-->0x vendor_copy
and <!--n:42:fast:value/42:slow:value-->0x v1; at the small shape <!--n:42@2^22:fast:base|.3f-->0x.
Peak <!--n:42:peak|,.0f-->0 GB/s, goal <!--n:42:goal|.3f-->0x, <!--n:42:slow:x.occ_%-->0% occupancy.
"""
KERNEL = """// Demo kernel: 0 GB/s {n:42:fast:gbps} on the H200, 0.0x {n:42:fast:base} vendor_copy,
// and 0 GB/s {n:42:slow:moved} moved.
int code_line = 1;  // 0 GB/s {n:42:fast:gbps}: only the comment is rewritten
"""


class Marks(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="steps_results_")
        os.makedirs(os.path.join(self.dir, "docs", "results"))
        os.makedirs(os.path.join(self.dir, "chapters", "42_demo"))
        with open(os.path.join(self.dir, "course.tsv"), "w") as f:
            f.write("# number\tfolder\tstatus\ttitle\n42\t42_demo\tready\tDemo\n")
        with open(os.path.join(self.dir, "docs", "results", "H200.json"), "w") as f:
            json.dump({"gpu": RUN["gpu"], "gpu_count": 1,
                       "chapters": {"42": RUN, "42@2^22 floats (16 MiB)": SHAPE}}, f)
        self.lesson = os.path.join(self.dir, "chapters", "42_demo", "README.md")
        self.kernel = os.path.join(self.dir, "chapters", "42_demo", "v1_demo.cuh")
        with open(self.lesson, "w") as f:
            f.write(LESSON)
        with open(self.kernel, "w") as f:
            f.write(KERNEL)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_tool(self, *args):
        p = subprocess.run([sys.executable, os.path.join(HERE, "results.py"), *args], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    def test_expressions(self):
        r = results.Results(self.dir)
        cases = {
            "42:fast:gbps": "3900", "42:fast:base": "0.97", "42:fast:pbase": "97.5", "42:fast:peak": "97.5",
            "42:fast:ms": "0.77", "42:fast:ms|.4f": "0.7692", "42:slow:moved": "4000", "42:fast:bound": "0.7500",
            "42:fast:value/42:slow:value": "1.95", "(1 - 42:slow:value/42:fast:value)*100|.0f": "49",
            "42:peak": "4000", "42:goal": "0.97", "42:goal.fast|.3f": "0.975", "42:gpu.sms": "132",
            "42@2^22:fast:base": "1.50", "H200/42:fast:speedup": "1.95", "42:slow:x.occ_%": "12.5", "42:slow:x.KiB~SM": "48",
            "min(42:fast:gbps, 42:slow:gbps)|.0f": "2000", "2 * max(1, 3) - min(4)": "2.00",
            "max(42:fast:gbps, 42:slow:gbps, 42:vendor_copy:gbps)|.0f": "4000",
        }
        for expr, want in cases.items():
            self.assertEqual(results.evaluate(r, expr)[1], want, expr)
        for bad in ("42:nope:gbps", "42:fast:nope", "43:fast:gbps", "42:fast:gbps +", "42:fast:gbps|q",
                    "min(42:fast:gbps", "max()", "min(1,)", "1, 2", "mean(1, 2)",
                    "42@9:fast:gbps", "42:slow:x.regs"):
            with self.assertRaises(results.MarkError, msg=bad):
                results.evaluate(r, bad)

    def test_goal_table_judges_a_shape_goal_in_its_own_run(self):
        shaped = {"numerator_row": "fast", "denominator": "vendor_copy", "threshold": 1.2,
                  "text": ">= 1.20x vendor_copy at 2^22", "shape": "2^22 floats (16 MiB)", "ratio": 0.975,
                  "met": False, "applicable": False, "at_shape": False, "not_here": "set at 2^22 floats (16 MiB)"}
        default = RUN["goals"][0]
        at_shape = dict(shaped, ratio=1.5, met=True, applicable=True, at_shape=True)
        del at_shape["not_here"]
        path = os.path.join(self.dir, "goals.json")
        chapters = {"42": dict(RUN, goals=[default, shaped]), "42@2^22 floats (16 MiB)": dict(SHAPE, goals=[default, at_shape])}
        with open(path, "w") as f:
            json.dump({"gpu": RUN["gpu"], "gpu_count": 1, "chapters": chapters}, f)
        code, out = self.run_tool("goals", path)
        self.assertEqual(code, 0, out)
        lines = [line for line in out.splitlines() if ">= 1.20x" in line]
        self.assertEqual(len(lines), 1, out)  # judged once: in the run at its shape, not n/a in the default run
        self.assertIn("42 Demo, 2^22 floats (16 MiB)", lines[0])
        self.assertTrue(lines[0].rstrip().endswith("yes"), lines[0])
        self.assertIn("(other shape)", out)  # the default goal in the shape's run: for information
        chapters["42@2^22 floats (16 MiB)"]["goals"][1] = dict(at_shape, ratio=1.1, met=False)
        with open(path, "w") as f:
            json.dump({"gpu": RUN["gpu"], "gpu_count": 1, "chapters": chapters}, f)
        code, out = self.run_tool("goals", path)
        self.assertEqual(code, 1, out)  # a shape goal missed in its run counts like any other
        self.assertTrue([line for line in out.splitlines() if ">= 1.20x" in line][0].rstrip().endswith("NO"))

    def test_goal_table_names_why_a_goal_is_not_judged(self):
        default = RUN["goals"][0]
        path = os.path.join(self.dir, "goals.json")
        for count, min_gpus, want in ((1, 2, "n/a (2 GPUs)"), (2, 1, "n/a (another problem)")):
            goal = dict(default, applicable=False, met=True, min_gpus=min_gpus)  # met, but n/a: not counted
            with open(path, "w") as f:
                json.dump({"gpu": RUN["gpu"], "gpu_count": count, "chapters": {"42": dict(RUN, goals=[goal])}}, f)
            code, out = self.run_tool("goals", path)
            self.assertEqual(code, 0, out)
            self.assertTrue([line for line in out.splitlines() if default["text"] in line][0].rstrip().endswith(want),
                            out)

    def test_table_names_a_row_that_ran_another_kernel(self):
        twin = dict(RUN["rows"][2], name="fast_too", same_as="fast", ranked=False)
        table = results.markdown_table(dict(RUN, rows=RUN["rows"] + [twin]))
        self.assertIn("| fast_too (= fast) |", table)
        self.assertIn("| fast |", table)

    def test_render_then_check(self):
        rc, out = self.run_tool("render", "--check", self.dir)
        self.assertEqual(rc, 1, out)
        rc, out = self.run_tool("render", self.dir)
        self.assertEqual(rc, 0, out)
        text = read(self.lesson)
        self.assertIn("<!--n:42:fast:gbps-->3900 GB/s", text)
        self.assertIn("<!--n:42@2^22:fast:base|.3f-->1.500x", text)
        self.assertIn("<!--n:42:peak|,.0f-->4,000 GB/s", text)
        code = read(self.kernel)
        self.assertIn("// Demo kernel: 3900 GB/s {n:42:fast:gbps} on the H200, 0.97x {n:42:fast:base} vendor_copy,", code)
        self.assertIn("// and 4000 GB/s {n:42:slow:moved} moved.", code)
        self.assertIn("int code_line = 1;  // 3900 GB/s {n:42:fast:gbps}: only", code)  # code is never rewritten
        rc, out = self.run_tool("render", "--check", self.dir)
        self.assertEqual((rc, out), (0, ""))

    def test_planted_mismatch_is_one_line(self):
        self.run_tool("render", self.dir)
        text = read(self.lesson).replace("-->3900 GB/s", "-->3912 GB/s")
        with open(self.lesson, "w") as f:
            f.write(text)
        rc, out = self.run_tool("render", "--check", self.dir)
        self.assertEqual(rc, 1)
        lines = [x for x in out.splitlines() if not x.startswith("results:")]
        self.assertEqual(lines, ["chapters/42_demo/README.md:3: marker {n:42:fast:gbps}: the text says '3912', "
                                 "the results give '3900'"])

    def test_unresolvable_marker_fails_render(self):
        with open(self.kernel, "a") as f:
            f.write("// 12 GB/s {n:42:missing_row:gbps}\n")
        rc, out = self.run_tool("render", self.dir)
        self.assertEqual(rc, 1)
        self.assertIn("v1_demo.cuh:4: marker {n:42:missing_row:gbps}: no row 'missing_row' in run 42", out)

    def test_marker_after_emphasis_is_refused(self):
        with open(self.lesson, "a") as f:
            f.write("**<!--n:42:fast:gbps-->3900 GB/s** in bold\n")
        rc, out = self.run_tool("render", "--check", self.dir)
        self.assertEqual(rc, 1)
        self.assertIn("a marker right after '*'", out)

    def test_marker_at_line_start_is_refused(self):
        with open(self.lesson, "a") as f:
            f.write("a paragraph that goes on\n<!--n:42:fast:gbps-->3900 GB/s on the next line\n")
        rc, out = self.run_tool("render", "--check", self.dir)
        self.assertEqual(rc, 1)
        self.assertIn("README.md:7: a marker at the start of a line", out)

    def test_the_course_is_up_to_date(self):
        rc, out = self.run_tool("render", "--check", ROOT)
        self.assertEqual(rc, 0, out)


class Claims(Marks):
    """Checked claims: a comparison in prose holds on every measured GPU, or names the GPU it holds on; and a
    lesson renders the GPU it is read for."""

    def setUp(self):
        super().setUp()
        slower = json.loads(json.dumps(RUN))
        slower["machine"] = "H100"
        slower["gpu"] = {"name": "NVIDIA H100", "sms": 132}
        slower["rows"][1]["value"] = 3950.0  # "slow" beats "fast" on this GPU
        with open(os.path.join(self.dir, "docs", "results", "H100.json"), "w") as f:
            json.dump({"gpu": slower["gpu"], "gpu_count": 1, "chapters": {"42": slower}}, f)
        with open(os.path.join(self.dir, "docs", "results", "REFERENCE"), "w") as f:
            f.write("H200\n")

    def check(self, text):
        with open(self.lesson, "w") as f:
            f.write(LESSON + text)
        self.run_tool("render", self.dir)  # the numbers (a claim is only checked, never rewritten)
        return self.run_tool("render", self.dir, "--check")

    def test_a_claim_false_on_one_gpu_fails(self):
        rc, out = self.check("fast beats slow<!--claim:42:fast:value > 42:slow:value-->.\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("false on H100", out)
        self.assertNotIn("false on H200", out)

    def test_a_claim_that_holds_everywhere_passes(self):
        rc, out = self.check("fast beats the copy's half<!--claim:42:fast:value > 0.5 * 42:vendor_copy:value-->.\n")
        self.assertEqual(rc, 0, out)

    def test_a_claim_on_one_gpu_must_name_it(self):
        rc, out = self.check("On the H200, fast beats slow<!--claim@H200:42:fast:value > 42:slow:value-->.\n")
        self.assertEqual(rc, 0, out)
        rc, out = self.check("Fast beats slow<!--claim@H200:42:fast:value > 42:slow:value-->.\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("must say so", out)

    def test_the_gpu_name_follows_the_rendered_machine(self):
        with open(self.lesson, "w") as f:
            f.write(LESSON + "Measured on the <!--gpu-->X<!--/gpu-->.\n")
        self.assertEqual(self.run_tool("render", self.dir)[0], 0)
        self.assertIn("<!--gpu-->H200<!--/gpu-->", read(self.lesson))
        rc, out = self.run_tool("lesson", self.lesson, "--root", self.dir, "--machine", "H100")
        self.assertEqual(rc, 0, out)
        self.assertIn("<!--gpu-->H100<!--/gpu-->", out)
        self.assertIn("<!--n:42:fast:value/42:slow:value-->0.99x", out)  # H100's numbers, H200's on disk


class Schema(unittest.TestCase):
    """The results format has one source of truth: the version the C++ writes is the one this reader and
    docs/results.md name, and every committed file reads without error."""

    def test_versions_agree(self):
        import re
        cpp = read(os.path.join(ROOT, "common", "include", "steps", "summary.hpp"))
        self.assertEqual(int(re.search(r"kResultsSchema = (\d+);", cpp).group(1)), results.runs.SCHEMA)
        doc = read(os.path.join(ROOT, "docs", "results.md"))
        self.assertIn(f"| `schema` | {results.runs.SCHEMA};", doc)

    def test_committed_files(self):
        import glob
        files = [p for p in glob.glob(os.path.join(ROOT, "docs", "results", "*.json"))
                 if not p.endswith(".profile.json")]
        self.assertTrue(files)
        for path in files:
            data = results.runs.load(path)  # raises SchemaError on a version or field it does not know
            self.assertTrue(data["chapters"], path)

    def test_refuses_unknown(self):
        with self.assertRaises(results.runs.SchemaError):
            results.runs.check_run(dict(RUN, schema=99), "test")
        with self.assertRaises(results.runs.SchemaError):
            results.runs.check_run({k: v for k, v in RUN.items() if k != "machine"}, "test")


if __name__ == "__main__":
    unittest.main()
