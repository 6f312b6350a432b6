// Chapter 02: the strided copy loop, out[i] = in[i * S], over a grid stride.
//
// Version 1 runs it for S = 1 ... 32 (v1_strided.cuh says what the stride
// does to the sectors a warp asks for); version 2 and the offset_both
// reference row run S = 1 on shifted pointers, each kernel under a name of
// its own for the profiler.
#pragma once

#include "steps/launch.cuh"

#include <cstddef>

namespace ch02::strided_copy {

using steps::global_index;
using steps::grid_size;

template <int S>
__device__ void copy_strided(const float* __restrict__ in, float* __restrict__ out, std::size_t n_out) {
  for (std::size_t i = global_index(); i < n_out; i += grid_size()) out[i] = in[i * S];
}

} // namespace ch02::strided_copy
