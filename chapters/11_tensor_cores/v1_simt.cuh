// Chapter 11, version 1: where we come from: chapter 03's tiles on the CUDA
// cores, with BF16 inputs.
//
// A block of 256 threads computes a 64 x 64 tile of C. Each 16-deep slice
// of A and B is copied into shared memory once, converted to FP32 on the
// way (a BF16 is the top half of an FP32: the conversion is a shift), and
// every thread multiplies 4 rows by 4 columns of it: 16 fused multiply-adds
// per 8 values read from shared memory (chapter 03's register blocking,
// version 5). Edges: loads outside A or B give 0, stores outside C are
// skipped.
//
// Every multiply-add is an FFMA on the CUDA cores: the tensor cores, which
// the next versions use, sit idle. This version's speed is the ceiling of
// the FP32 pipes, not of the GPU.
#pragma once

#include "bf16_gemm.cuh"

#include "steps/error.hpp"

#include <cstddef>
#include <cstdint>

namespace ch11::v1 {

constexpr int BLOCK_M = 64, BLOCK_N = 64, BLOCK_K = 16;
constexpr int kThreads = 256; // 16 x 16 threads, 4 x 4 elements of C each
constexpr int kPerThread = 4;

/// The FP32 value of A or B at (row, col) of a rows x cols BF16 matrix, 0 outside.
__device__ __forceinline__ float load_or_zero(const bf16* p, int rows, int cols, int row, int col) {
  if (row >= rows || col >= cols) return 0.0f;
  const std::uint16_t raw = bits(p)[static_cast<std::size_t>(row) * cols + col];
  return __uint_as_float(static_cast<std::uint32_t>(raw) << 16);
}

__global__ void __launch_bounds__(kThreads) gemm_simt(Gemm g) {
  __shared__ __align__(16) float tile_a[BLOCK_K][BLOCK_M]; // (k, row): A transposed, so a thread's 4 rows are adjacent
  __shared__ __align__(16) float tile_b[BLOCK_K][BLOCK_N]; // (k, column)
  const int tx = static_cast<int>(threadIdx.x % 16), ty = static_cast<int>(threadIdx.x / 16);
  const int m0 = static_cast<int>(blockIdx.y) * BLOCK_M, n0 = static_cast<int>(blockIdx.x) * BLOCK_N;
  float acc[kPerThread][kPerThread] = {};

  for (int k0 = 0; k0 < g.k; k0 += BLOCK_K) {
    // 64 x 16 of A and 16 x 64 of B: 4 elements of each per thread,
    // consecutive threads along the rows of memory (coalesced).
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int e = static_cast<int>(threadIdx.x) + i * kThreads;
      const int ar = e / BLOCK_K, ak = e % BLOCK_K;   // A: 64 rows of 16
      tile_a[ak][ar] = load_or_zero(g.a, g.m, g.k, m0 + ar, k0 + ak);
      const int bk = e / BLOCK_N, bc = e % BLOCK_N;   // B: 16 rows of 64
      tile_b[bk][bc] = load_or_zero(g.b, g.k, g.n, k0 + bk, n0 + bc);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BLOCK_K; ++kk) {
      const float4 a4 = *reinterpret_cast<const float4*>(&tile_a[kk][ty * kPerThread]);
      const float4 b4 = *reinterpret_cast<const float4*>(&tile_b[kk][tx * kPerThread]);
      const float a[4] = {a4.x, a4.y, a4.z, a4.w}, b[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < kPerThread; ++i)
#pragma unroll
    for (int j = 0; j < kPerThread; j += 2)
      store_pair(g, m0 + ty * kPerThread + i, n0 + tx * kPerThread + j, acc[i][j], acc[i][j + 1]);
}

inline void launch(const Gemm& g, cudaStream_t stream) {
  gemm_simt<<<tile_grid(g.m, g.n, BLOCK_M, BLOCK_N), kThreads, 0, stream>>>(g);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch11::v1
