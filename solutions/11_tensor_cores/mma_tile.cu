// Exercise 11: the tensor-core tile, with A given transposed: your ldmatrix
// addressing, the warp's k loop and the store of the results.
//
// Read chapters/11_tensor_cores first (versions 2 and 3), then
// exercises/11_tensor_cores/README.md. Grade with: ./tutorial grade 11
// Hints: ./tutorial hint 11
//
// The slice layout, its copy and the tile shapes are given (given.cuh).
#include "mma_tile.hpp"

#include "given.cuh"

#include <cstddef>
#include <cstdint>

namespace ex11 {

/// The A fragment (a[0..3] of mma.sync m16n8k16) of the 16 x 16 block of A
/// with rows m0 .. m0 + 15 and k k0 .. k0 + 15, from the A^T slice `at_tile`
/// (row i: k = i, rows kLd BF16 apart, running along m).
__device__ void load_a_fragment(std::uint32_t (&a)[4], const std::uint16_t* at_tile, int k0, int m0) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  // a[i] holds two consecutive k of one row of A: two consecutive rows of
  // the slice at one column, so .trans. Matrix i: k half i / 2, m half i % 2.
  const int k = k0 + (lane % 8) + (lane / 16) * 8;
  const int col = m0 + ((lane / 8) % 2) * 8;
  ptx::ldmatrix_x4_trans(a, at_tile + k * kLd + col);
}

/// The B fragments of two mma tiles: b[0], b[1] of columns n0 .. n0 + 7 and
/// b[2], b[3] of columns n0 + 8 .. n0 + 15, k k0 .. k0 + 15.
__device__ void load_b_fragments(std::uint32_t (&b)[4], const std::uint16_t* b_tile, int k0, int n0) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  // Matrix i: k half i % 2, n half i / 2.
  ptx::ldmatrix_x4_trans(b, b_tile + (k0 + lane % 16) * kLd + n0 + (lane / 16) * 8);
}

/// acc += the warp's 64 x 32 piece of one slice, whose corner in the block
/// tile is (warp_row, warp_col): 16 k per step.
__device__ void warp_slice(float (&acc)[kMmaM][kMmaN][4], const Slice& s, int warp_row, int warp_col) {
  for (int ks = 0; ks < BLOCK_K; ks += 16) {
    std::uint32_t a[kMmaM][4], b[kMmaN][2];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) load_a_fragment(a[mi], s.at, ks, warp_row + mi * 16);
#pragma unroll
    for (int nj = 0; nj < kMmaN; nj += 2) {
      std::uint32_t r[4];
      load_b_fragments(r, s.b, ks, warp_col + nj * 8);
      b[nj][0] = r[0];
      b[nj][1] = r[1];
      b[nj + 1][0] = r[2];
      b[nj + 1][1] = r[3];
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) ptx::mma_m16n8k16_bf16(acc[mi][ni], a[mi], b[ni]);
  }
}

/// Writes the warp's results: acc[mi][ni] is the 16 x 8 tile at
/// (row0 + 16 mi, col0 + 8 ni) of C; only elements inside C (m x n).
__device__ void store_warp_tile(float* c, int m, int n, int row0, int col0, const float (&acc)[kMmaM][kMmaN][4]) {
  const int lane = static_cast<int>(threadIdx.x % 32), g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) { // h = 0: row g, h = 1: row g + 8
        const int row = row0 + mi * 16 + g + 8 * h;
        const int col = col0 + ni * 8 + 2 * t;
        if (row >= m) continue;
        if (col < n) c[static_cast<std::size_t>(row) * n + col] = acc[mi][ni][2 * h];
        if (col + 1 < n) c[static_cast<std::size_t>(row) * n + col + 1] = acc[mi][ni][2 * h + 1];
      }
}

__global__ void __launch_bounds__(kThreads) gemm_tn_kernel(int m, int n, int k, const std::uint16_t* at,
                                                           const std::uint16_t* b, float* c, steps::tiles::Copy how) {
  __shared__ __align__(16) Slice slice;
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int m0 = static_cast<int>(blockIdx.y) * BLOCK_M, n0 = static_cast<int>(blockIdx.x) * BLOCK_N;
  const int warp_row = (warp / kWarpsN) * WARP_M, warp_col = (warp % kWarpsN) * WARP_N;
  float acc[kMmaM][kMmaN][4] = {};

  for (int k0 = 0; k0 < k; k0 += BLOCK_K) {
    load_slice(slice, at, b, m, n, k, m0, n0, k0, how);
    __syncthreads(); // the slice is in shared memory
    warp_slice(acc, slice, warp_row, warp_col);
    __syncthreads(); // every warp is done with it before the next copy overwrites it
  }
  store_warp_tile(c, m, n, m0 + warp_row, n0 + warp_col, acc);
}

void gemm_tn(int m, int n, int k, const __nv_bfloat16* at, const __nv_bfloat16* b, float* c, cudaStream_t stream) {
  if (m == 0 || n == 0) return; // nothing to write
  const auto* at_bits = reinterpret_cast<const std::uint16_t*>(at);
  const auto* b_bits = reinterpret_cast<const std::uint16_t*>(b);
  const steps::tiles::Copy how = steps::tiles::chunks_fit(m, at) && steps::tiles::chunks_fit(n, b)
                                     ? steps::tiles::Copy::vector
                                     : steps::tiles::Copy::scalar;
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(n, BLOCK_N)), static_cast<unsigned>(steps::ceil_div(m, BLOCK_M)));
  gemm_tn_kernel<<<grid, kThreads, 0, stream>>>(m, n, k, at_bits, b_bits, c, how);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex11
