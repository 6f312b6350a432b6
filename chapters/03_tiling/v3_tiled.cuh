// Chapter 03, version 3: shared-memory tiles (TILE = 16 and TILE = 32).
//
// Change from version 2: a block of TILE x TILE threads computes a TILE x TILE
// tile of C, and walks K in steps of TILE. At each step the block copies a
// TILE x TILE tile of A and one of B into shared memory (each thread copies
// one element of each), waits, and every thread then runs TILE multiply-adds
// out of shared memory. Every element loaded from global memory is used TILE
// times: global loads per FLOP drop from 4 bytes to 4 / TILE bytes.
//
//                 k0   k0+TILE
//            +----+----+----+          B: +-------------+
//            |    |    |    |             |             |
//   block -> |....|####|....|   k0 -----> |    ####     |  tile of B
//   row tile |    |    |    |   k0+TILE   |    ####     |
//            +----+----+----+             +-------------+
//             tile of A                        ^ block column tile
//
// Two barriers per step, both needed:
//   1st: no thread may read the tiles before every thread has written its
//        element of them;
//   2nd: no thread may overwrite the tiles with the next step's elements
//        while another thread is still reading this step's.
// Edges: a tile that overhangs the matrix (m, n or k not a multiple of TILE)
// is filled with zeros, and only threads inside C store their result. Threads
// outside C must still load and reach both barriers, so none returns early.
//
// Measured on the H200 at 4096^3 (the run in docs/results/H200.json):
// tiled_16 at 16.90 ms {n:03:tiled_16:ms}, 8.1 TFLOP/s {n:03:tiled_16:value};
// tiled_32 at 16.33 ms {n:03:tiled_32:ms}, 8.4 TFLOP/s {n:03:tiled_32:value}.
#pragma once

#include "gemm.cuh"

#include "steps/error.hpp"

namespace ch03::v3 {

template <int TILE>
__device__ __forceinline__ void tiled_body(int m, int n, int k, const float* a, const float* b, float* c) {
  __shared__ float tile_a[TILE][TILE]; // (row of C, i)
  __shared__ float tile_b[TILE][TILE]; // (i, column of C)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty; // the element of C this thread owns
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  // [snippet k_loop]
  for (int k0 = 0; k0 < k; k0 += TILE) {
    // Thread (ty, tx) copies A(row, k0 + tx) and B(k0 + ty, col): a warp
    // reads consecutive addresses of one row in both matrices.
    tile_a[ty][tx] = load_or_zero(a, m, k, k, row, k0 + tx);
    tile_b[ty][tx] = load_or_zero(b, k, n, n, k0 + ty, col);
    __syncthreads(); // the tiles are complete
#pragma unroll
    for (int i = 0; i < TILE; ++i) acc += tile_a[ty][i] * tile_b[i][tx];
    __syncthreads(); // everyone is done reading them
  }
  // [/snippet k_loop]
  if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = acc;
}

// Two kernels with their own names, so that a profiler can tell them apart.
__global__ void __launch_bounds__(16 * 16) sgemm_tiled_16(int m, int n, int k, const float* a, const float* b,
                                                           float* c) {
  tiled_body<16>(m, n, k, a, b, c);
}
__global__ void __launch_bounds__(32 * 32) sgemm_tiled_32(int m, int n, int k, const float* a, const float* b,
                                                           float* c) {
  tiled_body<32>(m, n, k, a, b, c);
}

template <int TILE>
void launch(const Gemm& g, cudaStream_t stream) {
  static_assert(TILE == 16 || TILE == 32, "a kernel exists for TILE 16 and 32");
  const dim3 grid = tile_grid(g.m, g.n, TILE, TILE), block(TILE, TILE);
  if constexpr (TILE == 16)
    sgemm_tiled_16<<<grid, block, 0, stream>>>(g.m, g.n, g.k, g.a, g.b, g.c);
  else
    sgemm_tiled_32<<<grid, block, 0, stream>>>(g.m, g.n, g.k, g.a, g.b, g.c);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch03::v3
