// Chapter 02: a classic mistake, on purpose. Run it with
//   ch02_coalescing --mistakes
// and watch the check catch it. It compiles, runs, and is fast.
#pragma once

#include "aligned.cuh"    // require_aligned
#include "block_size.cuh" // kThreads

#include "steps/error.hpp"

namespace ch02::mistakes {

using steps::global_index;
using steps::grid_size;

// Mistake: vectorising without a tail. n / 4 float4s cover 4 * (n / 4)
// floats; when n is not a multiple of 4 the last n % 4 are never copied.
__global__ void copy_float4_no_tail(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  const std::size_t n4 = n / 4;
  const auto* in4 = reinterpret_cast<const float4*>(in);
  auto* out4 = reinterpret_cast<float4*>(out);
  for (std::size_t i = global_index(); i < n4; i += grid_size()) out4[i] = in4[i];
}

inline void float4_no_tail(const float* in, float* out, std::size_t n, const steps::DeviceInfo& dev, cudaStream_t s) {
  if (n / 4 == 0) return;
  aligned::require_aligned(in, out, sizeof(float4));
  copy_float4_no_tail<<<steps::full_wave_blocks(dev, n / 4, kThreads), kThreads, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch02::mistakes
