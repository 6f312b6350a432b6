// Chapter 06, version 6: 16-byte (float4) loads, with a head and a tail.
//
// Idea: chapter 01's v3 for a reduction. One float4 load moves 16 bytes, so
// the same 4 loads in flight per thread as v5 now carry 64 bytes instead of
// 16, with a quarter of the load instructions. Each float4's 4 values are
// added pairwise into one of the thread's 4 accumulators.
//
// A float4 access needs a 16-byte aligned address. cudaMalloc returns
// 256-byte aligned memory, but a view into an array (run with --offset 1)
// need not be, so the array is cut in three:
//
//   [h h h][ f4 | f4 | f4 | ... | f4 ][t t t]
//    head    body: float4 loads         tail
//   (0-3)   from the first 16-byte     (0-3: what is left after the last
//            boundary on                whole float4)
//
// The grid's first threads add the head and tail elements, one each.
//
// Change from v5: the body loop reads float4s; head and tail are added to
// the thread's sum before the block combine (v5's warp shuffles, one atomic
// per block). The grid is one wave of RESIDENT blocks, asked from the
// runtime (cudaOccupancyMaxActiveBlocksPerMultiprocessor): a kernel with more
// registers per thread fits fewer blocks per SM than v2-v5's 8.
//
// What it removes: 3 of every 4 load instructions, and it quadruples the
// bytes in flight per thread. What remains: one float atomic per block, so
// the result's last bits still depend on the order the blocks finish (v7).
#pragma once

#include "v5_warp_shuffle.cuh"

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <algorithm>
#include <cstdint>

namespace ch06::v6 {

using steps::global_index;

/// float4 loads in flight per thread (64 bytes).
constexpr int kUnroll = 4;

/// Elements before the first 16-byte boundary (at most 3, at most n).
inline std::size_t head_of(const float* x, std::size_t n) {
  const auto misaligned = reinterpret_cast<std::uintptr_t>(x) % 16;
  return std::min<std::size_t>(n, (16 - misaligned) % 16 / sizeof(float));
}

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

/// Work items of the loop: one per kUnroll float4s (head and tail need block 0 only).
inline std::size_t work_items(std::size_t n) { return steps::ceil_div<std::size_t>(n / 4, kUnroll); }

/// This thread's sum of its share of x: float4 body, plus one head and one
/// tail element for the grid's first threads. x + head must be 16-byte aligned.
__device__ inline float thread_sum(const float* __restrict__ x, std::size_t n, std::size_t head) {
  const std::size_t n4 = (n - head) / 4; // whole float4s after the head
  const auto* x4 = reinterpret_cast<const float4*>(x + head);
  constexpr std::size_t kStep = std::size_t{kThreads} * kUnroll; // float4s a block reads per step
  const std::size_t stride = gridDim.x * kStep;
  float acc[kUnroll] = {};
  std::size_t i = blockIdx.x * kStep + threadIdx.x;
  for (; i + (kUnroll - 1) * kThreads < n4; i += stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) v[k] = x4[i + k * kThreads]; // 4 loads issued before any add
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) acc[k] += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    if (i + k * kThreads < n4) {
      const float4 v = x4[i + k * kThreads];
      acc[k] += (v.x + v.y) + (v.z + v.w);
    }
  }
  static_assert(kUnroll == 4, "the line below combines exactly 4 accumulators");
  float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  // Head and tail: at most 3 elements each, taken by the grid's first threads.
  const std::size_t t = global_index();
  const std::size_t tail = head + 4 * n4;
  if (t < head) s += x[t];
  if (tail + t < n) s += x[tail + t];
  return s;
}

__global__ void reduce_v6_float4(const float* __restrict__ x, std::size_t n, std::size_t head, float* out) {
  const float sum = v5::block_sum(thread_sum(x, n, head));
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) {
  return resident_blocks(reduce_v6_float4, dev, work_items(n));
}

/// Rounding levels inside a thread besides its accumulators' chains: 2
/// inside each float4, 2 to combine the 4 accumulators, 2 for the head and
/// tail elements.
constexpr std::size_t kThreadCombineLevels = 2 + 2 + 2;

/// Longest chain of one accumulator: one float4 per step of its block,
/// ceil(n / 4 / (B * kThreads * kUnroll)) steps, + 1 for the partial one.
inline std::size_t thread_depth(std::size_t n, std::size_t b) {
  return steps::ceil_div<std::size_t>(n / 4 + 1, b * kThreads * kUnroll) + 1 + kThreadCombineLevels;
}

/// Longest rounding path: the thread part, 10 levels of block_sum, B - 1
/// rounded atomics.
inline std::size_t depth(std::size_t n, const steps::DeviceInfo& dev) {
  const std::size_t b = blocks(n, dev);
  return thread_depth(n, b) + v5::kBlockSumLevels + (b - 1);
}

/// `out` must hold 0 before the launch.
inline void launch(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev, cudaStream_t stream) {
  if (n == 0) return;
  reduce_v6_float4<<<blocks(n, dev), kThreads, 0, stream>>>(x, n, head_of(x, n), out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v6
