// Exercise 04: make this matrix-vector product's shared-memory tile
// conflict-free.
//
// Read chapters/04_bank_conflicts first, then exercises/04_bank_conflicts/README.md.
// Grade with: ./tutorial grade 04        Hints: ./tutorial hint 04
//
// The kernel below is correct and fully written. It is slow for one reason:
// the way its tile is laid out in shared memory. Fill in the TODOs (the
// layout), leave the kernel as it is, and keep the results exactly the same.
#include "gemv.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstddef>

namespace ex04 {
namespace {

// TODO: choose where element (row, col) of the TILE x TILE tile lives in the
// shared array. As written, row r occupies words r * 32 .. r * 32 + 31, so
// element (row, col) is in bank col for every row. The kernel's stores are
// fine with that; its column reads are not. Change this function so that
// (a) no two elements share a word, and
// (b) the 32 elements of any one row are in 32 different banks, and so are
//     the 32 elements of any one column.
__host__ __device__ constexpr int tile_index(int row, int col) { return row * TILE + col; }

// TODO: the number of words the tile array needs for your layout (one more
// than the largest tile_index).
constexpr int kTileWords = TILE * TILE;

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
