// Exercise 05: a padded tiled transpose of matrix views (any rows x cols,
// rows of each matrix ld elements apart).
//
// Read chapters/05_transpose first, then exercises/05_transpose/README.md.
// Grade with: ./tutorial grade 05        Hints: ./tutorial hint 05
//
// Fill in every TODO. Keep the signature of ex05::transpose (transpose.hpp).
#include "transpose.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstddef>

namespace ex05 {

// TODO: choose your tile and block shape. The chapter's version 4 uses a
// 32 x 32 tile and 32 x 8 threads (4 elements per thread).

__global__ void transpose_view_kernel(int rows, int cols, const float* in, int ld_in, float* out, int ld_out) {
  // TODO: declare the tile in shared memory, padded so that reading one of
  // its columns touches 32 different banks.
  // TODO: phase 1: load this block's tile of in, row by row, with an edge
  // guard (element (r, c) of in is in[r * ld_in + c]; compute the index in
  // std::size_t).
  // TODO: make every thread wait until the whole tile is stored.
  // TODO: phase 2: write the tile's columns as rows of out (element (c, r)
  // of out is out[c * ld_out + r]), with an edge guard.
}

void transpose(int rows, int cols, const float* in, int ld_in, float* out, int ld_out, cudaStream_t stream) {
  // TODO: nothing to do for an empty matrix (a grid of 0 blocks is an
  // invalid launch). Otherwise choose the grid (one block per tile, enough
  // tiles to cover rows and cols: steps::ceil_div) and the block, launch
  // your kernel in `stream`, and check the launch with CUDA_CHECK_LAUNCH().
  (void)rows, (void)cols, (void)in, (void)ld_in, (void)out, (void)ld_out, (void)stream;
}

} // namespace ex05
