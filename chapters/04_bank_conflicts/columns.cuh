// Chapter 04: the column-read experiment that versions 1 to 3 share.
//
// A 32 x 32 tile of floats sits in shared memory. Lane l of each warp owns
// row l of it and reads that row from left to right: at step `col` of a
// round, lane l reads element (l, col). So at every step the 32 lanes of a
// warp read ONE COLUMN of the tile, one element from each of 32 rows:
//
//            col 0   col 1  ...  col 31
//   row 0  [ lane 0 at step 0, 1, ... 31 ]
//   row 1  [ lane 1                      ]
//    ...
//   row 31 [ lane 31                     ]
//             ^ step 0: the warp reads this column
//
// This is what a kernel does when the threads of a warp walk along
// different rows of a tile: a transpose, a matrix-vector product with one
// row per thread (the exercise), the B operand of a hand-written GEMM.
// Whether it is fast depends only on where the layout puts the elements of
// one column: in 32 different banks (1 pass) or in the same one (32 passes).
//
// The tile is stored the way a copy from global memory stores it: warp w
// writes rows w, w + 8, w + 16, w + 24, one element per lane, so each store
// is a row, conflict-free in all three layouts of this chapter.
//
// A layout is a type with `kWords` (the words the tile occupies) and
// `index(row, col)` (the word that holds element (row, col)).
#pragma once

#include "bench.cuh"

namespace ch04 {

/// The tile experiment. Stores with StoreLayout, reads with ReadLayout; the
/// two are the same in every correct version (the chapter's mistakes show
/// what happens when they are not).
template <class StoreLayout, class ReadLayout = StoreLayout>
__device__ void column_read(float* tile, const float* in, std::size_t n, float* out) {
  // Store: thread i copies element (i / 32, i % 32); lanes of a warp = columns of a row.
  for (int i = threadIdx.x; i < kTileWords; i += blockDim.x)
    tile[StoreLayout::index(i / TILE, i % TILE)] = tile_word(in, n, i);
  __syncthreads(); // every row is in shared memory before any thread reads one

  // Read: lane l reads row l, column by column, kRounds times. Where each
  // element of the row lives is worked out once, as a tiled kernel does
  // (its layout is the same for every tile it loads).
  const int row = threadIdx.x % 32;
  int offset[TILE];
#pragma unroll
  for (int col = 0; col < TILE; ++col) offset[col] = ReadLayout::index(row, col);

  // NOTES: read through a volatile pointer. Every round reads the same
  // words, so without it the compiler may keep the values in registers
  // after the first round; and it may merge four neighbouring words of one
  // row into one 16-byte load (LDS.128), which is a different experiment:
  // lanes then read 4 columns at once (see wide.cuh). volatile makes every
  // read one 4-byte load, every round.
  const volatile float* t = tile;
  float sum = 0.0f;
  for (int q = 0; q < kRounds; ++q) {
#pragma unroll
    for (int col = 0; col < TILE; ++col) sum += step_weight(col) * t[offset[col]];
  }
  out[out_index()] = sum;
}

} // namespace ch04
