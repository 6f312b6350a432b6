// Chapter 07, part 1: a bandwidth-bound kernel, y = a * x.
//
// Each element costs one multiply and 8 bytes of DRAM traffic, so the limit
// is the memory system, which needs many bytes in flight to stay busy
// (Little's law: bytes in flight = bandwidth x latency). Occupancy is one
// way to put them in flight: more resident warps, more loads outstanding.
// Independent loads within a thread (ILP) are the other. These kernels are
// the same y = a * x with different block sizes, occupancies and register
// budgets; the rows say how much each one costs.
//
//   scale_one_per_thread   one element per thread; the block size and an
//                          unused dynamic shared-memory pad set the occupancy
//   scale_float4           one float4 per thread per step, grid-stride, one
//                          full wave; a pad sets the occupancy (half or full)
//   scale_ilp16*           16 independent float4 loads in flight per thread,
//                          grid-stride, one full wave; three register budgets:
//                          none (the compiler takes what it wants), and
//                          __launch_bounds__(256, 4) or __maxnreg__(32),
//                          which force it under 64 or 32 registers, with
//                          spills to local memory
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <cstddef>

namespace ch07::stream {

using steps::global_index;
using steps::grid_size;

/// Loads in flight per thread in the ILP kernels.
constexpr int kLoads = 16;
/// Threads per block of the ILP kernels (their __launch_bounds__ assume it).
constexpr int kIlpBlock = 256;

__global__ void scale_one_per_thread(const float* x, float* y, float a, std::size_t n) {
  const std::size_t i = global_index();
  if (i < n) y[i] = a * x[i];
}

/// The mistake row's kernel: the same code, for which nobody called
/// cudaFuncSetAttribute, so a launch with more than 48 KiB fails.
__global__ void scale_no_optin(const float* x, float* y, float a, std::size_t n) {
  const std::size_t i = global_index();
  if (i < n) y[i] = a * x[i];
}

/// kLoads float4 loads per thread, all issued before the first store: x and
/// y may alias as far as the compiler knows, so it cannot interleave them,
/// and all 16 x 4 floats are live at once (64 registers of data).
template <int kLoadsPerThread>
__device__ __forceinline__ void scale_ilp_body(const float* x, float* y, float a, std::size_t n) {
  const std::size_t n4 = n / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  auto* y4 = reinterpret_cast<float4*>(y);
  const std::size_t threads = grid_size();
  for (std::size_t base = global_index(); base < n4; base += kLoadsPerThread * threads) {
    float4 v[kLoadsPerThread];
#pragma unroll
    for (int k = 0; k < kLoadsPerThread; ++k) {
      const std::size_t i = base + k * threads;
      if (i < n4) v[k] = x4[i];
    }
#pragma unroll
    for (int k = 0; k < kLoadsPerThread; ++k) {
      const std::size_t i = base + k * threads;
      if (i < n4) y4[i] = make_float4(a * v[k].x, a * v[k].y, a * v[k].z, a * v[k].w);
    }
  }
  // The last n % 4 elements, one per thread of the first threads.
  const std::size_t tail = 4 * n4 + global_index();
  if (tail < n) y[tail] = a * x[tail];
}

/// One float4 per thread per step of a grid-stride loop (chapter 01's v3):
/// 16 bytes in flight per thread. Its occupancy is set by a pad alone.
__global__ void scale_float4(const float* x, float* y, float a, std::size_t n) { scale_ilp_body<1>(x, y, a, n); }

/// No register budget: the compiler keeps everything in registers.
__global__ void scale_ilp16(const float* x, float* y, float a, std::size_t n) {
  scale_ilp_body<kLoads>(x, y, a, n);
}

/// At least 4 blocks of 256 threads per SM: at most 65536 / 1024 = 64 registers.
__global__ __launch_bounds__(kIlpBlock, 4) void scale_ilp16_lb4(const float* x, float* y, float a, std::size_t n) {
  scale_ilp_body<kLoads>(x, y, a, n);
}

/// At most 32 registers, said directly (__maxnreg__, CUDA 12.4 and later;
/// __launch_bounds__(256, 8) would say the same on sm_90, but asks for 2048
/// threads per SM, more than Turing has). The 64 floats of data no longer
/// fit: they spill.
__global__ __maxnreg__(32) void scale_ilp16_maxnreg32(const float* x, float* y, float a, std::size_t n) {
  scale_ilp_body<kLoads>(x, y, a, n);
}

} // namespace ch07::stream
