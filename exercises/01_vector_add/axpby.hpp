/// @file axpby.hpp
/// @brief Exercise 01: the function you implement in axpby.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ex01 {

/// y[i] = a * x[i] + b * y[i] for every i in [0, n), on the GPU, in `stream`.
///
/// Must be correct for every n (0 included) and for pointers that are not
/// 16-byte aligned (x and y may be views that start anywhere in an array,
/// each misaligned differently). Must be fast: 16-byte loads where the
/// alignment allows them. Returns without waiting for the GPU; reports a bad
/// launch by throwing (CUDA_CHECK_LAUNCH).
void axpby(float a, const float* x, float b, float* y, std::size_t n, cudaStream_t stream);

} // namespace ex01
