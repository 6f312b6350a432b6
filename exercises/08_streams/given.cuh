// Exercise 08: the given stage kernel (the stub and the solution both
// include this file; you do not edit it).
#pragma once

#include "pipeline.hpp"

#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/math.hpp"

#include <algorithm>

namespace ex08 {

__global__ void process_chunk(const float* __restrict__ in, float* __restrict__ out, std::size_t count) {
  for (std::size_t i = steps::global_index(); i < count; i += steps::grid_size()) out[i] = fmaf(in[i], 2.0f, 1.0f);
}

void process(const float* in, float* out, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned int>(std::min<std::size_t>(steps::ceil_div<std::size_t>(count, kThreads), 4096));
  process_chunk<<<blocks, kThreads, 0, stream>>>(in, out, count);
  CUDA_CHECK_LAUNCH();
}

const void* process_kernel() { return reinterpret_cast<const void*>(process_chunk); }

} // namespace ex08
