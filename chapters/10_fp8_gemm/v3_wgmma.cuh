// Chapter 10, version 3b: TMA and mbarrier loads (the math of version 3a).
//
// Change from version 3a: only the loads. Instead of 128 threads issuing
// 12 16-byte cp.async copies each per K block, computing addresses, bounds
// and the swizzle, ONE thread asks the TMA unit for two boxes (A: 64 rows x
// 128 B, B: 128 rows x 128 B), described once on the host by a tensor map
// (tma.hpp). The copy engine writes them to shared memory in the same
// 128-byte swizzled layout 3a wrote by hand, zero-fills what lies past M, N
// or K, and counts the bytes down on an mbarrier ("full"): the other
// threads wait on that barrier instead of on their own copies, and no
// fence.proxy.async is needed (TMA writes through the async proxy, which
// wgmma reads). The math is 3a's: 4 wgmma m64n128k32 per K block
// (wgmma_math.cuh).
//
//   block = 1 warpgroup (128 threads), tile 64 x 128, 2 stages of 24 KB
//
//   thread 0:   TMA kb+1 -> stage (kb+1)%2        (then joins the math)
//   everyone:   wait full[kb%2] (parity (kb/2) & 1) -> 4 wgmma -> wait -> promote
//               __syncthreads(): stage kb%2 is free for the TMA of kb+2
//
// Version 4a, in this file too (fp8_gemm_ring), change from version 3b:
// the loads run further ahead. With 2 stages, while the warpgroup
// multiplies K block kb only kb + 1 is on its way: each block's copies have
// one block's math to arrive in. Version 4a is the same kernel with a ring
// of kRingStages = 4: thread 0 keeps 3 K blocks in flight and refills the
// stage block kb - 1 used (every warp left it at the __syncthreads that
// ended iteration kb - 1); block kb waits for parity (kb / 4) & 1 of
// full[kb % 4], whose phase flips once per lap. The price: 4 stages of
// 24 KB take 97 KB of shared memory, so 2 blocks share an SM where v3b's
// registers let 3.
//
// What v3b still leaves on the table: the loads are only one block ahead,
// the whole block waits for the math to finish before a stage is refilled,
// and the tensor cores idle during the promotion, since one warpgroup alone
// issues the math.
//
// At 8192 x 8192 x 4096, in the last benchmark runs:
// v3b on the H200: 814 TFLOP/s {n:10:wgmma:value|.0f}, 0.62x {n:10:wgmma:base} cuBLASLt block-scaled;
// v3b on the H100: 679 TFLOP/s {n:H100_80GB_HBM3/10:wgmma:value|.0f}, 0.52x {n:H100_80GB_HBM3/10:wgmma:base};
// v4a on the H100: 672 TFLOP/s {n:H100_80GB_HBM3/10:ring:value|.0f}, 0.52x {n:H100_80GB_HBM3/10:ring:base}: no faster (the lesson says why).
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
constexpr int kStages = 2;                                    // v3b
constexpr int kRingStages = 4;                                // v4a
constexpr int kABytes = BLOCK_M * wg::kRowBytes;              // 8 KB
constexpr int kStageBytes = kABytes + BLOCK_N * wg::kRowBytes; // 24 KB
/// Stages, their barriers, and 1 KB to align the stages to 1024 bytes (the
/// 128-byte swizzle's period; dynamic shared memory is only 16-byte aligned).
constexpr int smem_bytes(int stages) { return stages * kStageBytes + stages * 8 + 1024; }

static_assert(kABytes % 1024 == 0 && kStageBytes % 1024 == 0, "every tile must start 1024-byte aligned");

/// The block's work with a ring of `Stages` stages: 2 in v3b, 4 in v4a.
template <int Stages>
__device__ __forceinline__ void wgmma_block(const CUtensorMap& map_a, const CUtensorMap& map_b, const Fp8Gemm& p) {
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = wg::align_1024(smem_raw);
  auto* full = reinterpret_cast<std::uint64_t*>(smem + Stages * kStageBytes);
  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  const int num_kb = k_blocks(p.k);

  if (threadIdx.x == 0) {
    ptx::tma_prefetch_map(&map_a);
    ptx::tma_prefetch_map(&map_b);
    for (int s = 0; s < Stages; ++s) ptx::mbarrier_init(&full[s], 1); // one arrival: thread 0's expect_tx
    ptx::fence_barrier_init();
  }
  __syncthreads();

  // Thread 0: K block kb on its way into stage kb % Stages. expect_tx
  // announces the bytes before the copies can complete them.
  auto load = [&](int kb) {
    std::uint8_t* stage = smem + (kb % Stages) * kStageBytes;
    std::uint64_t* bar = &full[kb % Stages];
    ptx::mbarrier_arrive_expect_tx(bar, kStageBytes);
    ptx::tma_load_2d(stage, &map_a, bar, kb * wg::kBlockK, m0);
    ptx::tma_load_2d(stage + kABytes, &map_b, bar, kb * wg::kBlockK, n0);
  };
  if (threadIdx.x == 0)
    for (int kb = 0; kb < Stages - 1 && kb < num_kb; ++kb) load(kb);

  const wg::Fragment f(m0, n0, threadIdx.x / 32, threadIdx.x % 32);
  float total[wg::kAccum] = {};
  float partial[wg::kAccum] = {};
  for (int kb = 0; kb < num_kb; ++kb) {
    // Into the stage that block kb - 1 used: overlaps this block's math.
    if (threadIdx.x == 0 && kb + Stages - 1 < num_kb) load(kb + Stages - 1);
    const wg::BlockScales s = wg::block_scales(p, f, n0, kb); // global loads, in flight during the wait
    const std::uint8_t* stage = smem + (kb % Stages) * kStageBytes;
    // Lap kb / Stages around the ring of stages; its parity is the phase to wait for.
    ptx::mbarrier_wait(&full[kb % Stages], (kb / Stages) & 1);
    wg::issue_k_block(partial, stage, stage + kABytes);
    ptx::wgmma_wait<0>();
    wg::promote(total, partial, s);
    __syncthreads(); // every warp is done reading this stage: the TMA of kb + Stages may overwrite it
  }
  wg::store(p, f, total);
}

// Two kernels (not one template) so that each has its own name in a profiler.
__global__ void __launch_bounds__(kThreads) fp8_gemm_wgmma(const __grid_constant__ CUtensorMap map_a,
                                                           const __grid_constant__ CUtensorMap map_b, Fp8Gemm p) {
#if STEPS_PTX_SM90A // wgmma, TMA: sm_90a only (steps/ptx.cuh)
  wgmma_block<kStages>(map_a, map_b, p);
#endif
}

__global__ void __launch_bounds__(kThreads) fp8_gemm_ring(const __grid_constant__ CUtensorMap map_a,
                                                          const __grid_constant__ CUtensorMap map_b, Fp8Gemm p) {
#if STEPS_PTX_SM90A
  wgmma_block<kRingStages>(map_a, map_b, p);
#endif
}

/// Version 3b (`ring` false) or 4a.
inline void launch(const Fp8Gemm& p, cudaStream_t stream, bool ring = false) {
  const int grid_y = steps::ceil_div(p.m, BLOCK_M);
  if (grid_y > 65535) throw std::invalid_argument("v3b: M is too large for one grid (at most 4194240 rows)");
  const CUtensorMap map_a = make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M);
  const CUtensorMap map_b = make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N);
  const auto kernel = ring ? fp8_gemm_ring : fp8_gemm_wgmma;
  const int smem = smem_bytes(ring ? kRingStages : kStages);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(p.n, BLOCK_N)), static_cast<unsigned>(grid_y));
  kernel<<<grid, kThreads, smem, stream>>>(map_a, map_b, p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::v3
