#!/usr/bin/env python3
"""Row names used outside a registry are checked against the registry.

  python3 tools/names.py ROOT BUILD        (run by ./tutorial check; exit 1 when a name is unknown)

A chapter's registry is its program's --list (the row name is the first
word of each line; no GPU needed), run from BUILD/bin for every chapter of
BUILD/course/chapters.tsv. Names are read, per chapter, from
  - --variant lists in chapters/NN_*/CMakeLists.txt, bench_shapes, the lesson and
    the exercises' READMEs (exercises/NN_*/**/README.md);
  - markers in lessons and code (<!--n:NN:ROW:FIELD-->, {n:NN:ROW:FIELD}), whose
    NN says the chapter;
  - the ROWS of the chapter's figures.py hook.
Each unknown name is one line: FILE:LINE: row 'NAME' is not in BINARY --list.
A chapter without a built program (a build restricted with
STEPS_ONLY_CHAPTERS) is named as not validated; in an unrestricted build a
ready chapter without its program is an error.
"""
import ast
import glob
import os
import re
import subprocess
import sys

import course
import marks

ROLES = {"version", "baseline", "reference", "yours", "mistake"}
VARIANT = re.compile(r"--(?:variant|except)[ =]([A-Za-z0-9_,]+)")


def registry(binary):
    """The row names of a chapter program's --list, or None when it cannot be run."""
    try:
        p = subprocess.run([binary, "--list"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return {line.split()[0] for line in p.stdout.splitlines() if line.startswith("  ") and line.split()}


def variant_uses(path, number):
    """(chapter, line, name) of every --variant (and --except) list of one file."""
    out = []
    with open(path, encoding="utf-8") as f:
        for k, line in enumerate(f, 1):
            if line.lstrip().startswith("#") and not path.endswith("README.md"):
                continue  # a comment in CMake or bench_shapes
            for m in VARIANT.finditer(line):
                out += [(number, k, name) for name in m.group(1).split(",") if name]
    return out


def marker_uses(path):
    """(chapter, line, name) of every row a marker of one file reads."""
    out = []
    with open(path, encoding="utf-8") as f:
        for k, line in enumerate(f, 1):
            exprs = [m.group("expr") for m in marks.MD_MARK.finditer(line)]
            exprs += [m.group("expr") for m in marks.CODE_MARK.finditer(line)]
            for expr in exprs:
                for ref in re.finditer(marks.REF, expr.partition("|")[0]):
                    if ref.start() > 0 and expr[ref.start() - 1] == ":":
                        continue  # part of a prof: reference
                    parts = ref.group("rest").split(":")
                    if len(parts) == 2:
                        out.append((ref.group("run")[:2], k, parts[0]))
    return out


def hook_rows(path, number):
    """(chapter, line, name) of a figures.py hook's ROWS."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "ROWS" for t in node.targets):
            return [(number, node.lineno, name) for name in ast.literal_eval(node.value)]
    return []


def uses(root):
    """{path: [(chapter, line, name)]} of every row name used outside a registry."""
    out = {}
    numbers = {c.folder: c.number for c in course.chapters(root)}
    for folder, number in numbers.items():
        d = os.path.join(root, "chapters", folder)
        for name in ("CMakeLists.txt", "bench_shapes", "README.md"):
            if os.path.exists(os.path.join(d, name)):
                out[os.path.join(d, name)] = variant_uses(os.path.join(d, name), number)
        for readme in glob.glob(os.path.join(root, "exercises", folder, "**", "README.md"), recursive=True):
            out[readme] = variant_uses(readme, number)
        if os.path.exists(os.path.join(d, "figures.py")):
            out[os.path.join(d, "figures.py")] = hook_rows(os.path.join(d, "figures.py"), number)
    for path in marks.marked_files(root):
        out.setdefault(path, []).extend(marker_uses(path))
    return out


def restricted(build):
    """True when the build was restricted to some chapters on purpose (STEPS_ONLY_CHAPTERS)."""
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            return any(re.match(r"STEPS_ONLY_CHAPTERS:\w+=\S", line) for line in f)
    except OSError:
        return False


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip())
        return 2
    root, build = argv
    try:
        built = {r["number"]: r["binary"] for r in course.build_table(os.path.join(build, "course", "chapters.tsv"))}
        chapters = course.chapters(root)
    except (OSError, course.CourseError) as e:
        print(f"  FAIL  {e}")
        return 1
    names, missing, errors = {}, [], 0
    for c in chapters:
        binary = built.get(c.number)
        rows = registry(os.path.join(build, "bin", binary)) if binary else None
        if rows is None:
            missing.append(c)
        else:
            names[c.number] = (binary, rows)
    unknown = []
    for path, found in sorted(uses(root).items()):
        rel = os.path.relpath(path, root)
        for number, line, name in sorted(found, key=lambda x: x[1]):
            if number in names and name not in names[number][1]:
                unknown.append(f"{rel}:{line}: row '{name}' is not in {names[number][0]} --list")
    for x in unknown:
        print(f"  FAIL  {x}")
    errors += len(unknown)
    if names:
        print(f"  {'ok  ' if not unknown else 'FAIL'}  row names outside the registries of chapters "
              f"{' '.join(sorted(names))}: {len(unknown)} unknown")
    every = set().union(*(r for _, r in names.values())) if names else set()
    every |= {name for found in uses(root).values() for _, _, name in found}
    mentions = tools_mentions(root, every)
    for x in mentions:
        print(f"  FAIL  {x}")
    print(f"  {'ok  ' if not mentions else 'FAIL'}  tools/ names no chapter and none of {len(every)} row names")
    errors += len(mentions)
    ready = " ".join(c.number for c in missing if c.status == "ready")
    wip = " ".join(c.number for c in missing if c.status == "wip")
    if ready and restricted(build):
        print(f"  note  row names of chapters {ready} not validated: their programs are not in this build "
              "(the build is restricted: STEPS_ONLY_CHAPTERS)")
    elif ready:
        print(f"  FAIL  row names of chapters {ready} not validated: their programs are missing from {build}/bin")
        errors += 1
    if wip:
        print(f"  note  row names of chapters {wip} (wip) not validated: not built (-DSTEPS_BUILD_WIP=ON builds them)")
    return 1 if errors else 0



def tools_mentions(root, rows):
    """Lines of tools/ that name a chapter (its number as a chapter, its folder) or a row of a registry.

    tools/ works for any chapter: what is particular to one lives in the chapter's folder (tools/hooks.py)."""
    chapters = course.chapters(root)
    nums = "|".join(c.number for c in chapters)
    short = "|".join(str(int(c.number)) for c in chapters)
    patterns = [re.compile(rf"\bch({nums})(?![0-9])"), re.compile(rf"\b[Cc]hapters?\s+0?({short})\b"),
                re.compile(rf"[\"']({nums})(@[^\"']*)?[\"']"), re.compile(rf"(?<![\w.:/])({nums})(@[^:\s]*)?:[A-Za-z_]"),
                re.compile("|".join(re.escape(c.folder) for c in chapters))]
    rows = set(rows) - ROLES  # a role ("yours") may also name a row: tools read roles
    row_re = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, rows), key=len, reverse=True)) + r")(?![\w-])") \
        if rows else None
    out = []
    tools = os.path.join(root, "tools")
    for f in sorted(os.listdir(tools)):
        path = os.path.join(tools, f)
        if not os.path.isfile(path) or f.endswith((".pyc", ".png")) or f == "lint_numbers_exceptions.txt":
            continue  # the lint's exceptions are a list of chapter paths by design
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for k, line in enumerate(lines, 1):
            hits = [m.group(0) for p in patterns for m in p.finditer(line)]
            hits += [f"row {m.group(1)}" for m in row_re.finditer(line)] if row_re else []
            if hits:
                out.append(f"tools/{f}:{k}: names {', '.join(sorted(set(hits)))}")
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
