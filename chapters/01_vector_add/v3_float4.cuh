// Chapter 01, version 3: 16-byte (float4) loads and stores in a grid-stride loop.
//
// Change from version 2: each thread moves 4 floats per instruction instead
// of 1. A warp then asks for 512 contiguous bytes per instruction, the memory
// system gets a quarter as many, larger requests, and each thread has more bytes in
// flight while it waits (the limit of a memory-bound kernel).
//
// The catch: a float4 access must be 16-byte aligned. cudaMalloc returns
// 256-byte aligned memory, but a pointer into the middle of an array (a view,
// a slice) need not be. So:
//   - "head": up to 3 leading elements, until the arrays reach a 16-byte
//     boundary, are done one by one;
//   - "body": float4 from there on;
//   - "tail": the last (n - head) % 4 elements, one by one.
// This only works when a, b and c are misaligned by the same amount (the same
// head brings all three to a boundary). When they are not, no float4 view of
// all three exists (usable() says so) and the chapter's row runs version 2.
// The test and the head are in float4_view.cuh, where version 4 finds them.
#pragma once

#include "block_size.cuh"  // kThreads
#include "float4_view.cuh" // common_head: head, float4 body, tail

#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <stdexcept>

namespace ch01::v3 {

using steps::global_index;
using steps::grid_size;

__global__ void add_float4(const float* a, const float* b, float* c, std::size_t n, std::size_t head) {
  const std::size_t n4 = (n - head) / 4; // whole float4s after the head
  const auto* a4 = reinterpret_cast<const float4*>(a + head);
  const auto* b4 = reinterpret_cast<const float4*>(b + head);
  auto* c4 = reinterpret_cast<float4*>(c + head);
  for (std::size_t i = global_index(); i < n4; i += grid_size()) {
    const float4 x = a4[i];
    const float4 y = b4[i];
    c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  // Head and tail are at most 3 elements each: the first threads take them.
  const std::size_t t = global_index();
  const std::size_t tail = head + 4 * n4;
  if (t < head) c[t] = a[t] + b[t];
  if (tail + t < n) c[tail + t] = a[tail + t] + b[tail + t];
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
  if (!float4_view::common_head(a, b, c, n, head)) throw std::logic_error("v3: a, b and c have no common float4 view");
  add_float4<<<steps::full_wave_blocks(dev, (n - head) / 4 + 1, kThreads), kThreads, 0, stream>>>(a, b, c, n, head);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch01::v3
