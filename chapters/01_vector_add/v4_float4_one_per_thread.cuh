// Chapter 01, version 4: float4, one per thread, no loop.
//
// Change from version 3: the same 16-byte loads and stores, the same head
// and tail, but v1's grid instead of v2's loop: one float4 of a, b and c per
// thread and as many blocks as the array needs (ceil(n / 1024) blocks of
// 256), so every thread has exactly one pair of loads to issue and retires.
//
//   v3:  1,056 blocks (one wave), each thread ~127 passes:  i, i + G, i + 2G ...
//   v4:  ~131,000 blocks, one float4 per thread; the block scheduler starts
//        the next block (the next 4 KiB of each array) as one finishes
//
// Bytes in flight per thread are the same (two float4 loads), and so are the
// bytes each kernel moves to and from DRAM (Nsight Compute: the lesson's
// table). What changes is how busy the DRAM is while the kernel runs:
// 91.0% {n:prof:01_vector_add.float4_dram:v4_dram_pct|.1f} of its peak
// against 87.0% {n:prof:01_vector_add.float4_dram:v3_dram_pct|.1f} for v3.
// Measured on the H200: 4336 GB/s {n:01:float4_one_per_thread:gbps},
// 1.04x {n:01:float4_one_per_thread:base|.2f} cudaMemcpy device-to-device,
// which moves 8 bytes per element where vector add moves 12.
//
// Same alignment rules as version 3 (float4_view.cuh): when a, b and c are
// not misaligned alike there is no common float4 view (usable() says so),
// and the chapter's row runs version 2.
#pragma once

#include "block_size.cuh"  // kThreads
#include "float4_view.cuh" // common_head: v3's head, float4 body, tail

#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <algorithm>
#include <stdexcept>

namespace ch01::v4 {

__global__ void add_float4_one_per_thread(const float* a, const float* b, float* c, std::size_t n,
                                          std::size_t head) {
  const std::size_t n4 = (n - head) / 4; // whole float4s after the head
  const std::size_t i = steps::global_index();
  if (i < n4) {
    const float4 x = reinterpret_cast<const float4*>(a + head)[i];
    const float4 y = reinterpret_cast<const float4*>(b + head)[i];
    reinterpret_cast<float4*>(c + head)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  // Head and tail are at most 3 elements each: the first threads take them.
  const std::size_t tail = head + 4 * n4;
  if (i < head) c[i] = a[i] + b[i];
  if (tail + i < n) c[tail + i] = a[tail + i] + b[tail + i];
}

/// True when a, b and c have a common float4 view (float4_view.cuh).
inline bool usable(const float* a, const float* b, const float* c, std::size_t n) {
  std::size_t head = 0;
  return float4_view::common_head(a, b, c, n, head);
}

/// Only where usable(); the chapter's row runs version 2 elsewhere.
inline void launch(const float* a, const float* b, float* c, std::size_t n, const steps::DeviceInfo& dev,
                   cudaStream_t stream) {
  if (n == 0) return;
  std::size_t head = 0;
  if (!float4_view::common_head(a, b, c, n, head)) throw std::logic_error("v4: a, b and c have no common float4 view");
  // One thread per float4, at least one block (for a head or tail alone).
  const std::size_t blocks = std::max<std::size_t>(1, steps::ceil_div<std::size_t>((n - head) / 4, kThreads));
  add_float4_one_per_thread<<<static_cast<unsigned int>(blocks), kThreads, 0, stream>>>(a, b, c, n, head);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch01::v4
