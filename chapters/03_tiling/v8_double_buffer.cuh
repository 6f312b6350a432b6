// Chapter 03, version 8: warp tiling with double buffering.
//
// Change from version 7: two shared buffers, and the source reads the next
// slice from global memory while the current one is computed. Slices are also twice as
// deep (BK = 16): half as many barriers and loop trips per multiply-add
// (alone, that change also made version 7 a little faster than with BK = 8,
// in one run on the H200 at 4096^3 that is not part of the chapter's results). Version 7 spends each slice in two phases with a
// barrier between them, and a warp waiting for its global loads has nothing
// else to do:
//
//   v7:  [load s0 -> smem] sync [compute s0] sync [load s1 -> smem] sync [compute s1] ...
//   v8:  [load s0 -> smem] sync
//        [issue loads of s1 into registers | compute s0 from buffer 0 | s1 -> buffer 1] sync
//        [issue loads of s2 into registers | compute s1 from buffer 1 | s2 -> buffer 0] sync ...
//
// That is the order of the source; the machine code differs: ptxas issues
// the loads of slice t + 1 after the 1024 multiply-adds of slice t, next to
// the stores that need them, because holding the slice across the math
// would take 16 registers the kernel does not have (version 9 and
// sass_claims.py). What stays true: the slice lands in the OTHER buffer, so
// one barrier per slice is enough. Why it is correct, step by step:
//  - slice t + 1 is written into buffer (t + 1) % 2 during iteration t; that
//    buffer was last read during iteration t - 1, and the barrier that ends
//    iteration t - 1 guarantees every thread has finished reading it;
//  - slice t + 1 is read in iteration t + 1, after the barrier that ends
//    iteration t, so every thread's part of it has been written.
// Cost: shared memory (2 buffers of 16 x 132 + 16 x 128 floats: 33,280 bytes
// per block, against 8,320 in version 7) and the registers that hold the
// slice in flight (nvcc 13.0 gives the kernel 127 registers: still 2 blocks
// of 256 threads per SM).
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 3.253 ms {n:03:double_buffer:ms|.3f}, 42.3 TFLOP/s {n:03:double_buffer:value},
// 82.2% {n:03:double_buffer:pbase} of cuBLAS.
#pragma once

#include "gemm.cuh"
#include "warp_tile.cuh" // v7's Tiling, Slice, load_slice, store_slice, LaneOrigin, compute_slice, store_c

namespace ch03::v8 {

using warp_tile::LaneOrigin;

/// Version 7's tiles with slices of 16 instead of 8 (33,280 bytes of shared
/// memory per block with both buffers: static arrays may use up to 48 KiB).
using Default = warp_tile::Tiling<128, 128, 16, 64, 32>;
using warp_tile::Slice;

template <class T, bool kChecked>
__global__ void __launch_bounds__(T::kThreads) sgemm_double_buffer(int m, int n, int k, const float* __restrict__ a,
                                                                   const float* __restrict__ b,
                                                                   float* __restrict__ c) {
  __shared__ __align__(16) float tile_a_t[2][T::BK][T::BM + T::kPadA]; // (buffer, i, row in tile)
  __shared__ __align__(16) float tile_b[2][T::BK][T::BN];              // (buffer, i, column in tile)
  const int block_row = blockIdx.y * T::BM, block_col = blockIdx.x * T::BN;
  const LaneOrigin<T> origin;
  float acc[T::kSubM * T::TM][T::kSubN * T::TN] = {};
  const int slices = steps::ceil_div(k, T::BK);

  // Prologue: slice 0 into buffer 0.
  Slice<T> s;
  if (slices > 0) {
    warp_tile::load_slice<T, kChecked>(s, a, b, m, n, k, block_row, block_col, 0);
    warp_tile::store_slice<T>(s, tile_a_t[0], tile_b[0]);
  }
  __syncthreads();

  // Main loop: compute slice t from buffer t % 2 while slice t + 1 arrives.
  for (int t = 0; t < slices; ++t) {
    const int cur = t % 2;
    const bool more = t + 1 < slices;
    if (more) warp_tile::load_slice<T, kChecked>(s, a, b, m, n, k, block_row, block_col, (t + 1) * T::BK);
    warp_tile::compute_slice<T>(acc, tile_a_t[cur], tile_b[cur], origin);
    if (more) warp_tile::store_slice<T>(s, tile_a_t[1 - cur], tile_b[1 - cur]);
    __syncthreads();
  }

  // Epilogue.
  warp_tile::store_c<T, kChecked>(acc, c, m, n, block_row, block_col, origin);
}

template <class T = Default>
void launch(const Gemm& g, cudaStream_t stream) {
  launch_tiles(g, stream, T::BM, T::BN, T::BK, T::kThreads, sgemm_double_buffer<T, false>, sgemm_double_buffer<T, true>);
}

} // namespace ch03::v8
