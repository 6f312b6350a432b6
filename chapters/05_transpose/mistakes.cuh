// Chapter 05: the classic tiled-transpose mistake, on purpose. Run it with
//   ch05_transpose --mistakes
// and watch the check catch it. It is not a compile error, and not even a
// crash: the kernel runs and writes plausible numbers.
#pragma once

#include "launch.cuh"
#include "v4_multi_element.cuh" // v4::kBlockRows: the mistake is v4 without its barrier

#include "steps/error.hpp"

namespace ch05::mistakes {

// Mistake: no __syncthreads() between the two phases of version 4. Warp w
// stores tile rows w, w + 8, w + 16, w + 24, but reads a COLUMN of the tile,
// one element of every row, so it needs the other 7 warps' stores too. The
// warps' loads come back from memory at different times; a warp that is
// ahead reads elements its neighbours have not stored yet, and gets whatever
// an earlier block on this SM left in that shared memory. Wrong values, a
// few tiles here and there, different on every run: a data race.
__global__ void transpose_missing_sync(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
#pragma unroll
  for (int j = 0; j < TILE; j += v4::kBlockRows) {
    const int r = r0 + ty + j, c = c0 + tx;
    if (r < rows && c < cols) tile[ty + j][tx] = in[at(r, c, cols)];
  }
  // (the barrier belongs here)
#pragma unroll
  for (int j = 0; j < TILE; j += v4::kBlockRows) {
    const int out_row = c0 + ty + j, out_col = r0 + tx;
    if (out_row < cols && out_col < rows) out[at(out_row, out_col, rows)] = tile[tx][ty + j];
  }
}

inline void missing_sync(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  transpose_missing_sync<<<tile_grid(rows, cols, TILE), dim3(TILE, v4::kBlockRows), 0, stream>>>(in, out, rows,
                                                                                                    cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::mistakes
