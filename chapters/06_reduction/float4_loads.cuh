// Chapter 06: a thread's sum of its share of x, in 16-byte (float4) loads.
//
// The loop that v6 introduces (v6_float4.cuh says why) and v7 keeps: the
// array cut in a head (before the first 16-byte boundary), a body of float4s
// read kUnroll at a time into kUnroll accumulators, and a tail; the grid's
// first threads add the head and tail elements.
#pragma once

#include "block_size.cuh" // kThreads

#include "steps/launch.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ch06::float4_loads {

using steps::global_index;

/// float4 loads in flight per thread (64 bytes).
constexpr int kUnroll = 4;

/// Elements before the first 16-byte boundary (at most 3, at most n).
inline std::size_t head_of(const float* x, std::size_t n) {
  const auto misaligned = reinterpret_cast<std::uintptr_t>(x) % 16;
  return std::min<std::size_t>(n, (16 - misaligned) % 16 / sizeof(float));
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

/// Rounding levels inside a thread besides its accumulators' chains: 2
/// inside each float4, 2 to combine the 4 accumulators, 2 for the head and
/// tail elements.
constexpr std::size_t kThreadCombineLevels = 2 + 2 + 2;

/// Longest chain of one accumulator: one float4 per step of its block,
/// ceil(n / 4 / (B * kThreads * kUnroll)) steps, + 1 for the partial one.
inline std::size_t thread_depth(std::size_t n, std::size_t b) {
  return steps::ceil_div<std::size_t>(n / 4 + 1, b * kThreads * kUnroll) + 1 + kThreadCombineLevels;
}

} // namespace ch06::float4_loads
