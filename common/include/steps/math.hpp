/// @file math.hpp
/// @brief Small integer helpers used when sizing grids and tiles.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define STEPS_HD __host__ __device__
#else
#define STEPS_HD
#endif

namespace steps {

/// Ceiling division for non-negative integers: how many blocks of `b` cover
/// `a` items. `(a + b - 1) / b` rounds up where `a / b` would drop the tail.
template <class T>
STEPS_HD constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

/// `a` rounded up to a multiple of `b`.
template <class T>
STEPS_HD constexpr T round_up(T a, T b) {
  return ceil_div(a, b) * b;
}

/// True when pointer `p` is aligned to `bytes` (a power of two).
STEPS_HD inline bool is_aligned(const void* p, std::size_t bytes) {
  return (reinterpret_cast<std::uintptr_t>(p) & (bytes - 1)) == 0;
}

} // namespace steps
