// Chapter 11, version 4: the copies run ahead of the math (cp.async, 4
// stages), each warp computes a 64 x 64 tile, and a swizzle replaces the
// padding.
//
// Change from version 3, three ideas that chapter 03 introduced on the CUDA
// cores, now feeding tensor cores:
//  - cp.async in a ring of 4 stages: while the warps multiply slice s, the
//    slices s + 1 .. s + 3 are on their way into the other stages, without
//    passing through registers (chapter 03, version 9). A block no longer
//    stops at every slice for a full trip to memory.
//  - A 128 x 256 block tile, 8 warps of 64 x 64: per 16-deep step a warp
//    loads 4 A and 8 B fragment pairs (4 KB) for 32 mma.sync (version 3:
//    4 and 4, 3 KB, for 16): 1.5 times the math per byte of shared memory.
//  - A swizzled layout instead of padding. Four 24 KB stages fit in 96 KB
//    (below the 99 KB a block may have on sm_86 and sm_89); padded, they
//    would not. The 16-byte chunk c of row r lands in chunk c ^ f(r):
//      A rows (64 bytes, 4 chunks):  f(r) = (r / 2) % 4
//      B rows (512 bytes, 32 chunks): f(r) = r % 8
//    so the 8 rows of any ldmatrix phase, and the 8 chunks of any 8 threads'
//    copies, hit 8 different 16-byte bank groups (chapter 04's swizzle).
//
//   stage s of the ring (24,576 bytes):
//   +--------------------------------+----------------------------------------+
//   | A: 128 rows x 32 k (8 KB)      | B: 32 k x 256 columns (16 KB)          |
//   +--------------------------------+----------------------------------------+
//
// Edges: the copies give zeros outside A and B (cp.async with a source size
// of 0), and element-by-element copies where k or n is not a multiple of 8.
#pragma once

#include "bf16_gemm.cuh"

#include "steps/error.hpp"
#include "steps/ptx.cuh"
#include "steps/tile_copy.cuh"

#include <cstdint>

namespace ch11::v4 {

namespace ptx = steps::ptx;
using steps::tiles::Copy;

constexpr int BLOCK_M = 128, BLOCK_N = 256, BLOCK_K = 32;
constexpr int kWarpsM = 2, kWarpsN = 4;
constexpr int kThreads = 32 * kWarpsM * kWarpsN; // 256
constexpr int WARP_M = BLOCK_M / kWarpsM;        // 64
constexpr int WARP_N = BLOCK_N / kWarpsN;        // 64
constexpr int kMmaM = WARP_M / 16;               // 4
constexpr int kMmaN = WARP_N / 8;                // 8
constexpr int kStages = 4;
constexpr int kStageA = BLOCK_M * BLOCK_K;       // BF16 per stage: 4096 of A...
constexpr int kStageB = BLOCK_K * BLOCK_N;       // ... and 8192 of B
constexpr int kSmemBytes = kStages * (kStageA + kStageB) * 2; // 98,304: above 48 KB, so opted in
static_assert(BLOCK_K == 32, "the A swizzle assumes 4 chunks of 16 bytes per row");
static_assert(BLOCK_N / 8 >= 8, "the B swizzle permutes 8 chunks of a row");

/// Where chunk `c` (8 BF16) of row `r` of a stage's A tile starts (in BF16).
__device__ __forceinline__ int a_offset(int r, int c) { return r * BLOCK_K + 8 * (c ^ ((r >> 1) & 3)); }
/// Where chunk `c` of row `r` (one k) of a stage's B tile starts.
__device__ __forceinline__ int b_offset(int r, int c) { return r * BLOCK_N + 8 * (c ^ (r & 7)); }

/// Starts the copy of slice `kb` (k = 32 kb ..) into stage `stage`.
__device__ __forceinline__ void load_stage(std::uint16_t* smem, int stage, const Gemm& g, int m0, int n0, int kb,
                                           Copy how) {
  std::uint16_t* a = smem + stage * (kStageA + kStageB);
  steps::tiles::copy_tile<BLOCK_M, BLOCK_K, kThreads>(a, bits(g.a), g.m, g.k, m0, kb * BLOCK_K, how,
                                                      [](int r, int c) { return a_offset(r, c); });
  steps::tiles::copy_tile<BLOCK_K, BLOCK_N, kThreads>(a + kStageA, bits(g.b), g.k, g.n, kb * BLOCK_K, n0, how,
                                                      [](int r, int c) { return b_offset(r, c); });
}

/// acc += the warp's 64 x 64 piece of one stage: 2 steps of 16 k, each 4 A
/// and 4 B ldmatrix.x4 (the addresses of v3, through the swizzle) and 32 mma.
// [snippet swizzled_fragments]
__device__ __forceinline__ void warp_stage(float (&acc)[kMmaM][kMmaN][4], const std::uint16_t* a_tile,
                                           const std::uint16_t* b_tile, int warp_row, int warp_col) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int row = lane % 16, half = lane / 16; // this lane's row, and chunk 0 or 1 of the 16 columns
#pragma unroll
  for (int ks = 0; ks < BLOCK_K; ks += 16) {
    std::uint32_t a[kMmaM][4], b[kMmaN][2];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
      ptx::ldmatrix_x4(a[mi], a_tile + a_offset(warp_row + mi * 16 + row, ks / 8 + half));
#pragma unroll
    for (int nj = 0; nj < kMmaN; nj += 2) {
      std::uint32_t r[4];
      ptx::ldmatrix_x4_trans(r, b_tile + b_offset(ks + row, (warp_col + nj * 8) / 8 + half));
      b[nj][0] = r[0];
      b[nj][1] = r[1];
      b[nj + 1][0] = r[2];
      b[nj + 1][1] = r[3];
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) ptx::mma_m16n8k16_bf16(acc[mi][ni], a[mi], b[ni]);
  }
}
// [/snippet swizzled_fragments]

__global__ void __launch_bounds__(kThreads, 1) gemm_pipelined(Gemm g, Copy how) {
#if STEPS_PTX_MMA_BF16 // BF16 mma.sync and cp.async: sm_80 and later; the row is skipped on older GPUs
  extern __shared__ __align__(128) std::uint16_t smem[];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int m0 = static_cast<int>(blockIdx.y) * BLOCK_M, n0 = static_cast<int>(blockIdx.x) * BLOCK_N;
  const int warp_row = (warp / kWarpsN) * WARP_M, warp_col = (warp % kWarpsN) * WARP_N;
  const int num_kb = (g.k + BLOCK_K - 1) / BLOCK_K;
  float acc[kMmaM][kMmaN][4] = {};

  // Prologue: slices 0 .. kStages - 2 on their way, one commit group each
  // (empty groups where K is shorter, so the count below stays right).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_kb) load_stage(smem, s, g, m0, n0, s, how);
    ptx::cp_async_commit();
  }

  // Main loop. At the top of iteration kb, 3 + kb groups were committed;
  // waiting until at most kStages - 2 are in flight means slice kb's group is
  // done. The barrier then makes every thread's copies visible AND says
  // every warp finished slice kb - 1, whose stage the next copy reuses.
  for (int kb = 0; kb < num_kb; ++kb) {
    ptx::cp_async_wait<kStages - 2>();
    __syncthreads();
    const int next = kb + kStages - 1;
    if (next < num_kb) load_stage(smem, next % kStages, g, m0, n0, next, how);
    ptx::cp_async_commit();
    const std::uint16_t* stage = smem + (kb % kStages) * (kStageA + kStageB);
    warp_stage(acc, stage, stage + kStageA, warp_row, warp_col);
  }
  ptx::cp_async_wait<0>(); // (only empty groups are left; leave none behind)

  // Epilogue: each warp's 4 x 8 accumulator tiles, straight to C.
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
      store_accumulator(g, m0 + warp_row + mi * 16, n0 + warp_col + ni * 8, acc[mi][ni]);
#else
  (void)g, (void)how;
#endif
}

inline void launch(const Gemm& g, cudaStream_t stream) {
  // More than 48 KB of dynamic shared memory must be asked for explicitly.
  CUDA_CHECK(cudaFuncSetAttribute(gemm_pipelined, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  gemm_pipelined<<<tile_grid(g.m, g.n, BLOCK_M, BLOCK_N), kThreads, kSmemBytes, stream>>>(
      g, copy_mode(g, Copy::async));
  CUDA_CHECK_LAUNCH();
}

} // namespace ch11::v4
