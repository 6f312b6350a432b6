// Chapter 02, version 4: one float4 per thread, no loop.
//
// Change from version 3 (float4 in a grid-stride loop over one full wave):
// the grid covers the array, one float4 per thread, ceil(size / 4 / 256)
// blocks, and each thread copies its vector and exits (chapter 01's version
// 1, with 16-byte accesses). The accesses are the same coalesced 512-byte
// warp loads and stores; what changes is how the work reaches the SMs.
// For a pure stream of bytes this measured faster on the H200:
// 4227 GB/s {n:02:float4_one_per_thread:gbps}, that is
// 1.011x {n:02:float4_one_per_thread:base|.3f} cudaMemcpy device-to-device
// (4181 GB/s {n:02:memcpy:gbps}), against 3891 GB/s {n:02:float4:gbps} for version 3. This program does not prove
// why; two plausible reasons: in the loop each warp waits for its load
// before its store and its next load, a hundred times over, and the warps of
// the wave drift apart in the array; here the block scheduler starts a fresh
// block, with fresh loads, as soon as one finishes, in address order.
// (Unrolling the grid-stride loop, four float4 loads in flight per thread,
// did not close the gap in our runs.)
#pragma once

#include "aligned.cuh"    // require_aligned
#include "block_size.cuh" // kThreads

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <algorithm>

namespace ch02::v4 {

using steps::global_index;

__global__ void copy_float4_one_per_thread(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  const std::size_t n4 = n / 4; // whole float4s
  const std::size_t i = global_index();
  if (i < n4) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in)[i];
  // Tail: the last n % 4 floats, one each for the grid's first threads.
  const std::size_t tail = n - 4 * n4;
  if (i < tail) out[4 * n4 + i] = in[4 * n4 + i];
}

inline void launch(const float* in, float* out, std::size_t n, const steps::DeviceInfo&, cudaStream_t s) {
  if (n == 0) return;
  aligned::require_aligned(in, out, sizeof(float4));
  // At least one block, for a tail without any whole float4 (n < 4).
  const std::size_t blocks = std::max<std::size_t>(1, steps::ceil_div<std::size_t>(n / 4, kThreads));
  copy_float4_one_per_thread<<<static_cast<unsigned int>(blocks), kThreads, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch02::v4
