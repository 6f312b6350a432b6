// Chapter 01: when three float arrays have a common float4 view.
//
// Version 3 introduces the cut into head, float4 body and tail
// (v3_float4.cuh says why); version 4 keeps it. Both need a, b and c
// misaligned by the same amount, and the head that brings all three to a
// 16-byte boundary.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ch01::float4_view {

/// Bytes past the last 16-byte boundary.
inline std::uintptr_t misalignment(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16; }

/// The head: how many leading elements (0 to 3, at most n) bring a, b and c
/// to a 16-byte boundary together. False when they are misaligned by
/// different amounts: then no float4 view of all three exists.
inline bool common_head(const float* a, const float* b, const float* c, std::size_t n, std::size_t& head) {
  const std::uintptr_t m = misalignment(c);
  if (misalignment(a) != m || misalignment(b) != m) return false;
  head = std::min<std::size_t>(n, (16 - m) % 16 / sizeof(float));
  return true;
}

} // namespace ch01::float4_view
