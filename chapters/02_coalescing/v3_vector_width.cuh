// Chapter 02, version 3: wider loads, float2 (8 bytes) and float4 (16 bytes).
//
// Change from version 1 (stride 1, one 4-byte float per thread and load):
// each thread moves 2 or 4 neighbouring floats with one instruction. A warp's
// load then covers 256 or 512 contiguous bytes (8 or 16 sectors, all used)
// instead of 128, so the same bytes need half or a quarter as many load instructions,
// and each thread has more bytes in flight while it waits for memory.
//
//   float   thread t: [t]                      warp: 128 B = 4 sectors
//   float2  thread t: [2t, 2t+1]               warp: 256 B = 8 sectors
//   float4  thread t: [4t .. 4t+3]             warp: 512 B = 16 sectors
//
// The rule that comes with it: a float4 access needs a 16-byte aligned
// address (float2: 8 bytes). in and out come from cudaMalloc (256-byte
// aligned); the last size % 4 floats, which make no whole float4, are the
// "tail" and are copied one by one. Measured on the H200:
// 3938 GB/s {n:02:float2:gbps} with float2 and 3891 GB/s {n:02:float4:gbps}
// with float4, against 3056 GB/s {n:02:stride_1:gbps} for one float per thread.
#pragma once

#include "aligned.cuh"    // require_aligned
#include "block_size.cuh" // kThreads

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <stdexcept>
#include <string>

namespace ch02::v3 {

using steps::global_index;
using steps::grid_size;

/// Copies n floats as vectors of type V (float2 or float4) in a grid-stride
/// loop, then the tail of n % (floats per V) floats.
template <class V>
__device__ void copy_vectors(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  constexpr std::size_t kWidth = sizeof(V) / sizeof(float); // floats per vector
  const std::size_t n_vec = n / kWidth;                      // whole vectors
  const V* in_v = reinterpret_cast<const V*>(in);
  V* out_v = reinterpret_cast<V*>(out);
  for (std::size_t i = global_index(); i < n_vec; i += grid_size()) out_v[i] = in_v[i];
  // Tail: at most kWidth - 1 floats after the last whole vector; the first
  // threads of the grid take one each.
  const std::size_t t = n_vec * kWidth + global_index();
  if (t < n) out[t] = in[t];
}

__global__ void copy_float2(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  copy_vectors<float2>(in, out, n);
}
__global__ void copy_float4(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  copy_vectors<float4>(in, out, n);
}

inline void launch_float2(const float* in, float* out, std::size_t n, const steps::DeviceInfo& dev, cudaStream_t s) {
  if (n == 0) return;
  aligned::require_aligned(in, out, sizeof(float2));
  copy_float2<<<steps::full_wave_blocks(dev, n / 2, kThreads), kThreads, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

inline void launch_float4(const float* in, float* out, std::size_t n, const steps::DeviceInfo& dev, cudaStream_t s) {
  if (n == 0) return;
  aligned::require_aligned(in, out, sizeof(float4));
  copy_float4<<<steps::full_wave_blocks(dev, n / 4, kThreads), kThreads, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch02::v3
