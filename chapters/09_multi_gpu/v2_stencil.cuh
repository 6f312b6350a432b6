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
/// Row blocks per launch at most (gridDim.y <= 65535): larger bands loop.
constexpr unsigned int kMaxRowBlocks = 8192;

/// Rows [row_begin, row_end) of a band stored with one halo row above and
/// below: `in` and `out` point at the halo row above (storage row 0), owned
/// row k is storage row k + 1. Columns outside [0, width) count as 0.
__global__ void jacobi_rows(const float* __restrict__ in, float* __restrict__ out, std::size_t width,
                            std::size_t row_begin, std::size_t row_end) {
  const std::size_t x = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= width) return;
  for (std::size_t y = row_begin + blockIdx.y; y < row_end; y += gridDim.y) {
    const float* c = in + (y + 1) * width + x; // storage row y + 1
    const float left = x > 0 ? c[-1] : 0.0f;
    const float right = x + 1 < width ? c[1] : 0.0f;
    // NOTE: the CPU reference adds in the same order; no multiply-add can
    // form here, so both round identically.
    out[(y + 1) * width + x] = 0.2f * ((((c[0] + c[-static_cast<std::ptrdiff_t>(width)]) + c[width]) + left) + right);
  }
}

/// Computes owned rows [row_begin, row_end) of a band in `stream`.
inline void step_rows(const float* in, float* out, std::size_t width, std::size_t row_begin, std::size_t row_end,
                      cudaStream_t stream) {
  if (row_end <= row_begin) return;
  const dim3 grid(static_cast<unsigned int>(steps::ceil_div<std::size_t>(width, kThreads)),
                  static_cast<unsigned int>(std::min<std::size_t>(row_end - row_begin, kMaxRowBlocks)));
  jacobi_rows<<<grid, kThreads, 0, stream>>>(in, out, width, row_begin, row_end);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch09::v2
