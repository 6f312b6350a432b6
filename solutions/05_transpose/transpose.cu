// Exercise 05 solution: a padded tiled transpose of matrix views.
//
// The chapter's version 4 (a 32 x 32 tile padded to 33 columns, 32 x 8
// threads, 4 elements per thread) with the row pitches of views: element
// (r, c) of in is in[r * ld_in + c], element (c, r) of out is
// out[c * ld_out + r]. The pitches change the addresses only; the edge
// guards still compare with rows and cols, because the ld - width elements
// at the end of each row are not part of the matrix.
#include "transpose.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstddef>

namespace ex05 {
namespace {

constexpr int TILE = 32;       // tile side: one warp-wide row of 128 bytes
constexpr int kBlockRows = 8;  // 32 x 8 threads, each TILE / kBlockRows = 4 elements

// Element (r, c) of a row-major view with row pitch ld, in size_t: rows * ld
// may exceed the range of int.
__device__ std::size_t at(int r, int c, int ld) {
  return static_cast<std::size_t>(r) * static_cast<std::size_t>(ld) + static_cast<std::size_t>(c);
}

__global__ void transpose_view_padded(int rows, int cols, const float* in, int ld_in, float* out, int ld_out) {
  __shared__ float tile[TILE][TILE + 1]; // + 1: a column of the tile spans all 32 banks
  const int tx = threadIdx.x, ty = threadIdx.y;

  // Phase 1: this block's tile of in, input rows r0 .., input columns c0 ..
  const int r0 = blockIdx.y * TILE;
  const int c0 = blockIdx.x * TILE;
  for (int j = 0; j < TILE; j += kBlockRows) {
    const int r = r0 + ty + j, c = c0 + tx;
    if (r < rows && c < cols) tile[ty + j][tx] = in[at(r, c, ld_in)];
  }

  // Phase 2 reads elements that other warps stored.
  __syncthreads();

  // Phase 2: the same tile in out: output rows c0 .., output columns r0 ..
  const int out_row0 = blockIdx.x * TILE;
  const int out_col0 = blockIdx.y * TILE;
  for (int j = 0; j < TILE; j += kBlockRows) {
    const int out_row = out_row0 + ty + j, out_col = out_col0 + tx;
    if (out_row < cols && out_col < rows) out[at(out_row, out_col, ld_out)] = tile[tx][ty + j];
  }
}

} // namespace

void transpose(int rows, int cols, const float* in, int ld_in, float* out, int ld_out, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return; // a grid of zero blocks is an invalid launch
  const dim3 grid(static_cast<unsigned int>(steps::ceil_div(cols, TILE)),
                  static_cast<unsigned int>(steps::ceil_div(rows, TILE)));
  transpose_view_padded<<<grid, dim3(TILE, kBlockRows), 0, stream>>>(rows, cols, in, ld_in, out, ld_out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex05
