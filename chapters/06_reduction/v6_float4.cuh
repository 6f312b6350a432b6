// Chapter 06, version 6: 16-byte (float4) loads, with a head and a tail.
//
// Idea: chapter 01's v3 for a reduction. One float4 load moves 16 bytes, so
// the same 4 loads in flight per thread as v5 now carry 64 bytes instead of
// 16, with a quarter of the load instructions. Each float4's 4 values are
// added pairwise into one of the thread's 4 accumulators.
//
// A float4 access needs a 16-byte aligned address. cudaMalloc returns
// 256-byte aligned memory, but a view into an array (run with --offset 1)
// need not be, so the array is cut in three:
//
//   [h h h][ f4 | f4 | f4 | ... | f4 ][t t t]
//    head    body: float4 loads         tail
//   (0-3)   from the first 16-byte     (0-3: what is left after the last
//            boundary on                whole float4)
//
// The grid's first threads add the head and tail elements, one each.
//
// Change from v5: the body loop reads float4s; head and tail are added to
// the thread's sum before the block combine (v5's warp shuffles, one atomic
// per block). The grid is one wave of RESIDENT blocks, asked from the
// runtime (cudaOccupancyMaxActiveBlocksPerMultiprocessor): a kernel with more
// registers per thread fits fewer blocks per SM than v2-v5's 8.
//
// What it removes: 3 of every 4 load instructions, and it quadruples the
// bytes in flight per thread. What remains: one float atomic per block, so
// the result's last bits still depend on the order the blocks finish (v7).
//
// The loop is thread_sum in float4_loads.cuh (v7 reads with it too); the
// combine is v5's block_sum (block_sum.cuh); resident_blocks is in
// block_size.cuh.
#pragma once

#include "block_size.cuh"   // kThreads, resident_blocks
#include "block_sum.cuh"    // block_sum: v5's shuffles
#include "float4_loads.cuh" // thread_sum, head_of: the loads this version introduces

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <cstddef>

namespace ch06::v6 {

using float4_loads::head_of;
using float4_loads::thread_sum;

__global__ void reduce_v6_float4(const float* __restrict__ x, std::size_t n, std::size_t head, float* out) {
  const float sum = block_sum(thread_sum(x, n, head));
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) {
  return resident_blocks(reduce_v6_float4, dev, float4_loads::work_items(n));
}

/// Longest rounding path: the thread part, 10 levels of block_sum, B - 1
/// rounded atomics.
inline std::size_t depth(std::size_t n, const steps::DeviceInfo& dev) {
  const std::size_t b = blocks(n, dev);
  return float4_loads::thread_depth(n, b) + kBlockSumLevels + (b - 1);
}

/// `out` must hold 0 before the launch.
inline void launch(const float* x, std::size_t n, float* out, const steps::DeviceInfo& dev, cudaStream_t stream) {
  if (n == 0) return;
  reduce_v6_float4<<<blocks(n, dev), kThreads, 0, stream>>>(x, n, head_of(x, n), out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v6
