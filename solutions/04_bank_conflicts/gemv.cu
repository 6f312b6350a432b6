// Exercise 04 solution: a conflict-free tile for the matrix-vector product.
//
// The kernel is the exercise's, unchanged. Only the layout differs: each
// row of the tile is padded to TILE + 1 = 33 words, so element (row, col)
// sits at row * 33 + col, in bank (row + col) % 32. A row store (col = lane)
// and a column read (row = lane) both touch 32 different banks.
//
// The other answer, with no extra memory, is the XOR swizzle of the
// chapter's version 3: tile_index(row, col) = row * TILE + (col ^ row),
// kTileWords = TILE * TILE; it passes the same grader.
#include "gemv.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstddef>

namespace ex04 {
namespace {

// One word of padding per row: row r starts in bank r % 32.
constexpr int TILE_STRIDE = TILE + 1; // words from the start of one tile row to the next

__host__ __device__ constexpr int tile_index(int row, int col) { return row * TILE_STRIDE + col; }

constexpr int kTileWords = TILE * TILE_STRIDE; // 32 rows of 33 words; the pad words are never read

constexpr int kWarps = 8; // warps per block

// One block computes TILE consecutive elements of y, rows row0 .. row0 + 31
// of A. Thread (lane, warp) = (threadIdx.x, threadIdx.y) adds up part of the
// dot product of row row0 + lane: the columns warp, warp + 8, warp + 16 and
// warp + 24 of every tile.
__global__ void __launch_bounds__(TILE * kWarps) gemv_tiled(const float* a, const float* x, float* y, int m, int n) {
  __shared__ float tile[kTileWords];      // (TILE, TILE) piece of A, laid out by tile_index
  __shared__ float partial[kWarps][TILE]; // (warp, row): each warp's part of each row's sum
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int row0 = blockIdx.x * TILE;
  float sum = 0.0f;

  for (int col0 = 0; col0 < n; col0 += TILE) {
    // Load: warp w copies tile rows w, w + 8, w + 16, w + 24. Lane = column,
    // so a warp reads 128 consecutive bytes of one row of A (coalesced).
    // Outside the matrix the tile gets zeros.
    for (int r = warp; r < TILE; r += kWarps) {
      const int row = row0 + r, col = col0 + lane;
      tile[tile_index(r, lane)] = (row < m && col < n) ? a[static_cast<std::size_t>(row) * n + col] : 0.0f;
    }
    __syncthreads(); // the whole tile is in shared memory

    // Use: lane = row of the tile. At each step the 32 lanes of a warp read
    // column c of 32 different rows: a column read.
    for (int c = warp; c < TILE; c += kWarps)
      if (col0 + c < n) sum += tile[tile_index(lane, c)] * x[col0 + c];
    __syncthreads(); // everyone is done with this tile before the next load overwrites it
  }

  // Each row's sum is split over the 8 warps: add the 8 parts.
  partial[warp][lane] = sum;
  __syncthreads();
  if (warp == 0 && row0 + lane < m) {
    float total = 0.0f;
    for (int w = 0; w < kWarps; ++w) total += partial[w][lane];
    y[row0 + lane] = total;
  }
}

} // namespace

int tile_offset(int row, int col) { return tile_index(row, col); }
int tile_words() { return kTileWords; }

void gemv(const float* a, const float* x, float* y, int m, int n, cudaStream_t stream) {
  if (m <= 0) return; // no rows: nothing to do (and a grid of 0 blocks is an invalid launch)
  const dim3 threads(TILE, kWarps);
  const auto blocks = static_cast<unsigned int>(steps::ceil_div(m, TILE));
  gemv_tiled<<<blocks, threads, 0, stream>>>(a, x, y, m, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex04
