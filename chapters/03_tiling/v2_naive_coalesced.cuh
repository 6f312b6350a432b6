// Chapter 03, version 2: naive, coalesced.
//
// Change from version 1: threadIdx.x walks the COLUMNS of C. A warp now
// handles 32 neighbouring elements of one row of C: at each step of the dot
// product its 32 threads read the same A(row, i) (one broadcast load) and 32
// consecutive floats of row i of B (one 128-byte load), and they write 128
// contiguous bytes of C. Same arithmetic, same 4 bytes loaded per FLOP per
// thread, but each warp-wide load is now 1 transaction instead of 32.
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 23.35 ms {n:03:naive_coalesced:ms}, 5.9 TFLOP/s {n:03:naive_coalesced:value},
// 11.81x {n:03:naive_coalesced:speedup} naive.
#pragma once

#include "gemm.cuh"

#include "steps/error.hpp"

namespace ch03::v2 {

constexpr int kBlock = 32;

__global__ void sgemm_naive_coalesced(int m, int n, int k, const float* a, const float* b, float* c) {
  const int row = blockIdx.y * kBlock + threadIdx.y;
  const int col = blockIdx.x * kBlock + threadIdx.x; // x -> columns: neighbours in a warp
  if (row >= m || col >= n) return;
  const float* a_row = a + static_cast<std::size_t>(row) * k;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) acc += a_row[i] * b[static_cast<std::size_t>(i) * n + col];
  c[static_cast<std::size_t>(row) * n + col] = acc;
}

inline void launch(const Gemm& g, cudaStream_t stream) {
  sgemm_naive_coalesced<<<tile_grid(g.m, g.n, kBlock, kBlock), dim3(kBlock, kBlock), 0, stream>>>(g.m, g.n, g.k,
                                                                                              g.a, g.b, g.c);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch03::v2
