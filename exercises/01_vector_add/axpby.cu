// Exercise 01: a fast, always-correct axpby, y = a * x + b * y.
//
// Read chapters/01_vector_add first, then exercises/01_vector_add/README.md.
// Grade with: ./tutorial grade 01        Hints: ./tutorial hint 01
//
// Fill in every TODO. Keep the signature of ex01::axpby (axpby.hpp).
#include "axpby.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstdint>

namespace ex01 {

// TODO: write the kernel(s). The fast path should move 16 bytes per access
// (float4); think about what happens to the elements before the first
// 16-byte boundary, after the last one, and when x and y are misaligned by
// different amounts.
__global__ void axpby_kernel(float a, const float* x, float b, float* y, std::size_t n) {
  // TODO: compute y[i] = a * x[i] + b * y[i] for the elements of this thread.
}

void axpby(float a, const float* x, float b, float* y, std::size_t n, cudaStream_t stream) {
  // TODO: choose the number of blocks and threads, launch your kernel(s) in
  // `stream`, and check each launch with CUDA_CHECK_LAUNCH().
  (void)a, (void)x, (void)b, (void)y, (void)n, (void)stream;
}

} // namespace ex01
