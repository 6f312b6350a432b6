// Exercise 07, GPU part: a 1-D convolution whose weights live in constant
// memory and whose input tile lives in more than 48 KiB of shared memory.
// Solution.
#include "convolve.hpp"

#include "steps/error.hpp"

#include <stdexcept>

namespace ex07 {

// The weights: every thread of a warp reads the same weight at the same time
// (its index depends on the loop counter only), so each read is one
// constant-cache broadcast.
__constant__ float c_weights[2 * kMaxRadius + 1];

__global__ void convolve_kernel(const float* x, float* y, int n, int radius) {
  extern __shared__ float tile[]; // kTile + 2 r floats
  const int first = blockIdx.x * kTile; // this block's first output
  const int width = kTile + 2 * radius;
  // Stage x[first - r, first + kTile + r): consecutive threads, consecutive
  // floats (coalesced); zeros outside x, which is never read there.
  for (int t = threadIdx.x; t < width; t += blockDim.x) {
    const int g = first - radius + t;
    tile[t] = (g >= 0 && g < n) ? x[g] : 0.0f;
  }
  __syncthreads(); // every thread reads what others staged
  // Output first + o needs tile[o .. o + 2r]: across a warp, consecutive
  // words (no bank conflict); the weight is the same for the whole warp.
  for (int o = threadIdx.x; o < kTile && first + o < n; o += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j <= 2 * radius; ++j) acc = fmaf(c_weights[j], tile[o + j], acc);
    y[first + o] = acc;
  }
}

void set_weights(const float* w, int radius, cudaStream_t stream) {
  if (radius < 0 || radius > kMaxRadius) throw std::invalid_argument("set_weights: radius out of range");
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_weights, w, (2 * radius + 1) * sizeof(float), 0, cudaMemcpyHostToDevice,
                                     stream));
}

void convolve(const float* x, float* y, int n, int radius, cudaStream_t stream) {
  if (n < 0 || n > kMaxN) throw std::invalid_argument("convolve: n out of range");
  if (radius < 0 || radius > kMaxRadius) throw std::invalid_argument("convolve: radius out of range");
  if (n == 0) return;
  const int bytes = (kTile + 2 * radius) * static_cast<int>(sizeof(float));
  // Above 48 KiB a block must ask (per kernel, per device): without this the
  // launch fails with cudaErrorInvalidValue.
  CUDA_CHECK(cudaFuncSetAttribute(convolve_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  const int blocks = (n + kTile - 1) / kTile;
  convolve_kernel<<<blocks, kThreads, bytes, stream>>>(x, y, n, radius);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex07
