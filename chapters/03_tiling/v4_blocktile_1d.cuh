// Chapter 03, version 4: 1D register blocking (8 results per thread).
//
// Change from version 3: a thread computes TM = 8 elements of C (8 rows of one
// column) instead of 1, so the block tile grows to BM x BN = 64 x 64 with 512
// threads, and K is walked in thin slices of BK = 8.
//
//   tile_b (BK x BN)            per step i of the slice, thread t:
//   +----------------+            b = tile_b[i][col]         (1 shared load)
//   |        b       |            for r in 0..7:
//   +----------------+              acc[r] += tile_a[row0 + r][i] * b
//   tile_a (BM x BK)                         (8 shared loads, 8 FMAs)
//   +--+
//   |a |  rows row0 .. row0 + 7
//   |a |
//   +--+
//
// Why it pays: version 3 needs 2 shared-memory loads per multiply-add (4 bytes
// per FLOP from shared memory); here 9 loads feed 8 multiply-adds (2.25 bytes
// per FLOP), and the b value is reused from a register 8 times. Global
// traffic also halves again: a 64 x 64 tile loads 2 * 64 floats per 64 * 64
// multiply-adds (0.0625 bytes per FLOP, against 0.125 for 32 x 32 tiles).
// The 8 accumulators live in registers: the loops over r are unrolled so
// that acc[r] is always indexed by a constant (an array indexed at run time
// would go to slow local memory).
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 8.492 ms {n:03:blocktile_1d:ms|.3f}, 16.2 TFLOP/s {n:03:blocktile_1d:value}.
#pragma once

#include "gemm.cuh"

#include "steps/error.hpp"

namespace ch03::v4 {

constexpr int BM = 64, BN = 64, BK = 8; // block tile and slice depth
constexpr int TM = 8;                   // results per thread (one column, 8 rows)
constexpr int kThreads = BM * BN / TM;  // 512
static_assert(kThreads == BM * BK && kThreads == BK * BN,
              "each thread copies exactly one element of each tile per slice");

__global__ void __launch_bounds__(kThreads) sgemm_blocktile_1d(int m, int n, int k, const float* a, const float* b,
                                                               float* c) {
  __shared__ float tile_a[BM][BK]; // (row in tile, i)
  __shared__ float tile_b[BK][BN]; // (i, column in tile)
  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  // Copying: thread t copies tile_a[t / BK][t % BK] and tile_b[t / BN][t % BN].
  const int a_row = tid / BK, a_col = tid % BK;
  const int b_row = tid / BN, b_col = tid % BN;
  // Computing: thread t owns column t % BN, rows (t / BN) * TM .. + TM - 1.
  // The 32 threads of a warp share their rows (a broadcast from tile_a) and
  // read 32 consecutive columns of tile_b.
  const int col = tid % BN, row0 = tid / BN * TM;

  float acc[TM] = {};
  for (int k0 = 0; k0 < k; k0 += BK) {
    tile_a[a_row][a_col] = load_or_zero(a, m, k, k, block_row + a_row, k0 + a_col);
    tile_b[b_row][b_col] = load_or_zero(b, k, n, n, k0 + b_row, block_col + b_col);
    __syncthreads();
#pragma unroll
    // [snippet inner]
    for (int i = 0; i < BK; ++i) {
      const float b_val = tile_b[i][col];
#pragma unroll
      for (int r = 0; r < TM; ++r) acc[r] += tile_a[row0 + r][i] * b_val;
    }
    // [/snippet inner]
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; ++r) {
    const int gr = block_row + row0 + r, gc = block_col + col;
    if (gr < m && gc < n) c[static_cast<std::size_t>(gr) * n + gc] = acc[r];
  }
}

inline void launch(const Gemm& g, cudaStream_t stream) {
  sgemm_blocktile_1d<<<tile_grid(g.m, g.n, BM, BN), kThreads, 0, stream>>>(g.m, g.n, g.k, g.a, g.b, g.c);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch03::v4
