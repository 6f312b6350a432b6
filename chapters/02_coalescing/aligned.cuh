// Chapter 02: the alignment a vector access needs, checked on the host.
//
// A float2 or float4 load must start on an 8- or 16-byte boundary; the wide
// copies of versions 3 and 4 (and the no-tail mistake) check both pointers
// before they launch.
#pragma once

#include "steps/math.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace ch02::aligned {

/// Throws unless in and out are aligned for `bytes`-wide accesses.
inline void require_aligned(const float* in, const float* out, std::size_t bytes) {
  if (!steps::is_aligned(in, bytes) || !steps::is_aligned(out, bytes))
    throw std::invalid_argument("ch02: vector copy needs " + std::to_string(bytes) + "-byte aligned pointers");
}

} // namespace ch02::aligned
