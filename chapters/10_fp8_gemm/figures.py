"""Chapter 10's hooks (tools/hooks.py): the shapes table's lines, the pipeline-depth chart, the roofline,
and v4's warp roles on a timeline where one was recorded (warp_roles below).

Both read each run's "options" (m, n, k, stages: docs/results.md), never its
label or problem text. bench_shapes runs two kinds of extra runs: other
shapes (other m, n, k) and the pipeline-depth sweep (the default shape with
--stages 2 to 5). A labelled run at the default run's m, n, k is part of the
sweep: it goes to the chart, not to the shapes table.

The roofline (ch10_roofline_<machine>.png): every verified row of the
default run (but memory_bound, a roof), and for each M = 128 shape run (the
DeepSeek-V3 shapes of bench_shapes, found by their options, m = 128) its
best version, its baseline and its memory bound (row memory_bound), at their arithmetic intensity (flops over the problem's bytes: A and
B in FP8, their scales, C in BF16) and achieved TFLOP/s, under the memory roof
(the copy bandwidth of the same results file) and the FP8 tensor roof (the
GPU's architecture block, with its BF16 roof dashed; without one, the run's
own FP8 peak).

diagrams(out_dir, kit) draws the lesson's pictures of the bridge from
chapter 03's tiles to Hopper's tensor cores (ch10_*.png). They are drawn
from the kernels' shapes and formulas (tile sizes, the 128-byte swizzle, the
ring's parities), not measured: the lesson puts the measured numbers beside
them.
"""

ROWS = ("warp_specialized",)  # v4, the version whose ring depth the sweep varies


def _split(runs):
    """(default run, [shape runs], [sweep runs]); LookupError when a run lacks the options."""
    lacking = [k for k, r in runs.items() if not all(x in (r.get("options") or {}) for x in ("m", "n", "k", "stages"))]
    if lacking:
        raise LookupError(f"{len(lacking)} of {len(runs)} runs state no options m, n, k, stages "
                          "(results written before the \"options\" field; re-run ./tutorial bench)")
    default = [r for r in runs.values() if not r.get("label")]
    if len(default) != 1:
        raise LookupError("no default run (one without a label) among the runs")
    default = default[0]
    labelled = [r for r in runs.values() if r.get("label")]
    return (default, [r for r in labelled if _dims(r) != _dims(default)],
            [r for r in labelled if _dims(r) == _dims(default)])


def _dims(r):
    """(M, N, K) of a run: --m and --n at 0 mean --size (the run's "size"), as the program's --help says."""
    o = r["options"]
    return (o["m"] or r["size"], o["n"] or r["size"], o["k"])


def _shape(r):
    return " x ".join(str(x) for x in _dims(r))


def shapes(runs):
    default, others, _sweep = _split(runs)
    return [(_shape(default) + " (default)", default)] + [(r["label"], r) for r in others]


SMALL_M = 128  # the shapes whose roofline points are drawn one by one (DeepSeek-V3's M = 128 layers)
BOUND = "memory_bound"  # the row whose TFLOP/s is a shape's measured memory bound (memory_bound.cuh)


def charts(runs, machine, out_dir, kit):
    out = roofline(runs, machine, out_dir, kit) + stages(runs, machine, out_dir, kit)
    try:
        out += warp_roles(machine, out_dir, kit)
    except LookupError as e:  # no trace recorded on this machine: the other charts stand
        print(f"results: chapters/10_fp8_gemm/figures.py: warp_roles() left as it was: {e}")
    return out


# The warp-roles timeline (warp_roles.cu writes it): what each role did
# between two of its events, by colour. Pairs (start event, end event, label, colour).
TRACE_FILE = "docs/results/traces/{machine}.ch10_warp_roles.json"
SPANS = (("free_wait", "free", "producer waits for a free stage", "#bbbbbb"),
         ("data_wait", "data", "math waits for a stage's data", "#c0392b"),
         ("mma_wait", "mma_done", "math waits for its wgmma", "#f0b27a"),
         ("mma_done", "promoted", "math promotes (CUDA cores)", "#2a7ab0"),
         ("store", "stored", "math stores the tile", "#27ae60"))


def _spans(lane):
    """[(start, end, label, colour)] of one role's events (cycles)."""
    out, open_at = [], {}
    for cycle, event in lane:
        for start, end, label, colour in SPANS:
            if event == end and start in open_at:
                out.append((open_at.pop(start), cycle, label, colour))
        open_at[event] = cycle
    return out


def warp_roles(machine, out_dir, kit):
    """Block 0's roles over its first tiles, and a zoom on the boundary between two tiles."""
    import json
    import os

    path = os.path.join(kit.root or ".", TRACE_FILE.format(machine=machine))
    if not os.path.exists(path):  # not recorded on this machine (build/bin/ch10_warp_roles records it)
        return []
    with open(path) as f:
        trace = json.load(f)
    mhz = trace.get("sm_clock_mhz") or trace["boost_clock_mhz"]
    lanes = trace["blocks"][0]["lanes"]
    stored = [c for c, e in lanes[1] if e == "stored"]
    if len(stored) < 3:
        raise LookupError(f"{len(stored)} tiles stored by math 1 in the trace (3 needed)")
    plt = kit.plt
    fig, axes = plt.subplots(2, 1, figsize=(11, 4.8), dpi=110)
    # Top: from the start to the third tile's store; bottom: the boundary
    # between the first and the second tile, a few K blocks either side.
    store1 = next(c for c, e in lanes[1] if e == "store")
    k_block = (stored[2] - stored[1]) / trace["k_blocks_per_tile"]
    windows = ((0, stored[2]), (store1 - 4 * k_block, stored[0] + 4 * k_block))
    for ax, (lo, hi) in zip(axes, windows):
        for y, (name, lane) in enumerate(zip(trace["roles"], lanes)):
            for a, b, label, colour in _spans(lane):
                if b >= lo and a <= hi:
                    ax.barh(2 - y, (b - a) / mhz, left=a / mhz, height=0.6, color=colour, label=label, linewidth=0)
        ax.set_yticks([2, 1, 0])
        ax.set_yticklabels(trace["roles"], fontsize=8)
        ax.set_xlim(lo / mhz, hi / mhz)
        ax.tick_params(axis="x", labelsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    axes[1].set_xlabel("microseconds since the block's first event (the SM's cycle counter at "
                       f"{mhz} MHz)", fontsize=8)
    handles = {}
    for ax in axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(l, h)
    fig.legend(handles.values(), handles.keys(), fontsize=7, ncol=5, loc="lower center", frameon=False)
    axes[0].set_title(f"v4 on {trace['gpu']}, block 0 of {trace['grid']}, {trace['m']} x {trace['n']} x "
                      f"{trace['k']}: its first three tiles", fontsize=9)
    axes[1].set_title("the boundary between its first and second tile", fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    out = os.path.join(out_dir, f"ch10_warp_roles_{machine}.png")
    fig.savefig(out)
    plt.close(fig)
    return [out]


def roofline(runs, machine, out_dir, kit):
    """The roofline of the default run's rows and of each M = 128 shape's best version and baseline."""
    default, others, _sweep = _split(runs)
    memory = kit.memory_roof()
    compute = kit.compute_roof("fp8", default) or kit.peak_roof(default)
    if not memory or not compute:
        raise LookupError("no memory roof or FP8 roof")
    # memory_bound (memory_bound.cuh) is a roof, not a kernel: drawn for the M = 128 shapes below, as a
    # bar at the TFLOP/s their bytes allow; at the default shape it lies far above the tensor roof.
    points = kit.roofline_points(kit.plt, [x for x in default["rows"] if x["name"] != BOUND],
                                 lambda x: f"{x['name']} ({_shape(default)})")
    small = [r for r in others if _dims(r)[0] == SMALL_M]
    small.sort(key=lambda r: r["rows"][0]["flops"] / r["rows"][0]["bytes"])
    colors = kit.plt.get_cmap("tab10")
    for i, r in enumerate(small):
        rows = {x["name"]: x for x in r["rows"] if x.get("verified") == "yes"}
        shape, c = _shape(r), colors(i % 10)
        for name, style in ((r.get("best"), dict(marker="^", color=c, s=56)),
                            (r.get("baseline"), dict(marker="v", facecolors="none", edgecolors=c, s=56)),
                            (BOUND, dict(marker="_", color=c, s=240, linewidths=2))):
            label = f"M = {SMALL_M}: each shape's memory bound (bars)" if name == BOUND else f"{shape}: {name}"
            p = kit.point(rows.get(name) or {}, label)
            if p:
                points.append(p + (style,))
    if not points:
        raise LookupError("no row with flops and bytes")
    roofs = [compute] + [x for x in [kit.compute_roof("bf16", default)] if x]
    out = f"{out_dir}/ch10_roofline_{machine}.png"
    kit.roofline(kit.plt, out, f"Chapter 10: FP8 GEMM on the roofline, {default['gpu']['name']}", points, memory,
                 roofs, note=f"Triangles: the M = {SMALL_M} shapes' best versions (filled) and cuBLASLt (hollow); "
                 "bars: their memory bounds (row memory_bound), all measured in the same runs.")
    return [out]


def stages(runs, machine, out_dir, kit):
    """v4's TFLOP/s against the stages of its ring, with the baseline measured in each of the same runs."""
    plt = kit.plt
    _default, _others, sweep = _split(runs)
    points = []
    for r in sweep:
        rows = {x["name"]: x for x in r["rows"]}
        v4, base = rows.get(ROWS[0], {}), rows.get(r.get("baseline") or "", {})
        if v4.get("value") and base.get("value"):
            points.append((r["options"]["stages"], v4["value"], base["value"]))
    if len(points) < 2:
        raise LookupError(f"{len(points)} sweep run(s) with both {ROWS[0]} and the baseline measured (2 needed)")
    points.sort()
    fig, ax = plt.subplots(figsize=(6.5, 4.0), dpi=110)
    xs = [p[0] for p in points]
    ax.plot(xs, [p[1] for p in points], marker="o", color="#2a7ab0", label="v4 " + ROWS[0])
    ax.plot(xs, [p[2] for p in points], marker="s", color="#888888", linestyle="--",
            label="cuBLASLt block-scaled (same run)")
    for x, v, _ in points:
        ax.annotate(f"{v:.0f}", (x, v), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    ax.set_xticks(xs)
    ax.set_xlabel("stages in the ring (32.5 KB each: A, B and A's scales)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, max(max(p[1], p[2]) for p in points) * 1.15)
    ax.set_title(f"Pipeline depth: {_shape(sweep[0])} on {sweep[0]['gpu']['name']}", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    out = f"{out_dir}/ch{sweep[0]['chapter']}_stages_{machine}.png"
    kit.save_chart(plt, fig, ax, out)
    return [out]


def diagrams(out_dir, kit):
    """Writes docs/figures/ch10_*.png; returns their paths."""
    plt = kit.plt
    import os

    from matplotlib.patches import FancyArrowPatch, Rectangle

    os.makedirs(out_dir, exist_ok=True)
    out = []

    def save(fig, name):
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        out.append(path)

    def box(ax, x, y, w, h, color="#ffffff", text=None, size=8, lw=0.8, edge="#333333", **kw):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, lw=lw))
        if text:
            ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, **kw)

    def arrow(ax, a, b, color="#333333", style="-|>", lw=1.0, rad=0.0):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=10, color=color, lw=lw,
                                     connectionstyle=f"arc3,rad={rad}"))

    blue, orange, green, grey, red = "#a9cce3", "#f5cba7", "#abebc6", "#e5e7e9", "#f1948a"

    # 1. From chapter 03's tiles to tensor cores: who computes what, per instruction.
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), gridspec_kw={"width_ratios": [1.1, 1, 1.25]})
    ax = axes[0]
    for i in range(8):  # a 128 x 128 block tile, 2 x 4 warps of 64 x 32 (v2's split)
        r, c = divmod(i, 4)
        box(ax, c * 32, 64 - r * 64, 32, 64, blue if i else orange, f"warp {i}\n64 x 32", 7)
    box(ax, 2, 118, 8, 8, red, None)  # chapter 03: one thread's 8 x 8 outputs
    ax.text(2, -2, "red: chapter 03's thread tile, 8 x 8 outputs, 64 FFMA per k;\n"
            "here one instruction of a warp covers 16 x 8 x 32 (v2), of a warpgroup 64 x 128 x 32 (v3+)",
            fontsize=7, va="top")
    ax.set_title("a block's 128 x 128 tile of D\n(ch. 03: threads own outputs; here: warps own MMAs)", fontsize=9)
    ax.set_xlim(-2, 130); ax.set_ylim(-16, 132); ax.set_aspect("equal"); ax.axis("off")

    ax = axes[1]  # mma.sync m16n8k32: one warp, operands in registers
    box(ax, 0, 40, 32, 16, blue, "A 16 x 32\n(4 regs/lane)", 7)
    box(ax, 40, 64, 8, 32, green, "B\n32 x 8\n(2 regs)", 6)
    box(ax, 40, 40, 8, 16, orange, "D\n16x8", 6)
    ax.text(24, 20, "mma.sync.m16n8k32 (sm_89+)\none warp, 32 lanes\nA, B, D all in registers:\n"
            "the warp loads them itself\n4,096 multiply-adds / instruction", ha="center", fontsize=8)
    ax.set_title("Ampere/Ada: warp-level MMA", fontsize=9)
    ax.set_xlim(-4, 60); ax.set_ylim(0, 100); ax.set_aspect("equal"); ax.axis("off")

    ax = axes[2]  # wgmma m64nNk32: a warpgroup, operands in shared memory
    for w in range(4):
        box(ax, 0, 64 + 48 - 16 * (w + 1), 32, 16, blue, f"A rows {16 * w}..{16 * w + 15}", 6)
        box(ax, 40 + 0, 64 + 48 - 16 * (w + 1), 64, 16, orange, f"D rows {16 * w}..{16 * w + 15}: warp {w}'s registers", 6)
    box(ax, 40, 116, 64, 32, green, "B  32 x N  (N = 8 .. 256)", 7)
    ax.text(0, 116 + 16, "shared memory,\nread through\n64-bit descriptors", fontsize=7, va="center")
    ax.text(52, 40, "wgmma.mma_async.m64nNk32 (sm_90a)\n4 warps = a warpgroup, 128 threads\n"
            "A, B: shared memory; D: registers\nasynchronous: issue, commit, wait later\n"
            "N = 128: 262,144 multiply-adds / instruction", ha="center", va="top", fontsize=8)
    ax.set_title("Hopper: warpgroup-level MMA", fontsize=9)
    ax.set_xlim(-4, 110); ax.set_ylim(0, 152); ax.set_aspect("equal"); ax.axis("off")
    save(fig, "ch10_tiles.png")

    # 2. The 128-byte swizzle: a K block of 8 rows, each 128 bytes = eight 16-byte chunks.
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    cmap = plt.get_cmap("tab10")
    for ax, swz, title in ((axes[0], False, "plain: chunk c of every row in slot c"),
                           (axes[1], True, "128-byte swizzle: chunk c of row r in slot c XOR (r mod 8)")):
        for r in range(8):
            for s in range(8):
                c = s ^ r if swz else s
                box(ax, s, 7 - r, 1, 1, cmap(c / 10) if c == 0 else "#ffffff", f"{c}", 8)
        hits = sorted({(0 ^ r) if swz else 0 for r in range(8)})
        ax.text(4, -0.9, f"chunk 0 of rows 0..7 lies in slots {hits}:\n"
                + ("all 32 banks, one pass" if swz else "the same 4 banks, 8 passes (8-way conflict)"),
                ha="center", va="top", fontsize=8)
        for s in range(8):
            ax.text(s + 0.5, 8.15, f"{s}", ha="center", fontsize=7)
        ax.text(4, 8.6, "slot (16 bytes = 4 banks: slot s holds banks 4s .. 4s + 3)", ha="center", fontsize=7)
        for r in range(8):
            ax.text(-0.15, 7.5 - r, f"row {r}", ha="right", va="center", fontsize=7)
        ax.set_title(title, fontsize=9, pad=4)
        ax.set_xlim(-1.2, 8.2); ax.set_ylim(-2.2, 9.2); ax.set_aspect("equal"); ax.axis("off")
    fig.suptitle("One K block of a tile in shared memory (numbers: which 16-byte chunk of the row sits there). "
                 "The pattern repeats every 8 rows = 1024 bytes.", fontsize=9, y=0.02)
    save(fig, "ch10_swizzle.png")

    # 3. The ring: stages, full/empty barriers, lap parity.
    fig, ax = plt.subplots(figsize=(14, 4.8))
    stages = 5
    for s in range(stages):
        x = 2.6 + s * 2.2
        box(ax, x, 2.0, 1.8, 1.4, blue if s in (1, 2) else (green if s == 0 else grey),
            f"stage {s}\nA, B tiles\n+ scales", 7)
        box(ax, x, 3.55, 1.8, 0.45, "#fdebd0", f"full[{s}]", 7)
        box(ax, x, 1.4, 1.8, 0.45, "#e8daef", f"empty[{s}]", 7)
    box(ax, 2.6, 5.0, 10.6, 0.8, orange, "producer (1 thread): wait empty[s] -> expect_tx(full[s], bytes) -> TMA", 7)
    box(ax, 2.6, 0.0, 10.6, 0.8, green, "math warpgroups: wait full[s] -> wgmma -> arrive empty[s]", 7)
    arrow(ax, (7.9, 5.0), (7.9, 4.05))
    ax.text(8.05, 4.5, "TMA writes; the copy engine counts the bytes down on full[s]", fontsize=7)
    arrow(ax, (11.5, 0.8), (12.2, 1.4), rad=-0.2)
    ax.text(13.4, 0.55, "each math warp arrives on empty[s]\nwhen it no longer reads stage s", fontsize=7)
    ax.text(-0.6, 2.7, "green: being multiplied\nblue: loaded, waiting\ngrey: being refilled", fontsize=7, va="center")
    rows = [("K block", [str(k) for k in range(12)]),
            ("stage s = kb mod 5", [str(k % stages) for k in range(12)]),
            ("lap parity (kb / 5) mod 2", [str((k // stages) % 2) for k in range(12)])]
    for j, (label, vals) in enumerate(rows):
        ax.text(17.4, 5.4 - 0.4 * j, label, fontsize=7, ha="right")
        for k, v in enumerate(vals):
            ax.text(17.7 + 0.36 * k, 5.4 - 0.4 * j, v, fontsize=7, ha="center",
                    color="#b03a2e" if (k // stages) % 2 else "#1b4f72")
    ax.text(13.6, 3.9, "math waits on full[s] for parity = lap parity\n"
            "producer waits on empty[s] for parity = lap parity ^ 1\n"
            "(a new barrier is in phase 0: waiting for parity 1\nreturns at once, so lap 0 never waits)\n\n"
            "wrong parity: a hang, or a lap early onto\na stage that still holds old data",
            fontsize=7, va="top")
    ax.set_xlim(-0.8, 22.0); ax.set_ylim(-0.3, 6.0); ax.axis("off")
    ax.set_title("The ring of stages (v4: 5 stages): two mbarriers per stage, one parity bit per lap", fontsize=9)
    save(fig, "ch10_ring.png")

    # (v4's warp roles are drawn from a measured trace: warp_roles(), below charts().)
    return out
