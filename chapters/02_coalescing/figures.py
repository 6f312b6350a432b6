"""Chapter 02's hook (tools/hooks.py): the coalescing picture, pattern_coalescing.png.

Drawn from the index arithmetic of the kernels (the same formulas as the
code), not measured: the lesson puts the measured numbers beside it.
"""

WARP = 32


def lane_color(plt, lane):
    return plt.get_cmap("viridis")(lane / (WARP - 1))


def warp_sectors(plt, ax, y, title, addr_of_lane, words=256):
    """One warp's load: 4-byte words along a line, the 32-byte sectors it
    touches shaded, each lane's word in its lane's colour."""
    touched = {addr_of_lane(l) // 8 for l in range(WARP)}
    for s in range(words // 8):
        ax.add_patch(plt.Rectangle((s * 8, y), 8, 1, fill=s in touched, facecolor="#f4d5a6", edgecolor="#555", lw=0.6))
    for l in range(WARP):
        a = addr_of_lane(l)
        if a < words:
            ax.add_patch(plt.Rectangle((a + 0.1, y + 0.15), 0.8, 0.7, color=lane_color(plt, l)))
    used = 100.0 * WARP * 4 / (len(touched) * 32)
    ax.text(0, y + 1.25, f"{title}: {len(touched)} sectors of 32 B for 128 useful bytes ({used:.0f}% of the bytes "
            "moved are used)", fontsize=9)


def coalescing(plt):
    fig, ax = plt.subplots(figsize=(11, 4.2))
    rows = [("stride 1 (lane i reads word i)", lambda l: l),
            ("offset 3 (lane i reads word i + 3)", lambda l: l + 3),
            ("stride 2 (lane i reads word 2 i)", lambda l: 2 * l),
            ("stride 8 (lane i reads word 8 i)", lambda l: 8 * l)]
    for k, (title, f) in enumerate(rows):
        warp_sectors(plt, ax, (len(rows) - 1 - k) * 2.2, title, f)
    ax.set_xlim(-1, 257)
    ax.set_ylim(-0.3, len(rows) * 2.2)
    ax.set_xlabel("4-byte words of memory (shaded: a 32-byte sector the warp's load moves; colour: lane 0..31)")
    ax.set_yticks([])
    ax.set_title("One warp, one 4-byte load per lane: the sectors the memory system moves")
    return fig


def diagrams(out_dir, kit):
    plt = kit.plt
    return [kit.save_diagram(plt, coalescing(plt), out_dir, "pattern_coalescing.png")]
