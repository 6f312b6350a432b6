// Kernels used by test_gpu_common.cpp (kept apart so that Catch2 is only
// ever compiled by the host compiler).
#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cuda_runtime.h>

namespace steps_test {

__global__ void add_one(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

// Launches add_one with `threads` per block and checks the launch.
void launch_add_one(float* x, int n, int threads) {
  add_one<<<steps::ceil_div(n, threads), threads>>>(x, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace steps_test
