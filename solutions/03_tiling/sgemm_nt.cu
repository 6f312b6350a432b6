// Exercise 03 solution: a tiled matrix multiply C = A * B^T, correct for
// every shape.
//
// Both operands run along k in memory (A is m x k, B is n x k), so both tiles
// are copied the same way: thread (ty, tx) copies element tx of row ty of the
// tile, and the 32 threads of a warp read 32 consecutive floats of one row.
//
//   tile_a[ty][i] = A(row0 + ty, k0 + i)       thread (ty, tx) computes
//   tile_b[tx][i] = B(col0 + tx, k0 + i)       C(row0 + ty, col0 + tx) += sum_i tile_a[ty][i] * tile_b[tx][i]
//
// In the inner loop a warp (fixed ty, tx = 0..31) reads tile_a[ty][i], one
// address (a broadcast), and tile_b[tx][i], 32 different rows at the same
// column. With rows of 32 floats those 32 addresses would all sit in one bank
// (a 32-way conflict); with rows of 33 they fall in 32 different banks.
//
// Edges: tiles that stick out past m, n or k are filled with zeros, and only
// threads inside C store. Leading dimensions: row r of a matrix starts at
// r * ld, never r * (its width).
#include "sgemm_nt.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstddef>

namespace ex03 {

constexpr int TILE = 32;

__global__ void __launch_bounds__(TILE * TILE)
    sgemm_nt_tiled(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  __shared__ float tile_a[TILE][TILE];     // (row of C in the tile, i)
  __shared__ float tile_b[TILE][TILE + 1]; // (column of C in the tile, i); +1: no bank conflicts
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;   // the element of C this thread computes
  const int col = blockIdx.x * TILE + tx;
  const int b_row = blockIdx.x * TILE + ty; // the row of B this thread copies
  const int tiles = steps::ceil_div(k, TILE);
  float acc = 0.0f;
  for (int t = 0; t < tiles; ++t) {
    const int i = t * TILE + tx; // the column of A and of B this thread copies
    tile_a[ty][tx] = (row < m && i < k) ? a[static_cast<std::size_t>(row) * lda + i] : 0.0f;
    tile_b[ty][tx] = (b_row < n && i < k) ? b[static_cast<std::size_t>(b_row) * ldb + i] : 0.0f;
    __syncthreads(); // both tiles complete before anyone reads them
    for (int j = 0; j < TILE; ++j) acc += tile_a[ty][j] * tile_b[tx][j];
    __syncthreads(); // everyone done reading before the next copy overwrites them
  }
  if (row < m && col < n) c[static_cast<std::size_t>(row) * ldc + col] = acc;
}

void sgemm_nt(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
              cudaStream_t stream) {
  if (m == 0 || n == 0) return; // nothing to compute, and a grid of 0 blocks is an invalid launch
  const dim3 block(TILE, TILE);
  const dim3 grid(steps::ceil_div(n, TILE), steps::ceil_div(m, TILE));
  sgemm_nt_tiled<<<grid, block, 0, stream>>>(m, n, k, a, lda, b, ldb, c, ldc);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex03
