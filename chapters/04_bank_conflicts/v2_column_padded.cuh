// Chapter 04, version 2: one word of padding per row (conflict-free).
//
// Change from version 1: each row of the tile is 33 words long; the 33rd is
// never used. Element (row, col) is at row * 33 + col, in bank
// (row + col) % 32: every row starts one bank further than the one above,
// so a column is spread over all 32 banks:
//
//   bank:      0     1     2   ...   31
//   row 0   [ 0,0   0,1   0,2  ...  0,31 ]   then its pad word (bank 0)
//   row 1   [ 1,31  1,0   1,1  ...  1,30 ]   starts in bank 1, wraps around
//   row 2   [ 2,30  2,31  2,0  ...  2,29 ]   starts in bank 2
//             column 0 of rows 0, 1, 2 ... is in banks 0, 1, 2 ...
//
// Rows are still rows (32 consecutive words: a row store stays
// conflict-free). Cost: 32 words (128 bytes) per 4 KiB tile, 3% {n:100*128/4096|.0f}.
//
// Measured on the H200: 100.2% {n:04:column_padded:pbase} of stride_1's throughput and
// 31.57x {n:04:column_unpadded:ms/04:column_padded:ms} faster than column_unpadded.
#pragma once

#include "columns.cuh"

#include "steps/error.hpp"

namespace ch04::v2 {

/// Row-major with one word of padding per row: (row, col) at row * 33 + col.
// [snippet layout]
struct Padded {
  static constexpr int kWords = TILE * (TILE + 1);
  __device__ static int index(int row, int col) { return row * (TILE + 1) + col; }
};
// [/snippet layout]

__global__ void __launch_bounds__(kThreads) column_read_padded(const float* in, std::size_t n, float* out) {
  __shared__ float tile[Padded::kWords];
  column_read<Padded>(tile, in, n, out);
}

inline void launch(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  column_read_padded<<<blocks_for(n), kThreads, 0, stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch04::v2
