// Chapter 09, version 2: one job split across all GPUs, with halo exchange.
//
// Idea: a 2-D Jacobi (heat) step, out[y][x] = 0.2 (c + up + down + left +
// right), zero outside the grid, repeated --steps times. Cut the grid into
// horizontal bands, one per GPU. A band needs one row of each neighbour to
// compute its own first and last rows: each band is stored with a "halo"
// row above and below, filled before every step from the neighbours' edge
// rows (a peer copy of one row).
//
//     GPU 0   [ halo (zero: the grid's edge) ]
//             [ row 0 ... row r0-1           ] --last row--> GPU 1's top halo
//     GPU 1   [ halo  <- GPU 0's last row    ]
//             [ row r0 ... row r1-1          ] --first row-> GPU 0's bottom halo
//             [ halo  <- GPU 2's first row   ]
//
// Three versions over the same grid:
//   one_gpu        the whole grid on the first GPU (the scaling baseline)
//   split          each step: copy the halos in, then compute the band
//                  (the copy and the compute take turns)
//   split_overlap  each step: compute the band's two edge rows first, send
//                  them to the neighbours on a second stream while the
//                  interior computes: the exchange hides behind compute
//
// The kernel: each thread walks down one column of a strip of 32 rows and
// keeps the cells above, at and below it in registers, so a step loads each
// cell once; the edge rows of split_overlap are one launch of two rows.
//
// Ordering: a GPU may read a neighbour's edge row only after the neighbour
// wrote it (an event recorded after the write, waited for by the copy), and
// a neighbour may overwrite it only after the copy read it (the neighbour's
// next write waits for an event recorded after the copy). Every wait is a
// cudaStreamWaitEvent between streams; the host never waits.
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/math.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace ch09::v2 {

constexpr int kThreads = 256;
/// Rows one thread walks down: the cells above, at and below it stay in
/// registers, so each step loads every cell of the band once (plus the two
/// rows around each strip), not three times.
constexpr unsigned int kStripRows = 32;
/// Strips per launch at most (gridDim.y <= 65535): taller bands loop.
constexpr unsigned int kMaxStrips = 16384;

/// One new cell: c and its four neighbours, added in the CPU reference's
/// order (no multiply-add can form, so both round identically).
__device__ __forceinline__ float jacobi(float c, float up, float down, float left, float right) {
  return 0.2f * ((((c + up) + down) + left) + right);
}

/// Rows [row_begin, row_end) of a band stored with one halo row above and
/// below: `in` and `out` point at the halo row above (storage row 0), owned
/// row k is storage row k + 1. Columns outside [0, width) count as 0.
///
/// Thread x of strip s walks down column x through rows
/// row_begin + kStripRows s .. + kStripRows: the cell below becomes the
/// centre, the centre becomes the cell above. Left and right come from the
/// same row's neighbours (the warp's own cache lines, L1 hits).
__global__ void jacobi_rows(const float* __restrict__ in, float* __restrict__ out, std::size_t width,
                            std::size_t row_begin, std::size_t row_end) {
  const std::size_t x = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= width) return;
  const std::size_t stride = static_cast<std::size_t>(kStripRows) * gridDim.y;
  for (std::size_t y0 = row_begin + static_cast<std::size_t>(blockIdx.y) * kStripRows; y0 < row_end; y0 += stride) {
    const std::size_t y1 = y0 + kStripRows < row_end ? y0 + kStripRows : row_end;
    float up = in[y0 * width + x];     // storage row y0: owned row y0 - 1, or the halo
    float c = in[(y0 + 1) * width + x];
#pragma unroll 4
    for (std::size_t y = y0; y < y1; ++y) {
      const float* row = in + (y + 1) * width; // owned row y
      const float down = row[width + x];
      const float left = x > 0 ? row[x - 1] : 0.0f;
      const float right = x + 1 < width ? row[x + 1] : 0.0f;
      out[(y + 1) * width + x] = jacobi(c, up, down, left, right);
      up = c;
      c = down;
    }
  }
}

/// Owned rows 0 and rows - 1 of a band (blockIdx.y 0 and 1), in one launch:
/// the rows that read the halos, computed first in split_overlap.
__global__ void jacobi_edges(const float* __restrict__ in, float* __restrict__ out, std::size_t width,
                             std::size_t rows) {
  const std::size_t x = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= width) return;
  const std::size_t y = blockIdx.y == 0 ? 0 : rows - 1;
  const float* c = in + (y + 1) * width + x; // storage row y + 1
  out[(y + 1) * width + x] = jacobi(c[0], c[-static_cast<std::ptrdiff_t>(width)], c[width], x > 0 ? c[-1] : 0.0f,
                                    x + 1 < width ? c[1] : 0.0f);
}

/// Computes owned rows [row_begin, row_end) of a band in `stream`.
inline void step_rows(const float* in, float* out, std::size_t width, std::size_t row_begin, std::size_t row_end,
                      cudaStream_t stream) {
  if (row_end <= row_begin) return;
  const std::size_t strips = steps::ceil_div<std::size_t>(row_end - row_begin, kStripRows);
  const dim3 grid(static_cast<unsigned int>(steps::ceil_div<std::size_t>(width, kThreads)),
                  static_cast<unsigned int>(std::min<std::size_t>(strips, kMaxStrips)));
  jacobi_rows<<<grid, kThreads, 0, stream>>>(in, out, width, row_begin, row_end);
  CUDA_CHECK_LAUNCH();
}

/// Computes the first and the last owned row of a band of `rows` rows (one
/// row when rows == 1) in `stream`, in one launch.
inline void step_edges(const float* in, float* out, std::size_t width, std::size_t rows, cudaStream_t stream) {
  if (rows == 0) return;
  const dim3 grid(static_cast<unsigned int>(steps::ceil_div<std::size_t>(width, kThreads)), rows > 1 ? 2u : 1u);
  jacobi_edges<<<grid, kThreads, 0, stream>>>(in, out, width, rows);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch09::v2
