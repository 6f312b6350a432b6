"""Chapter 01's hooks (tools/hooks.py): the Little's-law chart of the --littles-law run, and the
bandwidth every roofline's memory roof uses.

GB/s against the bytes in flight per SM (the read sweep's rows and their
extras), with the line latency x bandwidth predicts from the pointer chase
measured in the same run, and the DRAM peak.

memory_roof: the achievable bandwidth of a machine is what cudaMemcpy moved
(reads plus writes) in this chapter's default run of the same results file.
"""

ROWS = ("pointer_chase", "memcpy")  # the latency of one load (dependent loads); the copy bandwidth
COPY = ROWS[1]


def memory_roof(machine_runs):
    """(GB/s, label) of the memcpy row in the default run of this chapter on that machine, or None."""
    run = machine_runs.get("01") or {}
    row = next((x for x in run.get("rows", []) if x["name"] == COPY and x.get("value")), None)
    return (row["value"], "memory roof: cudaMemcpy, measured") if row else None


def _latency_ns(r):
    chase = [x for x in r["rows"] if x["name"] == ROWS[0] and x.get("median_ms")]
    loads = (chase[0].get("extras") or {}).get("chase loads/run") if chase else None
    return chase[0]["median_ms"] * 1e6 / loads if loads else None


def charts(runs, machine, out_dir, kit):
    plt = kit.plt
    out = []
    for r in runs.values():
        points = [x for x in r["rows"] if "KiB in flight/SM" in (x.get("extras") or {}) and x.get("value")]
        latency_ns = _latency_ns(r)
        if not points or not latency_ns:
            continue  # not a --littles-law run
        out.append(f"{out_dir}/ch{r['chapter']}_littles_law_{machine}.png")
        draw(kit, r, points, latency_ns, out[-1])
    return out


def draw(kit, r, points, latency_ns, out_png):
    plt = kit.plt
    sms = r["gpu"]["sms"]
    peak = r.get("peak") if (r.get("peak") or {}).get("value") else None
    fig, ax = plt.subplots(figsize=(7.5, 4.6), dpi=110)
    for width, marker, color in ((4, "o", "#2a7ab0"), (16, "s", "#e07b39")):
        for few in (False, True):
            sel = [x for x in points if x["extras"].get("bytes/load") == width
                   and (x["extras"].get("blocks/SM", 8) < 8) == few]
            if sel:
                ax.scatter([x["extras"]["KiB in flight/SM"] for x in sel], [x["value"] for x in sel],
                           marker=marker, facecolors="none" if few else color, edgecolors=color, s=42,
                           label=f"{width}-byte loads" + (", fewer than 8 blocks/SM" if few else ""))
    xs = sorted({x["extras"]["KiB in flight/SM"] for x in points})
    lo, hi = min(xs) / 1.5, max(xs) * 1.5
    line = [lo * (hi / lo) ** (i / 50) for i in range(51)]
    cap = peak["value"] if peak else None
    ax.plot(line, [min(k * 1024 * sms / latency_ns, cap or 1e18) for k in line], color="#555", linestyle="--",
            linewidth=1, label=f"Little's law: bytes in flight / {latency_ns:.0f} ns latency")
    if cap:
        ax.axhline(cap, color="#c0392b", linestyle=":", linewidth=1, label=f"{peak['label']} peak")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes in flight per SM (KiB)")
    ax.set_ylabel("GB/s read")
    ax.set_ylim(0, (cap or max(x["value"] for x in points)) * 1.12)
    ax.set_title(f"Bandwidth needs bytes in flight: {r['gpu']['name']}, DRAM latency {latency_ns:.0f} ns", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    kit.save_chart(plt, fig, ax, out_png)
