// Chapter 01: the classic mistakes, on purpose. Run them with
//   ch01_vector_add --mistakes
// and watch the checks catch each one. None of them is a compile error.
#pragma once

#include "block_size.cuh"        // kThreads
#include "v1_one_per_thread.cuh" // v1's kernel, launched with the wrong grids

#include "steps/error.hpp"

namespace ch01::mistakes {

using steps::global_index;

// Mistake: multiplying instead of "block offset + thread". Block 0 computes
// element 0 256 times, and most elements are never written.
__global__ void add_index_product(const float* a, const float* b, float* c, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * threadIdx.x; // should be blockIdx.x * blockDim.x + threadIdx.x
  if (i < n) c[i] = a[i] + b[i];
}

// Mistake: no bounds check. The last block's extra threads write past the
// end of c, into whatever memory follows it.
__global__ void add_no_bounds_check(const float* a, const float* b, float* c, std::size_t) {
  const std::size_t i = global_index();
  c[i] = a[i] + b[i];
}

inline void index_product(const float* a, const float* b, float* c, std::size_t n, cudaStream_t s) {
  add_index_product<<<steps::ceil_div<std::size_t>(n, kThreads), kThreads, 0, s>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

// Mistake: n / threads rounds down, so the last n % 256 elements get no thread.
inline void too_few_blocks(const float* a, const float* b, float* c, std::size_t n, cudaStream_t s) {
  v1::add_one_per_thread<<<n / kThreads, kThreads, 0, s>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

inline void no_bounds_check(const float* a, const float* b, float* c, std::size_t n, cudaStream_t s) {
  add_no_bounds_check<<<steps::ceil_div<std::size_t>(n, kThreads), kThreads, 0, s>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

// Mistake: 2048 threads per block (the limit is 1024). The kernel never runs,
// and nothing says so unless the launch is checked: CUDA_CHECK_LAUNCH turns
// the silent failure into an error (CUDA 13 on the H200 reports
// cudaErrorInvalidValue; older releases cudaErrorInvalidConfiguration).
inline void block_too_large(const float* a, const float* b, float* c, std::size_t n, cudaStream_t s) {
  v1::add_one_per_thread<<<steps::ceil_div<std::size_t>(n, 2048), 2048, 0, s>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch01::mistakes
