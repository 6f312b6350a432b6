/// @file absmax.hpp
/// @brief Exercise 06: the function you implement in absmax.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ex06 {

/// The largest magnitude in an array and where it is.
struct Result {
  float value;         ///< max |x[i]| (never negative); -1 for an empty array
  std::uint64_t index; ///< the SMALLEST i with |x[i]| == value; 0 (== n) for an empty array
};

/// Bytes of scratch device memory that absmax may use (256-byte aligned).
/// Its contents are undefined when absmax is called (the grader fills it
/// with garbage before every call): initialize whatever you use, in `stream`.
constexpr std::size_t kWorkspaceBytes = 64 * 1024;

/// Writes to `*out` (device memory) the largest |x[i]| over i in [0, n) and
/// the smallest index where it occurs, in `stream`, without waiting for it.
///
/// The inputs are finite (no NaN, no infinity). n == 0 gives {-1.0f, 0}.
/// Must be correct for every n, including 0, 1, primes and sizes far larger
/// than the number of threads you launch, and for `x` starting anywhere
/// (not necessarily 16-byte aligned). Reports a bad launch by throwing
/// (CUDA_CHECK_LAUNCH).
void absmax(const float* x, std::size_t n, Result* out, void* workspace, cudaStream_t stream);

} // namespace ex06
