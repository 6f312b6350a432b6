// Chapter 06: a block's threads combine their sums into one value.
//
// Two ways, each taught by the version that introduces it:
//   block_sum_shared  the shared-memory tree of v3 (8 steps, a barrier after
//                     each); v4 combines with it too.
//   block_sum         v5's warp shuffles: 5 shuffles per warp, one barrier,
//                     5 more in warp 0; v6 and v7 combine with it too.
#pragma once

#include "block_size.cuh" // kThreads, kWarps

#include <cstddef>

namespace ch06 {

/// Sums `v` over the block's kThreads threads through shared memory; the
/// result is valid in thread 0. Every thread of the block must call it.
__device__ inline float block_sum_shared(float v) {
  __shared__ float partial[kThreads];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads(); // step s must be complete before step s / 2 reads its results
  }
  return partial[0];
}

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

/// Levels of block_sum on one value's path: 5 shuffles in its warp, 5 more in
/// warp 0 (lanes 8-31 add exact zeros there, but count them anyway).
constexpr std::size_t kBlockSumLevels = 10;

} // namespace ch06
