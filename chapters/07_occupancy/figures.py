"""Chapter 07's charts: occupancy against speed, one panel per problem.

tools/results.py render calls charts(runs, machine, out_dir, kit) with this
chapter's runs on one machine (the run key "07" is the default problem set).
Everything comes from the results JSON: each row's theoretical occupancy
(extra "occ %"), its GB/s, its local memory (extra "local B", spills) and,
for the chase, the most loads it can keep in flight per SM (extra "loads in
flight/SM"); the chase's loads per run are (hw_bytes - bytes) / 24, from the
row's work (8 useful and 32 moved bytes per load, 4 per chain in both).
"""
import os


def _rows(run, prefix):
    return [x for x in run["rows"]
            if x["name"].startswith(prefix) and x.get("value") and "occ %" in (x.get("extras") or {})]


def _scatter(ax, rows, y, label_of=lambda x: x["name"]):
    for x in rows:
        e = x["extras"]
        spills = e.get("local B", 0) > 0
        ax.scatter(e["occ %"], y(x), s=40, color="#c0392b" if spills else "#2a7ab0",
                   marker="x" if spills else "o")
        ax.annotate(label_of(x), (e["occ %"], y(x)), fontsize=7, xytext=(4, 3), textcoords="offset points")


def charts(runs, machine, out_dir, kit):
    plt = kit.plt
    run = runs.get("07")
    if not run:
        return []
    scale = _rows(run, "scale_")
    chase = [x for x in _rows(run, "chase_") if x.get("hw_bytes")]
    if not scale or not chase:
        return []
    with_latency = all("loads in flight/SM" in x["extras"] for x in chase)
    panels = 3 if with_latency else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.4), dpi=110)
    sms = run["gpu"]["sms"]

    ax = axes[0]
    _scatter(ax, scale, lambda x: x["value"])
    base = [x for x in run["rows"] if x["name"] == run.get("baseline") and x.get("value")]
    if base:
        ax.axhline(base[0]["value"], color="#888", linestyle="--", linewidth=1)
        ax.text(1, base[0]["value"], f" {base[0]['name']}", fontsize=8, color="#555", va="bottom")
    ax.set_xlabel("theoretical occupancy (%)")
    ax.set_ylabel("GB/s")
    ax.set_title("y = a x (bandwidth-bound)", fontsize=10)

    ax = axes[1]
    _scatter(ax, chase, lambda x: x["value"])
    ax.set_xlabel("theoretical occupancy (%)")
    ax.set_ylabel("useful GB/s (8 B per load)")
    ax.set_title("pointer chase (latency-bound)", fontsize=10)

    if with_latency:
        ax = axes[2]

        def latency_ns(x):
            loads = (x["hw_bytes"] - x["bytes"]) / 24
            in_flight = x["extras"]["loads in flight/SM"] * sms
            return in_flight / (loads / (x["median_ms"] * 1e-3)) * 1e9

        _scatter(ax, chase, latency_ns)
        ax.set_xlabel("theoretical occupancy (%)")
        ax.set_ylabel("ns per load (Little's law: in flight / loads per s)")
        ax.set_title("pointer chase: latency of one load", fontsize=10)

    for ax in axes:
        ax.set_xlim(0, 110)
        ax.set_ylim(bottom=0)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(f"Chapter 07 on the {run['gpu']['name']}: occupancy against speed "
                 "(x: rows with spills)", fontsize=10)
    fig.tight_layout()
    out = os.path.join(out_dir, f"ch07_occupancy_{machine}.png")
    fig.savefig(out)
    plt.close(fig)
    return [out]
