// Chapter 05: a tile transposed by fewer threads than it has elements.
//
// Version 4 introduces it (v4_multi_element.cuh says why): a block of
// TILE_SIDE x BLOCK_ROWS threads moves a TILE_SIDE x TILE_SIDE tile, each
// thread TILE_SIDE / BLOCK_ROWS elements, through a padded shared tile.
// Version 5 runs the same kernel with a 64 x 64 tile; launch() is both.
#pragma once

#include "launch.cuh"

#include "steps/error.hpp"

namespace ch05::multi_element {

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

/// One block per TILE_SIDE x TILE_SIDE tile, TILE_SIDE x BLOCK_ROWS threads each.
template <int TILE_SIDE, int BLOCK_ROWS>
void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  transpose_multi_element<TILE_SIDE, BLOCK_ROWS>
      <<<tile_grid(rows, cols, TILE_SIDE), dim3(TILE_SIDE, BLOCK_ROWS), 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::multi_element
