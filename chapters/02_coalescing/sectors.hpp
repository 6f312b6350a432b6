// Chapter 02: the 32-byte-sector model of memory traffic, on the host.
//
// The memory system never moves a single float. Between DRAM, L2 and the
// SMs, data travels in 32-byte sectors (8 floats); a warp's load is served
// as the set of distinct sectors its 32 addresses fall in. So the bytes
// really moved are 32 x (distinct sectors touched), whatever part of each
// sector the kernel uses. The table's "moved GB/s" column comes from here.
#pragma once

#include <cstddef>

namespace ch02 {

/// Bytes in one sector, and floats in one sector.
constexpr std::size_t kSectorBytes = 32;
constexpr std::size_t kFloatsPerSector = kSectorBytes / sizeof(float);

/// Distinct sectors touched by the `count` floats at indices first,
/// first + stride, first + 2 * stride, ... of an array whose element 0
/// starts a sector (cudaMalloc returns 256-byte aligned memory).
inline std::size_t sectors_touched(std::size_t first, std::size_t count, std::size_t stride = 1) {
  if (count == 0) return 0;
  // Floats 8 or more apart never share a sector: one sector each.
  if (stride >= kFloatsPerSector) return count;
  // Closer than that, no sector between the first and the last is skipped.
  const std::size_t last = first + (count - 1) * stride;
  return last / kFloatsPerSector - first / kFloatsPerSector + 1;
}

/// The same, in bytes.
inline double sector_bytes(std::size_t first, std::size_t count, std::size_t stride = 1) {
  return static_cast<double>(kSectorBytes) * static_cast<double>(sectors_touched(first, count, stride));
}

} // namespace ch02
