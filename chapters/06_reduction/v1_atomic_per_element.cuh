// Chapter 06, version 1: every thread atomicAdds its element into one float.
//
// Idea: the most direct parallel sum. One thread per element, exactly as in
// chapter 01's v1, and `atomicAdd(out, x[i])` so that no two updates of the
// result are lost. The output must be 0 before every run (the chapter zeroes
// it, untimed, with Row::before_each).
//
// What it costs: all n additions land on ONE address. An atomic is carried
// out next to the L2 cache, one after another for the same address, so the
// kernel's speed is the rate of atomics on one address, not the memory
// bandwidth: the GPU's parallelism is serialised at a single point.
//
// Numerics: the n additions happen in whatever order the atomics arrive, a
// different order on every run. The result changes in its last bits from run
// to run (--repeat-check shows it), and the only error bound that holds for
// every order is that of a sequential sum of n terms (reduction_problem.cuh,
// Reduction::bound).
//
// The block size every version launches (kThreads) lives in block_size.cuh.
#pragma once

#include "block_size.cuh" // kThreads

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <cstddef>

namespace ch06::v1 {

using steps::global_index;

__global__ void reduce_v1_atomic_per_element(const float* x, std::size_t n, float* out) {
  const std::size_t i = global_index();
  if (i < n) atomicAdd(out, x[i]); // n atomics, all on the same address
}

inline unsigned int blocks(std::size_t n) { return static_cast<unsigned int>(steps::ceil_div<std::size_t>(n, kThreads)); }

/// Roundings on the longest path from an element to the result: the first
/// atomic lands on 0 (exact), each later one may round, and any element may
/// come first: n - 1.
inline std::size_t depth(std::size_t n) { return n > 0 ? n - 1 : 0; }

/// `out` must hold 0 before the launch.
inline void launch(const float* x, std::size_t n, float* out, cudaStream_t stream) {
  if (n == 0) return; // a grid of zero blocks is an invalid launch; the sum stays 0
  reduce_v1_atomic_per_element<<<blocks(n), kThreads, 0, stream>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch06::v1
