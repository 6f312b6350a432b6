// Chapter 06: classic reduction mistakes, on purpose. Run them with
//   ch06_reduction --mistakes          (add --integers: every check is exact)
// and watch the checks catch them. None of them is a compile error.
#pragma once

#include "block_size.cuh"            // kThreads, kWarps
#include "block_sum.cuh"             // kFullMask
#include "v1_atomic_per_element.cuh" // v1::blocks: the mistakes launch v1's and v3's grids
#include "v3_shared_tree.cuh"        // v3::blocks

#include "steps/error.hpp"
#include "steps/launch.cuh"

namespace ch06::mistakes {

using steps::global_index;
using steps::grid_size;

// Mistake: no bounds check in v1. The last block's extra threads add
// elements past the end of x: here the NaN of the guard zone around it, in a
// real program whatever lies next to the array.
__global__ void mistake_atomic_no_bounds_check(const float* x, std::size_t, float* out) {
  atomicAdd(out, x[global_index()]);
}

// Mistake: v3's tree without the __syncthreads() between its steps. A warp
// that runs ahead reads its partner's slot before the partner has added into
// it (or a slot still holding a previous block's value).
__global__ void mistake_tree_no_sync(const float* x, std::size_t n, float* out) {
  __shared__ float partial[kThreads];
  float sum = 0.0f;
  for (std::size_t i = global_index(); i < n; i += grid_size()) sum += x[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    // missing: __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

// Mistake: the warp shuffle loop stops one step early (offset > 1 instead of
// offset > 0). Lane 0 never receives lane 1's half: the odd lanes' sums are
// lost in every warp.
__device__ inline float warp_sum_stops_early(float v) {
  for (int offset = 16; offset > 1; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

__global__ void mistake_shuffle_stops_early(const float* x, std::size_t n, float* out) {
  __shared__ float warp_sums[kWarps];
  float sum = 0.0f;
  for (std::size_t i = global_index(); i < n; i += grid_size()) sum += x[i];
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  sum = warp_sum_stops_early(sum);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = warp_sum_stops_early(lane < kWarps ? warp_sums[lane] : 0.0f);
    if (lane == 0) atomicAdd(out, sum);
  }
}

inline void atomic_no_bounds_check(const float* x, std::size_t n, float* out, cudaStream_t s) {
  mistake_atomic_no_bounds_check<<<v1::blocks(n), kThreads, 0, s>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

inline void tree_no_sync(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev, cudaStream_t s) {
  mistake_tree_no_sync<<<v3::blocks(n, dev), kThreads, 0, s>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

inline void shuffle_stops_early(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev,
                                cudaStream_t s) {
  mistake_shuffle_stops_early<<<v3::blocks(n, dev), kThreads, 0, s>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

// The fourth mistake needs no kernel of its own: v3 run WITHOUT zeroing its
// result first (main.cu, row mistake_not_zeroed). The atomics add the sum on
// top of whatever the result held: here the NaN the check poisons it with,
// in a loop the previous run's sum.

} // namespace ch06::mistakes
