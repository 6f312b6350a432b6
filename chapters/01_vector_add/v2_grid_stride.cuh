// Chapter 01, version 2: a grid-stride loop.
//
// Change from version 1: the grid no longer grows with n. It is one "full
// wave" (as many blocks as the GPU holds at once) and each thread walks the
// array in steps of the whole grid's size: i, i + grid, i + 2 * grid, ...
// The same kernel is correct for any n, a launch costs the same for 1 K or
// 1 G elements, and consecutive threads still touch consecutive addresses in
// each step (coalesced: chapter 02).
#pragma once

#include "block_size.cuh" // kThreads

#include "steps/launch.cuh"

#include "steps/error.hpp"

namespace ch01::v2 {

using steps::global_index;
using steps::grid_size;

__global__ void add_grid_stride(const float* a, const float* b, float* c, std::size_t n) {
  for (std::size_t i = global_index(); i < n; i += grid_size()) c[i] = a[i] + b[i];
}

inline void launch(const float* a, const float* b, float* c, std::size_t n, const steps::DeviceInfo& dev,
                   cudaStream_t stream) {
  if (n == 0) return;
  add_grid_stride<<<steps::full_wave_blocks(dev, n, kThreads), kThreads, 0, stream>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch01::v2
