// Chapter 11, version 3: ldmatrix: one instruction loads four 8 x 8 tiles
// straight into the fragment layout.
//
// Change from version 2: only how a warp fills its fragment registers. In
// ldmatrix.x4 each lane gives the address of one 16-byte row of shared
// memory (8 BF16): lanes 0-7 the rows of matrix 0, lanes 8-15 matrix 1,
// 16-23 matrix 2, 24-31 matrix 3; the hardware delivers to lane l, in
// register i, row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of matrix i:
// exactly an mma.sync fragment register. So:
//
//   A (16 x 16 at rows r0.., k k0..): matrices (rows 0-7, k 0-7), (rows 8-15,
//   k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15) are a[0], a[1], a[2],
//   a[3]; lane l points at row r0 + l % 16, k k0 + (l / 16) * 8.
//
//   B (16 k x 16 n at k0.., n0..): its registers hold two values of a
//   COLUMN. ldmatrix.trans transposes each 8 x 8 matrix on the way: lane l
//   gets (row 2 (l % 4), column l / 4) and the row below it, i.e. B(k 2t,
//   n g) and B(k 2t + 1, n g): b[0] of an mma tile. Matrices (k 0-7, n 0-7),
//   (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15) are b[0], b[1] of
//   the first 8 columns and b[0], b[1] of the next 8; lane l points at row
//   k0 + l % 16, column n0 + (l / 16) * 8: the same formula as A's.
//
// Per 16-deep step a warp now issues 4 ldmatrix for A and 2 for B, where
// version 2 issued 32 loads (and 8 shift-and-ors). The padding of block_tile.cuh keeps
// each phase of 8 row addresses in 8 different groups of 4 banks.
#pragma once

#include "bf16_gemm.cuh"
#include "block_tile.cuh" // the 128 x 128 x 32 slice, its copy and the result store

#include "steps/error.hpp"
#include "steps/ptx.cuh"

#include <cstdint>

namespace ch11::v3 {

using namespace block_tile;
namespace ptx = steps::ptx;

/// acc += the warp's 64 x 32 piece of (A slice) x (B slice), 16 k at a time.
// [snippet fragments_by_ldmatrix]
__device__ __forceinline__ void warp_slice(float (&acc)[kMmaM][kMmaN][4], const Slice& s, int warp_row, int warp_col) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int row = lane % 16, half = (lane / 16) * 8; // this lane's row address: row, and 0 or 8 columns on
#pragma unroll
  for (int ks = 0; ks < BLOCK_K; ks += 16) {
    std::uint32_t a[kMmaM][4], b[kMmaN][2];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) ptx::ldmatrix_x4(a[mi], s.a + (warp_row + mi * 16 + row) * kLdA + ks + half);
#pragma unroll
    for (int nj = 0; nj < kMmaN; nj += 2) {
      std::uint32_t r[4];
      ptx::ldmatrix_x4_trans(r, s.b + (ks + row) * kLdB + warp_col + nj * 8 + half);
      b[nj][0] = r[0];     // k 0-7,  columns 0-7
      b[nj][1] = r[1];     // k 8-15, columns 0-7
      b[nj + 1][0] = r[2]; // k 0-7,  columns 8-15
      b[nj + 1][1] = r[3]; // k 8-15, columns 8-15
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) ptx::mma_m16n8k16_bf16(acc[mi][ni], a[mi], b[ni]);
  }
}
// [/snippet fragments_by_ldmatrix]

__global__ void __launch_bounds__(kThreads) gemm_ldmatrix(Gemm g, steps::tiles::Copy how) {
#if STEPS_PTX_MMA_BF16 // BF16 mma.sync: sm_80 and later; the row is skipped on older GPUs
  __shared__ __align__(16) Slice slice;
  multiply_block(g, how, slice, [](auto& acc, const Slice& s, int warp_row, int warp_col) {
    warp_slice(acc, s, warp_row, warp_col);
  });
#else
  (void)g, (void)how;
#endif
}

inline void launch(const Gemm& g, cudaStream_t stream) {
  gemm_ldmatrix<<<tile_grid(g.m, g.n, BLOCK_M, BLOCK_N), kThreads, 0, stream>>>(
      g, copy_mode(g, steps::tiles::Copy::vector));
  CUDA_CHECK_LAUNCH();
}

} // namespace ch11::v3
