// Chapter 05, version 1: the naive transpose.
//
// One thread per element: a block of 32 x 32 threads covers one 32 x 32
// tile, and thread (x, y) copies in(r, c) to out(c, r) directly.
//
// The threads of a warp have consecutive threadIdx.x, so they read 32
// neighbours of one input row: one 128-byte segment, 4 sectors (coalesced).
// They write one element into each of 32 different output rows, rows * 4
// bytes apart: 32 sectors of 32 bytes for 128 useful bytes (strided). The
// memory system moves 8 times the bytes the write needs, and the kernel
// reaches 13.3% {n:05:naive:pbase} of cudaMemcpy's bandwidth on the H200.
#pragma once

#include "launch.cuh"

#include "steps/error.hpp"

namespace ch05::v1 {

__global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
  // [snippet body]
  const int c = blockIdx.x * TILE + threadIdx.x; // input column = output row
  const int r = blockIdx.y * TILE + threadIdx.y; // input row = output column
  if (r < rows && c < cols) out[at(c, r, rows)] = in[at(r, c, cols)];
  // [/snippet body]
}

inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return; // a grid of zero blocks is an invalid launch
  transpose_naive<<<tile_grid(rows, cols, TILE), dim3(TILE, TILE), 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::v1
