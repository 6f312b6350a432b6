// Chapter 01, version 1: one element per thread.
//
// The first CUDA kernel most people write. Thread t of block b handles
// element b * blockDim.x + t; the grid has ceil(n / 256) blocks so that every
// element has a thread; the threads of the last block that land past the end
// do nothing thanks to the bounds check.
//
// Correct for every n up to 2^31 blocks * 256. Fast enough to reach 83% {n:01:one_per_thread:pbase|.0f}
// of cudaMemcpy's bandwidth on an H200, but it launches half a million blocks
// for n = 2^27, and each thread does one small load per array.
//
// The block size every version launches (kThreads) lives in block_size.cuh.
#pragma once

#include "block_size.cuh" // kThreads

#include "steps/launch.cuh"

#include "steps/error.hpp"

namespace ch01::v1 {

using steps::global_index;

__global__ void add_one_per_thread(const float* a, const float* b, float* c, std::size_t n) {
  const std::size_t i = global_index();
  if (i < n) c[i] = a[i] + b[i]; // bounds check: the last block overhangs the array
}

inline void launch(const float* a, const float* b, float* c, std::size_t n, cudaStream_t stream) {
  if (n == 0) return; // a grid of zero blocks is an invalid launch
  const auto blocks = static_cast<unsigned int>(steps::ceil_div<std::size_t>(n, kThreads));
  add_one_per_thread<<<blocks, kThreads, 0, stream>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch01::v1
