// Chapter 04, version 3: an XOR swizzle (conflict-free, no extra memory).
//
// Change from version 2: no padding. Each row keeps its 32 words, but the
// columns inside row r are shuffled: element (row, col) is stored at
// row * 32 + (col ^ row). Its bank is col ^ row. For a fixed column, the 32
// rows give 32 different values of col ^ row (XOR with a fixed number is
// one-to-one), so a column read touches every bank once:
//
//   word in row:   0     1     2     3   ...
//   row 0       [ 0,0   0,1   0,2   0,3  ... ]   col ^ 0 = col
//   row 1       [ 1,1   1,0   1,3   1,2  ... ]   col ^ 1: neighbours swap
//   row 2       [ 2,2   2,3   2,0   2,1  ... ]   col ^ 2: pairs swap
//   row 3       [ 3,3   3,2   3,1   3,0  ... ]
//                column 0 of rows 0, 1, 2, 3 sits in banks 0, 1, 2, 3
//
// Within a row, col ^ row is a permutation of 0..31 (XOR is its own
// inverse), so a row store stays conflict-free and no two elements share a
// word. Unlike padding, the tile stays 4 KiB, rows stay 128-byte aligned
// (what 16-byte vector accesses and the tensor-core / TMA swizzle modes of
// later chapters need), and the same XOR must be applied on BOTH sides,
// store and load (see mistakes.cuh).
//
// Cost: one integer XOR per access, where padding folds the offset into
// the load's address.
//
// Measured on the H200: 100.2% {n:04:column_swizzled:pbase} of stride_1's throughput.
#pragma once

#include "columns.cuh"

#include "steps/error.hpp"

namespace ch04::v3 {

/// Row-major, columns XOR-swizzled by the row: (row, col) at row * 32 + (col ^ row).
// [snippet layout]
struct Swizzled {
  static constexpr int kWords = TILE * TILE;
  __device__ static int index(int row, int col) { return row * TILE + (col ^ row); }
};
// [/snippet layout]

__global__ void __launch_bounds__(kThreads) column_read_swizzled(const float* in, std::size_t n, float* out) {
  __shared__ float tile[Swizzled::kWords];
  column_read<Swizzled>(tile, in, n, out);
}

inline void launch(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  column_read_swizzled<<<blocks_for(n), kThreads, 0, stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch04::v3
