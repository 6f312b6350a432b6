// Chapter 03, version 7: warp tiling.
//
// Change from version 6: the same 128 x 128 x 8 block tile and 8 x 8 results
// per thread, but the threads are arranged by warp. Each of the 8 warps owns
// a 64 x 32 warp tile; inside it a lane owns 2 x 2 sub-tiles of 4 x 4 that
// lie 32 rows and 16 columns apart:
//
//   block tile 128 x 128 = 2 x 4 warp tiles      one warp tile, 64 x 32
//   +-----+-----+-----+-----+                    cols 0..15     cols 16..31
//   | w0  | w1  | w2  | w3  |  rows 0..63        +-------------+-------------+
//   +-----+-----+-----+-----+                    | lane (y, x): | same lane:  |  rows 0..31
//   | w4  | w5  | w6  | w7  |  rows 64..127      | 4x4 at       | 4x4 at      |
//   +-----+-----+-----+-----+                    | (4y, 4x)     | (4y, 16+4x) |
//                                                +-------------+-------------+
//   lane = 4 * y + x, y in 0..7, x in 0..3       | (32+4y, 4x)  |(32+4y,16+4x)|  rows 32..63
//                                                +-------------+-------------+
//
// Why: at step i a warp reads, per float4 load instruction, 8 consecutive
// float4 of A (the 4 lanes of a row y share one: a broadcast) or 4
// consecutive float4 of B (the 8 lanes of a column x share one): one
// contiguous 128- or 64-byte piece of a shared row, which the banks serve in
// a single pass. In version 6 the 16 float4 of
// B a warp reads lay 32 bytes apart, and 4 of them fell in the same banks
// (a 4-way bank conflict, chapter 04). The A tile also gets 4 floats of
// padding per row so that the transposing stores do not collide either.
// One warp's data also stays compact (64 x 32), which is how the big GEMM
// libraries organise the work before going to tensor cores.
//
// Edges: as in version 6, an unchecked (float4) and a checked instance.
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// 3.600 ms {n:03:warptile:ms|.3f}, 38.2 TFLOP/s {n:03:warptile:value}.
//
// The warp tile's pieces (shapes, slice copies, the multiply-adds, the
// stores) live in warp_tile.cuh: versions 8 to 10 use them too.
#pragma once

#include "gemm.cuh"
#include "warp_tile.cuh" // Tiling, Slice, load_slice, store_slice, LaneOrigin, compute_slice, store_c

#include "steps/error.hpp"

namespace ch03::v7 {

/// The shapes the chapter uses: 128 x 128 x 8 blocks of 8 warps of 64 x 32.
using Default = warp_tile::Tiling<128, 128, 8, 64, 32>;

using warp_tile::LaneOrigin;
using warp_tile::Slice;

template <class T, bool kChecked>
__global__ void __launch_bounds__(T::kThreads) sgemm_warptile(int m, int n, int k, const float* __restrict__ a,
                                                              const float* __restrict__ b, float* __restrict__ c) {
  __shared__ __align__(16) float tile_a_t[T::BK][T::BM + T::kPadA]; // (i, row in tile)
  __shared__ __align__(16) float tile_b[T::BK][T::BN];              // (i, column in tile)
  const int block_row = blockIdx.y * T::BM, block_col = blockIdx.x * T::BN;
  const LaneOrigin<T> origin;
  float acc[T::kSubM * T::TM][T::kSubN * T::TN] = {};
  for (int k0 = 0; k0 < k; k0 += T::BK) {
    Slice<T> s;
    warp_tile::load_slice<T, kChecked>(s, a, b, m, n, k, block_row, block_col, k0);
    warp_tile::store_slice<T>(s, tile_a_t, tile_b);
    __syncthreads();
    warp_tile::compute_slice<T>(acc, tile_a_t, tile_b, origin);
    __syncthreads();
  }
  warp_tile::store_c<T, kChecked>(acc, c, m, n, block_row, block_col, origin);
}

template <class T = Default>
void launch(const Gemm& g, cudaStream_t stream) {
  launch_tiles(g, stream, T::BM, T::BN, T::BK, T::kThreads, sgemm_warptile<T, false>, sgemm_warptile<T, true>);
}

} // namespace ch03::v7
