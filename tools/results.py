#!/usr/bin/env python3
"""Results of the chapter programs: merge, goal table, lesson tables, charts.

  results.py merge --dir docs/results build/results/*.json
      Merges per-chapter JSON files (written by `chNN_* --json FILE`) into one
      file per machine, docs/results/<machine>.json, keeping chapters that
      were not re-run. The machine is the GPU's short name, with the GPU
      count in front when a run used several ("2xH200"), so results of a
      2-GPU machine are stored apart from the 1-GPU ones.
  results.py goals docs/results/H200.json
      Prints the goal table: every goal of every chapter, a ratio of two rows
      measured in the same run, against its threshold. Exits 1 if one is not met.
  results.py label FILE TEXT
      Marks one program run as an extra problem shape of its chapter (from the
      chapter's bench_shapes file): merged under "NN@TEXT", shown in the goal
      table and in the lesson's shapes table, not in its main table.
  results.py render ROOT
      Regenerates, from docs/results/*.json, the measured-results tables in the
      lessons (between <!-- results:NN:<machine>:begin --> and
      <!-- results:NN:<machine>:end -->) and, when matplotlib is installed, the
      charts in docs/figures/.

The JSON says what each number is (schema 2): the metric and its unit, each
row's role (baseline, version, reference, ...), the chapter's peak with its
label, the goals with their numerator and denominator rows. Nothing here
guesses. Chapters are found through course.tsv, the course manifest.
Standard library only, except matplotlib for charts.
"""
import argparse
import glob
import json
import os
import re
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def course(root):
    """{number: folder} from course.tsv."""
    out = {}
    with open(os.path.join(root, "course.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            number, folder, _status, _title = line.rstrip("\n").split("\t")
            out[number] = folder
    return out


def key(r):
    return r["chapter"] + ("@" + r["label"] if r.get("label") else "")


def machine(r):
    """The results file a run belongs to: "H200", or "2xH200" for a 2-GPU run."""
    name = re.sub(r"^NVIDIA ", "", r["gpu"]["name"])
    slug = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    count = r.get("gpu_count", 1)
    return (f"{count}x" if count > 1 else "") + slug


def label(path, text):
    r = load(path)
    r["label"] = text
    with open(path, "w", encoding="utf-8") as f:
        json.dump(r, f, indent=2)
        f.write("\n")


def merge(out_dir, inputs):
    by_machine = {}
    for path in inputs:
        r = load(path)
        by_machine.setdefault(machine(r), []).append(r)
    if not by_machine:
        print("results: no result files to merge (did every chapter skip?)")
        return 1
    for name, runs in by_machine.items():
        out = os.path.join(out_dir, name + ".json")
        merged = load(out) if os.path.exists(out) else {"gpu": None, "chapters": {}}
        for r in runs:
            merged["gpu"] = r["gpu"]
            merged["gpu_count"] = r.get("gpu_count", 1)
            merged["chapters"][key(r)] = r
        merged["chapters"] = dict(sorted(merged["chapters"].items()))
        os.makedirs(out_dir, exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            json.dump(merged, f, indent=2)
            f.write("\n")
        print(f"results: wrote {out} ({len(merged['chapters'])} chapters)")
    return 0


def goal_list(r):
    """The goals of a run (schema 2), or the one goal of a schema-1 run."""
    if "goals" in r:
        return r["goals"]
    if not r.get("goal"):
        return []
    return [{"numerator": "best", "numerator_row": r.get("best"), "denominator": r.get("baseline"),
             "threshold": r["goal"], "text": r.get("goal_text", ""), "ratio": r.get("best_ratio"),
             "met": bool(r.get("goal_met"))}]


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def goals(path):
    data = load(path)
    count = data.get("gpu_count", 1)
    gpus = (f"{count} x " if count > 1 else "") + data["gpu"]["name"]
    print(f"\nGoal table, {gpus} (ratios measured in the same run):")
    rows = [("chapter", "row", "ratio", "of", "goal", "met")]
    all_met = True
    for num, r in data["chapters"].items():
        for g in goal_list(r):
            ratio = fmt(g.get("ratio")) + "x"
            if r.get("label"):  # an extra shape: its ratio, for information; the goal is the default problem's
                rows.append((f"{r['chapter']} {r['title']}, {r['label']}", g.get("numerator_row") or "-", ratio,
                             g.get("denominator") or "-", "(other shape)", "-"))
                continue
            met = bool(g.get("met"))
            all_met &= met
            rows.append((f"{num} {r['title']}", g.get("numerator_row") or "-", ratio, g.get("denominator") or "-",
                         g.get("text", ""), "yes" if met else "NO"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            print("  " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return 0 if all_met else 1


def peak_of(r):
    """The chapter's peak as the run states it ({label, value, how}), or None."""
    p = r.get("peak")
    return p if p and p.get("value") else None


def markdown_table(r):
    unit = r["metric"]
    base = r.get("baseline") or "baseline"
    peak = peak_of(r)
    digits = 0 if unit == "GB/s" else 1 if unit == "TFLOP/s" else 2
    head = f"| version | median ms | {unit} | % of {base} |" + (f" % of {peak['label']} peak |" if peak else "")
    head += " verified |\n|---|---:|---:|---:|" + ("---:|" if peak else "") + "---|\n"
    lines = []
    for row in r["rows"]:
        if row["role"] in ("mistake", "yours"):
            continue
        ratio = row.get("ratio_to_baseline")
        name = row["name"] + (" (reference)" if row["role"] == "reference" else "")
        line = (f"| {name} | {fmt(row.get('median_ms'), 4)} | {fmt(row.get('value'), digits)}"
                f" | {fmt(None if ratio is None else 100 * ratio, 1)} |")
        if peak:
            line += f" {fmt(row.get('pct_of_peak'), 1)} |"
        lines.append(line + f" {row['verified']} |")
    if peak:
        lines.append(f"| {peak['label']} peak | - | {fmt(peak['value'], digits)} | - | 100.0 | - |")
    met = [g for g in goal_list(r)]
    goal_text = "; ".join(f"{g.get('numerator_row')} {fmt(g.get('ratio'))}x {g.get('denominator')} "
                          f"(goal {g.get('text')}: {'met' if g.get('met') else 'not met'})" for g in met)
    problem = "; ".join(r.get("problems") or [r.get("problem") or ""])
    note = (f"\n*{r['gpu']['name']}, `{r['binary']}` defaults ({problem}), {r['date'][:10]}; "
            f"median of {r['iters']} runs." + (f" {goal_text}." if goal_text else "") + "*\n")
    if peak:
        note += f"\n*{peak['label']} peak: {peak['how']}.*\n"
    return head + "\n".join(lines) + "\n" + note


def shapes_table(runs):
    """One row per problem shape: the baseline, the best version and its ratio."""
    unit = runs[0]["metric"]
    base = runs[0].get("baseline") or "baseline"
    out = f"| problem | {base} {unit} | best version | its {unit} | ratio |\n|---|---:|---|---:|---:|\n"
    for r in runs:
        rows = {x["name"]: x for x in r["rows"]}
        b = rows.get(r.get("baseline") or "", {})
        best = rows.get(r.get("best") or "", {})
        shape = re.search(r"M x N x K = ([0-9]+ x [0-9]+ x [0-9]+)", r["problem"])
        name = r.get("label") or (shape.group(1) if shape else "default") + " (default)"
        out += (f"| {name} | {fmt(b.get('value'), 1)} | "
                f"{r.get('best') or '-'} | {fmt(best.get('value'), 1)} | {fmt(r.get('best_ratio'))}x |\n")
    r = runs[0]
    return out + f"\n*{r['gpu']['name']}, `{r['binary']}`, {r['date'][:10]}; all rows from one `./tutorial bench`.*\n"


def chart(r, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [x for x in r["rows"] if x["role"] in ("baseline", "version", "reference") and x.get("value") is not None]
    names = [x["name"] for x in rows]
    values = [x["value"] for x in rows]
    colors = ["#888888" if x["role"] == "baseline" else "#bbbbbb" if x["role"] == "reference" else "#2a7ab0"
              for x in rows]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.4), dpi=110)
    ax.barh(names[::-1], values[::-1], color=colors[::-1])
    for i, v in enumerate(values[::-1]):
        ax.text(v, i, f" {v:.0f}", va="center", fontsize=9)
    peak = peak_of(r)
    if peak and r["metric"] != "us":
        ax.axvline(peak["value"], color="#c0392b", linestyle="--", linewidth=1)
        ax.text(peak["value"], len(rows) - 0.5, f" {peak['label']} peak", color="#c0392b", fontsize=8, va="bottom",
                ha="right")
        ax.set_xlim(0, max([peak["value"]] + values) * 1.12)
    else:
        ax.set_xlim(0, max(values) * 1.15)
    ax.set_xlabel(r["metric"])
    ax.set_title(f"Chapter {r['chapter']}: {r['title']} on {r['gpu']['name']}", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(out_png)
    plt.close(fig)


def render(root, check=False):
    """Writes the generated blocks (or, with check, says which differ: exit 1)."""
    files = sorted(glob.glob(os.path.join(root, "docs", "results", "*.json")))
    try:
        import matplotlib  # noqa: F401
        have_mpl = True
    except ImportError:
        have_mpl = False
        if not check:
            print("results: matplotlib not found: charts in docs/figures are left as they are")
    chapters = course(root)
    stale = []
    for path in files:
        data = load(path)
        slug = os.path.splitext(os.path.basename(path))[0]
        for num, r in data["chapters"].items():
            if r.get("label"):
                continue  # extra shapes: in the shapes table below
            shapes = [x for k, x in data["chapters"].items() if x.get("label") and x["chapter"] == num]
            folder = chapters.get(num)
            lesson = [os.path.join(root, "chapters", folder, "README.md")] if folder else []
            lesson = [x for x in lesson if os.path.exists(x)]
            if lesson:
                text = open(lesson[0], encoding="utf-8").read()
                pat = re.compile(rf"(<!-- results:{num}:{slug}:begin -->\n).*?(<!-- results:{num}:{slug}:end -->)", re.S)
                new = pat.sub(lambda m: m.group(1) + markdown_table(r) + m.group(2), text)
                if shapes:
                    pat = re.compile(rf"(<!-- results:{num}-shapes:{slug}:begin -->\n).*?(<!-- results:{num}-shapes:{slug}:end -->)", re.S)
                    new = pat.sub(lambda m: m.group(1) + shapes_table([r] + shapes) + m.group(2), new)
                # The chart goes right after the table, once, when it can be drawn.
                figure = f"../../docs/figures/ch{num}_{slug}.png"
                end = f"<!-- results:{num}:{slug}:end -->"
                if have_mpl and figure not in new and end in new:
                    new = new.replace(end, f"{end}\n\n![Chapter {num} on the {slug}]({figure})", 1)
                if new != text:
                    if check:
                        stale.append(os.path.relpath(lesson[0], root))
                    else:
                        with open(lesson[0], "w", encoding="utf-8") as f:
                            f.write(new)
            if have_mpl and not check:
                os.makedirs(os.path.join(root, "docs", "figures"), exist_ok=True)
                chart(r, os.path.join(root, "docs", "figures", f"ch{num}_{slug}.png"))
    for x in stale:
        print(f"results: {x}: its generated results block differs from docs/results (run: tools/results.py render .)")
    return 1 if stale else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--dir", required=True)
    m.add_argument("inputs", nargs="+")
    g = sub.add_parser("goals")
    g.add_argument("file")
    lb = sub.add_parser("label")
    lb.add_argument("file")
    lb.add_argument("text")
    mc = sub.add_parser("machines")
    mc.add_argument("inputs", nargs="+")
    r = sub.add_parser("render")
    r.add_argument("root")
    r.add_argument("--check", action="store_true", help="only check that the lessons are up to date")
    a = p.parse_args()
    if a.cmd == "label":
        label(a.file, a.text)
        return 0
    if a.cmd == "merge":
        return merge(a.dir, a.inputs)
    if a.cmd == "machines":
        print("\n".join(sorted({machine(load(x)) for x in a.inputs})))
        return 0
    if a.cmd == "goals":
        return goals(a.file)
    return render(a.root, a.check)


if __name__ == "__main__":
    sys.exit(main())
