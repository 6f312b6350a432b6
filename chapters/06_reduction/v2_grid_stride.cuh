// Chapter 06, version 2: grid-stride private sums, one atomic per thread.
//
// Idea: most of the additions do not need to be shared. Each thread adds its
// elements into a private register (the grid-stride loop of chapter 01, v2:
// one wave of blocks, element i, i + G, i + 2G, ... where G is the number of
// threads in the grid) and makes ONE atomicAdd of its partial sum at the end.
//
// Change from v1: n atomics on one address become G (132 SMs x 2048 threads
// = 270,336 on the H200, whatever n is); the rest are register additions,
// which cost nothing next to the loads.
//
// What it removes: most of the serialisation on the result's address. What
// remains: G atomics on one address, and one load in flight per thread (each
// loop iteration's addition waits for its load before the next load is
// issued; v4 removes that).
#pragma once

#include "block_size.cuh" // kThreads

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

namespace ch06::v2 {

using steps::global_index;
using steps::grid_size;

__global__ void reduce_v2_grid_stride(const float* x, std::size_t n, float* out) {
  float sum = 0.0f;
  for (std::size_t i = global_index(); i < n; i += grid_size()) sum += x[i];
  atomicAdd(out, sum); // one atomic per thread (threads without elements add 0, exactly)
}

inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) {
  return steps::full_wave_blocks(dev, n, kThreads);
}

/// Longest rounding path: up to ceil(n / G) additions in a thread's loop,
/// then up to G - 1 rounded atomics (the first lands on 0).
inline std::size_t depth(std::size_t n, const steps::DeviceInfo& dev) {
  const std::size_t threads = std::size_t{blocks(n, dev)} * kThreads;
  return steps::ceil_div(n, threads) + threads - 1;
}

/// `out` must hold 0 before the launch.
inline void launch(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev, cudaStream_t stream) {
  if (n == 0) return;
  reduce_v2_grid_stride<<<blocks(n, dev), kThreads, 0, stream>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v2
