// Chapter 05, version 5: a 64 x 64 tile.
//
// Change from version 4: the same kernel (multi_element.cuh) with a 64 x 64
// tile and 64 x 4 threads, so each thread moves 16 elements instead of 4.
// One line changes.
//
// Two effects: four times the bytes in flight per thread (16 independent
// loads), and each block reads and writes 256-byte runs of each row instead
// of 128-byte ones: fewer, longer pieces for the memory system to gather
// from (and scatter to) 64 rows far apart. Shared memory: 64 x 65 floats = 16.6 KB
// per block, still 8 blocks (2048 threads) per SM on the H200 (228 KB).
// Still conflict-free: a warp covers 32 consecutive tx of one tile row, and
// column reads tile[tx][...] with row length 65 hit banks (tx + const) % 32.
// Effect on the H200: 3890 GB/s {n:05:big_tile:gbps}, 93.2% {n:05:big_tile:pbase} of memcpy.
#pragma once

#include "multi_element.cuh" // transpose_multi_element: v4's kernel

namespace ch05::v5 {

/// Tile side of this version.
constexpr int TILE_BIG = 64;
/// 64 x 4 threads = 256 per block, 16 elements each.
constexpr int kBlockRows = 4;

inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  multi_element::launch<TILE_BIG, kBlockRows>(in, out, rows, cols, stream);
}

} // namespace ch05::v5
