// Chapter 02: what every version's launcher needs to size its grid
// (the same helpers as chapter 01's launch.cuh).
#pragma once

#include "steps/device.hpp"
#include "steps/math.hpp"

#include <algorithm>
#include <cstddef>

namespace ch02 {

/// 256 threads per block: 8 warps, and 8 blocks fill an SM's 2048 threads.
constexpr int kThreads = 256;

/// Blocks that fill the GPU exactly once (every SM as full as it can be),
/// or fewer when `work_items` needs fewer; never 0.
inline unsigned int full_wave_blocks(const steps::DeviceInfo& dev, std::size_t work_items) {
  const std::size_t wave = static_cast<std::size_t>(dev.sm_count) * (dev.max_threads_per_sm / kThreads);
  return static_cast<unsigned int>(std::max<std::size_t>(
      1, std::min(wave, steps::ceil_div<std::size_t>(work_items, kThreads))));
}

/// The global index of this thread: which element it starts at.
__device__ inline std::size_t global_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// The number of threads in the whole grid: the grid-stride step.
__device__ inline std::size_t grid_size() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

} // namespace ch02
