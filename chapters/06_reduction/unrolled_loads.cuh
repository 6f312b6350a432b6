// Chapter 06: a thread's sum of its elements, kUnroll loads in flight.
//
// The grid-stride loop that v4 introduces (v4_unrolled.cuh says why) and v5
// keeps: each step of a block reads kUnroll runs of kThreads consecutive
// floats, into kUnroll independent accumulators, and one grid of blocks
// covers the array in one wave.
#pragma once

#include "block_size.cuh" // kThreads

#include "steps/device.hpp"
#include "steps/launch.cuh"

#include <cstddef>

namespace ch06::unrolled_loads {

/// Independent accumulators (and loads in flight) per thread.
constexpr int kUnroll = 4;

/// This thread's sum of its elements of x, over a grid-stride loop that reads
/// kUnroll elements per step into kUnroll independent accumulators.
__device__ __forceinline__ float thread_sum(const float* x, std::size_t n) {
  constexpr std::size_t kStep = std::size_t{kThreads} * kUnroll; // floats a block reads per step
  const std::size_t stride = gridDim.x * kStep;
  float acc[kUnroll] = {};
  std::size_t i = blockIdx.x * kStep + threadIdx.x;
  // Whole steps: all kUnroll loads of this thread are inside the array.
  for (; i + (kUnroll - 1) * kThreads < n; i += stride) {
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) acc[k] += x[i + k * kThreads];
  }
  // At most one partial step remains for this thread (the next one starts
  // past n): each of its loads is checked.
#pragma unroll
  for (int k = 0; k < kUnroll; ++k)
    if (i + k * kThreads < n) acc[k] += x[i + k * kThreads];
  static_assert(kUnroll == 4, "the line below combines exactly 4 accumulators");
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/// One wave of blocks, each thread with at least kUnroll elements.
inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) {
  return steps::full_wave_blocks(dev, steps::ceil_div<std::size_t>(n, kUnroll), kThreads);
}

} // namespace ch06::unrolled_loads
