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
#pragma once

#include "v4_unrolled.cuh"

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

namespace ch06::v5 {

/// All 32 lanes take part in every shuffle.
constexpr unsigned int kFullMask = 0xffffffffu;

/// Sums `v` over the 32 lanes of the warp; the result is valid in lane 0.
__device__ inline float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

/// Sums `v` over the block's kThreads threads: warp sums, then warp 0 sums
/// the kWarps warp sums. Valid in thread 0. Every thread must call it; call
/// it again in the same kernel only after a __syncthreads() (warp 0 may still
/// be reading `warp_sums`).
__device__ inline float block_sum(float v) {
  __shared__ float warp_sums[kWarps];
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads(); // every warp's sum is written before warp 0 reads them
  v = 0.0f;
  if (warp == 0) v = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
  return v;
}

__global__ void reduce_v5_warp_shuffle(const float* x, std::size_t n, float* out) {
  const float sum = block_sum(v4::thread_sum(x, n)); // v4's loads, then shuffles instead of shared memory
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) { return v4::blocks(n, dev); }

/// Levels of block_sum on one value's path: 5 shuffles in its warp, 5 more in
/// warp 0 (lanes 8-31 add exact zeros there, but count them anyway).
constexpr std::size_t kBlockSumLevels = 10;

/// Longest rounding path: v4's per-thread part, 10 levels of block_sum,
/// B - 1 rounded atomics.
inline std::size_t depth(std::size_t n, const steps::DeviceInfo& dev) {
  const std::size_t b = blocks(n, dev);
  return steps::ceil_div(n, b * kThreads * v4::kUnroll) + 1 + 2 + kBlockSumLevels + (b - 1);
}

/// `out` must hold 0 before the launch.
inline void launch(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev, cudaStream_t stream) {
  if (n == 0) return;
  reduce_v5_warp_shuffle<<<blocks(n, dev), kThreads, 0, stream>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v5
