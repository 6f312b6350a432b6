// Chapter 11: what every version shares: the problem, its storage order, and
// the helpers that size grids, copy tiles and store results at the edges.
//
// Every version computes C = A * B with BF16 inputs and FP32 results, all
// three matrices row-major and packed:
//
//        k                 n                     n
//   +---------+       +---------+           +---------+
//   |         |       |         |           |         |
// m |    A    |  *  k |    B    |   =     m |    C    |     C(r, c) = sum over i of A(r, i) * B(i, c)
//   |  BF16   |       |  BF16   |           |  FP32   |
//   +---------+       +---------+           +---------+
//   A(r, i) = a[r * k + i]   B(i, c) = b[i * n + c]   C(r, c) = c[r * n + c]
//
// Why B is k x n row-major (chapter 03's layout) and not n x k: mma.sync
// wants each lane's B register to hold two values of one COLUMN of B (two
// consecutive k). In a row-major B they are n elements apart, so no 32-bit
// load fetches them; ldmatrix's .trans form does (version 3). A holds two
// consecutive k of one row, side by side in memory: plain 32-bit loads work.
//
// Naming: counts are kCamel, tile shapes CAPS (BLOCK_M x BLOCK_N block tile,
// BLOCK_K deep), run-time values snake_case.
#pragma once

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/tile_copy.cuh"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace ch11 {

using bf16 = __nv_bfloat16;

/// One problem: C (m x n, FP32) = A (m x k, BF16) * B (k x n, BF16), row-major, packed.
struct Gemm {
  int m = 0, n = 0, k = 0;
  const bf16* a = nullptr;
  const bf16* b = nullptr;
  float* c = nullptr;
};

/// The raw 16-bit patterns of a BF16 array (what the tile copies move).
__host__ __device__ inline const std::uint16_t* bits(const bf16* p) { return reinterpret_cast<const std::uint16_t*>(p); }

/// How a version copies the tiles of `g`: in 16-byte chunks (`fast`: cp.async
/// or 16-byte loads) where every chunk is wholly inside or outside A and B
/// (k and n multiples of 8, 16-byte aligned matrices), element by element
/// elsewhere (any shape, any alignment).
inline steps::tiles::Copy copy_mode(const Gemm& g, steps::tiles::Copy fast) {
  return steps::tiles::chunks_fit(g.k, g.a) && steps::tiles::chunks_fit(g.n, g.b) ? fast
                                                                                  : steps::tiles::Copy::scalar;
}

/// The grid of a tiled kernel: blockIdx.x walks the block_n-wide column tiles
/// of C, blockIdx.y the block_m-tall row tiles, both rounded up. A grid
/// taller than 65535 blocks is refused with the reason (only this row fails).
inline dim3 tile_grid(int m, int n, int block_m, int block_n) {
  const int rows = steps::ceil_div(m, block_m);
  if (rows > 65535)
    throw steps::Error("CUDA", "cudaErrorInvalidConfiguration",
                       "gridDim.y = " + std::to_string(m) + " / " + std::to_string(block_m) +
                           " rounded up = " + std::to_string(rows) + " is more than 65535",
                       "tile_grid", __FILE__, __LINE__);
  return dim3(static_cast<unsigned>(steps::ceil_div(n, block_n)), static_cast<unsigned>(rows));
}

/// C(row, col) = v0 and C(row, col + 1) = v1, for the ones inside C: one
/// 8-byte store where both are inside and the address is 8-byte aligned,
/// else one or two 4-byte stores.
__device__ __forceinline__ void store_pair(const Gemm& g, int row, int col, float v0, float v1) {
  if (row >= g.m || col >= g.n) return;
  float* p = g.c + static_cast<std::size_t>(row) * g.n + col;
  if (col + 1 < g.n && steps::is_aligned(p, 8)) {
    *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
  } else {
    p[0] = v0;
    if (col + 1 < g.n) p[1] = v1;
  }
}

/// Stores one mma.sync accumulator tile, the 16 x 8 piece of C whose top-left
/// corner is (row0, col0): d[0], d[1] are row g, columns 2t, 2t + 1; d[2],
/// d[3] row g + 8 (g = lane / 4, t = lane % 4; steps/ptx.cuh).
__device__ __forceinline__ void store_accumulator(const Gemm& g, int row0, int col0, const float (&d)[4]) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int row = row0 + lane / 4, col = col0 + 2 * (lane % 4);
  store_pair(g, row, col, d[0], d[1]);
  store_pair(g, row + 8, col, d[2], d[3]);
}

} // namespace ch11
