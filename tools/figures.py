#!/usr/bin/env python3
"""Pictures of which thread touches which data, for the lessons.

  /usr/bin/python3 tools/figures.py ROOT     writes docs/figures/pattern_*.png

Drawn from the index arithmetic of the kernels (the same formulas as the
code), not measured: the lessons put the measured numbers beside them.
Needs matplotlib.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

WARP = 32
COLORS = plt.get_cmap("viridis")


def lane_color(lane):
    return COLORS(lane / (WARP - 1))


def warp_sectors(ax, y, title, addr_of_lane, words=256):
    """One warp's load: 4-byte words along a line, the 32-byte sectors it
    touches shaded, each lane's word in its lane's colour."""
    touched = {addr_of_lane(l) // 8 for l in range(WARP)}
    for s in range(words // 8):
        ax.add_patch(Rectangle((s * 8, y), 8, 1, fill=s in touched, facecolor="#f4d5a6", edgecolor="#555", lw=0.6))
    for l in range(WARP):
        a = addr_of_lane(l)
        if a < words:
            ax.add_patch(Rectangle((a + 0.1, y + 0.15), 0.8, 0.7, color=lane_color(l)))
    used = 100.0 * WARP * 4 / (len(touched) * 32)
    ax.text(0, y + 1.25, f"{title}: {len(touched)} sectors of 32 B for 128 useful bytes ({used:.0f}% of the bytes "
            "moved are used)", fontsize=9)


def coalescing(out):
    fig, ax = plt.subplots(figsize=(11, 4.2))
    rows = [("stride 1 (lane i reads word i)", lambda l: l),
            ("offset 3 (lane i reads word i + 3)", lambda l: l + 3),
            ("stride 2 (lane i reads word 2 i)", lambda l: 2 * l),
            ("stride 8 (lane i reads word 8 i)", lambda l: 8 * l)]
    for k, (title, f) in enumerate(rows):
        warp_sectors(ax, (len(rows) - 1 - k) * 2.2, title, f)
    ax.set_xlim(-1, 257)
    ax.set_ylim(-0.3, len(rows) * 2.2)
    ax.set_xlabel("4-byte words of memory (shaded: a 32-byte sector the warp's load moves; colour: lane 0..31)")
    ax.set_yticks([])
    ax.set_title("One warp, one 4-byte load per lane: the sectors the memory system moves")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def banks(out):
    """A warp reading one column of a 32 x 32 float tile: without padding all
    32 words sit in bank 0; with a 33-float row pitch, in 32 banks."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2))
    for ax, pitch, title in ((axes[0], 32, "tile[32][32]: column 0 is 32 words in bank 0 (32-way conflict)"),
                             (axes[1], 33, "tile[32][33]: column 0 is spread over all 32 banks (no conflict)")):
        for lane in range(WARP):
            word = lane * pitch  # element [lane][0]
            bank, row = word % 32, word // 32
            ax.add_patch(Rectangle((bank, -row - 1), 1, 1, color=lane_color(lane)))
        for b in range(33):
            ax.axvline(b, color="#ccc", lw=0.4)
        ax.set_xlim(0, 32)
        ax.set_ylim(-34, 0)
        ax.set_xlabel("bank (word address mod 32)")
        ax.set_ylabel("shared-memory row of 32 words (128 B)")
        ax.set_yticks([])
        ax.set_title(title, fontsize=9)
    fig.suptitle("Lane i of a warp reads tile[i][0] (colour: lane 0..31)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def transpose(out):
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
                ax.add_patch(Rectangle((j, n - 1 - i), 1, 1, fill=False, edgecolor="#999", lw=0.5))
        ax.set_xlim(-0.2, n + 0.2)
        ax.set_ylim(-1.4, n + 0.2)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(titles[k], fontsize=9)
    r, c = 2, 5
    for j in range(n):  # the reading warp: input row r -> tile row r
        axes[0].add_patch(Rectangle((j, n - 1 - r), 1, 1, color="#3b7dd8", alpha=0.85))
        axes[1].add_patch(Rectangle((j, n - 1 - r), 1, 1, color="#3b7dd8", alpha=0.85))
    for i in range(n):  # the writing warp: tile column c -> output row c
        axes[1].add_patch(Rectangle((c + 0.08, n - 1 - i + 0.08), 0.84, 0.84, fill=False, edgecolor="#e07b39", lw=2.5))
        axes[2].add_patch(Rectangle((i, n - 1 - c), 1, 1, color="#e07b39"))
    axes[1].text(0, -0.9, "blue: row r, stored by one warp\norange: column c, loaded by one warp", fontsize=8)
    axes[2].text(0, -0.9, "out[c][i] = tile[i][c] = in[i][c]", fontsize=8)
    fig.suptitle("Transpose through shared memory (8 x 8 shown; the kernels use 32 x 32): one row of the input "
                 "ends up as one column of the output", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def tiling(out):
    """C = A B by tiles: the block's tile of C, the row panel of A and the
    column panel of B it reads, one BK-wide slice at a time."""
    fig, ax = plt.subplots(figsize=(9, 6))
    M = N = K = 8
    ox_b, oy_b = K + 1.5, M + 1.5  # B drawn above C, A to the left
    def grid(x0, y0, w, h):
        for i in range(h):
            for j in range(w):
                ax.add_patch(Rectangle((x0 + j, y0 + i), 1, 1, fill=False, edgecolor="#bbb", lw=0.4))
    grid(0, 0, K, M)           # A (M x K)
    grid(ox_b, oy_b, N, K)     # B (K x N)
    grid(ox_b, 0, N, M)        # C (M x N)
    bi, bj, bk = 2, 4, 2       # tile row, tile column (2x2 tiles), slice
    ax.add_patch(Rectangle((ox_b + bj, M - bi - 2), 2, 2, color="#3b7dd8", alpha=0.9))
    ax.add_patch(Rectangle((0, M - bi - 2), K, 2, color="#3b7dd8", alpha=0.25))
    ax.add_patch(Rectangle((ox_b + bj, oy_b), 2, K, color="#3b7dd8", alpha=0.25))
    ax.add_patch(Rectangle((bk * 2, M - bi - 2), 2, 2, color="#e07b39"))
    ax.add_patch(Rectangle((ox_b + bj, oy_b + K - bk * 2 - 2), 2, 2, color="#e07b39"))
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
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip())
        return 2
    figs = os.path.join(argv[0], "docs", "figures")
    os.makedirs(figs, exist_ok=True)
    for name, draw in (("pattern_coalescing", coalescing), ("pattern_banks", banks),
                       ("pattern_transpose", transpose), ("pattern_tiling", tiling)):
        path = os.path.join(figs, name + ".png")
        draw(path)
        print("wrote", os.path.relpath(path, argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
