// Chapter 05: a 64 x 64 tile moved with 16-byte (float4) global accesses.
//
// Version 6 introduces it (v6_float4.cuh says why and what it costs), and
// version 7 keeps it, taking the tiles in another order: the block shape,
// the tile's body (transpose_tile_float4) and the test of when float4
// accesses are legal (float4_ok).
#pragma once

#include "launch.cuh"

#include "steps/math.hpp"

namespace ch05::float4_tile {

/// Tile side: 64 floats = 16 float4s per tile row.
constexpr int TILE4 = 64;
/// Threads per block: 16 (one per float4 of a tile row) x 16 rows.
constexpr int kThreadsX = TILE4 / 4;
constexpr int kBlockRows = 16;

/// One block's 64 x 64 tile, whose first input element is (r0, c0): the
/// body of v6's kernel, and of v7's, which only picks its tiles in another
/// order.
__device__ __forceinline__ void transpose_tile_float4(const float* in, float* out, int rows, int cols, int r0,
                                                      int c0) {
  __shared__ float tile[TILE4][TILE4 + 1];
  const int q = threadIdx.x; // which float4 of a 64-float row segment
  const int ty = threadIdx.y;

  // Phase 1: one float4 from each of tile rows ty, ty + 16, ty + 32, ty + 48.
#pragma unroll
  for (int j = 0; j < TILE4; j += kBlockRows) {
    const int r = r0 + ty + j, c = c0 + 4 * q;
    if (r < rows && c < cols) { // cols % 4 == 0: c < cols means c + 3 < cols
      const float4 v = *reinterpret_cast<const float4*>(in + at(r, c, cols));
      tile[ty + j][4 * q + 0] = v.x;
      tile[ty + j][4 * q + 1] = v.y;
      tile[ty + j][4 * q + 2] = v.z;
      tile[ty + j][4 * q + 3] = v.w;
    }
  }

  __syncthreads();

  // Phase 2: output row c0 + ty + j is tile column ty + j; this thread writes
  // its output columns r0 + 4q .. r0 + 4q + 3, which are tile rows 4q .. 4q + 3.
#pragma unroll
  for (int j = 0; j < TILE4; j += kBlockRows) {
    const int out_row = c0 + ty + j, out_col = r0 + 4 * q;
    if (out_row < cols && out_col < rows) { // rows % 4 == 0: out_col + 3 < rows
      const int t = ty + j;
      const float4 v = make_float4(tile[4 * q + 0][t], tile[4 * q + 1][t], tile[4 * q + 2][t], tile[4 * q + 3][t]);
      *reinterpret_cast<float4*>(out + at(out_row, out_col, rows)) = v;
    }
  }
}

/// True when float4 accesses are legal for this matrix: aligned pointers,
/// rows and cols multiples of 4.
inline bool float4_ok(const float* in, const float* out, int rows, int cols) {
  return steps::is_aligned(in, 16) && steps::is_aligned(out, 16) && rows % 4 == 0 && cols % 4 == 0;
}

} // namespace ch05::float4_tile
