"""`results.py render`: the generated parts of the lessons and docs/figures, from docs/results/*.json.

Per machine file and chapter: the lesson's results table (tables.py), its
shapes table when the lesson has one, the chapter's bar chart (charts.py)
and the chapter's own charts (its figures.py hook, hooks.py); then every
marked number (marks.py). With check, nothing is written: every block or
number that differs is one line, exit 1.
"""
import glob
import os
import re

import charts
import course
import hooks
import marks
import tables
from runs import load


def runs_by_chapter(data):
    """{chapter number: {run key: run}} of one machine file, in key order."""
    out = {}
    for k, r in data["chapters"].items():
        out.setdefault(r["chapter"], {})[k] = r
    return out


def default_shapes(runs, num):
    """The shapes table without a hook: the default run, then each labelled run under its label."""
    return [("default (default)", runs[num])] + [(r["label"], r) for k, r in runs.items() if r.get("label")]


def replace_block(text, name, body):
    pat = re.compile(rf"(<!-- results:{re.escape(name)}:begin -->\n).*?(<!-- results:{re.escape(name)}:end -->)", re.S)
    return pat.sub(lambda m: m.group(1) + body + m.group(2), text)


def render(root, check=False):
    """Writes the generated blocks (or, with check, says which differ: exit 1)."""
    files = sorted(f for f in glob.glob(os.path.join(root, "docs", "results", "*.json"))
                   if not f.endswith(".profile.json"))  # profile values: markers only
    plt = charts.pyplot()
    if plt is None and not check:
        print("results: matplotlib not found: charts in docs/figures are left as they are")
    folders = course.folders(root)
    figures = os.path.join(root, "docs", "figures")
    stale = []
    for path in files:
        data = load(path)
        slug = os.path.splitext(os.path.basename(path))[0]
        for num, runs in runs_by_chapter(data).items():
            r = runs.get(num)
            folder = folders.get(num)
            if r is None or folder is None:
                continue  # only extra shapes of this chapter on this machine, or a chapter no longer in the course
            hook = hooks.load(root, folder)
            where = f"chapters/{folder}/figures.py, {slug}"
            lesson = os.path.join(root, "chapters", folder, "README.md")
            if os.path.exists(lesson):
                text = open(lesson, encoding="utf-8").read()
                new = replace_block(text, f"{num}:{slug}", tables.markdown_table(r))
                if f"<!-- results:{num}-shapes:{slug}:begin -->" in new and len(runs) > 1:
                    shapes = (hooks.call(hook, "shapes", where, runs) if hasattr(hook, "shapes")
                              else default_shapes(runs, num))
                    if shapes and len(shapes) > 1:
                        new = replace_block(new, f"{num}-shapes:{slug}", tables.shapes_table(shapes))
                # The chart goes right after the table, once, when it can be drawn.
                figure = f"../../docs/figures/ch{num}_{slug}.png"
                end = f"<!-- results:{num}:{slug}:end -->"
                if plt and figure not in new and end in new:
                    new = new.replace(end, f"{end}\n\n![Chapter {num} on the {slug}]({figure})", 1)
                if new != text:
                    if check:
                        stale.append(os.path.relpath(lesson, root))
                    else:
                        with open(lesson, "w", encoding="utf-8") as f:
                            f.write(new)
            if plt and not check:
                os.makedirs(figures, exist_ok=True)
                charts.chart(plt, r, os.path.join(figures, f"ch{num}_{slug}.png"))
                hooks.call(hook, "charts", where, runs, slug, figures, hooks.Kit(plt, root, data))
    for x in stale:
        print(f"results: {x}: its generated results block differs from docs/results (run: tools/results.py render .)")
    problems = marks.render_numbers(root, check)
    for x in problems:
        print(x)
    if problems and check:
        print(f"results: {len(problems)} problem(s) with marked numbers "
              "(run: tools/results.py render . to rewrite them; fix the markers that cannot be resolved)")
    return 1 if stale or problems else 0


def render_for(root, path, machine):
    """One lesson's text rendered for `machine` (a learner's own GPU, ./tutorial docs): its marked numbers
    and GPU names read that machine's file, and the reference machine's results blocks show that machine's
    table. Writes nothing; the text is returned (the docs build reads it through its Markdown filter)."""
    text = open(path, encoding="utf-8").read()
    results = marks.Results(root, machine)
    if results.default == results.reference:
        return text  # the reference: the lesson as committed
    data = results.machines[results.default]
    ref = results.reference
    num = re.match(r"(\d\d)_", os.path.basename(os.path.dirname(os.path.abspath(path))))
    if num and num.group(1) not in data["chapters"]:
        return text  # the chapter did not run on that GPU: the reference's numbers, under the reference's name
    for num, runs in runs_by_chapter(data).items():
        r = runs.get(num)
        if r is not None:
            text = replace_block(text, f"{num}:{ref}", tables.markdown_table(r))
    new = marks.render_marks(results, path, path, False, [], text)
    text = text if new is None else new
    # The charts and the results file the lesson points to: that machine's,
    # where ./tutorial bench drew them.
    machine = results.default
    figures = os.path.join(root, "docs", "figures")

    def figure(m):
        theirs = m.group(1) + "_" + machine + ".png"
        return theirs if os.path.exists(os.path.join(figures, theirs)) else m.group(0)
    text = re.sub(rf"([A-Za-z0-9_]+)_{re.escape(ref)}\.png", figure, text)
    return text.replace(f"docs/results/{ref}.json", f"docs/results/{machine}.json")

