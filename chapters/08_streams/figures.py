#!/usr/bin/python3
"""Chapter 08's hook (tools/hooks.py): the pipeline timeline, drawn from a run's own event timestamps.

    build/bin/ch08_streams --timeline --variant copy_engines,serial,streams_4,stage_streams --chunks 16
    /usr/bin/python3 chapters/08_streams/timeline.py [ch08_timeline.tsv] [docs/figures/08_timeline.png]

The timestamps come from a separate --timeline run (a file, not the results
JSON): charts() redraws docs/figures/08_timeline.png from ch08_timeline.tsv
when that file is in the current directory, and draws nothing otherwise.

One panel per row of the file (in the order the program wrote them), one line
per stream (lane), one bar per operation: host-to-device copies, kernels,
device-to-host copies. A lane that holds one kind of operation only (the
three streams of stage_streams, the two of copy_engines) is labelled with it.
All panels share the time axis, so the serial row's length and the
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


def read(path):
    header, rows = [], OrderedDict()
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                header.append(line[1:].strip())
                continue
            if not line:
                continue
            row, lane, chunk, op, start, end = line.split("\t")
            rows.setdefault(row, []).append((int(lane), int(chunk), op, float(start), float(end)))
    if not rows:
        sys.exit(f"{path}: no timeline rows (run ch08_streams with --timeline)")
    return header, rows


def lane_label(marks, lane):
    """The lane's name: 'stream 0', or 'stream 0: H2D' when it holds one kind of operation only."""
    ops = {op for l, _c, op, *_ in marks if l == lane}
    return f"stream {lane}: {ops.pop()}" if len(ops) == 1 else f"stream {lane}"


def charts(runs, machine, out_dir, plt):
    if not os.path.isfile(TIMELINE):
        return []
    out = os.path.join(out_dir, "08_timeline.png")
    draw(plt, TIMELINE, out)
    return [out]


def main():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    src = sys.argv[1] if len(sys.argv) > 1 else TIMELINE
    out = sys.argv[2] if len(sys.argv) > 2 else "docs/figures/08_timeline.png"
    draw(plt, src, out)


def draw(plt, src, out):
    header, rows = read(src)
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
        ax.set_yticks(range(lanes))
        ax.set_yticklabels([lane_label(marks, i) for i in range(lanes)], fontsize=7)
        ax.set_ylim(lanes - 0.5, -0.5)
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("ms from each row's time zero, an event in its primary stream (CUDA event timestamps)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()]
    fig.legend(handles, list(COLORS), loc="upper right", ncol=3, fontsize=8)
    if header:
        fig.suptitle(header[0], fontsize=9, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(out, dpi=130)
    plt.close(fig)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
