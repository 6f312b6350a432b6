#!/usr/bin/env python3
"""Host tests of the checks ./tutorial check runs (no GPU, standard library only).

  python3 tools/test_checks.py          (exit 0: all pass)

The number lint (lint_numbers.py), the repository checks (repo_checks.py:
links, course map, results) and the row-name check (names.py), each on a
small course built in a temporary folder with a planted fault, and once on
the real tree where that needs no build; and the machine-code reader the
lessons' SASS checks use (sass.py), on a few hand-written lines.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import course  # noqa: E402
import hooks  # noqa: E402
import lint_numbers  # noqa: E402
import names  # noqa: E402
import profile_check  # noqa: E402
import repo_checks  # noqa: E402
import sass  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class NumberLint(unittest.TestCase):
    def flagged(self, text, code=False):
        return [t for _, t in lint_numbers.lint_text(text, code)]

    def test_typed_numbers_are_flagged(self):
        self.assertEqual(self.flagged("v2 reaches 1234 GB/s on the H200."), ["1234 GB/s"])
        self.assertEqual(self.flagged("it takes 0.46 ms, 12.5% of the bound, 1.3x faster, 2x less, 1.98 GHz"),
                         ["0.46 ms", "12.5%", "1.3x", "2x", "1.98 GHz"])
        self.assertEqual(self.flagged("a rate of 3,045 GB/s and 66.9 TFLOP/s"), ["3,045 GB/s", "66.9 TFLOP/s"])

    def test_sourced_numbers_are_not_flagged(self):
        self.assertEqual(self.flagged("v2 reaches <!--n:42:fast:gbps-->1234 GB/s, <!--n:42:fast:base-->0.97x"), [])
        self.assertEqual(self.flagged("the datasheet gives <!--src:H200 datasheet-->4.8 TB/s"), [])
        self.assertEqual(self.flagged("<!-- results:42:H200:begin -->\n| a | 1234 GB/s |\n<!-- results:42:H200:end -->"), [])
        self.assertEqual(self.flagged("<!-- code:x.cuh#a:begin -->\n// 5 ms\n<!-- code:x.cuh#a:end -->\nthen 6 ms"),
                         ["6 ms"])
        self.assertEqual(self.flagged("<!--src:DeepGEMM README:begin-->\n| 1550 TFLOP/s |\n<!--src:end-->\n7 us"), ["7 us"])

    def test_dimensions_are_not_speedups(self):
        self.assertEqual(self.flagged("a 128x128 tile of an 8192 x 8192 x 4096 problem, (4y, 16+4x)"), [])

    def test_code_banner_only(self):
        code = ("// v3: 4112 GB/s {n:42:fast:gbps}, 0.99x {n:42:fast:base} the baseline,\n"
                "// {src:H200 datasheet} 4.8 TB/s, but 38.2 TFLOP/s typed\n#pragma once\nint x;  // 5 ms later\n")
        self.assertEqual(self.flagged(code, code=True), ["38.2 TFLOP/s"])

    def test_the_course_passes(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "lint_numbers.py"), ROOT], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout)


class MachineCode(unittest.TestCase):
    SASS = """
        Function : _Z6kernelv
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   LDGSTS.E [R2], desc[UR4][R4.64] ;
        /*0020*/                   FFMA R8, R10.reuse, R12, R8 ;
        /*0030*/                   FFMA R9, R10.reuse, R13.reuse, R9 ;
        /*0040*/               @P0 BRA 0x10 ;
        /*0050*/                   FFMA R8, R10, R12, R8 ;
        /*0060*/                   EXIT ;
    """

    def test_main_loop_is_the_backward_branch_range(self):
        code = sass.functions(self.SASS)["_Z6kernelv"]
        loop = sass.main_loop(code)
        self.assertEqual([op for _, op, _ in loop], ["LDGSTS", "FFMA", "FFMA", "BRA"])

    def test_reuse_share_counts_reuse_flags_per_instruction(self):
        loop = sass.main_loop(sass.functions(self.SASS)["_Z6kernelv"])
        self.assertAlmostEqual(sass.reuse_share(loop), 1.5)  # 1 + 2 flags over 2 FFMA
        self.assertEqual(sass.reuse_share(loop, "IMAD"), 0.0)


class Hooks(unittest.TestCase):
    def test_every_hook_loads_without_matplotlib(self):
        # ./tutorial check reads hooks' ROWS with any python3; matplotlib is imported only through `plt`.
        for c in course.chapters(ROOT):
            module = hooks.load(ROOT, c.folder)
            if module is not None:
                self.assertIsInstance(getattr(module, "ROWS", ()), tuple, c.folder)

    def test_hooks_import_nothing_from_tools(self):
        # A hook gets the charts helpers as an argument (hooks.Kit); tools/ is not on its import path.
        own = {os.path.splitext(f)[0] for f in os.listdir(os.path.join(ROOT, "tools")) if f.endswith(".py")}
        for path in glob.glob(os.path.join(ROOT, "chapters", "*", "figures.py")):
            text = open(path, encoding="utf-8").read()
            found = re.findall(r"^\s*(?:from|import)\s+(\w+)", text, re.M)
            self.assertEqual([m for m in found if m in own], [], path)

    def test_a_hook_lacking_fields_is_one_line(self):
        class Module:
            @staticmethod
            def charts(runs):
                raise LookupError("the runs state no options")
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertIsNone(hooks.call(Module, "charts", "chapters/42_demo/figures.py, H200", {}))
            self.assertIsNone(hooks.call(None, "charts", "nowhere", {}))
        self.assertEqual(out.getvalue(), "results: chapters/42_demo/figures.py, H200: charts() left as it was: "
                                         "the runs state no options\n")


class Course(unittest.TestCase):
    """A two-chapter course in a temporary folder."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="steps_checks_")
        d = self.dir
        write(f"{d}/course.tsv", "# number\tfolder\tstatus\ttitle\n42\t42_demo\tready\tDemo\n43\t43_next\twip\tNext\n")
        write(f"{d}/README.md", "| 42 | [Demo](chapters/42_demo/README.md) | x | ready |\n")
        write(f"{d}/chapters/42_demo/README.md", "# Demo\n![chart](../../docs/figures/ch42_H200.png)\n"
              "<!-- results:42:H200:begin -->\n| table |\n<!-- results:42:H200:end -->\n"
              "It reaches <!--n:42:fast:gbps-->1 GB/s.\n")
        write(f"{d}/chapters/42_demo/bench_shapes", "# LABEL | ARGUMENTS\nsmall | --size 1M --variant fast,slow\n")
        write(f"{d}/docs/figures/ch42_H200.png", "")
        write(f"{d}/docs/results/H200.json", '{"gpu": {}, "chapters": {"42": {}}}')
        write(f"{d}/tools/tool.py", "# a tool that knows no chapter\n")
        write(f"{d}/build/course/chapters.tsv", "number\tfolder\tbinary\n42\t42_demo\tch42_demo\n")
        write(f"{d}/build/bin/ch42_demo", "#!/bin/sh\nprintf '  vendor  the baseline\\n  fast    v2\\n  slow    v1\\n'\n")
        os.chmod(f"{d}/build/bin/ch42_demo", 0o755)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def names(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "names.py"), self.dir, os.path.join(self.dir, "build")],
                           capture_output=True, text=True)
        return p.returncode, p.stdout

    def assert_names_say(self, rc, *lines):
        """names.py exits with rc and prints each of lines."""
        got, out = self.names()
        self.assertEqual(got, rc, out)
        for line in lines:
            self.assertIn(line, out)

    def test_clean_course_passes(self):
        self.assertEqual(repo_checks.links(self.dir), [])
        self.assertEqual(repo_checks.course_map(self.dir), [])
        self.assertEqual(repo_checks.results(self.dir), [])
        rc, out = self.names()
        self.assertEqual(rc, 0, out)

    def test_link_leaving_the_repository(self):
        lesson = f"{self.dir}/chapters/42_demo/README.md"
        with open(lesson, "a") as f:
            f.write("See [the design](../" + "shared/x.md).\nAnd ../../../outside.md, /" + "work/y.\n")
        problems = repo_checks.links(self.dir)
        self.assertIn("chapters/42_demo/README.md:7: a path to '../" + "shared', outside the repository", problems)
        self.assertIn("chapters/42_demo/README.md:7: link to '../" + "shared/x.md', which does not exist", problems)
        self.assertIn("chapters/42_demo/README.md:8: '../../../outside.md' leaves the repository", problems)
        self.assertIn("chapters/42_demo/README.md:8: an absolute /" + "work path, outside the repository", problems)

    def test_course_map_title_and_number(self):
        write(f"{self.dir}/README.md", "| 41 | [Demo add](chapters/42_demo/README.md) | x | ready |\n")
        self.assertEqual(repo_checks.course_map(self.dir),
                         ["README.md:1: chapter 42_demo numbered 41, course.tsv says 42",
                          "README.md:1: title 'Demo add', course.tsv says 'Demo'"])

    def test_ready_chapter_without_results(self):
        write(f"{self.dir}/chapters/42_demo/README.md", "<!-- results:42:H200:begin -->\n<!-- results:42:H200:end -->\n")
        os.remove(f"{self.dir}/docs/figures/ch42_H200.png")
        self.assertEqual(repo_checks.results(self.dir),
                         ["chapters/42_demo/README.md: the results block of H200 is empty (run ./tutorial bench 42)",
                          "chapters/42_demo/README.md: no chart docs/figures/ch42_H200.png"])

    def test_renamed_row_left_in_bench_shapes(self):
        write(f"{self.dir}/chapters/42_demo/bench_shapes", "small | --size 1M --variant fast,slowest\n")
        self.assert_names_say(1, "chapters/42_demo/bench_shapes:1: row 'slowest' is not in ch42_demo --list")

    def test_renamed_row_in_a_marker(self):
        with open(f"{self.dir}/chapters/42_demo/README.md", "a") as f:
            f.write("and <!--n:42:fastest:gbps/42:slow:gbps-->2x.\n")
        self.assert_names_say(1, "chapters/42_demo/README.md:7: row 'fastest' is not in ch42_demo --list")

    def test_tools_naming_a_chapter_or_row(self):
        write(f"{self.dir}/tools/tool.py", 'if r["chapter"] == "42":\n    rows = ["fast"]\n')
        self.assert_names_say(1, 'tools/tool.py:1: names "42"', "tools/tool.py:2: names row fast")

    def test_unbuilt_ready_chapter(self):
        write(f"{self.dir}/build/course/chapters.tsv", "number\tfolder\tbinary\n")
        self.assert_names_say(1, "row names of chapters 42 not validated: their programs are missing")
        write(f"{self.dir}/build/CMakeCache.txt", "STEPS_ONLY_CHAPTERS:STRING=43_next\n")
        self.assert_names_say(0, "not validated: their programs are not in this build (the build is restricted")

    def test_manifest_without_header(self):
        write(f"{self.dir}/build/course/chapters.tsv", "42\t42_demo\tch42_demo\n")
        self.assert_names_say(1, "chapters.tsv:1: no header line naming the columns")


class ProfileExpectations(unittest.TestCase):
    """profile_check.py verify: today's expectations on every GPU's recorded values."""

    CMD = ["python3", "profile_check.py", "--probe", "probe", "--name", "profile.99_x.pipe",
           "--measure", "a=k1:tensor_pipe", "--measure", "b=k2:tensor_pipe", "--var", "n=2",
           "--expect", "b > n * a", "--", "ch99_x", "--iters", "1"]

    def record(self, **values):
        return {"profile.99_x.pipe": {"values": {k: {"value": v} for k, v in values.items()}}}

    def test_an_expectation_true_everywhere_passes(self):
        problems, checked = profile_check.recorded_problems(
            {"profile.99_x.pipe": self.CMD}, {"A100": self.record(a=10, b=30), "H200": self.record(a=20, b=41)})
        self.assertEqual(problems, [])
        self.assertEqual(checked, 2)

    def test_an_expectation_false_on_one_gpu_fails_and_names_it(self):
        problems, _ = profile_check.recorded_problems(
            {"profile.99_x.pipe": self.CMD}, {"A100": self.record(a=10, b=30), "H200": self.record(a=20, b=39)})
        self.assertEqual(problems, ["profile.99_x.pipe: 'b > n * a' is false on H200's measured values (a 20, b 39)"])

    def test_a_value_not_recorded_asks_for_a_run(self):
        problems, _ = profile_check.recorded_problems({"profile.99_x.pipe": self.CMD}, {"H100": self.record(a=10)})
        self.assertEqual(problems, ["profile.99_x.pipe: H100 has no value for b (run it there again)"])

    def test_a_gpu_without_the_test_is_not_judged(self):
        problems, checked = profile_check.recorded_problems({"profile.99_x.pipe": self.CMD}, {"T4": {}})
        self.assertEqual((problems, checked), ([], 0))


if __name__ == "__main__":
    unittest.main()
