// Chapter 10, versions 4b and 4c: warp roles, then the promotion overlapped.
//
// Version 4b, change from version 4a: the warpgroups of a block get
// different jobs. In 4a every warp both waited for data and computed, and
// a stage was freed only when the whole block reached a __syncthreads. Here
// one warpgroup only loads (the producer, producer.cuh) and two only compute
// (the math warpgroups, rows 0-63 and 64-127 of a 128 x 128 tile: B's stage
// is shared by both). They meet at two mbarriers per stage (ring.cuh):
//
//   producer (1 thread):  wait empty[s] -> expect_tx full[s] -> TMA A, B and
//                         A's 128 scales of the K block -> stage s -> next s
//   math (per warp):      wait full[s] -> 4 wgmma -> wait for them ->
//                         lane 0 arrives on empty[s] -> promote -> next s
//
// No __syncthreads after the start: a stage is refilled as soon as its 8
// math warps have arrived, and the producer runs ahead by up to kStages
// blocks. setmaxnreg gives the producer's registers to the math (40 and
// 232 per thread): the block fills the SM's register file alone.
//
// Version 4c, change from version 4b: a warpgroup's own wgmma no longer
// wait for its promotion. In 4b a math warpgroup issues block kb's wgmma,
// waits for them, promotes kb on the CUDA cores, and only then issues
// kb + 1. In 4c (pipeline::math_tile) block kb + 1's wgmma are issued
// before kb is promoted, into a second set of partial sums:
//
//   one warpgroup, 4b:  tensor [wgmma 0]           [wgmma 1]           [wgmma 2]
//                       CUDA             [prom. 0]           [prom. 1]
//   one warpgroup, 4c:  tensor [wgmma 0][wgmma 1][wgmma 2]...
//                       CUDA            [prom. 0][prom. 1]...
//
// Measured, 4c is no faster than 4b at the default shape: with two math
// warpgroups on the SM, one's wgmma already run while the other promotes
// (the tensor pipe is as busy in both; the lesson).
//
// Both launch one block per tile and store D straight from the registers
// (wg::store); v4 adds what a persistent block can do between two tiles.
//
// On the H100 at 8192 x 8192 x 4096, in the last benchmark run:
// 4b 1042 TFLOP/s {n:H100_80GB_HBM3/10:warp_roles:value|.0f}, 0.80x {n:H100_80GB_HBM3/10:warp_roles:base} cuBLASLt block-scaled;
// 4c 1041 TFLOP/s {n:H100_80GB_HBM3/10:overlapped:value|.0f}, 0.80x {n:H100_80GB_HBM3/10:overlapped:base}.
#pragma once

#include "fp8_gemm.cuh"
#include "pipeline.cuh"
#include "producer.cuh"
#include "ring.cuh"
#include "scheduler.cuh"
#include "tma.hpp"
#include "wgmma_math.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <climits>
#include <stdexcept>

namespace ch10::v4b {

namespace ptx = steps::ptx;
using pipeline::BLOCK_M;
using pipeline::BLOCK_N;

/// The ring depth of both: v4's default, so that the steps from 4b to v4
/// change nothing else.
constexpr int kStages = 5;

/// Version 4b's K loop for one tile, in order: per K block, wait for its
/// stage, issue its wgmma, wait for them, free the stage, promote. (4c runs
/// pipeline::math_tile instead; the arguments are the same.)
__device__ __forceinline__ void math_tile_in_order(std::uint32_t sa, const float* sb, int sb_step, std::uint32_t a_lo,
                                                   std::uint32_t b_lo, std::uint64_t* full, std::uint64_t* empty,
                                                   Ring<kStages>& ring, int num_kb, float (&total)[wg::kAccum],
                                                   float (&partial)[wg::kAccum]) {
  const bool signals = threadIdx.x % 32 == 0; // lane 0 arrives on empty[] for its warp
  for (int kb = 0; kb < num_kb; ++kb) {
    const float b = *sb;
    sb += sb_step;
    const std::uint32_t stage_lo = ring.stage * (pipeline::kStageBytes >> 4);
    ptx::mbarrier_wait(&full[ring.stage], ring.phase);
    const std::uint32_t stage_sa = sa + ring.stage * (BLOCK_M * 4);
    const wg::BlockScales sc{ptx::ld_shared_f32(stage_sa), ptx::ld_shared_f32(stage_sa + 32), b};
    wg::issue_k_block(partial, a_lo + stage_lo, b_lo + stage_lo);
    ptx::wgmma_wait<0>(); // the tensor cores are done with the stage ...
    __syncwarp();         // ... and so are this warp's scale reads
    if (signals) ptx::mbarrier_arrive(&empty[ring.stage]);
    wg::promote(total, partial, sc); // meanwhile the tensor cores idle
    ring.advance();
  }
}

/// The body of both kernels. kOverlap false: version 4b; true: version 4c.
template <bool kOverlap>
__device__ __forceinline__ void warp_roles_block(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                                 const CUtensorMap& map_sa, const Fp8Gemm& p) {
  extern __shared__ std::uint8_t smem_raw[];
  // pipeline::Smem's epilogue buffers stay unused here (v4 stores through them).
  const pipeline::Smem<kStages> sm(wg::align_1024(smem_raw));
  init_ring<kStages, pipeline::kMathGroups>(sm.full, sm.empty);

  const int tiles_m = steps::ceil_div(p.m, BLOCK_M), tiles_n = steps::ceil_div(p.n, BLOCK_N);
  const int num_kb = k_blocks(p.k);
  // 0 producer, 1.. math; from lane 0, so that the compiler knows it is warp-uniform.
  const int role = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);
  if (role == 0) {
    ptx::setmaxnreg_dec<pipeline::kProducerRegs>();
    // One tile: this block's (blockIdx.x, and no other: the grid has one block per tile).
    if (threadIdx.x == 0)
      produce<kStages, BLOCK_M, BLOCK_N>(&map_a, &map_b, &map_sa, sm.ring, sm.scales, sm.full, sm.empty, tiles_m,
                                         tiles_n, blockIdx.x, gridDim.x, 0, num_kb);
  } else {
    ptx::setmaxnreg_inc<pipeline::kMathRegs>();
    const int math = role - 1; // rows 64 * math .. of the tile
    const int warp_in_group = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const std::uint32_t a_lo = ptx::wgmma_desc_sw128_lo(sm.ring + math * wg::kMathRows * wg::kRowBytes);
    const std::uint32_t b_lo = ptx::wgmma_desc_sw128_lo(sm.ring + pipeline::kABytes);
    const std::uint32_t sa = ptx::smem_addr(thread_scales(sm.scales, math, warp_in_group, lane));
    int m0, n0;
    tile_at<BLOCK_M, BLOCK_N>(blockIdx.x, tiles_m, tiles_n, m0, n0);
    Ring<kStages> ring;
    float total[wg::kAccum] = {};
    float partial0[wg::kAccum] = {};
    if constexpr (kOverlap) {
      float partial1[wg::kAccum] = {};
      pipeline::math_tile(sa, p.sb.address(n0, 0), p.sb.kb_stride, a_lo, b_lo, sm.full, sm.empty, ring, num_kb,
                          total, partial0, partial1);
    } else {
      math_tile_in_order(sa, p.sb.address(n0, 0), p.sb.kb_stride, a_lo, b_lo, sm.full, sm.empty, ring, num_kb, total,
                         partial0);
    }
    wg::store(p, wg::Fragment(m0 + math * wg::kMathRows, n0, warp_in_group, lane), total);
  }
}

// Two kernels (not one template) so that each has its own name in a profiler.
__global__ void __launch_bounds__(pipeline::kThreads, 1)
    fp8_gemm_warp_roles(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                        const __grid_constant__ CUtensorMap map_sa, Fp8Gemm p) {
#if STEPS_PTX_SM90A // wgmma, setmaxnreg, TMA: sm_90a only (steps/ptx.cuh)
  warp_roles_block<false>(map_a, map_b, map_sa, p);
#endif
}

__global__ void __launch_bounds__(pipeline::kThreads, 1)
    fp8_gemm_overlapped(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                        const __grid_constant__ CUtensorMap map_sa, Fp8Gemm p) {
#if STEPS_PTX_SM90A
  warp_roles_block<true>(map_a, map_b, map_sa, p);
#endif
}

/// Version 4b (`overlap` false) or 4c.
inline void launch(const Fp8Gemm& p, cudaStream_t stream, bool overlap) {
  const CUtensorMap map_a = make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M);
  const CUtensorMap map_b = make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N);
  const CUtensorMap map_sa = make_tensor_map_scales(p.sa_by_kb, p.m, k_blocks(p.k), p.sa_by_kb_ld, BLOCK_M);
  const long long tiles = static_cast<long long>(steps::ceil_div(p.m, BLOCK_M)) * steps::ceil_div(p.n, BLOCK_N);
  if (tiles > INT_MAX) throw std::invalid_argument("v4b: more than 2^31 - 1 tiles");
  const auto kernel = overlap ? fp8_gemm_overlapped : fp8_gemm_warp_roles;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, pipeline::smem_bytes(kStages)));
  kernel<<<static_cast<unsigned>(tiles), pipeline::kThreads, pipeline::smem_bytes(kStages), stream>>>(map_a, map_b,
                                                                                                     map_sa, p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::v4b
