// Exercise 09: given code (you do not need to change it): filling ghost
// cells with one value, in a stream, on the slice's GPU. The solution uses
// it too.
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/run.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace ex09 {

__global__ void fill_kernel(float* p, std::size_t count, float value) {
  for (std::size_t i = steps::global_index(); i < count; i += steps::grid_size()) p[i] = value;
}

/// p[0 .. count) = value, enqueued in `stream` (which belongs to `device`).
inline void fill_async(int device, float* p, std::size_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  steps::DeviceScope scope(device);
  const unsigned int blocks = static_cast<unsigned int>(std::min<std::size_t>((count + 255) / 256, 1024));
  fill_kernel<<<blocks, 256, 0, stream>>>(p, count, value);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex09
