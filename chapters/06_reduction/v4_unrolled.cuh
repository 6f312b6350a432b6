// Chapter 06, version 4: several independent accumulators, unrolled loads.
//
// Idea: a GPU thread issues its instructions in order, and stops at the
// first one whose input is not ready. In v3's loop, `sum += x[i]` needs the
// load of x[i] before the next iteration's load is even issued, so each
// thread has ONE load in flight: a full DRAM latency per element per thread
// (chapter 07 measures 584 ns {n:07:chase_occ2:ms*1000000/(16777216/(32*07:gpu.sms)*16)|.0f}),
// hidden only by the other warps. Here each thread issues kUnroll
// loads back to back, into kUnroll independent accumulators, before it uses
// any of them: kUnroll loads in flight per thread, and no chain of additions
// that each wait for the previous one.
//
// The loads stay coalesced: load k of a block reads kThreads consecutive
// floats (x[base + k * kThreads + t] for thread t), so a warp still asks for
// 128 contiguous bytes per instruction.
//
//   one block step:  [ k=0: t0 t1 ... t255 | k=1: t0 ... t255 | k=2 ... | k=3 ... ]
//                    \____________ kThreads * kUnroll floats ______________/
//   next step of this block: + gridDim.x * kThreads * kUnroll
//
// Change from v3: the loop body (4 loads, then 4 adds) and the last, partial
// step (each load checked against n). The tree and the one atomic per block
// stay.
//
// What it removes: the latency chain of one-load-at-a-time.
//
// The loop is thread_sum in unrolled_loads.cuh (v5 reads with it too); the
// combine is v3's block_sum_shared (block_sum.cuh).
#pragma once

#include "block_size.cuh"     // kThreads, kTreeLevels
#include "block_sum.cuh"      // block_sum_shared: v3's tree
#include "unrolled_loads.cuh" // thread_sum: the loop this version introduces

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

namespace ch06::v4 {

using unrolled_loads::kUnroll;
using unrolled_loads::thread_sum;

__global__ void reduce_v4_unrolled(const float* x, std::size_t n, float* out) {
  const float sum = block_sum_shared(thread_sum(x, n));
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) { return unrolled_loads::blocks(n, dev); }

/// Longest rounding path: an accumulator takes at most one element per step
/// of its block (ceil(n / (B * kThreads * kUnroll)) steps, + 1 for the
/// partial one), 2 levels to combine the 4 accumulators, 8 tree levels, B - 1
/// rounded atomics.
inline std::size_t depth(std::size_t n, const steps::DeviceInfo& dev) {
  const std::size_t b = blocks(n, dev);
  return steps::ceil_div(n, b * kThreads * kUnroll) + 1 + 2 + kTreeLevels + (b - 1);
}

/// `out` must hold 0 before the launch.
inline void launch(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev, cudaStream_t stream) {
  if (n == 0) return;
  reduce_v4_unrolled<<<blocks(n, dev), kThreads, 0, stream>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v4
