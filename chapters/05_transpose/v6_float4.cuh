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
// Conditions (the launcher checks them, and falls back to version 5 when
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
// 3952 GB/s {n:05:float4:gbps}, 94.9% {n:05:float4:pbase} of memcpy.
#pragma once

#include "launch.cuh"
#include "v5_big_tile.cuh"

#include "steps/error.hpp"

namespace ch05::v6 {

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

/// The grid as in every version so far: x across the tile columns, y down the tile rows.
__global__ void transpose_float4(const float* in, float* out, int rows, int cols) {
  transpose_tile_float4(in, out, rows, cols, blockIdx.y * TILE4, blockIdx.x * TILE4);
}

/// True when float4 accesses are legal for this matrix: aligned pointers,
/// rows and cols multiples of 4.
inline bool float4_ok(const float* in, const float* out, int rows, int cols) {
  return steps::is_aligned(in, 16) && steps::is_aligned(out, 16) && rows % 4 == 0 && cols % 4 == 0;
}

inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  if (!float4_ok(in, out, rows, cols)) { // no float4 view of every row: scalar version 5
    v5::launch(in, out, rows, cols, stream);
    return;
  }
  transpose_float4<<<tile_grid(rows, cols, TILE4), dim3(kThreadsX, kBlockRows), 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::v6
