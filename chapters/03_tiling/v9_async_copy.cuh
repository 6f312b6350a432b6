// Chapter 03, version 9: the next slice goes to shared memory without
// passing through registers (cp.async).
//
// Change from version 8: v8's source issues the global loads of slice t + 1
// before computing slice t, but the machine code does not. ptxas moves
// instructions to save registers, and the 16 registers that would hold the
// slice during the 1024 multiply-adds do not fit under the 128 that two
// blocks of 256 threads per SM allow; so it issues the loads after the last
// multiply-add of the slice, right before the stores that need them
// (cuobjdump -sass: v8's LDG.E.128 sit between the last FFMA of the loop and
// the STS). Every slice waits for a full trip to memory, hidden only by the
// other warps on the SM.
//
// cp.async copies global memory into shared memory in the background: no
// register holds the data, so there is nothing for the compiler to save by
// moving the copy, and it stays at the top of the loop. A thread waits for
// its own copies (cp.async.wait_group) and a barrier makes everyone's
// visible, once per slice:
//
//   [copy s0 -> buffer 0]
//   wait, sync | copy s1 -> buffer 1 (in flight) | compute s0 from buffer 0 |
//   wait, sync | copy s2 -> buffer 0 (in flight) | compute s1 from buffer 1 | ...
//
// The barrier at the top of iteration t does two jobs: slice t has landed
// (every thread waited for its copies before it), and every thread has
// finished computing slice t - 1, so its buffer may be overwritten by the
// copies of slice t + 1 issued right after.
//
// A is still stored transposed (tile_a_t[i][row], so that the math reads
// A and B alike with float4 loads, as in v6-v8). A copy moves 4 bytes at
// most to a different place, so A goes word by word: a warp copies 4 rows x
// 8 consecutive k of A (four 32-byte sectors), and those 32 words land in
// 32 different banks (tile_a_t's row stride is 132 words: bank = 4 i + row).
// B keeps its layout: 16-byte copies. The edges (kChecked) copy word by
// word, with zeros where the matrices end.
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 2.980 ms {n:03:async_copy:ms|.3f}, 46.1 TFLOP/s {n:03:async_copy:value},
// 89.7% {n:03:async_copy:pbase} of cuBLAS (v8: 82.2% {n:03:double_buffer:pbase}).
// Long-scoreboard stalls per issued instruction (Nsight Compute), v8:
// 0.45 {n:prof:03_tiling.async_copy_stalls:v8_long_scoreboard|.2f}
// v9: 0.06 {n:prof:03_tiling.async_copy_stalls:v9_long_scoreboard|.2f}
//
// The pipeline (CopyPlan, copy_slice, copy_slice_checked, gemm_block) lives
// in async_pipeline.cuh, where version 10 finds it too.
#pragma once

#include "async_pipeline.cuh" // gemm_block: the loop this version introduces
#include "gemm.cuh"
#include "warp_tile.cuh"      // Tiling

#include "steps/ptx.cuh"

namespace ch03::v9 {

/// v8's tiles (128 x 128 x 16, warp tiles of 64 x 32, 256 threads).
using Default = warp_tile::Tiling<128, 128, 16, 64, 32>;

template <class T, bool kChecked>
__global__ void __launch_bounds__(T::kThreads, 2) sgemm_async_copy(int m, int n, int k, const float* __restrict__ a,
                                                                   const float* __restrict__ b,
                                                                   float* __restrict__ c) {
#if STEPS_PTX_CP_ASYNC // cp.async: sm_80 and later; the row is skipped on older GPUs
  __shared__ __align__(16) float tile_a_t[2][T::BK][T::BM + T::kPadA]; // (buffer, i, row in tile)
  __shared__ __align__(16) float tile_b[2][T::BK][T::BN];              // (buffer, i, column in tile)
  async_pipeline::gemm_block<T, kChecked>(m, n, k, a, b, c, tile_a_t, tile_b);
#endif
}

template <class T = Default>
void launch(const Gemm& g, cudaStream_t stream) {
  launch_tiles(g, stream, T::BM, T::BN, T::BK, T::kThreads, sgemm_async_copy<T, false>, sgemm_async_copy<T, true>);
}

} // namespace ch03::v9
