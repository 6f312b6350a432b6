#!/usr/bin/env python3
"""The number lint: every measurement-looking number in a lesson or a code banner comes from somewhere.

  python3 tools/lint_numbers.py ROOT        (run by ./tutorial check; exit 1 when a number is flagged)

Reads every lesson (chapters/*/README.md) and the opening comment banner of
every chapter code file (chapters/*/*.cu, .cuh, .hpp, .cpp, .h: the comment
lines before the first line of code). A number followed by a unit of time,
rate or frequency (ms, us, µs, ns, GB/s, TB/s, MB/s, GiB/s, TFLOP/s,
GFLOP/s, GHz, MHz), by %, or written as a speedup (1.3x, 2x; not a dimension
such as 128x128 or 8192 x 8192) is flagged unless it is
  - a marked number: Markdown <!--n:EXPR-->NUMBER, code NUMBER ... {n:EXPR}
    (tools/marks.py: the value comes from docs/results and is checked);
  - inside a generated block (<!-- results:...:begin --> ... end,
    <!-- code:...:begin --> ... end);
  - quoted from a named outside source: Markdown <!--src:NAME-->NUMBER, or a
    region <!--src:NAME:begin--> ... <!--src:end--> (a quoted table); code
    {src:NAME} NUMBER. NAME says which source ("H200 datasheet").
Prints the count of flagged numbers per lesson and each flagged number as
FILE:LINE: 'TEXT'. Files on tools/lint_numbers_exceptions.txt are listed as
excepted, with their count, and do not fail the lint. Standard library only.
"""
import glob
import os
import re
import sys

CODE_EXT = (".cu", ".cuh", ".hpp", ".cpp", ".h")
NUM = r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
UNIT = r"(?:ms|us|µs|ns|GB/s|TB/s|MB/s|GiB/s|TFLOP/s|GFLOP/s|GHz|MHz)(?![\w/])"
MEASURE = re.compile(rf"(?P<num>{NUM})(?:\s?(?P<unit>{UNIT})|\s?(?P<pct>%)|(?P<x>x)(?![\w.])(?!\s*\d))")
DIM_BEFORE = re.compile(r"\d\s*[x×]\s*$")  # "128 x " right before: the number is a dimension's second part
COORD_BEFORE = re.compile(r"(\+|\(\s*|\d[a-wyz],\s*)$")  # "(4y, 4x)", "16+4x": x is a coordinate, not a speedup
MD_MARK = re.compile(r"<!--(?:n|src):[^>]*?-->$")  # a marker right before a number
GENERATED = re.compile(r"<!-- (?:results|code):\S+:(begin|end) -->")
SRC_REGION = re.compile(r"<!--src:(?:[^>]*:begin|end)-->")
CODE_MARK = re.compile(r"\{n:[^{}]*\}")
CODE_SRC = re.compile(r"\{src:[^{}]*\}\s*$")


def flagged_in_line(line, code):
    """The measurement-looking numbers of one line that no marker or source mark covers."""
    marked = set()
    if code:
        start = 0  # {n:...} follows its number: the last number before each marker is marked
        for m in CODE_MARK.finditer(line):
            nums = list(re.finditer(NUM, line[start:m.start()]))
            if nums:
                marked.add(start + nums[-1].start())
            start = m.end()
    out = []
    for m in MEASURE.finditer(line):
        before = line[:m.start()]
        if m.start() in marked or DIM_BEFORE.search(before) or (m.group("x") and COORD_BEFORE.search(before)):
            continue
        if (not code and MD_MARK.search(before)) or (code and CODE_SRC.search(before)):
            continue
        out.append(m.group(0))
    return out


def banner(lines):
    """The line numbers (0-based) of a code file's opening comment banner."""
    out, in_block = [], False
    for k, line in enumerate(lines):
        s = line.strip()
        if in_block:
            out.append(k)
            in_block = "*/" not in s
            continue
        if s.startswith("//"):
            out.append(k)
        elif s.startswith("/*"):
            out.append(k)
            in_block = "*/" not in s
        elif s and not s.startswith("#pragma once"):
            break
    return out


def lint_text(text, code):
    """[(line number, text)] of the flagged numbers of a lesson (code=False) or a code file's banner."""
    lines = text.split("\n")
    out = []
    if code:
        for k in banner(lines):
            out += [(k + 1, t) for t in flagged_in_line(lines[k], True)]
        return out
    skip = False  # inside a generated block or a quoted region
    for k, line in enumerate(lines):
        g = GENERATED.search(line) or SRC_REGION.search(line)
        if g:
            skip = not (g.group(0).endswith("end -->") or g.group(0) == "<!--src:end-->")
            continue
        if not skip:
            out += [(k + 1, t) for t in flagged_in_line(line, False)]
    return out


def exceptions(root):
    """Paths of tools/lint_numbers_exceptions.txt: a file, or a folder ending in '/' (its code banners)."""
    path = os.path.join(root, "tools", "lint_numbers_exceptions.txt")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [x.split("#")[0].strip() for x in f if x.split("#")[0].strip()]


def excepted(rel, exc):
    return rel in exc or (not rel.endswith(".md") and os.path.dirname(rel) + "/" in exc)


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip())
        return 2
    root = argv[0]
    exc = exceptions(root)
    for e in exc:
        if not os.path.exists(os.path.join(root, e)):
            print(f"lint_numbers: tools/lint_numbers_exceptions.txt: '{e}' does not exist")
            return 2
    failed = 0
    for d in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]_*"))):
        files = [os.path.join(d, "README.md")] + sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(CODE_EXT))
        lesson_hits, code_hits, exc_hits = [], [], []
        for path in files:
            if not os.path.exists(path):
                continue
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                hits = [(rel, k, t) for k, t in lint_text(f.read(), path.endswith(CODE_EXT))]
            if excepted(rel, exc):
                exc_hits += hits
            else:
                (lesson_hits if path.endswith(".md") else code_hits).extend(hits)
        name = os.path.basename(d)
        count = f"{len(lesson_hits)} in the lesson, {len(code_hits)} in code banners"
        if exc_hits:
            count += f"; {len(exc_hits)} excepted (tools/lint_numbers_exceptions.txt)"
        status = "FAIL" if lesson_hits or code_hits else "exc " if exc_hits else "ok  "
        print(f"  {status}  {name}: {count}")
        for rel, k, t in lesson_hits + code_hits:
            print(f"          {rel}:{k}: '{t}' (mark it: <!--n:...--> / {{n:...}}, or <!--src:NAME--> / {{src:NAME}})")
        failed += len(lesson_hits) + len(code_hits)
    if exc:
        print("  note  excepted for now (tools/lint_numbers_exceptions.txt): " + ", ".join(exc))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
