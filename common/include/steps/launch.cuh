/// @file launch.cuh
/// What a launcher needs to size a grid, and the two indices of a
/// grid-stride loop. Device code: include from .cu/.cuh files only.
#pragma once

#include "steps/device.hpp"
#include "steps/math.hpp"

#include <algorithm>
#include <cstddef>

namespace steps {

/// Blocks of `threads_per_block` that fill the GPU exactly once (every SM
/// holds as many as it can at once), or fewer when `work_items` (one per
/// thread) needs fewer; never 0. Grid-stride kernels launch this many and
/// loop over the rest.
inline unsigned int full_wave_blocks(const DeviceInfo& dev, std::size_t work_items, int threads_per_block) {
  const auto threads = static_cast<std::size_t>(threads_per_block);
  const std::size_t wave = static_cast<std::size_t>(dev.sm_count) * (dev.max_threads_per_sm / threads);
  return static_cast<unsigned int>(std::max<std::size_t>(1, std::min(wave, ceil_div<std::size_t>(work_items, threads))));
}

/// The global index of this thread: which element it starts at (64-bit).
__device__ inline std::size_t global_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// The number of threads in the whole grid: the grid-stride step.
__device__ inline std::size_t grid_size() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

} // namespace steps
