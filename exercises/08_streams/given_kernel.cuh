// Exercise 08: the given stage, out[i] = 2 in[i] + 1, which both parts'
// given.cuh wrap (you do not edit it). A template so that each part gets a
// kernel of its own (Part 1: the pipeline, 2: the stages): the chapter
// program links both parts, and each grader recognises its part's kernel.
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/math.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace ex08::given {

template <int Part>
__global__ void process_chunk(const float* __restrict__ in, float* __restrict__ out, std::size_t count) {
  for (std::size_t i = steps::global_index(); i < count; i += steps::grid_size()) out[i] = fmaf(in[i], 2.0f, 1.0f);
}

// process_chunk<Part> over `count` elements, enqueued in `stream`; count 0 enqueues nothing.
template <int Part>
void launch_process(const float* in, float* out, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned int>(std::min<std::size_t>(steps::ceil_div<std::size_t>(count, kThreads), 4096));
  process_chunk<Part><<<blocks, kThreads, 0, stream>>>(in, out, count);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex08::given
