// Chapter 05, version 4: several elements per thread.
//
// Change from version 3: a block of 32 x 8 threads (not 32 x 32) still
// moves a 32 x 32 tile, so each thread loads 4 elements, rows ty, ty + 8,
// ty + 16 and ty + 24 of the tile, and stores 4.
//
// Why it is faster: a memory-bound kernel is fast when enough bytes are on
// their way at once to cover the memory latency (Little's law: bandwidth x
// latency = bytes in flight). The 4 loads of a thread are independent, so
// they are all issued before the first one returns: 16 bytes in flight per
// thread instead of 4. Blocks of 256 threads also wait less at
// __syncthreads than blocks of 1024, and more of them share an SM.
// Effect on the H200: 3548 GB/s {n:05:multi_element:gbps}, 85.0% {n:05:multi_element:pbase} of memcpy.
//
// The kernel is a template on the tile side and the number of thread rows,
// so that version 5 can reuse it with a bigger tile: it lives in
// multi_element.cuh (transpose_multi_element), and this version is its
// 32 x 32 tile with 32 x 8 threads.
#pragma once

#include "launch.cuh"        // TILE
#include "multi_element.cuh" // transpose_multi_element: the kernel this version introduces

namespace ch05::v4 {

/// Rows of threads per block in this version: 32 x 8 = 256 threads, 4 elements each.
constexpr int kBlockRows = 8;

inline void launch(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  multi_element::launch<TILE, kBlockRows>(in, out, rows, cols, stream);
}

} // namespace ch05::v4
