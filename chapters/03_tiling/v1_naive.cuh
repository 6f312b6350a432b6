// Chapter 03, version 1: naive, one thread per element of C.
//
// The matrix product written the way the formula reads: thread (x, y) owns
// C(row, col) and runs the whole dot product of row `row` of A with column
// `col` of B, straight from global memory.
//
// The mistake that makes it slow is the mapping: threadIdx.x (the index that
// changes fastest inside a warp) walks down the ROWS of C. The 32 threads of a
// warp then read A at 32 addresses k floats apart and write C at 32 addresses
// n floats apart: every load is 32 separate memory transactions (chapter 02).
// Each multiply-add also loads two floats (8 bytes per 2 FLOP: 4 bytes per
// FLOP), the worst arithmetic intensity a GEMM can have.
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 275.8 ms {n:03:naive:ms|.1f}, 0.5 TFLOP/s {n:03:naive:value}, 1.0% {n:03:naive:pbase} of cuBLAS.
#pragma once

#include "gemm.cuh"

#include "steps/error.hpp"

namespace ch03::v1 {

constexpr int kBlock = 32; // 32 x 32 = 1024 threads per block

__global__ void sgemm_naive(int m, int n, int k, const float* a, const float* b, float* c) {
  const int row = blockIdx.x * kBlock + threadIdx.x; // x -> rows: uncoalesced on purpose
  const int col = blockIdx.y * kBlock + threadIdx.y;
  if (row >= m || col >= n) return; // the last blocks overhang the matrix
  const float* a_row = a + static_cast<std::size_t>(row) * k;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) acc += a_row[i] * b[static_cast<std::size_t>(i) * n + col];
  c[static_cast<std::size_t>(row) * n + col] = acc;
}

inline void launch(const Gemm& g, cudaStream_t stream) {
  // Rows on x, columns on y: the grid is the transpose of tile_grid's.
  const dim3 grid = tile_grid(g.n, g.m, kBlock, kBlock);
  sgemm_naive<<<grid, dim3(kBlock, kBlock), 0, stream>>>(g.m, g.n, g.k, g.a, g.b, g.c);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch03::v1
