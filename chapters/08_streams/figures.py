#!/usr/bin/python3
"""Chapter 08's hooks (tools/hooks.py): the results chart (one panel per problem, the pipeline's bounds as
lines), the chunk sweep (the bench_shapes runs at other --chunks, read from each run's "options") and the
pipeline timeline, drawn from a run's own event timestamps.

    build/bin/ch08_streams --timeline --variant copy_engines,serial,streams_4,stage_streams --chunks 16
    /usr/bin/python3 chapters/08_streams/timeline.py [ch08_timeline.tsv] [docs/figures/08_timeline.png]

The timestamps come from a separate --timeline run (a file, not the results
JSON): charts() redraws docs/figures/08_timeline.png from ch08_timeline.tsv
when that file is in the current directory, and draws nothing otherwise.

One panel per row of the file (in the order the program wrote them), one line
per stream (lane), one bar per operation: host-to-device copies, kernels,
device-to-host copies. A lane that holds one kind of operation only (the
three streams of stage_streams, the two of copy_engines) is labelled with it.
Two dashed lines in every panel mark the bounds: the ideal bound (the slowest
stage alone, measured when the program built the pipeline, from the file's
header) and the copy-engine bound (the copy_engines row's own panel, when the
file holds it). All panels share the time axis, so the serial row's length and the
overlapped rows' length compare directly; each panel starts at its own row's
time zero (an event in the run's primary stream). A bar starts when
its stream reached the operation (the event recorded before it completed) and
ends when the operation finished: it includes any wait for an engine that
another stream kept busy.
"""
import os
import sys
from collections import OrderedDict

TIMELINE = "ch08_timeline.tsv"  # written by ch08_streams --timeline in its current directory
COLORS = {"H2D": "#4c72b0", "kernel": "#55a868", "D2H": "#c44e52"}


ROWS = ("ideal_bound", "copy_engines", "streams_2", "streams_4", "streams_8", "stage_streams")
BOUND_COLORS = {"ideal_bound": "#2ca02c", "copy_engines": "#444444"}


def read(path):
    header, rows, bounds = [], OrderedDict(), {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# ideal_bound_ms\t"):
                bounds["ideal_bound"] = float(line.split("\t")[1])
                continue
            if line.startswith("#"):
                header.append(line[1:].strip())
                continue
            if not line:
                continue
            row, lane, chunk, op, start, end = line.split("\t")
            rows.setdefault(row, []).append((int(lane), int(chunk), op, float(start), float(end)))
    if not rows:
        sys.exit(f"{path}: no timeline rows (run ch08_streams with --timeline)")
    if "copy_engines" in rows:
        bounds["copy_engines"] = max(e for *_, e in rows["copy_engines"])
    return header, rows, bounds


def lane_label(marks, lane):
    """The lane's name: 'stream 0', or 'stream 0: H2D' when it holds one kind of operation only."""
    ops = {op for l, _c, op, *_ in marks if l == lane}
    return f"stream {lane}: {ops.pop()}" if len(ops) == 1 else f"stream {lane}"


def charts(runs, machine, out_dir, kit):
    plt = kit.plt
    written = []
    default = [r for r in runs.values() if not r.get("label")]
    if default:
        written.append(problem_panels(plt, default[0], os.path.join(out_dir, f"ch08_{machine}.png")))
    sweep = [r for r in runs.values() if "chunks" in (r.get("options") or {})
             and any(x["name"] == "stage_streams" and x.get("median_ms") for x in r["rows"])]
    if len(sweep) >= 2:
        written.append(chunk_sweep(plt, sweep, os.path.join(out_dir, f"ch08_{machine}_chunks.png")))
    elif len(runs) > 1:
        print("chapters/08_streams/figures.py: no chunk sweep chart: fewer than two runs state their chunks "
              "(\"options\") and time stage_streams")
    if os.path.isfile(TIMELINE):
        out = os.path.join(out_dir, "08_timeline.png")
        draw(plt, TIMELINE, out)
        written.append(out)
    return written


def _ms(r, name):
    row = next((x for x in r["rows"] if x["name"] == name and x.get("median_ms")), None)
    return row["median_ms"] if row else None


def problem_panels(plt, r, out):
    """One panel per problem (its own time axis); in the pipeline's panel the two bounds are lines, not bars."""
    problems = OrderedDict()
    for x in r["rows"]:
        if x.get("median_ms") and x["name"] != "yours":
            problems.setdefault(x["problem"], []).append(x)
    texts = r.get("problems") or []
    heights = [len(v) for v in problems.values()]
    fig, axes = plt.subplots(len(problems), 1, figsize=(8, 1.2 + 0.32 * sum(heights) + 0.6 * len(problems)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (p, rows) in zip(axes[:, 0], problems.items()):
        bounds = [x for x in rows if x["name"] in BOUND_COLORS]
        bars = [x for x in rows if x["name"] not in BOUND_COLORS]
        unit, scale = ("us", 1000.0) if max(x["median_ms"] for x in rows) < 5 else ("ms", 1.0)
        names = [x["name"] for x in bars][::-1]
        values = [x["median_ms"] * scale for x in bars][::-1]
        colors = ["#2a7ab0" if x["role"] == "version" else "#bbbbbb" for x in bars][::-1]
        ax.barh(names, values, color=colors)
        # the run-to-run range (min to max) of each bar
        ax.hlines(range(len(bars)), [x["min_ms"] * scale for x in bars][::-1], [x["max_ms"] * scale for x in bars][::-1],
                  color="black", linewidth=1)
        for i, v in enumerate(values):
            ax.text(v, i, f" {v:.4g}", va="center", fontsize=7)
        top = max(values + [b["median_ms"] * scale for b in bounds] + [x["max_ms"] * scale for x in bars])
        for b in bounds:
            v = b["median_ms"] * scale
            ax.axvline(v, color=BOUND_COLORS[b["name"]], linestyle="--", linewidth=1)
            left = b["name"] == "ideal_bound"
            ax.text(v, len(bars) - 0.4, f" {b['name']} {v:.4g} " if left else f" {v:.4g} {b['name']}",
                    color=BOUND_COLORS[b["name"]], fontsize=7, va="bottom", ha="right" if left else "left")
        ax.set_xlim(0, top * 1.18)
        ax.tick_params(axis="y", labelsize=7)
        ax.tick_params(axis="x", labelsize=7)
        title = texts[p].split(":")[0] if isinstance(p, int) and p < len(texts) else str(p)
        ax.set_title(f"{title} ({unit}, lower is better)", loc="left", fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(f"Chapter 08: {r['title']} on {r['gpu']['name']} (median, line: fastest to slowest run)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def chunk_sweep(plt, runs, out):
    """Pipeline time against --chunks: versions as lines, the two bounds dashed."""
    runs = sorted(runs, key=lambda r: r["options"]["chunks"])
    chunks = [r["options"]["chunks"] for r in runs]
    fig, ax = plt.subplots(figsize=(7, 3.8), dpi=110)
    for name in ROWS:
        pts = [(c, _ms(r, name)) for c, r in zip(chunks, runs) if _ms(r, name)]
        if not pts:
            continue
        style = dict(linestyle="--", color=BOUND_COLORS[name]) if name in BOUND_COLORS else dict(marker="o")
        ax.plot([c for c, _ in pts], [v for _, v in pts], label=name, linewidth=1.2, **style)
    ax.set_xscale("log", base=2)
    ax.set_xticks(chunks)
    ax.set_xticklabels([str(c) for c in chunks])
    ax.set_xlabel("--chunks (the default run and the bench_shapes runs)")
    ax.set_ylabel("ms, lower is better")
    ax.legend(fontsize=7)
    ax.set_title(f"Chapter 08: the pipeline against its chunk count on {runs[0]['gpu']['name']}", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def main():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    src = sys.argv[1] if len(sys.argv) > 1 else TIMELINE
    out = sys.argv[2] if len(sys.argv) > 2 else "docs/figures/08_timeline.png"
    draw(plt, src, out)


def draw(plt, src, out):
    header, rows, bounds = read(src)
    end = max(e for marks in rows.values() for *_, e in marks)
    heights = [max(l for l, *_ in marks) + 1 for marks in rows.values()]
    fig, axes = plt.subplots(len(rows), 1, figsize=(11, 1.0 + 0.45 * sum(heights) + 0.5 * len(rows)),
                             sharex=True, gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (row, marks) in zip(axes[:, 0], rows.items()):
        lanes = max(l for l, *_ in marks) + 1
        for lane, chunk, op, start, stop in marks:
            ax.broken_barh([(start, max(stop - start, end * 1e-4))], (lane - 0.4, 0.8),
                           facecolors=COLORS.get(op, "grey"), edgecolor="white", linewidth=0.3)
        first = min(s for *_, s, _e in marks)
        last = max(e for *_, e in marks)
        ax.set_title(f"{row}: {last - first:.2f} ms from its first operation to its last", loc="left", fontsize=9)
        for name, ms in bounds.items():
            ax.axvline(ms, color=BOUND_COLORS[name], linestyle="--", linewidth=0.9)
        ax.set_yticks(range(lanes))
        ax.set_yticklabels([lane_label(marks, i) for i in range(lanes)], fontsize=7)
        ax.set_ylim(lanes - 0.5, -0.5)
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("ms from each row's time zero, an event in its primary stream (CUDA event timestamps)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()]
    handles += [plt.Line2D([0], [0], color=BOUND_COLORS[b], linestyle="--") for b in bounds]
    fig.legend(handles, list(COLORS) + [f"{b} ({ms:.2f} ms)" for b, ms in bounds.items()], loc="upper right",
               ncol=5, fontsize=7)
    if header:
        fig.suptitle(header[0], fontsize=9, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(out, dpi=130)
    plt.close(fig)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
