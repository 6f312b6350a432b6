// Chapter 03, version 10: slices twice as deep, in dynamic shared memory.
//
// Change from version 9: BK = 32 instead of 16, nothing else. The loop is
// v9's (async_pipeline::gemm_block); each trip now does 2048 multiply-adds per thread
// between two barriers instead of 1024, so the block meets half as often
// per multiply-add, and the per-slice overhead (wait, barrier, commit,
// pointer updates, loop branch) is spread over twice the work. Why it was
// tried: after cp.async took the memory stalls out of v9, the barrier was
// the largest stall left besides "not selected" (warps ready, another one
// issued).
//
// The price is shared memory: two buffers of 32 x 132 + 32 x 128 floats,
// 66,560 bytes per block. A kernel may declare at most 48 KiB of static
// __shared__ arrays, so the buffers live in dynamic shared memory: the
// kernel declares `extern __shared__ float smem[]`, the launch passes the
// size (third launch parameter), and the program raises the kernel's limit
// once, before the first launch, with
//   cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
// Two blocks per SM need 133,120 bytes (plus 1 KiB each that the system
// reserves), under the 228 KiB an H100/H200 SM has; the registers (127 of
// 128) still allow two as well. Deeper or more slices did not help (the
// chapter's EXPERIMENTS.md: 3 and 4 buffers, BK = 8 with 3 or 4).
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 2.843 ms {n:03:deep_slices:ms|.3f}, 48.3 TFLOP/s {n:03:deep_slices:value},
// 94.0% {n:03:deep_slices:pbase} of cuBLAS (v9: 89.7% {n:03:async_copy:pbase}).
// Nsight Compute (profile.03_tiling.deep_slices_issue) says the barrier was
// not what moved: barrier stalls per issued instruction v9:
// 0.51 {n:prof:03_tiling.deep_slices_issue:v9_barrier|.2f}
// v10: 0.51 {n:prof:03_tiling.deep_slices_issue:v10_barrier|.2f}
// v10 wins by executing fewer instructions (the per-slice cost, halved) and
// by fewer dispatch stalls per issued instruction, v9:
// 0.46 {n:prof:03_tiling.deep_slices_issue:v9_dispatch|.2f}
// v10: 0.33 {n:prof:03_tiling.deep_slices_issue:v10_dispatch|.2f}
// (the lesson: "What moved is not what the change was aimed at").
#pragma once

#include "async_pipeline.cuh" // gemm_block: v9's loop
#include "gemm.cuh"
#include "warp_tile.cuh"      // Tiling

#include "steps/error.hpp"
#include "steps/ptx.cuh"

namespace ch03::v10 {

/// Version 9's tiles with slices of 32: two buffers of 32 x 132 + 32 x 128
/// floats, 66,560 bytes per block, past the 48 KiB a static array may use.
using Default = warp_tile::Tiling<128, 128, 32, 64, 32>;

/// Bytes of dynamic shared memory a block of T asks for: both buffers of A and B.
template <class T>
constexpr int kSmemBytes = static_cast<int>(2 * T::BK * (T::BM + T::kPadA + T::BN) * sizeof(float));

template <class T, bool kChecked>
__global__ void __launch_bounds__(T::kThreads, 2) sgemm_deep_slices(int m, int n, int k,
                                                                    const float* __restrict__ a,
                                                                    const float* __restrict__ b,
                                                                    float* __restrict__ c) {
#if STEPS_PTX_CP_ASYNC // cp.async: sm_80 and later; the row is skipped on older GPUs
  extern __shared__ __align__(16) float smem[]; // kSmemBytes<T>, sized by the launch
  auto* tile_a_t = reinterpret_cast<float (*)[T::BK][T::BM + T::kPadA]>(smem);
  auto* tile_b = reinterpret_cast<float (*)[T::BK][T::BN]>(smem + 2 * T::BK * (T::BM + T::kPadA));
  async_pipeline::gemm_block<T, kChecked>(m, n, k, a, b, c, tile_a_t, tile_b);
#endif
}

template <class T = Default>
void launch(const Gemm& g, cudaStream_t stream) {
  // A kernel gets 48 KiB of dynamic shared memory unless it asks for more,
  // once, before its first launch.
  static const bool asked = [] {
    for (TiledKernel kernel : {sgemm_deep_slices<T, false>, sgemm_deep_slices<T, true>})
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes<T>));
    return true;
  }();
  (void)asked;
  launch_tiles(g, stream, T::BM, T::BN, T::BK, T::kThreads, sgemm_deep_slices<T, false>, sgemm_deep_slices<T, true>,
               kSmemBytes<T>);
}

} // namespace ch03::v10
