// Chapter 04: what every microbenchmark kernel of the chapter shares.
//
// The experiment. A block of 256 threads (8 warps) copies one 32 x 32 tile
// of the input (1024 words, 4 KiB) into shared memory. Then every thread
// reads shared memory kRounds times 128 bytes in the access pattern under
// test, and writes one number: a weighted sum of everything it read. The
// tile is copied once and read 512 times over, so the time of a launch is
// the time of its shared-memory reads; every version reads the same bytes,
// so their times compare access patterns and nothing else.
//
// Why a weighted sum of whole numbers:
//   - the loads cannot be dropped by the compiler: their values are the output;
//   - the result is exact: every input word is a whole number in [1, 127],
//     every weight a whole number in [1, 32], and every partial sum stays
//     below 2^24, where float arithmetic on whole numbers has no rounding;
//   - the CPU can check it in O(n): which word a thread reads at each step
//     depends only on its lane and the pattern, and the weight only on the
//     step; so a version that reads the right words at the wrong steps (a
//     swizzle applied on one side only) gets a different sum.
#pragma once

#include "steps/math.hpp"

#include <cstddef>

namespace ch04 {

constexpr int kBanks = 32;              ///< shared-memory banks, each 4 bytes wide
constexpr int TILE = 32;                ///< tile side: a warp's width, one row spans all 32 banks
constexpr int kTileWords = TILE * TILE; ///< words in one tile (4 KiB)
constexpr int kThreads = 256;           ///< threads per block: 8 warps
constexpr int kRounds = 64;             ///< rounds per thread; each round reads 128 bytes
constexpr int kCycle = 32;              ///< rounds in which a thread reads its whole tile once

static_assert(kRounds % kCycle == 0, "the CPU reference counts whole cycles of 32 rounds");

/// Shared-memory bytes one block reads in its timed loop (2 MiB).
constexpr double kBytesReadPerBlock = double{kThreads} * kRounds * 128;

/// Weight of the value read at step `j` of a round (a whole number, 1 to 32).
STEPS_HD constexpr float step_weight(int j) { return static_cast<float>(j + 1); }

/// Word `i` of this block's tile: input word blockIdx.x * 1024 + i, or 0
/// past the end of the input (the last tile may be partial).
__device__ inline float tile_word(const float* in, std::size_t n, int i) {
  const std::size_t g = static_cast<std::size_t>(blockIdx.x) * kTileWords + i;
  return g < n ? in[g] : 0.0f;
}

/// Where thread (block, threadIdx.x) writes its sum.
__device__ inline std::size_t out_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// One block per tile of the input.
inline unsigned int blocks_for(std::size_t n) {
  return static_cast<unsigned int>(steps::ceil_div<std::size_t>(n, kTileWords));
}

/// The sum of the floats of one access (1, 2 or 4 of them).
__device__ inline float total(float v) { return v; }
__device__ inline float total(float2 v) { return v.x + v.y; }
__device__ inline float total(float4 v) { return v.x + v.y + v.z + v.w; }

} // namespace ch04
