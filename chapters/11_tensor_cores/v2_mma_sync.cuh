// Chapter 11, version 2: the tensor cores, through mma.sync, with every
// fragment register loaded by hand.
//
// Change from version 1: the block tile grows to 128 x 128 (block_tile.cuh)
// and the 8 warps no longer multiply with FFMA. One instruction,
//   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32,
// makes a warp multiply a 16 x 16 tile of A by a 16 x 8 tile of B and add
// the 16 x 8 product to FP32 accumulators: 4096 FLOP, where an FFMA does 2.
// The catch: the warp must hand it the tiles spread over its 32 lanes in a
// fixed layout, the fragments (g = lane / 4, t = lane % 4; steps/ptx.cuh):
//
//   a[0]: A row g,     k 2t, 2t+1      b[0]: B k 2t, 2t+1,   column g
//   a[1]: A row g + 8, k 2t, 2t+1      b[1]: B k 2t+8, 2t+9, column g
//   a[2]: A row g,     k 2t+8, 2t+9    c[0], c[1]: C row g,     columns 2t, 2t+1
//   a[3]: A row g + 8, k 2t+8, 2t+9    c[2], c[3]: C row g + 8, columns 2t, 2t+1
//
// Every 32-bit register holds two BF16 values. For A they are neighbours in
// a row of shared memory: one 32-bit load each. For B they are neighbours in
// a COLUMN (k and k + 1 at one n), 272 bytes apart in shared memory: two
// 16-bit loads and a shift-and-or per register. Per 16-deep step, a warp
// issues 16 32-bit loads for its A fragments, 16 16-bit loads (and 8
// shift-and-ors) for B, and 16 mma.sync.
#pragma once

#include "bf16_gemm.cuh"
#include "block_tile.cuh" // the 128 x 128 x 32 slice, its copy and the result store

#include "steps/error.hpp"
#include "steps/ptx.cuh"

#include <cstdint>

namespace ch11::v2 {

using namespace block_tile;
namespace ptx = steps::ptx;

/// Two BF16 of shared memory as one fragment register: `lo` in the low half.
__device__ __forceinline__ std::uint32_t pack(std::uint16_t lo, std::uint16_t hi) {
  return static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
}

/// acc += the warp's 64 x 32 piece of (A slice) x (B slice), 16 k at a time.
/// (warp_row, warp_col): the warp's corner in the block tile.
// [snippet fragments_by_hand]
__device__ __forceinline__ void warp_slice(float (&acc)[kMmaM][kMmaN][4], const Slice& s, int warp_row, int warp_col) {
  const int lane = static_cast<int>(threadIdx.x % 32), g = lane / 4, t = lane % 4;
#pragma unroll
  for (int ks = 0; ks < BLOCK_K; ks += 16) {
    std::uint32_t a[kMmaM][4], b[kMmaN][2];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
      // A row g at k = ks + 2t; row g + 8 is 8 rows down; k + 8 is 8 BF16 on.
      const std::uint16_t* p = s.a + (warp_row + mi * 16 + g) * kLdA + ks + 2 * t;
      a[mi][0] = *reinterpret_cast<const std::uint32_t*>(p);
      a[mi][1] = *reinterpret_cast<const std::uint32_t*>(p + 8 * kLdA);
      a[mi][2] = *reinterpret_cast<const std::uint32_t*>(p + 8);
      a[mi][3] = *reinterpret_cast<const std::uint32_t*>(p + 8 * kLdA + 8);
    }
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      // B column g at k = ks + 2t and ks + 2t + 1: two rows of the slice.
      const std::uint16_t* q = s.b + (ks + 2 * t) * kLdB + warp_col + ni * 8 + g;
      b[ni][0] = pack(q[0], q[kLdB]);
      b[ni][1] = pack(q[8 * kLdB], q[9 * kLdB]);
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) ptx::mma_m16n8k16_bf16(acc[mi][ni], a[mi], b[ni]);
  }
}
// [/snippet fragments_by_hand]

__global__ void __launch_bounds__(kThreads) gemm_mma_sync(Gemm g, steps::tiles::Copy how) {
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
  gemm_mma_sync<<<tile_grid(g.m, g.n, BLOCK_M, BLOCK_N), kThreads, 0, stream>>>(
      g, copy_mode(g, steps::tiles::Copy::vector));
  CUDA_CHECK_LAUNCH();
}

} // namespace ch11::v2
