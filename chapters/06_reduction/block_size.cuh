// Chapter 06: the block every version launches, and the grid built from it.
//
// kThreads threads per block in v1-v7 (and the divergence rows); the trees
// of block_sum.cuh are built for it. resident_blocks() sizes a grid to one
// wave of resident blocks, asked from the runtime (v6, v7).
#pragma once

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <algorithm>
#include <cstddef>

namespace ch06 {

/// 256 threads per block in every version: a multiple of the 32-thread warp,
/// a power of two (the shared-memory trees halve it), and 8 blocks fit on
/// each SM of the H200 (2048 resident threads).
constexpr int kThreads = 256;
/// Warps per block.
constexpr int kWarps = kThreads / 32;
/// log2(kThreads): the levels of a tree over one block's threads.
constexpr int kTreeLevels = 8;
static_assert((1 << kTreeLevels) == kThreads, "the shared-memory trees need a power-of-two block");

/// Blocks of kThreads for `items` work items (one per thread): at most as
/// many as can be resident at once for `kernel`, never 0. Its registers and
/// shared memory decide how many blocks fit on an SM (chapter 07), so ask
/// the runtime instead of assuming the 8 of a small kernel: a grid larger
/// than what fits runs in two uneven waves.
template <class Kernel>
unsigned int resident_blocks(Kernel kernel, const steps::DeviceInfo& dev, std::size_t items) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const std::size_t wave = static_cast<std::size_t>(std::max(per_sm, 1)) * static_cast<std::size_t>(dev.sm_count);
  return static_cast<unsigned int>(std::max<std::size_t>(1, std::min(wave, steps::ceil_div<std::size_t>(items, kThreads))));
}

} // namespace ch06
