// Chapter 06, version 7: deterministic, without float atomics ("last block
// finishes").
//
// Idea: v1-v6 add the block sums with float atomics, in the order the blocks
// happen to finish, so the result's last bits change from run to run. Here
// each block writes its sum to its own slot, partials[blockIdx.x], and takes
// a ticket from an integer counter; the block that draws the last ticket
// knows that every other partial is written, and adds them up itself, in a
// fixed order. Integer atomics are exact, the float additions always happen
// in the same order: the same input gives the same bits on every run (on the
// same GPU, with the same grid).
//
//   every block:   partials[b] = block sum;  __threadfence();  ticket = atomicAdd(done, 1)
//   ticket == B-1: the last block; sum partials[0 .. B) with block_sum; *out = total; done = 0
//
// __threadfence() makes the block's partial visible to the whole GPU before
// its ticket is counted: without it, the last block could count a ticket
// whose partial it cannot see yet. The last block reads the partials with
// __ldcg (from L2, never a stale L1 line) and resets the counter for the
// next launch, so no memset is needed between runs.
//
// Change from v6: the block's atomicAdd on the result becomes a store, a
// fence and an integer ticket; one block does a second, tiny reduction. One
// launch, like v6 (a second kernel would cost a launch, visible at in-L2
// sizes).
//
// What it removes: the run-to-run variation of the float result.
//
// The loads are v6's (float4_loads.cuh), the block combine v5's
// (block_sum.cuh); what is new is the kernel below.
#pragma once

#include "block_size.cuh"   // kThreads, resident_blocks
#include "block_sum.cuh"    // block_sum: v5's shuffles
#include "float4_loads.cuh" // thread_sum, head_of: v6's loads

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <stdexcept>
#include <string>

namespace ch06::v7 {

// NOTES: __maxnreg__(32) caps the registers per thread at 32, so that 8
// blocks of 256 threads fit on an SM (65536 registers). Without it ptxas
// gives this kernel 36 (--resource-usage, CUDA 13.0, sm_90) and only 6 blocks
// fit; with it, 32 and no spills. (__launch_bounds__(256, 8) would say the
// same on sm_80/sm_90, but sm_75 holds only 1024 threads per SM and ptxas
// warns there.) The grid is still sized by the occupancy the runtime reports.
__global__ void __maxnreg__(32)
    reduce_v7_last_block(const float* __restrict__ x, std::size_t n, std::size_t head, float* partials,
                         unsigned int* done, float* out) {
  const float sum = block_sum(float4_loads::thread_sum(x, n, head));
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    __threadfence(); // publish the partial before counting it
    last = atomicAdd(done, 1u) == gridDim.x - 1;
    __threadfence(); // and, in the last block, see every partial counted before this ticket
  }
  __syncthreads(); // everyone reads `last`; warp 0 is done with block_sum's shared memory
  if (!last) return; // block-uniform: the whole block leaves, or none of it

  // The last block: the B partials, in a fixed order.
  float v = 0.0f;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += kThreads) v += __ldcg(partials + b);
  v = block_sum(v);
  if (threadIdx.x == 0) {
    *out = v;
    *done = 0; // ready for the next launch
  }
}

/// Blocks the kernel may use at most (a full wave of the smallest blocks,
/// whatever its occupancy): the size of `partials`.
inline std::size_t max_blocks(const steps::DeviceInfo& dev) {
  return static_cast<std::size_t>(dev.sm_count) * (dev.max_threads_per_sm / kThreads);
}

inline unsigned int blocks(std::size_t n, const steps::DeviceInfo& dev) {
  return resident_blocks(reduce_v7_last_block, dev, float4_loads::work_items(n));
}

/// Longest rounding path: v6's thread part, 10 levels of block_sum, then in
/// the last block a chain of ceil(B / kThreads) partials per thread and 10
/// more levels of block_sum. No atomics: B does not appear as a chain.
inline std::size_t depth(std::size_t n, const steps::DeviceInfo& dev) {
  const std::size_t b = blocks(n, dev);
  return float4_loads::thread_depth(n, b) + kBlockSumLevels + steps::ceil_div<std::size_t>(b, kThreads) +
         kBlockSumLevels;
}

/// `partials` holds max_blocks(dev) floats; `done` must be 0 before the first
/// launch (the kernel leaves it 0). `out` needs no zeroing: it is written.
inline void launch(const float* x, std::size_t n, float* partials, std::size_t partials_size, unsigned int* done,
                   float* out, const steps::DeviceInfo& dev, cudaStream_t stream) {
  if (n == 0) { // the sum of nothing; no grid of zero blocks
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
    return;
  }
  const unsigned int b = blocks(n, dev);
  if (b > partials_size)
    throw std::logic_error("v7: " + std::to_string(b) + " blocks need more than " + std::to_string(partials_size) +
                           " partials");
  reduce_v7_last_block<<<b, kThreads, 0, stream>>>(x, n, float4_loads::head_of(x, n), partials, done, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v7
