"""Chapter 11's hooks (tools/hooks.py): the lesson's pictures of the fragment layout.

diagrams(out_dir, kit) draws, from the PTX ISA's layout formulas (the same
ones steps/ptx.cuh documents and the kernels use), not from measurements:

  ch11_fragments.png   which lane holds which element of A (16 x 16), B
                       (16 x 8) and C (16 x 8) for one mma.sync m16n8k16,
                       and in which register;
  ch11_ldmatrix.png    which lane gives which row address to ldmatrix.x4
                       for A (rows of m, 16 k) and to ldmatrix.x4.trans for
                       B (rows of k, 16 n), and which 8 x 8 matrix (so which
                       register) each row belongs to.
"""

ROWS = ()  # the hook reads no results


def a_owner(r, k):
    """(lane, register, half) that holds A(r, k): a[i] is row g + 8 (i % 2), k 2t + h + 8 (i / 2)."""
    g, t, h = r % 8, (k % 8) // 2, k % 2
    return 4 * g + t, (r // 8) + 2 * (k // 8), h


def b_owner(k, n):
    """(lane, register, half) that holds B(k, n): b[i] is column g, k 2t + h + 8 i."""
    t, h = (k % 8) // 2, k % 2
    return 4 * n + t, k // 8, h


def c_owner(r, n):
    """(lane, register) that holds C(r, n): c[i] is row g + 8 (i / 2), column 2t + i % 2."""
    return 4 * (r % 8) + n // 2, 2 * (r // 8) + n % 2


def diagrams(out_dir, kit):
    """Writes docs/figures/ch11_*.png; returns their paths."""
    import os

    from matplotlib.patches import Rectangle

    plt = kit.plt
    os.makedirs(out_dir, exist_ok=True)
    # One colour per groupID g = lane / 4 (a lane's row of A and C, column of B).
    palette = ["#a9cce3", "#f5cba7", "#abebc6", "#f9e79f", "#d7bde2", "#f5b7b1", "#a3e4d7", "#d5dbdb"]

    def cell(ax, x, y, lane, text, size=5.5):
        ax.add_patch(Rectangle((x, y), 1, 1, facecolor=palette[lane // 4], edgecolor="#555555", lw=0.4))
        ax.text(x + 0.5, y + 0.5, text, ha="center", va="center", fontsize=size)

    def frame(ax, cols, rows, title, xlabel, ylabel):
        ax.set_xlim(-0.2, cols + 0.2)
        ax.set_ylim(rows + 0.2, -0.2)
        ax.set_aspect("equal")
        ax.set_xticks([c + 0.5 for c in range(cols)])
        ax.set_xticklabels([str(c) for c in range(cols)], fontsize=6)
        ax.set_yticks([r + 0.5 for r in range(rows)])
        ax.set_yticklabels([str(r) for r in range(rows)], fontsize=6)
        ax.tick_params(length=0)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_title(title, fontsize=9)
        for s in ax.spines.values():
            s.set_visible(False)

    out = []
    # 1. The fragments of one mma.sync m16n8k16: "T<lane>" and "a<reg>.<half>" in each cell.
    fig, axes = plt.subplots(1, 3, figsize=(15, 6.2), gridspec_kw={"width_ratios": [16, 8.6, 8.6]})
    ax = axes[0]
    for r in range(16):
        for k in range(16):
            lane, reg, h = a_owner(r, k)
            cell(ax, k, r, lane, f"T{lane}\na{reg}.{'lh'[h]}")
    ax.axhline(8, color="#000000", lw=1.2)
    ax.axvline(8, color="#000000", lw=1.2)
    frame(ax, 16, 16, "A: 16 x 16 (row), a[0..3] per lane\na0 rows 0-7 k 0-7, a1 rows 8-15, a2 k 8-15, a3 both",
          "k", "row of A (m)")
    ax = axes[1]
    for k in range(16):
        for n in range(8):
            lane, reg, h = b_owner(k, n)
            cell(ax, n, k, lane, f"T{lane}\nb{reg}.{'lh'[h]}")
    ax.axhline(8, color="#000000", lw=1.2)
    frame(ax, 8, 16, "B: 16 x 8 (col), b[0..1] per lane\na register: two k of ONE column", "column of B (n)", "k")
    ax = axes[2]
    for r in range(16):
        for n in range(8):
            lane, reg = c_owner(r, n)
            cell(ax, n, r, lane, f"T{lane}\nc{reg}")
    ax.axhline(8, color="#000000", lw=1.2)
    frame(ax, 8, 16, "C, D: 16 x 8 FP32, c[0..3] per lane\nc0, c1 row g; c2, c3 row g + 8", "column of C (n)",
          "row of C (m)")
    fig.suptitle("mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32: lane T = 4 g + t (colour: g = T / 4); "
                 "'.l' / '.h' = the low / high 16 bits of the register", fontsize=10)
    out.append(kit.save_diagram(plt, fig, out_dir, "ch11_fragments.png"))

    # 2. ldmatrix.x4: the lane that gives each row's address, and the matrix (= register) it fills.
    fig, axes = plt.subplots(1, 2, figsize=(13, 6.2))
    mats = ["#a9cce3", "#f5cba7", "#abebc6", "#d7bde2"]

    def row_strip(ax, y, x0, lane, matrix, label):
        ax.add_patch(Rectangle((x0, y), 8, 1, facecolor=mats[matrix], edgecolor="#555555", lw=0.5))
        ax.text(x0 + 4, y + 0.5, label, ha="center", va="center", fontsize=6.5)

    ax = axes[0]
    for lane in range(32):  # A: lane l points at row l % 16, column (l / 16) * 8; matrix l / 8
        row, x0, matrix = lane % 16, (lane // 16) * 8, lane // 8
        row_strip(ax, row, x0, lane, matrix, f"T{lane}: row {row}, k {x0}..{x0 + 7}  -> a{matrix}")
    frame(ax, 16, 16, "ldmatrix.x4 for A (16 rows of m x 16 k, row-major)\nlane l gives row l % 16, k (l / 16) * 8;"
          " matrix l / 8 -> register a[l / 8]", "k", "row of A (m)")
    ax = axes[1]
    for lane in range(32):  # B: lane l points at row (k) l % 16, column (l / 16) * 8; .trans
        k, x0, matrix = lane % 16, (lane // 16) * 8, lane // 8
        reg = f"b{matrix % 2} of n-tile {matrix // 2}"
        row_strip(ax, k, x0, lane, matrix, f"T{lane}: k {k}, n {x0}..{x0 + 7}  -> {reg}")
    frame(ax, 16, 16, "ldmatrix.x4.trans for B (16 k x 16 n, row-major)\nthe same addresses; .trans hands each lane "
          "two k of one column", "column of B (n)", "k")
    fig.suptitle("Each lane gives ONE 16-byte row address (8 BF16); lanes 8i .. 8i + 7 give the 8 rows of matrix i, "
                 "which lands in register i of every lane", fontsize=10)
    out.append(kit.save_diagram(plt, fig, out_dir, "ch11_ldmatrix.png"))
    return out
