// Chapter 05: the CPU reference every transposing row is checked against.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ch05 {

/// in (rows x cols, row-major) -> its transpose (cols x rows), on the CPU.
/// Blocked by 64 x 64 so that both sides stay in the CPU's caches.
inline std::vector<float> cpu_transpose(const std::vector<float>& in, int rows, int cols) {
  std::vector<float> out(in.size());
  constexpr int B = 64;
  for (int rb = 0; rb < rows; rb += B)
    for (int cb = 0; cb < cols; cb += B)
      for (int r = rb; r < std::min(rows, rb + B); ++r)
        for (int c = cb; c < std::min(cols, cb + B); ++c)
          out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
  return out;
}

} // namespace ch05
