// Chapter 05, version 4: several elements per thread.
//
// Change from version 3: a block of 32 x 8 threads (not 32 x 32) still
// moves a 32 x 32 tile, so each thread loads 4 elements, rows ty, ty + 8,
// ty + 16 and ty + 24 of the tile, and stores 4.
//
// Why it is faster: a memory-bound kernel is fast when enough bytes are on
// their way at once to cover the memory latency (Little's law: bandwidth x
// latency = bytes in flight). The 4 loads of a thread are independent, so
// they are all issued before the first one returns: 16 bytes in flight per
// thread instead of 4. Blocks of 256 threads also wait less at
// __syncthreads than blocks of 1024, and more of them share an SM.
// Effect on the H200: 3540 GB/s {n:05:multi_element:gbps}, 85.0% {n:05:multi_element:pbase} of memcpy.
//
// The kernel is a template on the tile side and the number of thread rows,
// so that version 5 can reuse it with a bigger tile.
#pragma once

#include "launch.cuh"

#include "steps/error.hpp"

namespace ch05::v4 {

/// Threads per block: TILE_SIDE x BLOCK_ROWS; each thread moves TILE_SIDE / BLOCK_ROWS elements.
template <int TILE_SIDE, int BLOCK_ROWS>
__global__ void transpose_multi_element(const float* in, float* out, int rows, int cols) {
  static_assert(TILE_SIDE % BLOCK_ROWS == 0, "the thread rows must cover the tile rows evenly");
  static_assert(TILE_SIDE % 32 == 0, "a warp must cover a whole row segment of the tile");
  __shared__ float tile[TILE_SIDE][TILE_SIDE + 1]; // + 1: conflict-free columns (version 3)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.y * TILE_SIDE, c0 = blockIdx.x * TILE_SIDE;
  // [snippet loops]

  // Phase 1: tile rows ty, ty + BLOCK_ROWS, ... (all loads issued back to back).
#pragma unroll
  for (int j = 0; j < TILE_SIDE; j += BLOCK_ROWS) {
    const int r = r0 + ty + j, c = c0 + tx;
    if (r < rows && c < cols) tile[ty + j][tx] = in[at(r, c, cols)];
  }

  __syncthreads();

  // Phase 2: output rows c0 + ty, c0 + ty + BLOCK_ROWS, ...; output column r0 + tx.
#pragma unroll
  for (int j = 0; j < TILE_SIDE; j += BLOCK_ROWS) {
    const int out_row = c0 + ty + j, out_col = r0 + tx;
    if (out_row < cols && out_col < rows) out[at(out_row, out_col, rows)] = tile[tx][ty + j];
  }
  // [/snippet loops]
}

/// Rows of threads per block in this version: 32 x 8 = 256 threads, 4 elements each.
constexpr int kBlockRows = 8;

inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  transpose_multi_element<TILE, kBlockRows>
      <<<tile_grid(rows, cols, TILE), dim3(TILE, kBlockRows), 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::v4
