// Chapter 04, version 1: column reads of a plain 32 x 32 tile (32-way conflict).
//
// The natural layout: element (row, col) at word row * 32 + col. A row is
// 32 words, exactly one trip around the 32 banks, so every row starts in
// bank 0 and element (row, col) is in bank col, whatever the row:
//
//   bank:     0    1    2  ...  31
//   row 0  [ 0,0  0,1  0,2 ... 0,31 ]
//   row 1  [ 1,0  1,1  1,2 ... 1,31 ]
//   ...
//   row 31 [31,0 31,1 31,2 ...31,31 ]
//            ^ column 0: all 32 elements in bank 0
//
// A warp reading a column asks bank `col` for 32 different words: 32
// passes, one word per clock, where a row read takes one. It is the stride
// sweep's stride 32 (strided.cuh), met in a real layout.
//
// Measured on the H200: 31.5x {n:04:column_unpadded:ms/04:stride_1:ms|.1f} the time of stride_1.
#pragma once

#include "columns.cuh"

#include "steps/error.hpp"

namespace ch04::v1 {

/// Row-major, no padding: (row, col) at row * 32 + col.
// [snippet layout]
struct Unpadded {
  static constexpr int kWords = TILE * TILE;
  __device__ static int index(int row, int col) { return row * TILE + col; }
};
// [/snippet layout]

__global__ void __launch_bounds__(kThreads) column_read_unpadded(const float* in, std::size_t n, float* out) {
  __shared__ float tile[Unpadded::kWords];
  column_read<Unpadded>(tile, in, n, out);
}

inline void launch(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  column_read_unpadded<<<blocks_for(n), kThreads, 0, stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch04::v1
