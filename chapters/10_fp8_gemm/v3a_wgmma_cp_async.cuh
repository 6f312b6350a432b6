// Chapter 10, version 3a: wgmma from shared memory, the loads as in v2.
//
// Change from version 2: only the math. The block is one warpgroup (128
// threads, 4 warps) and its tile 64 x 128; per K block it issues 4 wgmma
// m64n128k32 that read A and B straight from shared memory (wgmma_math.cuh),
// where v2's 8 warps loaded fragments into registers and issued 64 mma.sync
// (each converted to FP16 HMMA on Hopper). The loads stay what they were:
// every thread copies 16-byte chunks with cp.async, zeros past M, N and K,
// double-buffered.
//
// What wgmma asks of shared memory: a layout it can find rows in by itself.
// We use the one TMA writes in v3b, the 128-byte swizzle: a tile of 128-byte
// rows, starting 1024-byte aligned, whose 16-byte chunk c of row r sits at
// chunk c ^ (r % 8). Here the threads apply it themselves (swizzled()):
//
//   row r:   chunk 0 1 2 3 4 5 6 7   stored at chunk  c ^ (r % 8)
//   r = 0:         0 1 2 3 4 5 6 7
//   r = 1:         1 0 3 2 5 4 7 6
//   r = 2:         2 3 0 1 6 7 4 5   ... the 8 rows of an 8 x 16-byte column
//                                        fall in 8 different bank groups
//
// and the descriptor says "128-byte swizzle" (ptx::wgmma_desc_sw128). Two
// rules come with the new reader: wgmma reads shared memory through the
// async proxy, so each thread orders its copies before it with
// fence.proxy.async, then __syncthreads; and the accumulators are fenced
// around the asynchronous math (wg::fence_operands).
//
//   block = 1 warpgroup (128 threads), tile 64 x 128, 2 stages of 24 KB
//
//   everyone:  cp.async K block kb+1 -> stage (kb+1)%2  (12 chunks each)
//              wait for kb's copies; fence.proxy.async; __syncthreads
//              4 wgmma on stage kb%2 -> wait -> promote
//              __syncthreads: stage kb%2 may be refilled
//
// On the H100 at 8192 x 8192 x 4096, in the last benchmark run:
// 402 TFLOP/s {n:H100_80GB_HBM3/10:wgmma_cp_async:value|.0f}, 0.31x {n:H100_80GB_HBM3/10:wgmma_cp_async:base} cuBLASLt block-scaled.
#pragma once

#include "fp8_gemm.cuh"
#include "wgmma_math.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <stdexcept>

namespace ch10::v3a {

namespace ptx = steps::ptx;

constexpr int BLOCK_M = wg::kMathRows, BLOCK_N = wg::kTileN; // 64 x 128
constexpr int kThreads = 128;                                 // one warpgroup
constexpr int kStages = 2;
constexpr int kABytes = BLOCK_M * wg::kRowBytes;              // 8 KB
constexpr int kStageBytes = kABytes + BLOCK_N * wg::kRowBytes; // 24 KB
/// The stages, and 1 KB to align them to 1024 bytes (the swizzle's period;
/// dynamic shared memory is only 16-byte aligned).
constexpr int kSmemBytes = kStages * kStageBytes + 1024;
constexpr int kChunksPerRow = wg::kRowBytes / 16;             // 8

static_assert(kABytes % 1024 == 0 && kStageBytes % 1024 == 0, "every tile must start 1024-byte aligned");
static_assert((BLOCK_M + BLOCK_N) * kChunksPerRow % kThreads == 0, "whole chunks per thread");

/// Where 16-byte chunk `chunk` (0..7) of row `row` goes in a tile of
/// 128-byte rows in the 128-byte swizzle (from the tile's 1024-aligned start).
// [snippet swizzle]
__device__ __forceinline__ int swizzled(int row, int chunk) { return row * 128 + ((chunk ^ (row % 8)) << 4); }
// [/snippet swizzle]

/// Starts the copies of K block `kb` of the A rows m0.. and B rows n0.. into
/// `stage` (A's tile, then B's): 192 rows x 8 chunks, 12 per thread,
/// consecutive threads on consecutive chunks of a row. Chunks past M, N or
/// K become zeros (K is a multiple of 16: a chunk is wholly in or out).
__device__ __forceinline__ void load_stage(std::uint8_t* stage, const Fp8Gemm& p, int m0, int n0, int kb) {
  const int k0 = kb * wg::kBlockK;
#pragma unroll 1
  for (int i = 0; i < (BLOCK_M + BLOCK_N) * kChunksPerRow / kThreads; ++i) {
    const int chunk = threadIdx.x + i * kThreads;
    const int row = chunk / kChunksPerRow, c = chunk % kChunksPerRow;
    const bool is_a = row < BLOCK_M;
    const int tile_row = is_a ? row : row - BLOCK_M;
    const int global_row = (is_a ? m0 : n0) + tile_row;
    const bool inside = global_row < (is_a ? p.m : p.n) && k0 + 16 * c < p.k;
    const std::uint8_t* base = is_a ? p.a : p.b; // read only when inside
    const std::uint8_t* src = inside ? base + static_cast<std::size_t>(global_row) * p.k + k0 + 16 * c : base;
    ptx::cp_async_16_or_zero(stage + (is_a ? 0 : kABytes) + swizzled(tile_row, c), src, inside);
  }
}

__global__ void __launch_bounds__(kThreads) fp8_gemm_cp_async_wgmma(Fp8Gemm p) {
#if STEPS_PTX_SM90A // wgmma: sm_90a only (steps/ptx.cuh)
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = wg::align_1024(smem_raw);
  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  const int num_kb = k_blocks(p.k);

  load_stage(smem, p, m0, n0, 0);
  ptx::cp_async_commit();

  const wg::Fragment f(m0, n0, threadIdx.x / 32, threadIdx.x % 32);
  float total[wg::kAccum] = {};
  float partial[wg::kAccum] = {};
  for (int kb = 0; kb < num_kb; ++kb) {
    if (kb + 1 < num_kb) load_stage(smem + ((kb + 1) % kStages) * kStageBytes, p, m0, n0, kb + 1);
    ptx::cp_async_commit();                                  // (empty in the last iteration)
    const wg::BlockScales s = wg::block_scales(p, f, n0, kb); // global loads, in flight during the wait
    ptx::cp_async_wait<1>();                                 // this thread's copies of block kb are here
    ptx::fence_proxy_async();                                // ... and visible to wgmma (the async proxy)
    __syncthreads();                                         // ... and every other thread's
    const std::uint8_t* stage = smem + (kb % kStages) * kStageBytes;
    wg::issue_k_block(partial, stage, stage + kABytes);
    ptx::wgmma_wait<0>();
    wg::promote(total, partial, s);
    __syncthreads(); // every warp is done reading this stage: the copies of kb + 2 may overwrite it
  }
  wg::store(p, f, total);
#endif
}

inline void launch(const Fp8Gemm& p, cudaStream_t stream) {
  const int grid_y = steps::ceil_div(p.m, BLOCK_M);
  if (grid_y > 65535) throw std::invalid_argument("v3a: M is too large for one grid (at most 4194240 rows)");
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_cp_async_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(p.n, BLOCK_N)), static_cast<unsigned>(grid_y));
  fp8_gemm_cp_async_wgmma<<<grid, kThreads, kSmemBytes, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::v3a
