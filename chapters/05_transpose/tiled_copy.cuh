// Chapter 05, reference row: a plain copy with the access shape of the
// tiled transposes.
//
// No transpose: out(r, c) = in(r, c). Each block of 32 x 8 threads copies a
// 32 x 32 tile, each thread 4 elements, loaded first (4 loads in flight)
// and stored after, like version 4 but without shared memory and with
// coalesced writes. It answers "what does this way of slicing the work cost,
// before any transposing?": cudaMemcpy streams the whole array with the
// copy engine or an NVIDIA-tuned kernel, while this copy uses the tiles and
// block shape of version 4. On the H200 it reaches 96.7% {n:05:tiled_copy:pbase} of memcpy.
// A copy, not a transpose: the chapter shows it as a reference row (checked
// against in itself, never ranked).
#pragma once

#include "launch.cuh"

#include "steps/error.hpp"

namespace ch05::reference {

/// Thread rows per block: 32 x 8 threads, 4 elements each (version 4's shape).
constexpr int kBlockRows = 8;
constexpr int kPerThread = TILE / kBlockRows;

__global__ void copy_tiled(const float* in, float* out, int rows, int cols) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
  const int c = c0 + tx;
  float v[kPerThread] = {};
  // Loads first, all independent, then the stores (the compiler may not move
  // a load past a store to `out`: the two pointers might overlap).
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = r0 + ty + k * kBlockRows;
    if (r < rows && c < cols) v[k] = in[at(r, c, cols)];
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = r0 + ty + k * kBlockRows;
    if (r < rows && c < cols) out[at(r, c, cols)] = v[k];
  }
}

inline void copy(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  copy_tiled<<<tile_grid(rows, cols, TILE), dim3(TILE, kBlockRows), 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch05::reference
