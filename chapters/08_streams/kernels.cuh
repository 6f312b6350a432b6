// Chapter 08: the kernels every row uses. None of them is the point of the
// chapter (the point is WHEN they run, and what runs beside them), so each is
// as small as it can be and exactly checkable on the CPU.
//
//   work_kernel   y = 2 x + 1 after `iters` FMAs that leave x unchanged: the
//                 pipeline's compute stage, with a knob (--work) for how long
//                 it takes. The compiler cannot remove the loop: the factors
//                 1 and -0 arrive as run-time arguments.
//   spin_kernel   one warp that waits `ns` nanoseconds on the GPU's global
//                 timer, then writes a marker: a kernel of known length that
//                 occupies one SM, so two of them CAN run at the same time.
//   step_kernel   one thread: v = 3 v + i, after spinning `ns` nanoseconds
//                 (0: not at all). 100+ of them in a row measure the cost of
//                 a launch; the order matters (the value says so).
//   gate_kernel   one thread that waits until the host has written a ticket
//                 to pinned memory: launches queued behind it then start
//                 back to back, the host out of the way.
//   gather_kernel out[j] = 2 in[j s] + 1: reads every s-th float, from
//                 device memory or straight from mapped host memory.
//   touch_kernel  writes 256 words of a fresh allocation and logs their sum:
//                 proves the allocation was usable in its loop iteration.
#pragma once

#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/math.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace ch08 {

constexpr int kThreads = 256;

__global__ void work_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n, int iters,
                            float one, float zero) {
  for (std::size_t i = steps::global_index(); i < n; i += steps::grid_size()) {
    float v = in[i];
    for (int k = 0; k < iters; ++k) v = fmaf(v, one, zero); // v * 1 + (-0) == v, exactly
    out[i] = fmaf(v, 2.0f, 1.0f);
  }
}

/// out[i] = 2 in[i] + 1 for i < n, after `iters` identity FMAs per element.
inline void launch_work(const float* in, float* out, std::size_t n, int iters, const steps::DeviceInfo& dev,
                        cudaStream_t s) {
  if (n == 0) return;
  work_kernel<<<steps::full_wave_blocks(dev, n, kThreads), kThreads, 0, s>>>(in, out, n, iters, 1.0f, -0.0f);
  CUDA_CHECK_LAUNCH();
}

/// The CPU result of one element of work_kernel (fmaf is correctly rounded
/// on both sides: the results are identical bit for bit).
inline float work_reference(float x) { return std::fmaf(x, 2.0f, 1.0f); }

__device__ inline unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(long long ns, unsigned int* marker, unsigned int value) {
  const unsigned long long start = global_timer_ns();
  while (global_timer_ns() - start < static_cast<unsigned long long>(ns)) {
  }
  if (threadIdx.x == 0) *marker = value;
}

/// One warp that runs for `us` microseconds, then writes `value` to *marker.
inline void launch_spin(long long us, unsigned int* marker, unsigned int value, cudaStream_t s) {
  spin_kernel<<<1, 32, 0, s>>>(us * 1000, marker, value);
  CUDA_CHECK_LAUNCH();
}

/// Waits until *counter (pinned host memory, written by the host) reaches
/// `ticket`, for at most `timeout_ns` (a host that never writes costs time,
/// not a hang; the row's time then shows it).
__global__ void gate_kernel(const volatile unsigned int* counter, unsigned int ticket, long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (*counter < ticket && global_timer_ns() - start < static_cast<unsigned long long>(timeout_ns))
    __nanosleep(256);
}

__global__ void step_kernel(unsigned int* v, unsigned int i, long long ns) {
  if (ns > 0) {
    const unsigned long long start = global_timer_ns();
    while (global_timer_ns() - start < static_cast<unsigned long long>(ns)) {
    }
  }
  if (threadIdx.x == 0) *v = *v * 3u + i;
}

__global__ void gather_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t m,
                              std::size_t stride) {
  for (std::size_t j = steps::global_index(); j < m; j += steps::grid_size()) out[j] = fmaf(in[j * stride], 2.0f, 1.0f);
}

/// out[j] = 2 in[j * stride] + 1 for j < m; `in` may be a mapped host pointer.
inline void launch_gather(const float* in, float* out, std::size_t m, std::size_t stride, const steps::DeviceInfo& dev,
                          cudaStream_t s) {
  if (m == 0) return;
  gather_kernel<<<steps::full_wave_blocks(dev, m, kThreads), kThreads, 0, s>>>(in, out, m, stride);
  CUDA_CHECK_LAUNCH();
}

/// The value after steps 0..k-1 from 0 (what the launch rows check).
inline unsigned int steps_reference(int k) {
  unsigned int v = 0;
  for (int i = 0; i < k; ++i) v = v * 3u + static_cast<unsigned int>(i);
  return v;
}

constexpr int kTouchWords = 256;

__global__ void touch_kernel(unsigned int* p, unsigned int v, unsigned int* log) {
  p[threadIdx.x] = v + threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int sum = 0;
    for (int j = 0; j < kTouchWords; ++j) sum += p[j];
    log[v] = sum;
  }
}

/// Writes the first 256 words of p (which must hold them) and log[v] = their sum.
inline void launch_touch(unsigned int* p, unsigned int v, unsigned int* log, cudaStream_t s) {
  touch_kernel<<<1, kTouchWords, 0, s>>>(p, v, log);
  CUDA_CHECK_LAUNCH();
}

/// log[v] as touch_kernel writes it.
inline unsigned int touch_reference(unsigned int v) {
  return static_cast<unsigned int>(kTouchWords) * v + static_cast<unsigned int>(kTouchWords * (kTouchWords - 1) / 2);
}

} // namespace ch08
