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
  // TODO 1: one ldmatrix.x4 (ptx::ldmatrix_x4 or ptx::ldmatrix_x4_trans)
  // that leaves in a[0..3] exactly the registers mma.sync expects (README:
  // the fragment table). Which 8 x 8 block of the slice is matrix i, which
  // lanes give its 8 row addresses, and does a register hold two values of
  // one slice row or of one slice column?
  (void)at_tile, (void)k0, (void)m0;
  a[0] = a[1] = a[2] = a[3] = 0;
}

/// The B fragments of two mma tiles: b[0], b[1] of columns n0 .. n0 + 7 and
/// b[2], b[3] of columns n0 + 8 .. n0 + 15, k k0 .. k0 + 15.
__device__ void load_b_fragments(std::uint32_t (&b)[4], const std::uint16_t* b_tile, int k0, int n0) {
  // TODO 2: the same for B: b[0], b[1] of the 8 columns n0.., then b[0],
  // b[1] of the next 8 columns, in one ldmatrix.x4.
  (void)b_tile, (void)k0, (void)n0;
  b[0] = b[1] = b[2] = b[3] = 0;
}

/// acc += the warp's 64 x 32 piece of one slice, whose corner in the block
/// tile is (warp_row, warp_col): 16 k per step.
__device__ void warp_slice(float (&acc)[kMmaM][kMmaN][4], const Slice& s, int warp_row, int warp_col) {
  // TODO 3: walk the slice's BLOCK_K values of k, one mma.sync k-step at a
  // time: the warp's kMmaM A fragments and kMmaN B fragments (two per
  // load_b_fragments), then kMmaM x kMmaN ptx::mma_m16n8k16_bf16 into acc.
  (void)acc, (void)s, (void)warp_row, (void)warp_col;
}

/// Writes the warp's results: acc[mi][ni] is the 16 x 8 tile at
/// (row0 + 16 mi, col0 + 8 ni) of C; only elements inside C (m x n).
__device__ void store_warp_tile(float* c, int m, int n, int row0, int col0, const float (&acc)[kMmaM][kMmaN][4]) {
  // TODO 4: which elements of its 16 x 8 tile does acc[mi][ni][0..3] hold
  // in this lane (README: the fragment table)? Store the ones inside C.
  (void)c, (void)m, (void)n, (void)row0, (void)col0, (void)acc;
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
