// Chapter 05: what every version shares: the matrix layout, the tile grid
// and its limits. (Nothing here is generic: the course's grid helpers for
// one-dimensional kernels are in steps/launch.cuh; this chapter's kernels
// need only the two-dimensional tile grid below.)
//
// Layout (all versions): `in` is a rows x cols matrix stored row by row
// (row-major), element (r, c) at in[r * cols + c]. Its transpose `out` is
// cols x rows, element (c, r) at out[c * rows + r], and out(c, r) = in(r, c).
//
// Every version cuts the input into square tiles and gives one block one
// tile. The grid's x walks the tiles along a row (the columns), its y walks
// down the rows:
//
//          c0 = blockIdx.x * TILE
//          |
//   r0 --> +----+----+----+--+        in: rows x cols; the last tile row and
//          |    |    |    |  |        the last tile column overhang the
//          +----+----+----+--+        matrix unless rows and cols are
//          |    |    |    |  |        multiples of TILE: every access needs
//          +----+----+----+--+        an edge guard (r < rows, c < cols).
#pragma once

#include "steps/math.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ch05 {

/// Side of the tile versions 1-4 move: 32 floats, one warp-wide row of 128 bytes.
constexpr int TILE = 32;

/// CUDA's limit on gridDim.y. The grid's y covers the tile rows.
constexpr int kMaxGridY = 65535;

/// Tallest matrix every version can launch: 65535 tile rows of 32 (the
/// 64-wide tiles of versions 5 and 6 would allow twice as many).
constexpr std::int64_t kMaxRows = std::int64_t{kMaxGridY} * TILE;

/// Widest matrix: keeps every column index, overhang of the last tile
/// included, far inside an int (gridDim.x itself allows 2^31 - 1 tiles).
constexpr std::int64_t kMaxCols = std::int64_t{1} << 30;

/// Throws when a rows x cols matrix is beyond the tile grids above (a clear
/// message instead of a failed launch).
inline void check_grid_limits(std::int64_t rows, std::int64_t cols) {
  if (rows > kMaxRows || cols > kMaxCols)
    throw std::invalid_argument("a " + std::to_string(rows) + " x " + std::to_string(cols) +
                                " matrix is beyond this chapter's grids: at most " + std::to_string(kMaxRows) +
                                " rows (65535 tile rows of 32) and " + std::to_string(kMaxCols) + " columns");
}

/// The grid of `tile` x `tile` blocks over a rows x cols input.
inline dim3 tile_grid(int rows, int cols, int tile) {
  return dim3(static_cast<unsigned int>(steps::ceil_div(cols, tile)),
              static_cast<unsigned int>(steps::ceil_div(rows, tile)));
}

/// Linear index of element (r, c) of a row-major matrix `width` elements wide.
/// size_t, not int: 8192 x 8192 = 2^26 fits in an int, but a 50000 x 50000
/// matrix (10 GB) does not, and int overflow is undefined behaviour.
__device__ inline std::size_t at(int r, int c, int width) {
  return static_cast<std::size_t>(r) * static_cast<std::size_t>(width) + static_cast<std::size_t>(c);
}

} // namespace ch05
