// Chapter 05, version 3: the same tile, one column wider.
//
// Change from version 2: `tile[TILE][TILE + 1]`. The extra, never-used
// column shifts each row by one bank, so element (i, j) lives in bank
// (i * 33 + j) % 32 = (i + j) % 32 and the 32 words of a column are in 32
// different banks. Both phases are now conflict-free; the 128 extra bytes
// of shared memory per block cost nothing.
//
//   bank of tile[i][j]     TILE wide (v2)        TILE + 1 wide (v3)
//                          j: 0  1  2 ..         j: 0  1  2 ..
//                    i = 0    0  1  2               0  1  2
//                    i = 1    0  1  2               1  2  3
//                    i = 2    0  1  2               2  3  4
//   column j = 0 is bank      0, 0, 0, ...          0, 1, 2, ...
//
// Effect on the H200: 1792 GB/s {n:05:padded_tile:gbps} against
// 1031 GB/s {n:05:shared_tile:gbps} for version 2.
#pragma once

#include "launch.cuh"

#include "steps/error.hpp"

namespace ch05::v3 {

__global__ void transpose_padded_tile(const float* in, float* out, int rows, int cols) {
  // [snippet tile]
  __shared__ float tile[TILE][TILE + 1]; // + 1: a column is spread over all 32 banks
  // [/snippet tile]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;

  if (r0 + ty < rows && c0 + tx < cols) tile[ty][tx] = in[at(r0 + ty, c0 + tx, cols)];
  __syncthreads();
  if (c0 + ty < cols && r0 + tx < rows) out[at(c0 + ty, r0 + tx, rows)] = tile[tx][ty];
}

inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  transpose_padded_tile<<<tile_grid(rows, cols, TILE), dim3(TILE, TILE), 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::v3
