// Chapter 06: warp divergence, measured. Two textbook tree reductions that
// differ in ONE line: which threads work at each step of the tree.
//
// Both load one element per thread into shared memory and sum the block's
// 256 values with a tree of 8 steps; each level of blocks writes one partial
// per block, and the kernel runs again on the partials until one value is
// left (2^28 floats: 2^20 partials, 2^12, 16, 1: four launches). No atomics:
// both are deterministic. Both loop up to blockDim.x, as the classic code
// does (a run-time block size).
//
// Interleaved addressing: at step s (1, 2, 4, ..., 128) thread t works if
// t % (2 s) == 0, adding partial[t + s] into partial[t]:
//
//   s = 1:  t = 0 2 4 6 ...   16 of each warp's 32 lanes work
//   s = 2:  t = 0 4 8 ...      8 of 32
//   s = 4:  t = 0 8 ...        4 of 32   ... the working lanes are spread over
//                                         EVERY warp at every step
//
// Sequential addressing (v3's tree): at step s (128, 64, ..., 1) thread t
// works if t < s, adding partial[t + s]:
//
//   s = 128: t = 0 ... 127     warps 0-3 work, warps 4-7 could skip the step
//   s = 64:  t = 0 ... 63      warps 0-1 work
//   s = 32:  t = 0 ... 31      warp 0
//   s = 16 ... 1:              part of warp 0 (divergent only here)
//
// What the compiler makes of them (nvcc 13.0, sm_90, cuobjdump -sass): the
// `if` body is 4 instructions (2 shared loads, an add, a store), so it is not
// a branch at all but PREDICATED: every warp issues the 4 instructions at
// every step, and the lanes whose condition is false discard them. Neither
// kernel has a divergent branch, and the sequential one's idle warps do not
// skip anything. What differs is the condition: t % (2 s) with a run-time
// s is an integer division, 18 more instructions per step in every warp
// (28 instructions per step against 10). The lesson's "Profile it" reads both
// facts from Nsight Compute: the instructions executed (smsp__inst_executed.sum)
// and the branch efficiency (smsp__sass_average_branch_targets_threads_uniform.pct).
// (With the block size a compile-time constant, nvcc unrolls both loops,
// turns t % (2 s) into a bit mask, and the two kernels become the same size.)
//
// They are reference rows, not versions: a controlled experiment kept apart
// from the v1-v7 sequence (one element per thread, several launches), so the
// two rows differ in nothing but the tree.
#pragma once

#include "block_size.cuh" // kThreads, kTreeLevels

#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <cstddef>

namespace ch06::divergence {

using steps::global_index;

// Launched with kThreads threads per block (the size of `partial`).
__global__ void tree_interleaved(const float* in, std::size_t n, float* out) {
  __shared__ float partial[kThreads];
  const std::size_t i = global_index();
  const unsigned int t = threadIdx.x;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    if (t % (2 * s) == 0) partial[t] += partial[t + s]; // working lanes spread over all warps
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

__global__ void tree_sequential(const float* in, std::size_t n, float* out) {
  __shared__ float partial[kThreads];
  const std::size_t i = global_index();
  const unsigned int t = threadIdx.x;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) partial[t] += partial[t + s]; // working lanes packed into the first warps
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

/// One tree level reads m values and writes ceil(m / kThreads) partials.
inline std::size_t level_size(std::size_t m) { return steps::ceil_div<std::size_t>(m, kThreads); }

/// Levels until one value is left (at least 1).
inline std::size_t levels(std::size_t n) {
  std::size_t count = 0;
  for (std::size_t m = n; count == 0 || m > 1; m = level_size(m)) ++count;
  return count;
}

/// Longest rounding path: 8 tree steps per level.
inline std::size_t depth(std::size_t n) { return kTreeLevels * levels(n); }

/// Scratch the level outputs need: a (level 0, 2, ...) holds level_size(n),
/// b (level 1, 3, ...) level_size(level_size(n)) floats.
struct Scratch {
  float* a;
  float* b;
};

/// Runs `kernel` level by level: x -> a -> b -> a ... until one value, which
/// the last level writes to `out`.
template <class Kernel>
void launch_levels(Kernel kernel, const float* x, std::size_t n, Scratch scratch, float* out, cudaStream_t stream) {
  if (n == 0) {
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
    return;
  }
  const float* in = x;
  std::size_t m = n;
  for (int level = 0;; ++level) {
    const std::size_t blocks = level_size(m);
    float* dst = blocks == 1 ? out : (level % 2 == 0 ? scratch.a : scratch.b);
    kernel<<<static_cast<unsigned int>(blocks), kThreads, 0, stream>>>(in, m, dst);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    in = dst;
    m = blocks;
  }
}

inline void interleaved(const float* x, std::size_t n, Scratch s, float* out, cudaStream_t stream) {
  launch_levels(tree_interleaved, x, n, s, out, stream);
}

inline void sequential(const float* x, std::size_t n, Scratch s, float* out, cudaStream_t stream) {
  launch_levels(tree_sequential, x, n, s, out, stream);
}

} // namespace ch06::divergence
