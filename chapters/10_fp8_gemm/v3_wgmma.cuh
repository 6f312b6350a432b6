// Chapter 10, version 3: wgmma + TMA + mbarrier, double-buffered, one
// warpgroup.
//
// Change from version 2: the two Hopper engines replace the two halves of
// v2's inner loop.
//   - Loads: instead of 256 threads issuing 16-byte cp.async copies and
//     computing addresses and bounds, ONE thread asks the TMA unit for two
//     boxes per K block (A: 64 rows x 128 B, B: 128 rows x 128 B). The copy
//     engine writes them to shared memory in the 128-byte swizzled layout,
//     zero-fills what lies past M, N or K, and counts the bytes down on an
//     mbarrier ("full"); the other threads wait on that barrier.
//   - Math: instead of 8 warps loading fragments into registers and issuing
//     64 mma.sync per K block, the warpgroup issues 4 wgmma m64n128k32 that
//     read A and B straight from shared memory (wgmma_math.cuh).
//
//   block = 1 warpgroup (128 threads), tile 64 x 128, 2 stages of 24 KB
//
//   thread 0:   TMA kb+1 -> stage (kb+1)%2        (then joins the math)
//   everyone:   wait full[kb%2] (parity (kb/2) & 1) -> 4 wgmma -> wait -> promote
//               __syncthreads(): stage kb%2 is free for the TMA of kb+2
//
// What it still leaves on the table: the loads are only one block ahead,
// the whole block waits for the math to finish before a stage is refilled,
// and the tensor cores idle during the promotion, since one warpgroup alone
// issues the math.
//
// On the H200 at 8192 x 8192 x 4096, in the last benchmark run:
// 815 TFLOP/s {n:10:wgmma:value|.0f}, 0.61x {n:10:wgmma:base} cuBLASLt block-scaled.
#pragma once

#include "fp8_gemm.cuh"
#include "tma.hpp"
#include "wgmma_math.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <stdexcept>

namespace ch10::v3 {

namespace ptx = steps::ptx;

constexpr int BLOCK_M = wg::kMathRows, BLOCK_N = wg::kTileN; // 64 x 128
constexpr int kThreads = 128;                                 // one warpgroup
constexpr int kStages = 2;
constexpr int kABytes = BLOCK_M * wg::kRowBytes;              // 8 KB
constexpr int kStageBytes = kABytes + BLOCK_N * wg::kRowBytes; // 24 KB
/// Stages, their barriers, and 1 KB to align the stages to 1024 bytes (the
/// 128-byte swizzle's period; dynamic shared memory is only 16-byte aligned).
constexpr int kSmemBytes = kStages * kStageBytes + kStages * 8 + 1024;

static_assert(kABytes % 1024 == 0 && kStageBytes % 1024 == 0, "every tile must start 1024-byte aligned");

__global__ void __launch_bounds__(kThreads) fp8_gemm_wgmma(const __grid_constant__ CUtensorMap map_a,
                                                           const __grid_constant__ CUtensorMap map_b, Fp8Gemm p) {
#if STEPS_PTX_SM90A // wgmma, setmaxnreg, TMA: sm_90a only (steps/ptx.cuh)
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = wg::align_1024(smem_raw);
  auto* full = reinterpret_cast<std::uint64_t*>(smem + kStages * kStageBytes);
  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  const int num_kb = k_blocks(p.k);

  if (threadIdx.x == 0) {
    ptx::tma_prefetch_map(&map_a);
    ptx::tma_prefetch_map(&map_b);
    for (int s = 0; s < kStages; ++s) ptx::mbarrier_init(&full[s], 1); // one arrival: thread 0's expect_tx
    ptx::fence_barrier_init();
  }
  __syncthreads();

  // Thread 0: K block kb on its way into stage kb % kStages. expect_tx
  // announces the bytes before the copies can complete them.
  auto load = [&](int kb) {
    std::uint8_t* stage = smem + (kb % kStages) * kStageBytes;
    std::uint64_t* bar = &full[kb % kStages];
    ptx::mbarrier_arrive_expect_tx(bar, kStageBytes);
    ptx::tma_load_2d(stage, &map_a, bar, kb * wg::kBlockK, m0);
    ptx::tma_load_2d(stage + kABytes, &map_b, bar, kb * wg::kBlockK, n0);
  };
  if (threadIdx.x == 0) load(0);

  const wg::Fragment f(m0, n0, threadIdx.x / 32, threadIdx.x % 32);
  float total[wg::kAccum] = {};
  float partial[wg::kAccum] = {};
  for (int kb = 0; kb < num_kb; ++kb) {
    if (threadIdx.x == 0 && kb + 1 < num_kb) load(kb + 1); // overlaps this block's math
    const wg::BlockScales s = wg::block_scales(p, f, n0, kb); // global loads, in flight during the wait
    const std::uint8_t* stage = smem + (kb % kStages) * kStageBytes;
    // Lap kb / kStages around the ring of stages; its parity is the phase to wait for.
    ptx::mbarrier_wait(&full[kb % kStages], (kb / kStages) & 1);
    wg::issue_k_block(partial, stage, stage + kABytes);
    ptx::wgmma_wait<0>();
    wg::promote(total, partial, s);
    __syncthreads(); // every warp is done reading this stage: the TMA of kb + 2 may overwrite it
  }
  wg::store(p, f, total);
#endif
}

inline void launch(const Fp8Gemm& p, cudaStream_t stream) {
  const int grid_y = steps::ceil_div(p.m, BLOCK_M);
  if (grid_y > 65535) throw std::invalid_argument("v3: M is too large for one grid (at most 4194240 rows)");
  const CUtensorMap map_a = make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M);
  const CUtensorMap map_b = make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N);
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(p.n, BLOCK_N)), static_cast<unsigned>(grid_y));
  fp8_gemm_wgmma<<<grid, kThreads, kSmemBytes, stream>>>(map_a, map_b, p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::v3
