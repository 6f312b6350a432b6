// Chapter 06, version 5: warp shuffles, then one small shared-memory step.
//
// Idea: the 32 threads of a warp can read each other's registers directly
// with __shfl_down_sync(mask, v, offset): lane l gets lane l + offset's v.
// Five such steps (offsets 16, 8, 4, 2, 1) sum a warp's 32 values into lane
// 0, with no shared memory and no __syncthreads() (the _sync in the name is
// the warp's own synchronisation):
//
//   offset 16: lane 0 += lane 16, lane 1 += lane 17, ... lane 15 += lane 31
//   offset  8: lane 0 += lane  8, ...                    lane  7 += lane 15
//   offset  4: lane 0 += lane  4, ...  lane 3 += lane 7
//   offset  2: lane 0 += lane  2, lane 1 += lane 3
//   offset  1: lane 0 += lane  1                  -> lane 0 holds the warp's sum
//
// Then lane 0 of each of the 8 warps writes its sum to shared memory, one
// __syncthreads(), and warp 0 sums those 8 values with the same shuffles.
//
// Change from v4: the 8-step shared-memory tree (8 barriers, 8 rounds of
// shared loads and stores, most threads idle after the first steps) becomes
// 5 shuffles + 1 barrier + 5 shuffles. The loads and the one atomic per block
// are v4's.
//
// What it removes: shared-memory traffic and barriers in the block's
// combine. At 2^28 floats the kernel is bound by DRAM, so expect little
// change in time there; the instruction count drops (Profile it).
//
// The shuffles are warp_sum and block_sum in block_sum.cuh (v6 and v7
// combine with them too); the loads are v4's (unrolled_loads.cuh).
#pragma once

#include "block_size.cuh"     // kThreads
#include "block_sum.cuh"      // block_sum, warp_sum: the shuffles this version introduces
#include "unrolled_loads.cuh" // thread_sum: v4's loads

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

namespace ch06::v5 {

__global__ void reduce_v5_warp_shuffle(const float* x, std::size_t n, float* out) {
  const float sum = block_sum(unrolled_loads::thread_sum(x, n)); // v4's loads, then shuffles instead of shared memory
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) { return unrolled_loads::blocks(n, dev); }

/// Longest rounding path: v4's per-thread part, 10 levels of block_sum,
/// B - 1 rounded atomics.
inline std::size_t depth(std::size_t n, const steps::DeviceInfo& dev) {
  const std::size_t b = blocks(n, dev);
  return steps::ceil_div(n, b * kThreads * unrolled_loads::kUnroll) + 1 + 2 + kBlockSumLevels + (b - 1);
}

/// `out` must hold 0 before the launch.
inline void launch(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev, cudaStream_t stream) {
  if (n == 0) return;
  reduce_v5_warp_shuffle<<<blocks(n, dev), kThreads, 0, stream>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v5
