#!/usr/bin/env python3
"""Checks of the repository's text that need no build (run by ./tutorial check).

  python3 tools/repo_checks.py ROOT        (exit 1 when one fails)

  links     the repository is self-contained: no relative path (Markdown link,
            code comment, include, anything) leaves the repository root, no
            Markdown link points to a file that does not exist, no '../shared'
            path, no absolute /work path, no "see NAME.md" the repository lacks.
  course    course.tsv's number column agrees with each folder's prefix, and
            the README course map lists every chapter with its course.tsv
            title and number.
  results   a ready chapter has measured results: its lesson holds a
            non-empty results block for a machine whose docs/results file has
            the chapter, and that machine's chart docs/figures/chNN_MACHINE.png.
Each problem is one line naming the file and line. Standard library only.
"""
import json
import os
import re
import subprocess
import sys

import course

TEXT_EXT = (".md", ".txt", ".cu", ".cuh", ".hpp", ".cpp", ".h", ".py", ".sh", ".cmake", ".json", ".tsv", ".in", ".yml",
            ".yaml", ".mutant")
REL_PATH = re.compile(r"(?<![\w.])(?:\.\./)+[\w.\-/]*")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
SEE_MD = re.compile(r"\bsee\s+`?([\w./-]+\.md)\b")


def files(root):
    """The repository's text files (git's list when it is a checkout, else a walk), relative to root."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs]
    return sorted(f for f in out if f and (f.endswith(TEXT_EXT) or os.path.basename(f) in
                                          ("tutorial", "CMakeLists.txt", "bench_shapes", "Doxyfile", "run"))
                  and os.path.isfile(os.path.join(root, f)) and not f.startswith("build"))


def inside(root, base, target):
    """(whether base/target stays in the repository, its absolute path)."""
    root = os.path.abspath(root)
    real = os.path.normpath(os.path.join(root, base, target))
    return real == root or real.startswith(root + os.sep), real


def comes_back(root, target):
    """A path written from another folder's point of view ("../../docs/figures/" in a note about lessons):
    without its leading '../', it starts with a folder or file of the repository root."""
    tail = re.sub(r"^(\.\./)+", "", target).split("/")[0]
    return bool(tail) and tail != ".." and os.path.exists(os.path.join(root, tail))


def links(root):
    problems = []
    names = {os.path.basename(f) for f in files(root)}
    for rel in files(root):
        if rel == "tools/repo_checks.py" or re.match(r"tools/test_.*\.py$", rel):
            continue  # this check and its tests name what they look for
        base = os.path.dirname(rel)
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except UnicodeDecodeError:
            continue
        for k, line in enumerate(lines, 1):
            where = f"{rel}:{k}"
            if "../shared" in line:
                problems.append(f"{where}: a path to '../shared', outside the repository")
            if re.search(r"(?<![\w.])/work/", line):
                problems.append(f"{where}: an absolute /work path, outside the repository")
            for m in REL_PATH.finditer(line):
                ok, _ = inside(root, base, m.group(0))
                if not ok and not comes_back(root, m.group(0)):
                    problems.append(f"{where}: '{m.group(0)}' leaves the repository")
            if rel.endswith(".md"):
                for m in MD_LINK.finditer(line):
                    target = m.group(1).split("#")[0]
                    if not target or re.match(r"[a-z]+:", target):
                        continue  # an anchor or a URL
                    ok, real = inside(root, base, target)
                    if ok and not os.path.exists(real):
                        problems.append(f"{where}: link to '{target}', which does not exist")
            for m in SEE_MD.finditer(line):
                if os.path.basename(m.group(1)) not in names:
                    problems.append(f"{where}: 'see {m.group(1)}': the repository has no such file")
    return problems


def course_map(root):
    problems = []
    chapters = course.chapters(root)
    for c in chapters:
        if c.folder[:2] != c.number:
            problems.append(f"course.tsv: chapter {c.number}: folder '{c.folder}' starts with another number")
    listed = {}
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    for k, line in enumerate(lines, 1):
        m = re.match(r"\|\s*(\d\d)\s*\|\s*\[([^\]]+)\]\(chapters/([^/]+)/README\.md\)", line)
        if m:
            listed[m.group(3)] = (k, m.group(1), m.group(2))
    for c in chapters:
        if c.folder not in listed:
            if c.status == "ready":
                problems.append(f"README.md: the course map has no linked row for chapter {c.number} ({c.folder})")
            continue
        k, number, title = listed[c.folder]
        if number != c.number:
            problems.append(f"README.md:{k}: chapter {c.folder} numbered {number}, course.tsv says {c.number}")
        if title != c.title:
            problems.append(f"README.md:{k}: title '{title}', course.tsv says '{c.title}'")
    return problems


def results(root):
    problems = []
    stored = {}
    for f in sorted(os.listdir(os.path.join(root, "docs", "results"))):
        if f.endswith(".json") and not f.endswith(".profile.json"):
            with open(os.path.join(root, "docs", "results", f), encoding="utf-8") as fh:
                stored[f[:-5]] = json.load(fh)["chapters"]
    for c in course.chapters(root):
        if c.status != "ready":
            continue
        lesson = os.path.join("chapters", c.folder, "README.md")
        try:
            with open(os.path.join(root, lesson), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue  # a missing lesson is reported by check.sh
        blocks = re.findall(rf"<!-- results:{c.number}:([\w-]+):begin -->\n(.*?)<!-- results:{c.number}:\1:end -->",
                            text, re.S)
        if not blocks:
            problems.append(f"{lesson}: chapter {c.number} is ready but its lesson has no results block "
                            f"(<!-- results:{c.number}:MACHINE:begin --> ... end)")
        for machine, body in blocks:
            if not body.strip():
                problems.append(f"{lesson}: the results block of {machine} is empty (run ./tutorial bench {c.number})")
            if c.number not in stored.get(machine, {}):
                problems.append(f"{lesson}: no results of chapter {c.number} in docs/results/{machine}.json")
            if not os.path.exists(os.path.join(root, "docs", "figures", f"ch{c.number}_{machine}.png")):
                problems.append(f"{lesson}: no chart docs/figures/ch{c.number}_{machine}.png")
    return problems


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip())
        return 2
    root = argv[0]
    failed = 0
    for name, check, what in (("links", links, "no link or path leaves the repository"),
                              ("course", course_map, "course.tsv numbers and the README course map agree"),
                              ("results", results, "every ready chapter has results and a chart")):
        try:
            problems = check(root)
        except (OSError, course.CourseError) as e:
            problems = [str(e)]
        print(f"  {'ok  ' if not problems else 'FAIL'}  {what}")
        for p in problems:
            print(f"          {p}")
        failed += len(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
