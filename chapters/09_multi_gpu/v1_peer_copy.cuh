// Chapter 09, version 1: moving bytes from one GPU to another.
//
// Idea: with peer access on, GPU 1's memory is just more memory to GPU 0,
// behind a link (NVLink on our machines, PCIe P2P elsewhere). Two ways to
// use it:
//   - the copy engines: cudaMemcpyPeerAsync(dst, dst_gpu, src, src_gpu, bytes,
//     stream) (the baseline: what the driver does with the link);
//   - our own kernel: a thread on GPU 0 stores into a pointer that lives on
//     GPU 1 ("push", remote writes), or a thread on GPU 1 loads from a
//     pointer that lives on GPU 0 ("pull", remote reads). The SMs, not the
//     copy engines, drive the link.
// Both ways at once (0 -> 1 and 1 -> 0) show whether the link is
// full-duplex: each direction has its own lanes.
//
// Change from chapter 08: the other end of the copy is a GPU, not host
// memory, and the same load/store instructions reach it.
//
// What it shows: a copy kernel needs enough bytes in flight to cover the
// link's latency (several float4 per thread), just as chapter 01's copy
// needed them to cover DRAM's. With 4 float4 per thread over a full grid
// (about 17 MB in flight) push and pull both run at the link's speed on our
// two H200s, against cudaMemcpyPeerAsync's 396 {n:2xH200/09:memcpy_peer:value} GB/s:
//   push 370 {n:2xH200/09:peer_push:value} GB/s, pull 374 {n:2xH200/09:peer_pull:value} GB/s.
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <cuda_runtime.h>

#include <cstddef>

namespace ch09::v1 {

constexpr int kThreads = 256;
/// float4 loads each thread has in flight per iteration: 64 bytes per thread,
/// enough to keep the link busy (measured: push and pull at 0.93-0.94x the
/// copy engines).
constexpr int kUnroll = 4;

/// dst[i] = src[i] for i < n, either pointer possibly on another GPU.
/// NOTE: cudaMalloc returns 256-byte aligned memory, so both start on a
/// 16-byte boundary; the last n % 4 floats are copied one by one.
__global__ void copy_float4(const float* __restrict__ src, float* __restrict__ dst, std::size_t n) {
  const std::size_t n4 = n / 4;
  const float4* s4 = reinterpret_cast<const float4*>(src);
  float4* d4 = reinterpret_cast<float4*>(dst);
  const std::size_t stride = steps::grid_size();
  std::size_t i = steps::global_index();
  // Main loop: kUnroll independent loads first, then their stores.
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = s4[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) d4[i + u * stride] = v[u];
  }
  for (; i < n4; i += stride) d4[i] = s4[i];
  // Tail: fewer than 4 floats, one thread each.
  const std::size_t t = 4 * n4 + steps::global_index();
  if (t < n) dst[t] = src[t];
}

/// Blocks for a copy of n floats on `dev`: a few full waves.
inline unsigned int blocks(const steps::DeviceInfo& dev, std::size_t n) {
  return steps::full_wave_blocks(dev, n / (4 * kUnroll) + 1, kThreads);
}

/// Launches the copy kernel in `stream` (on the GPU current for `stream`).
inline void copy(const float* src, float* dst, std::size_t n, const steps::DeviceInfo& dev, cudaStream_t stream) {
  copy_float4<<<blocks(dev, n), kThreads, 0, stream>>>(src, dst, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch09::v1
