"""Chapter 04's hook (tools/hooks.py): the bank picture, pattern_banks.png.

Drawn from the index arithmetic of the kernels (the same formulas as the
code), not measured: the lesson puts the measured numbers beside it.
"""

WARP = 32


def lane_color(plt, lane):
    return plt.get_cmap("viridis")(lane / (WARP - 1))


def banks(plt):
    """A warp reading one column of a 32 x 32 float tile: without padding all
    32 words sit in bank 0; with a 33-float row pitch, in 32 banks."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2))
    for ax, pitch, title in ((axes[0], 32, "tile[32][32]: column 0 is 32 words in bank 0 (32-way conflict)"),
                             (axes[1], 33, "tile[32][33]: column 0 is spread over all 32 banks (no conflict)")):
        for lane in range(WARP):
            word = lane * pitch  # element [lane][0]
            bank, row = word % 32, word // 32
            ax.add_patch(plt.Rectangle((bank, -row - 1), 1, 1, color=lane_color(plt, lane)))
        for b in range(33):
            ax.axvline(b, color="#ccc", lw=0.4)
        ax.set_xlim(0, 32)
        ax.set_ylim(-34, 0)
        ax.set_xlabel("bank (word address mod 32)")
        ax.set_ylabel("shared-memory row of 32 words (128 B)")
        ax.set_yticks([])
        ax.set_title(title, fontsize=9)
    fig.suptitle("Lane i of a warp reads tile[i][0] (colour: lane 0..31)")
    return fig


def diagrams(out_dir, kit):
    plt = kit.plt
    return [kit.save_diagram(plt, banks(plt), out_dir, "pattern_banks.png")]
