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

namespace steps_test {

// Sleeps about `ns` nanoseconds, then writes value to *out (one thread).
__global__ void late_write(int* out, int value, unsigned int ns) {
  for (unsigned int t = 0; t < ns; t += 1000) __nanosleep(1000);
  *out = value;
}

// *sum = in[0] + ... + in[n - 1] (one thread).
__global__ void sum_ints(const int* in, int n, int* sum) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += in[i];
  *sum = s;
}

void launch_late_write(int* out, int value, unsigned int ns, cudaStream_t s) {
  late_write<<<1, 1, 0, s>>>(out, value, ns);
  CUDA_CHECK_LAUNCH();
}

void launch_sum_ints(const int* in, int n, int* sum, cudaStream_t s) {
  sum_ints<<<1, 1, 0, s>>>(in, n, sum);
  CUDA_CHECK_LAUNCH();
}

} // namespace steps_test
