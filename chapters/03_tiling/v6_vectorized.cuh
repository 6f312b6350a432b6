// Chapter 03, version 6: 16-byte loads, A stored transposed in shared memory.
//
// Change from version 5 (same 128 x 128 x 8 tiles, same 8 x 8 per thread):
//  - global -> shared: each thread copies ONE float4 of A and ONE float4 of B
//    per slice (2 load instructions instead of 8);
//  - the A tile is stored transposed, tile_a_t[i][row], so that the 8 values
//    of A a thread needs at step i are contiguous, like its 8 values of B:
//
//      tile_a  (v5)  [row][i]     thread reads a column: 8 scalar loads
//      tile_a_t (v6) [i][row]     thread reads a row:    2 float4 loads
//
//    shared -> registers: 4 LDS.128 per step instead of 16 LDS.32.
// Fewer instructions for the same bytes leave more issue slots to the FMAs.
//
// Edges: a float4 may only touch memory inside the matrix, at 16-byte aligned
// addresses. So there are two instances of the kernel: the fast one
// (kChecked = false) runs when m, n are multiples of 128, k of 8 and the
// pointers are aligned; every other shape runs the checked one, whose copies
// and stores go element by element with bounds checks (and zero fill).
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 3.803 ms {n:03:vectorized:ms|.3f}, 36.1 TFLOP/s {n:03:vectorized:value}.
#pragma once

#include "gemm.cuh"

#include "steps/error.hpp"

namespace ch03::v6 {

constexpr int BM = 128, BN = 128, BK = 8;
constexpr int TM = 8, TN = 8;
constexpr int kThreads = (BM / TM) * (BN / TN); // 256
static_assert(BM * BK / 4 == kThreads && BK * BN / 4 == kThreads, "one float4 of each tile per thread per slice");

template <bool kChecked>
__global__ void __launch_bounds__(kThreads) sgemm_vectorized(int m, int n, int k, const float* __restrict__ a,
                                                             const float* __restrict__ b, float* __restrict__ c) {
  __shared__ __align__(16) float tile_a_t[BK][BM]; // (i, row in tile): A transposed
  __shared__ __align__(16) float tile_b[BK][BN];   // (i, column in tile)
  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  // Copy: A(block_row + a_row, k0 + a_i .. + 3) and B(k0 + b_i, block_col + b_col .. + 3).
  const int a_row = tid / (BK / 4), a_i = tid % (BK / 4) * 4;
  const int b_i = tid / (BN / 4), b_col = tid % (BN / 4) * 4;
  // Compute: rows row0 .. row0 + 7, columns col0 .. col0 + 7 of the tile.
  const int row0 = tid / (BN / TN) * TM, col0 = tid % (BN / TN) * TN;

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < k; k0 += BK) {
    // [snippet loads]
    const float4 va = load4<kChecked>(a, m, k, k, block_row + a_row, k0 + a_i);
    tile_a_t[a_i + 0][a_row] = va.x; // transpose on the way in
    tile_a_t[a_i + 1][a_row] = va.y;
    tile_a_t[a_i + 2][a_row] = va.z;
    tile_a_t[a_i + 3][a_row] = va.w;
    *reinterpret_cast<float4*>(&tile_b[b_i][b_col]) = load4<kChecked>(b, k, n, n, k0 + b_i, block_col + b_col);
    // [/snippet loads]
    __syncthreads();
#pragma unroll
    for (int i = 0; i < BK; ++i) {
      float reg_a[TM], reg_b[TN];
#pragma unroll
      for (int r = 0; r < TM; r += 4) *reinterpret_cast<float4*>(&reg_a[r]) = *reinterpret_cast<const float4*>(&tile_a_t[i][row0 + r]);
#pragma unroll
      for (int q = 0; q < TN; q += 4) *reinterpret_cast<float4*>(&reg_b[q]) = *reinterpret_cast<const float4*>(&tile_b[i][col0 + q]);
#pragma unroll
      for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int q = 0; q < TN; ++q) acc[r][q] += reg_a[r] * reg_b[q];
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; ++r)
#pragma unroll
    for (int q = 0; q < TN; q += 4)
      store4<kChecked>(c, m, n, n, block_row + row0 + r, block_col + col0 + q,
                       make_float4(acc[r][q], acc[r][q + 1], acc[r][q + 2], acc[r][q + 3]));
}

inline void launch(const Gemm& g, cudaStream_t stream) {
  launch_tiles(g, stream, BM, BN, BK, kThreads, sgemm_vectorized<false>, sgemm_vectorized<true>);
}

} // namespace ch03::v6
