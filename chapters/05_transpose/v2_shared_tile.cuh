// Chapter 05, version 2: through a tile in shared memory.
//
// Change from version 1: the block first copies its 32 x 32 input tile into
// shared memory, row by row (coalesced reads), waits until every thread has
// stored its element (__syncthreads), then writes the tile's COLUMNS as
// output rows (coalesced writes). The reordering happens in shared memory,
// which has no 32-byte sectors: any thread may read any word.
//
//   in, tile row ty:    tile[ty][0..31]   <- in(r0 + ty, c0 + 0..31)     (warp reads a row)
//   out row c0 + ty:    out(c0 + ty, r0 + 0..31) <- tile[0..31][ty]     (warp reads a column)
//
// The catch: shared memory is 32 banks, 4 bytes wide, and word w lives in
// bank w % 32. A tile row is 32 words, so a column of the tile, tile[0..31][ty],
// is 32 words in ONE bank: the warp's read is served one word at a time
// (a 32-way bank conflict). Still 1.85x {n:05:shared_tile:value/05:naive:value}
// faster than version 1; version 3 removes the conflict.
#pragma once

#include "launch.cuh"

#include "steps/error.hpp"

namespace ch05::v2 {

__global__ void transpose_shared_tile(const float* in, float* out, int rows, int cols) {
  // [snippet body]
  __shared__ float tile[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.y * TILE; // first input row of this tile    = first output column
  const int c0 = blockIdx.x * TILE; // first input column of this tile = first output row

  // Phase 1: load. Thread (tx, ty) reads in(r0 + ty, c0 + tx).
  if (r0 + ty < rows && c0 + tx < cols) tile[ty][tx] = in[at(r0 + ty, c0 + tx, cols)];

  // Every element of the tile must be stored before anyone reads it.
  __syncthreads();

  // Phase 2: store. Thread (tx, ty) writes out(c0 + ty, r0 + tx) = in(r0 + tx, c0 + ty).
  if (c0 + ty < cols && r0 + tx < rows) out[at(c0 + ty, r0 + tx, rows)] = tile[tx][ty];
  // [/snippet body]
}

inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  transpose_shared_tile<<<tile_grid(rows, cols, TILE), dim3(TILE, TILE), 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::v2
