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
