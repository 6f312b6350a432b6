// Exercise 06 solution: the largest |x[i]| and its (smallest) index.
//
// Three levels, each combining {value, index} candidates with the same rule
// (the larger value wins; on equal values the smaller index):
//   thread: a grid-stride loop, 4 loads in flight; its indices grow, so a
//           strict > keeps the first of equal values;
//   block:  warp shuffles (__shfl_down_sync, value and index), one candidate
//           per warp in shared memory, one __syncthreads(), warp 0 again;
//   grid:   each block writes its candidate to the workspace and takes a
//           ticket; the block with the last ticket combines them all
//           (chapter 06, v7). No float atomics, no waiting: the result does
//           not depend on the order in which blocks run.
// The identity {-1, n} loses against every element (|x| >= 0): it is the
// candidate of a thread without elements, and the result for n == 0, which
// goes through the same kernel.
#include "absmax.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <algorithm>
#include <cstdint>

namespace ex06 {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned int kFullMask = 0xffffffffu;
/// Blocks at most: their candidates fill the start of the workspace, the
/// arrival counter follows them.
constexpr std::size_t kMaxBlocks = 2048;
static_assert(kMaxBlocks * sizeof(Result) + sizeof(unsigned int) <= kWorkspaceBytes,
              "the workspace holds the blocks' candidates and the counter");

/// The result of an empty range and the identity of the reduction.
__device__ Result empty_result(std::size_t n) { return {-1.0f, n}; }

__device__ float magnitude(float v) { return fabsf(v); }

/// Should a be kept over b? A larger value, or the same value at a smaller index.
__device__ bool beats(const Result& a, const Result& b) {
  return a.value > b.value || (a.value == b.value && a.index < b.index);
}

__device__ Result best_of(const Result& a, const Result& b) { return beats(b, a) ? b : a; }

/// The best candidate of the warp's 32 lanes, valid in lane 0.
__device__ Result warp_best(Result r) {
  for (int offset = 16; offset > 0; offset /= 2) {
    Result other;
    other.value = __shfl_down_sync(kFullMask, r.value, offset);
    other.index = __shfl_down_sync(kFullMask, r.index, offset);
    r = best_of(r, other);
  }
  return r;
}

/// The best candidate of the block, valid in thread 0. Every thread must
/// call it; call it again only after a __syncthreads() (warp 0 may still be
/// reading `warp_results`).
__device__ Result block_best(Result r, std::size_t n) {
  __shared__ Result warp_results[kWarps];
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  r = warp_best(r);
  if (lane == 0) warp_results[warp] = r;
  __syncthreads(); // every warp's candidate is written before warp 0 reads them
  if (warp == 0) r = warp_best(lane < kWarps ? warp_results[lane] : empty_result(n));
  return r;
}

/// A candidate written by another block: read past the (non-coherent) L1.
__device__ Result load_candidate(const volatile Result* p) {
  Result r;
  r.value = p->value;
  r.index = p->index;
  return r;
}

__global__ void absmax_kernel(const float* x, std::size_t n, Result* candidates, unsigned int* arrived,
                              Result* out) {
  Result best = empty_result(n);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  // Four loads in flight per thread (all issued before the comparisons).
  for (; i + 3 * stride < n; i += 4 * stride) {
    const float v0 = magnitude(x[i]), v1 = magnitude(x[i + stride]);
    const float v2 = magnitude(x[i + 2 * stride]), v3 = magnitude(x[i + 3 * stride]);
    if (v0 > best.value) best = {v0, i};
    if (v1 > best.value) best = {v1, i + stride};
    if (v2 > best.value) best = {v2, i + 2 * stride};
    if (v3 > best.value) best = {v3, i + 3 * stride};
  }
  for (; i < n; i += stride) {
    const float v = magnitude(x[i]);
    if (v > best.value) best = {v, i};
  }
  best = block_best(best, n);

  // The grid: the last block to arrive combines the blocks' candidates.
  __shared__ bool last;
  if (threadIdx.x == 0) {
    candidates[blockIdx.x] = best;
    __threadfence(); // the candidate is visible everywhere before it is counted
    last = atomicAdd(arrived, 1u) == gridDim.x - 1;
    __threadfence(); // and the last block sees every candidate counted before it
  }
  __syncthreads();
  if (!last) return; // the same for the whole block
  Result r = empty_result(n);
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += kThreads) r = best_of(r, load_candidate(candidates + b));
  r = block_best(r, n);
  if (threadIdx.x == 0) *out = r;
}

/// One full wave of blocks at most (and at most kMaxBlocks), fewer for small
/// n, never 0: n == 0 still launches one block, which writes the identity.
unsigned int blocks_for(std::size_t n) {
  int device = 0, sms = 0, threads_per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  const std::size_t wave = static_cast<std::size_t>(sms) * static_cast<std::size_t>(threads_per_sm / kThreads);
  const std::size_t needed = steps::ceil_div<std::size_t>(n, kThreads);
  return static_cast<unsigned int>(std::max<std::size_t>(1, std::min({wave, kMaxBlocks, needed})));
}

} // namespace

void absmax(const float* x, std::size_t n, Result* out, void* workspace, cudaStream_t stream) {
  auto* candidates = static_cast<Result*>(workspace);
  auto* arrived = reinterpret_cast<unsigned int*>(candidates + kMaxBlocks);
  CUDA_CHECK(cudaMemsetAsync(arrived, 0, sizeof(unsigned int), stream)); // the workspace holds garbage
  absmax_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n, candidates, arrived, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex06
