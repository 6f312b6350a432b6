// Chapter 07, part 3: where a small read-only table should live.
//
// y[i] = sum over k of x[i] * table[j(k)], for kTerms terms, with the table
// in one of two places and two patterns of j:
//
//   const_broadcast   __constant__ memory, j = k: every thread of a warp
//                     reads the same word at once. The constant cache
//                     serves a warp one word per request: one request.
//   const_divergent   __constant__ memory, j = (33 * lane + k) % 256: the 32
//                     threads of a warp read 32 different words, and the
//                     constant cache serves them one after another (32
//                     requests for what was one).
//   shared_divergent  the same divergent j, from a copy of the table in
//                     shared memory: 32 different words in 32 different
//                     banks ((33 * lane + k) % 32 = (lane + k) % 32), one
//                     request.
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <cstddef>

namespace ch07::constant {

using steps::global_index;

/// Words in the table (a power of two).
constexpr int kTable = 256;
/// Table reads per element.
constexpr int kTerms = 32;
/// Threads per block.
constexpr int kBlock = 256;

__constant__ float c_table[kTable];

/// The table index of term k for a thread in lane `lane` of its warp, in
/// the divergent rows: 33 is odd, so the 32 lanes read 32 different words.
__host__ __device__ inline int divergent_index(int lane, int k) { return (33 * lane + k) & (kTable - 1); }

__global__ void const_broadcast(const float* x, float* y, std::size_t n) {
  const std::size_t i = global_index();
  if (i >= n) return;
  const float v = x[i];
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < kTerms; ++k) acc = fmaf(v, c_table[k], acc); // same k in every lane: a broadcast
  y[i] = acc;
}

__global__ void const_divergent(const float* x, float* y, std::size_t n) {
  const std::size_t i = global_index();
  if (i >= n) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const float v = x[i];
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < kTerms; ++k) acc = fmaf(v, c_table[divergent_index(lane, k)], acc); // 32 words per warp
  y[i] = acc;
}

__global__ void shared_divergent(const float* table, const float* x, float* y, std::size_t n) {
  __shared__ float s_table[kTable];
  // Every thread helps to load the table and reaches the barrier, also
  // those past the end of x.
  for (int j = static_cast<int>(threadIdx.x); j < kTable; j += blockDim.x) s_table[j] = table[j];
  __syncthreads();
  const std::size_t i = global_index();
  if (i >= n) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const float v = x[i];
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < kTerms; ++k) acc = fmaf(v, s_table[divergent_index(lane, k)], acc); // 32 banks
  y[i] = acc;
}

} // namespace ch07::constant
