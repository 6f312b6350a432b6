// Chapter 01: the block size of every version, and the grid helpers of
// common/include/steps/launch.cuh under short names.
#pragma once

#include "steps/launch.cuh"

#include <cstddef>

namespace ch01 {

/// 256 threads per block: a multiple of the 32-thread warp, and small enough
/// that 8 blocks fit on each SM (2048 resident threads on Hopper).
constexpr int kThreads = 256;

/// Blocks of kThreads that fill the GPU once, or fewer for small work.
inline unsigned int full_wave_blocks(const steps::DeviceInfo& dev, std::size_t work_items) {
  return steps::full_wave_blocks(dev, work_items, kThreads);
}

using steps::global_index;
using steps::grid_size;

} // namespace ch01
