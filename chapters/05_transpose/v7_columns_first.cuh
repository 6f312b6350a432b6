// Chapter 05, version 7: the same tiles, taken in another order.
//
// Change from version 6: only which tile a block gets. The kernel body is
// v6's (transpose_tile_float4); the grid's x, the index that runs fastest
// as the blocks start, now walks DOWN a column of tiles instead of along a
// row of them:
//
//   v6: block b takes tile (row b / 128, column b % 128)   (8192 x 8192: 128 x 128 tiles)
//   v7: block b takes tile (row b % 128, column b / 128)
//
// About a thousand blocks run at once on the H200 (132 SMs x 8 blocks of
// 256 threads), so the two orders differ in which thousand tiles are in
// flight together:
//
//   v6: 8 rows of tiles.    Reads: 512 whole input rows, one stretch of
//       16 MiB. Writes: 2 KiB into each of the 8192 output rows.
//   v7: 8 columns of tiles. Reads: 2 KiB from each of the 8192 input rows.
//       Writes: 512 whole output rows, one stretch of 16 MiB.
//
// The bytes are the same; the DRAM sees them in another order. Which side
// should be the long stretch is a question for the measurement, not for
// symmetry: on the H200 the writes are (the chapter's EXPERIMENTS.md has
// the same flip applied to a plain tiled copy, where it scatters both sides,
// and the copy gets slower). Effect on the H200: 4033 GB/s {n:05:columns_first:gbps},
// 96.6% {n:05:columns_first:pbase} of memcpy (v6: 94.8% {n:05:float4:pbase}).
//
// Conditions (usable()): v6's (float4 accesses), and a grid whose y, now
// the tile columns, is at most 65535 tiles (cols <= 4,194,240); otherwise
// the chapter's row runs v6 (or v5). The tile's body is v6's, in
// float4_tile.cuh.
#pragma once

#include "float4_tile.cuh" // transpose_tile_float4, float4_ok: v6's tile
#include "launch.cuh"

#include "steps/error.hpp"

#include <stdexcept>

namespace ch05::v7 {

using float4_tile::TILE4;

__global__ void transpose_columns_first(const float* in, float* out, int rows, int cols) {
  float4_tile::transpose_tile_float4(in, out, rows, cols, blockIdx.x * TILE4, blockIdx.y * TILE4);
}

/// True when this version can move this matrix: v6's conditions, and the
/// tile columns fit in the grid's y.
inline bool usable(const float* in, const float* out, int rows, int cols) {
  const dim3 tiles = tile_grid(rows, cols, TILE4); // x: tile columns, y: tile rows
  return float4_tile::float4_ok(in, out, rows, cols) && tiles.x <= static_cast<unsigned>(kMaxGridY);
}

/// Only where usable(); the chapter's row runs version 6 (or 5) elsewhere.
inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  if (!usable(in, out, rows, cols)) throw std::logic_error("v7: this matrix needs version 6 or 5");
  const dim3 tiles = tile_grid(rows, cols, TILE4); // x: tile columns, y: tile rows
  transpose_columns_first<<<dim3(tiles.y, tiles.x), dim3(float4_tile::kThreadsX, float4_tile::kBlockRows), 0,
                            stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::v7
