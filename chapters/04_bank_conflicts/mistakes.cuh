// Chapter 04: two classic layout mistakes, on purpose. Run them with
//   ch04_bank_conflicts --mistakes
// and watch the checks catch both. Neither crashes, neither is a compile
// error, and both would pass a check that only adds up what was read.
#pragma once

#include "columns.cuh"
#include "v1_column_unpadded.cuh"
#include "v2_column_padded.cuh"
#include "v3_column_swizzled.cuh"

#include "steps/error.hpp"

namespace ch04::mistakes {

// Mistake: the swizzle is applied when reading, not when storing. A thread
// still reads every element of its row once per round, so a plain sum of
// what it read would not change; but at step col it gets element
// (row, col ^ row), not (row, col). A transpose built like this scrambles
// its output.
__global__ void __launch_bounds__(kThreads)
    column_read_swizzle_on_read_only(const float* in, std::size_t n, float* out) {
  __shared__ float tile[v3::Swizzled::kWords];
  column_read<v1::Unpadded, v3::Swizzled>(tile, in, n, out);
}

// Mistake: the tile is stored padded and read with the unpadded index.
// Row r is read r words too early, and the pad words (never written) are
// read as data.
__global__ void __launch_bounds__(kThreads)
    column_read_pad_forgotten_on_read(const float* in, std::size_t n, float* out) {
  __shared__ float tile[v2::Padded::kWords];
  column_read<v2::Padded, v1::Unpadded>(tile, in, n, out);
}

inline void swizzle_on_read_only(const float* in, std::size_t n, float* out, cudaStream_t s) {
  column_read_swizzle_on_read_only<<<blocks_for(n), kThreads, 0, s>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

inline void pad_forgotten_on_read(const float* in, std::size_t n, float* out, cudaStream_t s) {
  column_read_pad_forgotten_on_read<<<blocks_for(n), kThreads, 0, s>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch04::mistakes
