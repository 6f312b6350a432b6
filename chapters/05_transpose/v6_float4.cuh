// Chapter 05, version 6: 16-byte global loads and stores.
//
// Change from version 5: the same 64 x 64 tile, but each thread moves a
// float4 (4 neighbouring floats, 16 bytes) per global access. 16 x 16
// threads: thread (q, ty) loads columns 4q .. 4q + 3 of tile rows ty,
// ty + 16, ty + 32, ty + 48 and stores them as 4 scalars into the tile;
// after the barrier it gathers 4 neighbouring tile ROWS of one column,
//
//   tile[4q + 0][j], tile[4q + 1][j], tile[4q + 2][j], tile[4q + 3][j]
//
// which are 4 neighbouring elements of output row c0 + j, and stores them
// as one float4. Four times fewer load and store instructions move the same
// bytes, with 64 bytes in flight per thread.
//
// Conditions (usable() checks them; the chapter's row runs version 5 when
// one fails): a float4 access must start on a 16-byte boundary, so both
// pointers are 16-byte aligned and rows and cols are multiples of 4. Then
// every input row and every output row starts aligned, and a float4 is
// either wholly inside the matrix or wholly outside, so the edge guard
// tests only its first element.
//
// The price: the shared-memory side is not conflict-free any more. A warp
// stores 4 scalars per thread along a 64-word row (threads q and q + 8 meet
// in one bank) and gathers columns with a stride of 4 rows (the same): 2-way
// conflicts that padding cannot remove (a swizzled layout could). The
// memory system is the bottleneck, so they are hidden. Effect on the H200:
// 3958 GB/s {n:05:float4:gbps}, 94.8% {n:05:float4:pbase} of memcpy.
//
// The tile's body and its conditions live in float4_tile.cuh, where
// version 7 finds them too.
#pragma once

#include "float4_tile.cuh" // transpose_tile_float4, float4_ok: the tile this version introduces
#include "launch.cuh"

#include "steps/error.hpp"

#include <stdexcept>

namespace ch05::v6 {

using float4_tile::kBlockRows;
using float4_tile::kThreadsX;
using float4_tile::TILE4;

/// The grid as in every version so far: x across the tile columns, y down the tile rows.
__global__ void transpose_float4(const float* in, float* out, int rows, int cols) {
  float4_tile::transpose_tile_float4(in, out, rows, cols, blockIdx.y * TILE4, blockIdx.x * TILE4);
}

/// True when this version can move this matrix: float4 accesses are legal.
inline bool usable(const float* in, const float* out, int rows, int cols) {
  return float4_tile::float4_ok(in, out, rows, cols);
}

/// Only where usable(); the chapter's row runs version 5 elsewhere.
inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  if (!usable(in, out, rows, cols)) throw std::logic_error("v6: float4 accesses are not legal for this matrix");
  transpose_float4<<<tile_grid(rows, cols, TILE4), dim3(kThreadsX, kBlockRows), 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::v6
