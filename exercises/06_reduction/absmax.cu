// Exercise 06: the largest |x[i]| and its index, with warp shuffles and
// shared memory.
//
// Read chapters/06_reduction first (v5_warp_shuffle.cuh, v7_last_block.cuh),
// then exercises/06_reduction/README.md.
// Grade with: ./tutorial grade 06        Hints: ./tutorial hint 06
//
// Fill in every TODO. Keep the signature of ex06::absmax (absmax.hpp).
#include "absmax.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstdint>

namespace ex06 {

constexpr int kThreads = 256;

// TODO: a __device__ function that combines two candidates {value, index}:
// the larger value wins; on equal values the SMALLER index wins. Every level
// of your reduction (a thread's loop, the lanes of a warp, the warps of a
// block, the blocks of the grid) must combine with these same rules.

// TODO: the kernel. Each thread scans its elements (a grid-stride loop),
// then the warp combines its 32 candidates with __shfl_down_sync, the warps
// of a block meet in shared memory, and the blocks of the grid meet through
// `workspace` (see chapter 06, v7). What is the candidate of a thread that
// has no element at all?
__global__ void absmax_kernel(const float* x, std::size_t n, Result* out) {
  // TODO
  (void)x, (void)n, (void)out;
}

void absmax(const float* x, std::size_t n, Result* out, void* workspace, cudaStream_t stream) {
  // TODO: prepare what you need in `workspace` (its contents are garbage),
  // choose the grid, launch your kernel in `stream` and check the launch with
  // CUDA_CHECK_LAUNCH(). n == 0 must still produce {-1.0f, 0}.
  (void)x, (void)n, (void)out, (void)workspace, (void)stream, (void)kThreads;
}

} // namespace ex06
