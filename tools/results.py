#!/usr/bin/env python3
"""Results of the chapter programs: merge, goal table, lesson tables, charts.

  results.py merge --out docs/results/H200.json build/results/*.json
      Merges per-chapter JSON files (written by `chNN_* --json FILE`) into one
      file per GPU, keeping chapters that were not re-run.
  results.py goals docs/results/H200.json
      Prints the goal table: each chapter's best version as a ratio of the
      vendor baseline measured in the same run, against the chapter's goal.
      Exits 1 if a goal is not met.
  results.py label FILE TEXT
      Marks one program run as an extra problem shape of its chapter (from the
      chapter's bench_shapes file): merged under "NN@TEXT", shown in the goal
      table and in the lesson's shapes table, not in its main table.
  results.py render ROOT
      Regenerates, from docs/results/*.json, the measured-results tables in the
      lessons (between <!-- results:NN:begin --> and <!-- results:NN:end -->)
      and, when matplotlib is installed, the charts in docs/figures/.

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


def key(r):
    return r["chapter"] + ("@" + r["label"] if r.get("label") else "")


def label(path, text):
    r = load(path)
    r["label"] = text
    with open(path, "w", encoding="utf-8") as f:
        json.dump(r, f, indent=2)
        f.write("\n")


def merge(out, inputs):
    merged = load(out) if os.path.exists(out) else {"gpu": None, "chapters": {}}
    for path in inputs:
        r = load(path)
        merged["gpu"] = r["gpu"]
        merged["chapters"][key(r)] = r
    merged["chapters"] = dict(sorted(merged["chapters"].items()))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(merged, f, indent=2)
        f.write("\n")
    print(f"results: wrote {out} ({len(merged['chapters'])} chapters)")


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def goals(path):
    data = load(path)
    print(f"\nGoal table, {data['gpu']['name']} (ratios measured in the same run):")
    rows = [("chapter", "best version", "ratio", "of", "goal", "met")]
    all_met = True
    for num, r in data["chapters"].items():
        if not r.get("goal"):
            continue
        if r.get("label"):  # an extra shape: its ratio, for information; the goal is the default problem's
            rows.append((f"{r['chapter']} {r['title']}, {r['label']}", r.get("best") or "-",
                         fmt(r.get("best_ratio")) + "x", r.get("baseline") or "-", "(other shape)", "-"))
            continue
        met = bool(r.get("goal_met"))
        all_met &= met
        rows.append((f"{num} {r['title']}", r.get("best") or "-", fmt(r.get("best_ratio")) + "x",
                     r.get("baseline") or "-", r.get("goal_text", ""), "yes" if met else "NO"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            print("  " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return 0 if all_met else 1


def dram_bound(r):
    """True for chapters whose GB/s are DRAM bytes (the DRAM peak applies);
    false for the shared-memory chapter, whose numbers exceed it."""
    if r["metric"] != "GB/s":
        return False
    values = [x["value"] for x in r["rows"] if x.get("value") is not None]
    return not values or max(values) <= 1.5 * r["gpu"]["peak_bandwidth_gbs"]


def markdown_table(r):
    unit = r["metric"]
    base = r.get("baseline") or "baseline"
    head = f"| version | median ms | {unit} | % of {base} | verified |\n|---|---:|---:|---:|---|\n"
    lines = []
    for row in r["rows"]:
        if row["role"] == "mistake" or row["role"] == "yours":
            continue
        ratio = row.get("ratio_to_baseline")
        lines.append(f"| {row['name']} | {fmt(row.get('median_ms'), 4)} | {fmt(row.get('value'), 0 if unit == 'GB/s' else 1)}"
                     f" | {fmt(None if ratio is None else 100 * ratio, 1)} | {row['verified']} |")
    if dram_bound(r):
        peak = r["gpu"]["peak_bandwidth_gbs"]
        lines.append(f"| theoretical peak (DRAM) | - | {peak:.0f} | - | - |")
    note = (f"\n*{r['gpu']['name']}, `{r['binary']}` defaults ({r['problem']}), {r['date'][:10]}; "
            f"median of {r['iters']} runs. Best: **{r.get('best')}** at {fmt(r.get('best_ratio'))}x {base} "
            f"(goal {r.get('goal_text')}: {'met' if r.get('goal_met') else 'not met'}).*\n")
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

    rows = [x for x in r["rows"] if x["role"] in ("baseline", "version") and x.get("value") is not None]
    names = [x["name"] for x in rows]
    values = [x["value"] for x in rows]
    colors = ["#888888" if x["role"] == "baseline" else "#2a7ab0" for x in rows]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.4), dpi=110)
    ax.barh(names[::-1], values[::-1], color=colors[::-1])
    for i, v in enumerate(values[::-1]):
        ax.text(v, i, f" {v:.0f}", va="center", fontsize=9)
    if dram_bound(r):
        peak = r["gpu"]["peak_bandwidth_gbs"]
        ax.axvline(peak, color="#c0392b", linestyle="--", linewidth=1)
        ax.text(peak, len(rows) - 0.5, " theoretical DRAM peak", color="#c0392b", fontsize=8, va="bottom", ha="right")
        ax.set_xlim(0, max([peak] + values) * 1.12)
    else:
        ax.set_xlim(0, max(values) * 1.15)
    ax.set_xlabel(r["metric"])
    ax.set_title(f"Chapter {r['chapter']}: {r['title']} on {r['gpu']['name']}", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(out_png)
    plt.close(fig)


def render(root):
    files = sorted(glob.glob(os.path.join(root, "docs", "results", "*.json")))
    try:
        import matplotlib  # noqa: F401
        have_mpl = True
    except ImportError:
        have_mpl = False
        print("results: matplotlib not found: charts in docs/figures are left as they are")
    for path in files:
        data = load(path)
        slug = os.path.splitext(os.path.basename(path))[0]
        for num, r in data["chapters"].items():
            if r.get("label"):
                continue  # extra shapes: in the shapes table below
            shapes = [x for k, x in data["chapters"].items() if x.get("label") and x["chapter"] == num]
            lesson = glob.glob(os.path.join(root, "chapters", f"{num}_*", "README.md"))
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
                    with open(lesson[0], "w", encoding="utf-8") as f:
                        f.write(new)
            if have_mpl:
                os.makedirs(os.path.join(root, "docs", "figures"), exist_ok=True)
                chart(r, os.path.join(root, "docs", "figures", f"ch{num}_{slug}.png"))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--out", required=True)
    m.add_argument("inputs", nargs="+")
    g = sub.add_parser("goals")
    g.add_argument("file")
    lb = sub.add_parser("label")
    lb.add_argument("file")
    lb.add_argument("text")
    r = sub.add_parser("render")
    r.add_argument("root")
    a = p.parse_args()
    if a.cmd == "label":
        label(a.file, a.text)
        return 0
    if a.cmd == "merge":
        merge(a.out, a.inputs)
        return 0
    if a.cmd == "goals":
        return goals(a.file)
    return render(a.root)


if __name__ == "__main__":
    sys.exit(main())
