// Exercise 08: the given stage kernel (the stub and the solution both
// include this file; you do not edit it).
#pragma once

#include "given_kernel.cuh"
#include "pipeline.hpp"

namespace ex08 {

void process(const float* in, float* out, std::size_t count, cudaStream_t stream) {
  given::launch_process<1>(in, out, count, stream);
}

const void* process_kernel() { return reinterpret_cast<const void*>(given::process_chunk<1>); }

} // namespace ex08
