// Chapter 03, version 5: 2D register blocking (8 x 8 results per thread).
//
// Change from version 4: a thread computes an 8 x 8 square of C instead of an
// 8 x 1 column. At each step i of a slice it loads 8 values of A (a column
// piece of the A tile) and 8 values of B (a row piece of the B tile) into
// registers and forms all 64 products: an outer product.
//
//                      reg_b: tile_b[i][col0 .. col0+7]
//                      [b0 b1 b2 b3 b4 b5 b6 b7]
//   reg_a:  [a0]     +-------------------------+
//   tile_a  [a1]     |  acc[r][c] += a_r * b_c  |   64 FMAs per
//   [row0+r][i]  ... |                          |   16 shared loads
//           [a7]     +-------------------------+
//
// Shared-memory traffic falls to 16 loads per 64 multiply-adds (0.5 bytes per
// FLOP, from 2.25); the block tile grows to 128 x 128 with 256 threads, so
// global loads fall to 2 * 128 floats per 128 * 128 multiply-adds per slice
// (0.031 bytes per FLOP). The price: 64 accumulators + 16 operands per thread,
// 147 registers with nvcc 13.0, so only one block of 256 threads fits on an SM.
//
// Left for later versions: each thread copies 4 + 4 scalars per slice, and the
// shared loads are scalar and partly bank-conflicted (version 6).
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 6.591 ms {n:03:blocktile_2d:ms|.3f}, 20.9 TFLOP/s {n:03:blocktile_2d:value}.
#pragma once

#include "gemm.cuh"

#include "steps/error.hpp"

namespace ch03::v5 {

constexpr int BM = 128, BN = 128, BK = 8; // block tile and slice depth
constexpr int TM = 8, TN = 8;             // results per thread
constexpr int kThreads = (BM / TM) * (BN / TN); // 256
constexpr int kCopiesA = BM * BK / kThreads;    // elements of tile_a each thread copies per slice (4)
constexpr int kCopiesB = BK * BN / kThreads;    // elements of tile_b (4)
static_assert(BM * BK % kThreads == 0 && BK * BN % kThreads == 0, "the tiles split evenly over the threads");

__global__ void __launch_bounds__(kThreads) sgemm_blocktile_2d(int m, int n, int k, const float* a, const float* b,
                                                               float* c) {
  __shared__ float tile_a[BM][BK]; // (row in tile, i)
  __shared__ float tile_b[BK][BN]; // (i, column in tile)
  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  // Thread t owns rows row0 .. row0 + 7 and columns col0 .. col0 + 7 of the tile.
  const int row0 = tid / (BN / TN) * TM, col0 = tid % (BN / TN) * TN;

  float acc[TM][TN] = {};
  float reg_a[TM], reg_b[TN];
  for (int k0 = 0; k0 < k; k0 += BK) {
    // Copy: element e = tid + j * kThreads of each tile, row-major in the tile.
#pragma unroll
    for (int j = 0; j < kCopiesA; ++j) {
      const int e = tid + j * kThreads;
      tile_a[e / BK][e % BK] = load_or_zero(a, m, k, k, block_row + e / BK, k0 + e % BK);
    }
#pragma unroll
    for (int j = 0; j < kCopiesB; ++j) {
      const int e = tid + j * kThreads;
      tile_b[e / BN][e % BN] = load_or_zero(b, k, n, n, k0 + e / BN, block_col + e % BN);
    }
    __syncthreads();
#pragma unroll
    // [snippet inner]
    for (int i = 0; i < BK; ++i) {
#pragma unroll
      for (int r = 0; r < TM; ++r) reg_a[r] = tile_a[row0 + r][i];
#pragma unroll
      for (int q = 0; q < TN; ++q) reg_b[q] = tile_b[i][col0 + q];
#pragma unroll
      for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int q = 0; q < TN; ++q) acc[r][q] += reg_a[r] * reg_b[q];
    }
    // [/snippet inner]
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; ++r) {
    const int gr = block_row + row0 + r;
#pragma unroll
    for (int q = 0; q < TN; ++q) {
      const int gc = block_col + col0 + q;
      if (gr < m && gc < n) c[static_cast<std::size_t>(gr) * n + gc] = acc[r][q];
    }
  }
}

inline void launch(const Gemm& g, cudaStream_t stream) {
  sgemm_blocktile_2d<<<tile_grid(g.m, g.n, BM, BN), kThreads, 0, stream>>>(g.m, g.n, g.k, g.a, g.b, g.c);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch03::v5
