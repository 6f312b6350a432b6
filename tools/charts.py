"""The charts of docs/figures that every chapter gets: one bar per row of its
default run, the chapter's peak as a line. A chapter's own charts live in its
folder (tools/hooks.py); save_chart and save_diagram are the endings their
hooks share. Needs matplotlib.
"""
import os

from runs import peak_of


def pyplot():
    """matplotlib.pyplot with the Agg backend, or None when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_chart(plt, fig, ax, out_png):
    """The charts' common ending: no top or right frame, tight, saved, closed."""
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(out_png)
    plt.close(fig)


def save_diagram(plt, fig, out_dir, name):
    """A diagram's ending (a chapter's diagrams() hook): tight, saved as out_dir/name at 110 dpi, closed; its path."""
    out = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def chart(plt, r, out_png):
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
    save_chart(plt, fig, ax, out_png)


def roof_at(intensity, memory_gbs, compute_tflops):
    """The roofline's bound at an arithmetic intensity (FLOP/byte): min(compute, bandwidth x intensity), TFLOP/s."""
    return min(compute_tflops, memory_gbs * intensity / 1000.0)


def point(row, label=None):
    """(label, intensity in FLOP/byte, achieved TFLOP/s) of a result row with flops, bytes and a median time;
    None when the row lacks one of them (not run, skipped, no work counted)."""
    flops, nbytes, ms = row.get("flops"), row.get("bytes"), row.get("median_ms")
    if not flops or not nbytes or not ms:
        return None
    return (label or row["name"], flops / nbytes, flops / (ms * 1e9))


def roofline(plt, out_png, title, points, memory, computes, note=None):
    """A roofline chart: x the arithmetic intensity (FLOP per byte), y TFLOP/s, both logarithmic.

    points: [(label, intensity, tflops, style)], style a dict of matplotlib marker options
            (a "color", or "facecolors" and "edgecolors"; "s" the size); points
            with the same label share one legend entry.
    memory: (GB/s, label), the slanted roof (bandwidth x intensity).
    computes: [(TFLOP/s, label)], the flat roofs, highest first; the first one's ridge
              point (intensity = compute / bandwidth) is marked.
    Returns out_png."""
    bw, bw_label = memory
    top, top_label = computes[0]
    ridge = top * 1000.0 / bw
    xs = [p[1] for p in points] + [ridge]
    lo, hi = min(xs) / 16, max(xs) * 8
    fig, ax = plt.subplots(figsize=(9.5, 5.4), dpi=110)
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    left = [x for x in grid if x < ridge] + [ridge]
    right = [ridge] + [x for x in grid if x > ridge]
    ax.plot(left, [x * bw / 1000.0 for x in left], color="#c0392b", linewidth=1.6,
            label=f"{bw_label}: {bw:.0f} GB/s")
    ax.plot(right, [top] * len(right), color="#7b241c", linewidth=1.6, label=f"{top_label}: {top:.1f} TFLOP/s")
    for value, label in computes[1:]:
        flat = [value * 1000.0 / bw] + [x for x in grid if x * bw / 1000.0 > value]
        ax.plot(flat, [value] * len(flat), color="#7b241c", linewidth=1, linestyle="--",
                label=f"{label}: {value:.1f} TFLOP/s")
    ax.axvline(ridge, color="#888", linestyle=":", linewidth=1)
    ax.plot([ridge], [top], marker="o", color="#c0392b", markersize=5)
    ax.text(ridge * 1.12, top * 1.15, f"ridge point: {ridge:.0f} FLOP/byte", fontsize=8, color="#555", va="bottom")
    seen = set()
    for label, x, y, style in points:
        ax.scatter([x], [y], s=style.get("s", 36), zorder=3, label=None if label in seen else label,
                   **{k: v for k, v in style.items() if k != "s"})
        seen.add(label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ys = [p[2] for p in points] + [top]
    ax.set_ylim(min(ys) / 3, top * 2.5)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of the problem's DRAM traffic, log scale)")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    if note:
        fig.text(0.01, 0.01, note, fontsize=7, color="#555", va="bottom")
    save_chart(plt, fig, ax, out_png)
    return out_png


ROLE_STYLE = {"baseline": dict(marker="s", color="#444444"), "reference": dict(marker="D", color="#999999")}


def roofline_points(plt, rows, label_of=lambda x: x["name"]):
    """Roofline points of a run's verified rows that count flops and bytes: versions in order, coloured along
    a sequential map (circles), the baseline a dark square, references grey diamonds."""
    rows = [x for x in rows if x.get("verified") == "yes" and x["role"] in ("version", "baseline", "reference")]
    versions = [x for x in rows if x["role"] == "version"]
    cmap = plt.get_cmap("viridis")
    out = []
    for x in rows:
        p = point(x, label_of(x))
        if p is None:
            continue
        if x["role"] == "version":
            k = versions.index(x)
            style = dict(marker="o", color=cmap(0.9 * k / max(1, len(versions) - 1)))
        else:
            style = dict(ROLE_STYLE[x["role"]])
        out.append(p + (style,))
    return out


def peak_roof(run, unit="TFLOP/s"):
    """(value, label) of a run's own peak when it is in `unit`, else None: a roofline's fallback compute roof."""
    peak = run.get("peak") or {}
    if peak.get("unit") != unit or not peak.get("value"):
        return None
    return (peak["value"], f"{peak['label']} peak (chapter {run['chapter']}'s, {run['gpu'].get('run_sm_clock_mhz', '?')} MHz)")
