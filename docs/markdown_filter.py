#!/usr/bin/env python3
"""Doxygen's input filter for the course's Markdown (./tutorial docs).

Doxygen 1.9 reads Markdown a little differently from GitHub; this filter
gives it what GitHub shows, without changing the files:
  - the text is rendered for the learner's own GPU when ./tutorial docs
    names one (STEPS_DOCS_MACHINE; tools/results.py lesson), else as committed;
  - number, source, claim and GPU-name markers (<!--n:EXPR-->, <!--n?:EXPR-->,
    <!--src:NAME-->, <!--claim:...-->, <!--gpu-->) go: they are invisible anyway, and inside a table a marker's "|FORMAT"
    would split a cell;
  - headings lose their backticks (Doxygen prints a code span in a heading
    as "<tt>...</tt>");
  - emphasis that Doxygen does not take as emphasis becomes HTML: a bold
    span that starts or ends with code (**`x`**) and an italic span that
    starts with a quote (*"..."*) would show their asterisks;
  - a code span does not cross a line, and quotes around one (or around
    emphasis) are typographic: Doxygen 1.9 shows either as text;
  - a folded block (<details>, an exercise's hints) is passed as raw HTML,
    its "### Hint K" heading (which ./tutorial hint reads) left out;
  - a lesson (chapters/NN_topic/README.md) gets, at its end, its
    experiments log as a sub-page (so the side tree lists the lesson first,
    the log under it) and a link to the next chapter of course.tsv.
Code blocks are passed through untouched. Usage: markdown_filter.py FILE
(Doxygen's FILTER_PATTERNS; the result goes to standard output).
"""
import contextlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FENCE = re.compile(r"^[ \t]*(```|~~~)")
MARKER = re.compile(r"<!--(?:(?:n\??|src|claim[^:>]*):[^>]*|/?gpu)-->")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", re.S)
QUOTED_ITALIC = re.compile(r'(?<![*\w])\*("[^*]*?")\*(?![*\w])', re.S)
DETAILS = re.compile(r"^</?details>")
# A line that begins a new block: a list item, a table row, a quote, a heading.
BLOCK_START = re.compile(r"^[ \t]*([-*+] |\d+\. |\||>|#)")


def emphasis(line):
    """**...** and *"..."* outside code spans as <b> and <em> (in `line`:
    one block, which may span several lines)."""
    spans = []

    def keep(m):
        spans.append(m.group(0))
        return "\x00%d\x00" % (len(spans) - 1)

    masked = CODE_SPAN.sub(keep, line)
    masked = BOLD.sub(r"<b>\1</b>", masked)
    masked = QUOTED_ITALIC.sub(r"<em>\1</em>", masked)

    # Doxygen 1.9 takes no markup inside a "quoted" stretch (it shows a code
    # span there as backticks): quotes around code become typographic ones.
    quotes = [i for i, ch in enumerate(masked) if ch == '"']
    chars = list(masked)
    for a, b in zip(quotes[0::2], quotes[1::2]):
        if "\x00" in masked[a:b] or "<b>" in masked[a:b] or "<em>" in masked[a:b]:
            chars[a], chars[b] = "\u201c", "\u201d"
    masked = "".join(chars)

    def restore(m):
        # A code span that goes on to the next line is one line here: Doxygen
        # 1.9 shows such a span as text.
        return spans[int(m.group(1))].replace("\n", " ")

    return re.sub("\x00(\\d+)\x00", restore, masked)


def ready_chapters():
    """(folder, number, title) of every ready chapter, in course order."""
    out = []
    with open(os.path.join(ROOT, "course.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) == 4 and cols[2] == "ready":
                out.append((cols[1], cols[0], cols[3]))
    return out


def lesson_tail(rel):
    """What the site adds at the end of lesson `rel` (chapters/NN/README.md)."""
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] != "chapters" or parts[2] != "README.md":
        return []
    folder = parts[1]
    tail = [""]
    if os.path.isfile(os.path.join(ROOT, "chapters", folder, "EXPERIMENTS.md")):
        page = "md_chapters_" + folder + "_EXPERIMENTS"
        tail += ["The runs that chose this chapter's code: \\subpage " + page, ""]
    chapters = ready_chapters()
    folders = [c[0] for c in chapters]
    if folder in folders and folders.index(folder) + 1 < len(folders):
        nxt, number, title = chapters[folders.index(folder) + 1]
        tail += ["<hr>", "", "**Next:** [Chapter %s: %s](../%s/README.md)" % (number, title, nxt), ""]
    return tail if len(tail) > 1 else []


def main():
    path = sys.argv[1]
    rel = os.path.relpath(os.path.abspath(path), ROOT).replace(os.sep, "/")
    code = False
    out = []
    block = []  # the lines of the current paragraph, list item or table row
    skip_heading = False

    def flush():
        if block:
            out.extend(emphasis("\n".join(block)).split("\n"))
            block.clear()

    # A learner who ran ./tutorial bench reads the lessons with their own
    # GPU's numbers (tools/results.py lesson; ./tutorial docs sets the variable).
    machine = os.environ.get("STEPS_DOCS_MACHINE", "")
    if machine:
        sys.path.insert(0, os.path.join(ROOT, "tools"))
        from render import render_for  # noqa: E402  (tools/ is not a package)
        text = render_for(ROOT, path, machine)
    else:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    with contextlib.nullcontext(text.splitlines(keepends=True)) as lines:
        for line in lines:
            line = MARKER.sub("", line.rstrip("\n"))
            if FENCE.match(line):
                flush()
                code = not code
                out.append(line)
            elif code:
                out.append(line)
            elif DETAILS.match(line):
                # Doxygen 1.9 closes a <details> at the end of its paragraph:
                # the block goes through as raw HTML, and a hint's own
                # heading inside it (for ./tutorial hint) is left out.
                flush()
                out.append("\\htmlonly[block] " + line + " \\endhtmlonly")
                skip_heading = line.startswith("<details>")
                continue
            elif skip_heading and re.match(r"#+ ", line):
                skip_heading = False
                continue
            elif not line.strip():
                flush()
                out.append(line)
            else:
                if re.match(r"#+ ", line):
                    line = line.replace("`", "")
                if BLOCK_START.match(line) or (block and block[-1].lstrip().startswith("|")):
                    flush()
                block.append(line)
    flush()
    out += lesson_tail(rel)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
