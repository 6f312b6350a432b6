#!/usr/bin/env python3
"""Code excerpts in the lessons, copied from the sources so they cannot drift.

A source marks a region:

    // [snippet NAME]
    ... the lines a lesson shows ...
    // [/snippet NAME]

and a lesson asks for it (an empty block the first time):

    <!-- code:chapters/NN_topic/v3_name.cuh#NAME:begin -->
    <!-- code:chapters/NN_topic/v3_name.cuh#NAME:end -->

  snippets.py render ROOT           writes each region, dedented, into its
                                    lesson blocks (a ```cuda fence); marker
                                    lines inside a region are left out
  snippets.py render --check ROOT   changes nothing; one line per block that
                                    differs from its source or names a region
                                    that does not exist, exit 1 if any

Lessons are chapters/*/README.md and exercises/**/README.md. Standard library only.
"""
import glob
import os
import re
import sys

BLOCK = re.compile(r"(<!-- code:(?P<path>[^#\s]+)#(?P<name>[\w.-]+):begin -->\n)(?P<body>.*?)(<!-- code:(?P=path)#(?P=name):end -->)",
                   re.S)
MARK = re.compile(r"^\s*//\s*\[/?snippet\b[^\]]*\]\s*$")


def region(root, path, name):
    """The lines of region NAME of ROOT/path, dedented; None if absent."""
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        return None
    lines = open(full, encoding="utf-8").read().split("\n")
    begin = re.compile(r"^\s*//\s*\[snippet\s+" + re.escape(name) + r"\]\s*$")
    end = re.compile(r"^\s*//\s*\[/snippet\s+" + re.escape(name) + r"\]\s*$")
    out, on = [], False
    for line in lines:
        if begin.match(line):
            on = True
            continue
        if end.match(line):
            if not on:
                return None
            break
        if on and not MARK.match(line):
            out.append(line)
    else:
        if on:
            return None  # never closed
    if not on:
        return None
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    # Dedent by the code's indentation; preprocessor lines (#pragma unroll)
    # sit in column 0 and stay there.
    code = [l for l in out if l.strip() and not l.startswith("#")]
    indent = min((len(l) - len(l.lstrip()) for l in code), default=0)
    lang = "cuda" if path.endswith((".cu", ".cuh")) else "cpp"
    body = "\n".join(l if l.startswith("#") else l[indent:] for l in out)
    return "```" + lang + "\n" + body + "\n```\n"


def lessons(root):
    return sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md")) +
                  glob.glob(os.path.join(root, "exercises", "**", "README.md"), recursive=True))


def render(root, check):
    problems = 0
    for lesson in lessons(root):
        text = open(lesson, encoding="utf-8").read()

        def fill(m):
            nonlocal problems
            want = region(root, m.group("path"), m.group("name"))
            line = text.count("\n", 0, m.start()) + 1
            where = f"{os.path.relpath(lesson, root)}:{line}"
            if want is None:
                print(f"{where}: no region '[snippet {m.group('name')}]' in {m.group('path')}")
                problems += 1
                return m.group(0)
            if check and m.group("body") != want:
                print(f"{where}: the excerpt of {m.group('path')}#{m.group('name')} differs from the source "
                      f"(run: python3 tools/snippets.py render .)")
                problems += 1
            return m.group(1) + want + m.group(5)

        new = BLOCK.sub(fill, text)
        if not check and new != text:
            with open(lesson, "w", encoding="utf-8") as f:
                f.write(new)
    return 1 if problems else 0


def main(argv):
    args = [a for a in argv if a != "--check"]
    if len(args) != 2 or args[0] != "render":
        print(__doc__.strip().split("\n\n")[0])
        print("usage: snippets.py render [--check] ROOT")
        return 2
    return render(args[1], "--check" in argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
