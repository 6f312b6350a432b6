"""Chapter 03's hooks (tools/hooks.py): the tiling picture, pattern_tiling.png, and the roofline.

The picture is drawn from the index arithmetic of the kernels (the same
formulas as the code), not measured: the lesson puts the measured numbers
beside it.

The roofline (ch03_roofline_<machine>.png) places every verified row of the
default run by its arithmetic intensity (the row's flops over its bytes: the
problem's compulsory DRAM traffic, A and B read once, C written once) and its
achieved TFLOP/s (flops over the median time), under the memory roof (the
copy bandwidth measured in the same results file, Kit.memory_roof) and the
FP32 roof (the GPU's architecture block; without one, the run's own peak).
"""


def tiling(plt):
    """C = A B by tiles: the block's tile of C, the row panel of A and the
    column panel of B it reads, one BK-wide slice at a time."""
    fig, ax = plt.subplots(figsize=(9, 6))
    M = N = K = 8
    ox_b, oy_b = K + 1.5, M + 1.5  # B drawn above C, A to the left
    def grid(x0, y0, w, h):
        for i in range(h):
            for j in range(w):
                ax.add_patch(plt.Rectangle((x0 + j, y0 + i), 1, 1, fill=False, edgecolor="#bbb", lw=0.4))
    grid(0, 0, K, M)           # A (M x K)
    grid(ox_b, oy_b, N, K)     # B (K x N)
    grid(ox_b, 0, N, M)        # C (M x N)
    bi, bj, bk = 2, 4, 2       # tile row, tile column (2x2 tiles), slice
    ax.add_patch(plt.Rectangle((ox_b + bj, M - bi - 2), 2, 2, color="#3b7dd8", alpha=0.9))
    ax.add_patch(plt.Rectangle((0, M - bi - 2), K, 2, color="#3b7dd8", alpha=0.25))
    ax.add_patch(plt.Rectangle((ox_b + bj, oy_b), 2, K, color="#3b7dd8", alpha=0.25))
    ax.add_patch(plt.Rectangle((bk * 2, M - bi - 2), 2, 2, color="#e07b39"))
    ax.add_patch(plt.Rectangle((ox_b + bj, oy_b + K - bk * 2 - 2), 2, 2, color="#e07b39"))
    ax.text(K / 2, -0.9, "A (M x K)", ha="center")
    ax.text(ox_b + N / 2, oy_b + K + 0.4, "B (K x N)", ha="center")
    ax.text(ox_b + N / 2, -0.9, "C (M x N)", ha="center")
    ax.text(-0.3, oy_b + K - 0.5, "blue: the tile of C one block\ncomputes, and the panels of\nA and B it needs\n\n"
            "orange: the slice (BK wide)\nin shared memory at one step;\nevery value loaded there is\n"
            "used by a whole row or column\nof the tile's threads", fontsize=9, va="top")
    ax.set_xlim(-0.5, ox_b + N + 0.5)
    ax.set_ylim(-1.5, oy_b + K + 1)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig


def diagrams(out_dir, kit):
    plt = kit.plt
    return [kit.save_diagram(plt, tiling(plt), out_dir, "pattern_tiling.png")]


def charts(runs, machine, out_dir, kit):
    run = runs.get("03")
    if run is None:
        return []
    memory = kit.memory_roof()
    compute = kit.compute_roof("fp32", run) or kit.peak_roof(run)
    points = kit.roofline_points(kit.plt, run["rows"])
    if not memory or not compute or not points:
        raise LookupError("no memory roof, FP32 roof or row with flops and bytes")
    out = f"{out_dir}/ch03_roofline_{machine}.png"
    o = run.get("options") or {}
    shape = " x ".join(str(o.get(d) or run["size"]) for d in ("m", "n", "k"))
    return [kit.roofline(kit.plt, out, f"Chapter 03: SGEMM {shape} on the roofline, {run['gpu']['name']}",
                         points, memory, [compute])]
