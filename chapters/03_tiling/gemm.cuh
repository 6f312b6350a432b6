// Chapter 03: what every version shares: the problem, its storage order, and
// the helpers that size grids and guard the edges of the matrices.
//
// Every version computes C = A * B in FP32 with all three matrices row-major
// and packed:
//
//        k                 n                     n
//   +---------+       +---------+           +---------+
//   |         |       |         |           |         |
// m |    A    |  *  k |    B    |   =     m |    C    |     C(r, c) = sum over i of A(r, i) * B(i, c)
//   |         |       |         |           |         |
//   +---------+       +---------+           +---------+
//   A(r, i) = a[r * k + i]   B(i, c) = b[i * n + c]   C(r, c) = c[r * n + c]
//
// Naming: counts are kCamel, tile shapes CAPS (BM x BN block tile, BK deep),
// run-time values snake_case.
#pragma once

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace ch03 {

/// One problem: C (m x n) = A (m x k) * B (k x n), row-major, packed.
struct Gemm {
  int m = 0, n = 0, k = 0;
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
};

/// Largest gridDim.y a launch may use (gridDim.x may go to 2^31 - 1).
constexpr int kMaxGridY = 65535;

/// The grid of a tiled kernel: blockIdx.x walks the block_n-wide column tiles
/// of C, blockIdx.y the block_m-tall row tiles; both rounded up, so the last
/// tiles overhang the matrix when m or n is not a multiple of the tile. A grid
/// taller than 65535 blocks is refused here, as the launch would refuse it,
/// with the reason (only this version's row fails).
inline dim3 tile_grid(int m, int n, int block_m, int block_n) {
  const int rows = steps::ceil_div(m, block_m);
  if (rows > kMaxGridY)
    throw steps::Error("CUDA", "cudaErrorInvalidConfiguration",
                       "gridDim.y = " + std::to_string(m) + " / " + std::to_string(block_m) +
                           " rounded up = " + std::to_string(rows) + " is more than 65535",
                       "tile_grid", __FILE__, __LINE__);
  return dim3(static_cast<unsigned>(steps::ceil_div(n, block_n)), static_cast<unsigned>(rows));
}

/// Element (row, col) of a row-major matrix with `rows` x `cols` elements and
/// rows `ld` apart, or 0 outside it. Tiles that overhang the matrix are
/// filled with zeros, which add nothing to the dot products.
__device__ __forceinline__ float load_or_zero(const float* p, int rows, int cols, int ld, int row, int col) {
  return (row < rows && col < cols) ? p[static_cast<std::size_t>(row) * ld + col] : 0.0f;
}

/// Elements (row, col .. col + 3) of a row-major matrix. Unchecked: one
/// 16-byte load, which needs the four inside the matrix and p + row * ld + col
/// 16-byte aligned. Checked: four guarded scalar loads, correct anywhere.
template <bool kChecked>
__device__ __forceinline__ float4 load4(const float* p, int rows, int cols, int ld, int row, int col) {
  if constexpr (kChecked) {
    return make_float4(load_or_zero(p, rows, cols, ld, row, col), load_or_zero(p, rows, cols, ld, row, col + 1),
                       load_or_zero(p, rows, cols, ld, row, col + 2), load_or_zero(p, rows, cols, ld, row, col + 3));
  } else {
    return *reinterpret_cast<const float4*>(p + static_cast<std::size_t>(row) * ld + col);
  }
}

/// Stores v to elements (row, col .. col + 3); same rules as load4. Checked:
/// only the elements inside the matrix are written.
template <bool kChecked>
__device__ __forceinline__ void store4(float* p, int rows, int cols, int ld, int row, int col, float4 v) {
  if constexpr (kChecked) {
    if (row >= rows) return;
    float* q = p + static_cast<std::size_t>(row) * ld;
    if (col < cols) q[col] = v.x;
    if (col + 1 < cols) q[col + 1] = v.y;
    if (col + 2 < cols) q[col + 2] = v.z;
    if (col + 3 < cols) q[col + 3] = v.w;
  } else {
    *reinterpret_cast<float4*>(p + static_cast<std::size_t>(row) * ld + col) = v;
  }
}

/// True when a float4 load or store at p is allowed (16-byte aligned).
inline bool aligned16(const void* p) { return steps::is_aligned(p, 16); }

/// True when BM x BN x BK tiles cover g exactly and every float4 access of
/// the unchecked kernels is aligned: m, n multiples of the block tile, k of
/// the slice depth (a multiple of 4), and 16-byte aligned matrices.
inline bool fits_fast_path(const Gemm& g, int bm, int bn, int bk) {
  return g.m % bm == 0 && g.n % bn == 0 && g.k % bk == 0 && aligned16(g.a) && aligned16(g.b) && aligned16(g.c);
}

/// A kernel of the tiled versions: (m, n, k, A, B, C).
using TiledKernel = void (*)(int, int, int, const float*, const float*, float*);

/// Launches one of a tiled version's two builds of its kernel, `fast` where
/// the tiles divide the matrices (fits_fast_path: float4 accesses, no
/// bounds checks), `checked` elsewhere: one block of `threads` per bm x bn
/// tile of C, with `smem_bytes` of dynamic shared memory.
inline void launch_tiles(const Gemm& g, cudaStream_t stream, int bm, int bn, int bk, int threads, TiledKernel fast,
                         TiledKernel checked, int smem_bytes = 0) {
  const TiledKernel kernel = fits_fast_path(g, bm, bn, bk) ? fast : checked;
  kernel<<<tile_grid(g.m, g.n, bm, bn), threads, smem_bytes, stream>>>(g.m, g.n, g.k, g.a, g.b, g.c);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch03
