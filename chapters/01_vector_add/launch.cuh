// Chapter 01: what every version's launcher needs to size its grid.
#pragma once

#include "steps/device.hpp"
#include "steps/math.hpp"

#include <algorithm>
#include <cstddef>

namespace ch01 {

/// 256 threads per block: a multiple of the 32-thread warp, and small enough
/// that 8 blocks fit on each SM (2048 resident threads on Hopper).
constexpr int kThreads = 256;

/// Blocks that fill the GPU exactly once: every SM gets as many blocks as it
/// can hold at once. Grid-stride versions launch this many (or fewer, for
/// small arrays) and loop over the rest.
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

} // namespace ch01
