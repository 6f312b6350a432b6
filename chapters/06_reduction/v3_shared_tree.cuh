// Chapter 06, version 3: a shared-memory tree per block, one atomic per block.
//
// Idea: the threads of a block can combine their partial sums among
// themselves, through shared memory, before anything goes to global memory.
// Each thread writes its sum to partial[t]; then, in 8 steps, the first half
// of the still-active threads adds the second half's values to its own
// ("sequential addressing": thread t adds partial[t + s], s = 128, 64, ..., 1),
// with a __syncthreads() between steps so no thread reads a value before its
// owner has written it. Thread 0 then holds the block's sum and makes one
// atomicAdd.
//
//   partial: [ 0 1 2 ... 127 | 128 ... 255 ]   s = 128: t < 128 adds t + 128
//            [ 0 ... 63 | 64 ... 127 ]          s = 64:  t < 64  adds t + 64
//            ...                                s = 1:   t = 0   adds 1
//
// Change from v2: G atomics become one per block (1056 on the H200). The
// active threads of each step are contiguous ("sequential addressing"), so
// whole warps are idle together; divergence.cuh compares this with the
// textbook alternative and shows what the compiler makes of both.
//
// What it removes: the last contention on the result's address. What
// remains: v2's loop, with one load in flight per thread.
//
// The tree is block_sum_shared in block_sum.cuh, where v4 finds it too.
#pragma once

#include "block_size.cuh" // kThreads, kTreeLevels
#include "block_sum.cuh"  // block_sum_shared: the tree this version introduces

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

namespace ch06::v3 {

using steps::global_index;
using steps::grid_size;

__global__ void reduce_v3_shared_tree(const float* x, std::size_t n, float* out) {
  float sum = 0.0f;
  for (std::size_t i = global_index(); i < n; i += grid_size()) sum += x[i];
  sum = block_sum_shared(sum);
  if (threadIdx.x == 0) atomicAdd(out, sum); // one atomic per block
}

inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) {
  return steps::full_wave_blocks(dev, n, kThreads);
}

/// Longest rounding path: ceil(n / G) additions in a thread, 8 levels of the
/// tree, B - 1 rounded atomics.
inline std::size_t depth(std::size_t n, const steps::DeviceInfo& dev) {
  const std::size_t b = blocks(n, dev);
  return steps::ceil_div(n, b * kThreads) + kTreeLevels + (b - 1);
}

/// `out` must hold 0 before the launch.
inline void launch(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev, cudaStream_t stream) {
  if (n == 0) return;
  reduce_v3_shared_tree<<<blocks(n, dev), kThreads, 0, stream>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v3
