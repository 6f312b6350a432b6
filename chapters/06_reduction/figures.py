"""Chapter 06's charts: the four classic steps (v1-v4) and CUB across the bench sizes, and the roofline.

tools/results.py render calls charts(runs, machine, out_dir, kit) with this
chapter's runs on one machine: "06" (the default, 2^28 floats) and the
bench_shapes runs "06@<label>". Each run's size is its "size" field (the
floats summed); each point is a row's median time. The lesson's table "The
same four steps at every bench size" holds the same numbers.

The roofline (ch06_roofline_<machine>.png): every verified row of the default
run at its arithmetic intensity (one addition per 4-byte float: flops over
bytes) and achieved TFLOP/s, under the memory roof (the copy bandwidth of the
same results file) and the FP32 roof (the GPU's architecture block; without
one, chapter 03's FP32 peak in the same file).
"""
import os

ROWS = ("atomic_per_element", "grid_stride", "shared_tree", "unrolled", "cub")  # v1-v4, then the baseline
STEPS = ROWS
# The source article's four times (ms) at its size, about 2^23 floats, on its
# own (older) GPU: quoted, not measured here (the lesson's quoted table).
ARTICLE_MS = (3.2, 0.9, 0.27, 0.16)
LABELS = {"atomic_per_element": "v1 atomic per element", "grid_stride": "v2 grid-stride",
          "shared_tree": "v3 shared tree", "unrolled": "v4 unrolled", "cub": "CUB"}


def charts(runs, machine, out_dir, kit):
    return charts_sizes(runs, machine, out_dir, kit) + charts_roofline(runs, machine, out_dir, kit)


def charts_sizes(runs, machine, out_dir, kit):
    plt = kit.plt
    by_size = {}
    for run in runs.values():
        if run.get("size"):
            by_size[run["size"]] = {x["name"]: x for x in run["rows"] if x.get("median_ms")}
    sizes = sorted(by_size)
    if len(sizes) < 2:
        return []
    fig, ax = plt.subplots(figsize=(10, 4.6), dpi=110)
    for name in STEPS:
        pts = [(n, by_size[n][name]["median_ms"]) for n in sizes if name in by_size[n]]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle="--" if name == "cub" else "-",
                    color="#888" if name == "cub" else None, label=LABELS[name])
    ax.scatter([2**23] * len(ARTICLE_MS), ARTICLE_MS, marker="s", facecolors="none", edgecolors="#333", s=46,
               label="the CUDA C++ introduction article (v1-v4, its GPU)")
    l2 = next(iter(runs.values()))["gpu"].get("l2_bytes")
    if l2:
        ax.axvline(l2 / 4, color="#c0392b", linestyle=":", linewidth=1)
        ax.text(l2 / 4, ax.get_ylim()[1], " L2 size", color="#c0392b", fontsize=8, va="top")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("floats summed")
    ax.set_ylabel("median ms (log scale)")
    ax.set_title(f"Chapter 06: the four classic steps across sizes, {next(iter(runs.values()))['gpu']['name']}",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    out = os.path.join(out_dir, f"ch06_sizes_{machine}.png")
    fig.savefig(out)
    plt.close(fig)
    return [out]


def charts_roofline(runs, machine, out_dir, kit):
    run = runs.get("06")
    if run is None:
        return []
    memory = kit.memory_roof()
    compute = kit.compute_roof("fp32", run) or kit.peak_roof(kit.machine_runs.get("03") or {})
    points = kit.roofline_points(kit.plt, run["rows"])
    if not memory or not compute or not points:
        raise LookupError("no memory roof, FP32 roof or row with flops and bytes")
    out = f"{out_dir}/ch06_roofline_{machine}.png"
    return [kit.roofline(kit.plt, out, f"Chapter 06: sum of {run['size']:,} floats on the roofline, "
                         f"{run['gpu']['name']}", points, memory, [compute])]
