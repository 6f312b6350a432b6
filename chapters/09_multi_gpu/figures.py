"""Chapter 09's hook (tools/hooks.py): the results chart, one panel per metric.

The chapter's rows measure three different things in GB/s: bytes over the
link between two GPUs (the peer copies), DRAM bytes of the stencil's cells
(one GPU, split across GPUs, and split over bands of one GPU), and the bus
bandwidth of an all-reduce. One axis for all of them would compare what is
not comparable, so each problem of the run (the row's "problem" field) gets
its own panel, named by the metric its rows measure, and the title names the GPU count of the run ("gpu_count").
"""
from collections import OrderedDict

ROWS = ()  # reads no row by name: panels follow the rows' problems

UNITS = ("link GB/s (bytes copied between the GPUs per second)",
         "stencil GB/s (cells read and written per second, DRAM bytes)",
         "bus bandwidth GB/s (algbw x 2 (G - 1) / G)")


def _unit(rows):
    """The panel's metric, from its rows' names (this chapter's own)."""
    names = [x["name"] for x in rows]
    if any(n.startswith("stencil") for n in names):
        return UNITS[1]
    if any(n.endswith("allreduce") for n in names):
        return UNITS[2]
    if any(n.startswith(("memcpy_peer", "peer_")) for n in names):
        return UNITS[0]
    return "GB/s"


def charts(runs, machine, out_dir, kit):
    plt = kit.plt
    import os
    r = next((x for x in runs.values() if not x.get("label")), None)
    if r is None:
        return []
    problems = OrderedDict()
    for x in r["rows"]:
        if x.get("value") and x["role"] != "yours":
            problems.setdefault(x["problem"], []).append(x)
    if not problems:
        return []
    heights = [len(v) for v in problems.values()]
    fig, axes = plt.subplots(len(problems), 1, figsize=(7.5, 1.3 + 0.36 * sum(heights) + 0.7 * len(problems)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (p, rows) in zip(axes[:, 0], problems.items()):
        names = [x["name"] for x in rows][::-1]
        values = [x["value"] for x in rows][::-1]
        colors = ["#888888" if x["role"] == "baseline" else "#bbbbbb" if x["role"] == "reference" else "#2a7ab0"
                  for x in rows][::-1]
        ax.barh(names, values, color=colors)
        for i, v in enumerate(values):
            ax.text(v, i, f" {v:.0f}", va="center", fontsize=7)
        ax.set_xlim(0, max(values) * 1.15)
        ax.tick_params(labelsize=7)
        ax.set_title(_unit(rows), loc="left", fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    count = r.get("gpu_count") or len(r.get("gpus") or [1])
    name = r["gpu"]["name"]
    who = f"{count} x {name}" if count > 1 else f"one {name}"
    fig.suptitle(f"Chapter 09: {r['title']} on {who} (median, higher is better)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    out = os.path.join(out_dir, f"ch09_{machine}.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return [out]
