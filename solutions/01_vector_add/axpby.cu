// Exercise 01 solution: a fast, always-correct axpby, y = a * x + b * y.
//
// Fast path: x and y are misaligned by the same amount (the usual case: both
// are whole arrays, or slices at the same index). Then a "head" of at most 3
// elements brings both to a 16-byte boundary, the body moves float4s in a
// grid-stride loop over one full wave of blocks, and a "tail" of at most 3
// elements finishes. Otherwise no float4 view of both exists, and a plain
// one-element-per-thread kernel does the work.
#include "axpby.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <algorithm>
#include <cstdint>

namespace ex01 {
namespace {

constexpr int kThreads = 256;

__device__ std::size_t global_index() { return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

// Blocks for `items` threads' worth of work, at most one full wave.
unsigned int blocks_for(std::size_t items) {
  int device = 0, sms = 0, threads_per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  const std::size_t wave = static_cast<std::size_t>(sms) * (threads_per_sm / kThreads);
  return static_cast<unsigned int>(std::min(wave, steps::ceil_div<std::size_t>(items, kThreads)));
}

// Fallback for x and y misaligned differently: one element per thread.
__global__ void axpby_scalar(float a, const float* x, float b, float* y, std::size_t n) {
  const std::size_t i = global_index();
  if (i < n) y[i] = a * x[i] + b * y[i];
}

// x + head and y + head are 16-byte aligned.
__global__ void axpby_vec4(float a, const float* x, float b, float* y, std::size_t n, std::size_t head) {
  const std::size_t n4 = (n - head) / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x + head);
  auto* y4 = reinterpret_cast<float4*>(y + head);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = global_index(); i < n4; i += stride) {
    const float4 xv = x4[i];
    float4 yv = y4[i];
    yv.x = a * xv.x + b * yv.x;
    yv.y = a * xv.y + b * yv.y;
    yv.z = a * xv.z + b * yv.z;
    yv.w = a * xv.w + b * yv.w;
    y4[i] = yv;
  }
  const std::size_t t = global_index();
  const std::size_t tail = head + 4 * n4;
  if (t < head) y[t] = a * x[t] + b * y[t];
  if (tail + t < n) y[tail + t] = a * x[tail + t] + b * y[tail + t];
}

std::uintptr_t misalignment(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16; }

} // namespace

void axpby(float a, const float* x, float b, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return; // zero blocks would be an invalid launch
  if (misalignment(x) != misalignment(y)) {
    axpby_scalar<<<steps::ceil_div<std::size_t>(n, kThreads), kThreads, 0, stream>>>(a, x, b, y, n);
    CUDA_CHECK_LAUNCH();
    return;
  }
  const std::size_t head = std::min<std::size_t>(n, (16 - misalignment(y)) % 16 / sizeof(float));
  // + 1 so that at least one block exists for the head and tail.
  axpby_vec4<<<blocks_for((n - head) / 4 + 1), kThreads, 0, stream>>>(a, x, b, y, n, head);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex01
