"""Chapter 05's hook (tools/hooks.py): the transpose picture, pattern_transpose.png,
and the tiles in flight in v6's and v7's block orders, pattern_block_order.png.

Drawn from the index arithmetic of the kernels (the same formulas as the
code), not measured: the lesson puts the measured numbers beside it.
"""


def transpose(plt):
    """Transpose through a shared tile: a warp reads a row of the input
    (coalesced), writes a row of the output (coalesced), and the tile turns
    the row into a column in between."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.2))
    n = 8
    titles = ["input: a warp reads row r (coalesced)", "shared tile: stored by rows, loaded by columns",
              "output: a warp writes row c (coalesced)"]
    for k, ax in enumerate(axes):
        for i in range(n):
            for j in range(n):
                ax.add_patch(plt.Rectangle((j, n - 1 - i), 1, 1, fill=False, edgecolor="#999", lw=0.5))
        ax.set_xlim(-0.2, n + 0.2)
        ax.set_ylim(-1.4, n + 0.2)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(titles[k], fontsize=9)
    r, c = 2, 5
    for j in range(n):  # the reading warp: input row r -> tile row r
        axes[0].add_patch(plt.Rectangle((j, n - 1 - r), 1, 1, color="#3b7dd8", alpha=0.85))
        axes[1].add_patch(plt.Rectangle((j, n - 1 - r), 1, 1, color="#3b7dd8", alpha=0.85))
    for i in range(n):  # the writing warp: tile column c -> output row c
        axes[1].add_patch(plt.Rectangle((c + 0.08, n - 1 - i + 0.08), 0.84, 0.84, fill=False, edgecolor="#e07b39", lw=2.5))
        axes[2].add_patch(plt.Rectangle((i, n - 1 - c), 1, 1, color="#e07b39"))
    axes[1].text(0, -0.9, "blue: row r, stored by one warp\norange: column c, loaded by one warp", fontsize=8)
    axes[2].text(0, -0.9, "out[c][i] = tile[i][c] = in[i][c]", fontsize=8)
    fig.suptitle("Transpose through shared memory (8 x 8 shown; the kernels use 32 x 32): one row of the input "
                 "ends up as one column of the output", fontsize=10)
    return fig


def block_order(plt):
    """Which tiles run together: the first blocks of the grid in v6's order
    (x along a row of tiles) and v7's (x down a column of tiles), and where
    they read (input) and write (output). A 16 x 16 grid of tiles with a
    window of 2 grid lines in flight stands for the real 128 x 128 with about
    8 (132 SMs x 8 blocks)."""
    n, lines = 16, 2
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.9))
    panels = [("v6: input, reads", False, False), ("v6: output, writes", False, True),
              ("v7: input, reads", True, False), ("v7: output, writes", True, True)]
    for ax, (title, columns_first, output) in zip(axes, panels):
        for i in range(n):
            for j in range(n):
                # tile (i, j) of the input is in flight when its row (v6) or column (v7) is among the first lines
                live = (j if columns_first else i) < lines
                r, c = (j, i) if output else (i, j)  # input tile (i, j) is written to output tile (j, i)
                ax.add_patch(plt.Rectangle((c, n - 1 - r), 1, 1, facecolor="#e07b39" if live else "white",
                                           edgecolor="#bbb", lw=0.4))
        ax.set_xlim(-0.2, n + 0.2)
        ax.set_ylim(-0.2, n + 0.2)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(title, fontsize=9)
    axes[0].text(0, -1.3, "whole rows: one long stretch", fontsize=8)
    axes[1].text(0, -1.3, "a short piece of every row", fontsize=8)
    axes[2].text(0, -1.3, "a short piece of every row", fontsize=8)
    axes[3].text(0, -1.3, "whole rows: one long stretch", fontsize=8)
    fig.suptitle("The tiles in flight together (orange), v6's order against v7's: the same bytes, "
                 "but only one side can stream; on the H200 it pays to make it the writes", fontsize=10)
    return fig


def diagrams(out_dir, kit):
    plt = kit.plt
    return [kit.save_diagram(plt, transpose(plt), out_dir, "pattern_transpose.png"),
            kit.save_diagram(plt, block_order(plt), out_dir, "pattern_block_order.png")]
