#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/random.hpp"

#include <cuda_bf16.h>

#include <algorithm>

namespace steps {

void fill_uniform(float* host, std::size_t n, std::uint64_t seed, float lo, float hi) {
  for (std::size_t i = 0; i < n; ++i) host[i] = uniform_at(seed, i, lo, hi);
}

std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  fill_uniform(v.data(), n, seed, lo, hi);
  return v;
}

namespace {
__global__ void fill_uniform_kernel(float* out, std::size_t n, std::uint64_t seed, float lo, float hi) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = uniform_at(seed, i, lo, hi);
}

__global__ void fill_uniform_bf16_kernel(std::uint16_t* out, std::size_t n, std::uint64_t seed, float lo, float hi) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = __bfloat16_as_ushort(__float2bfloat16_rn(uniform_at(seed, i, lo, hi)));
}
} // namespace

void fill_uniform_device(float* device, std::size_t n, std::uint64_t seed, float lo, float hi,
                         cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<std::size_t>(ceil_div<std::size_t>(n, kThreads), 65536));
  fill_uniform_kernel<<<blocks, kThreads, 0, stream>>>(device, n, seed, lo, hi);
  CUDA_CHECK_LAUNCH();
}

void fill_uniform_bf16_device(std::uint16_t* device, std::size_t n, std::uint64_t seed, float lo, float hi,
                              cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<std::size_t>(ceil_div<std::size_t>(n, kThreads), 65536));
  fill_uniform_bf16_kernel<<<blocks, kThreads, 0, stream>>>(device, n, seed, lo, hi);
  CUDA_CHECK_LAUNCH();
}

} // namespace steps
