// Chapter 02, a reference for version 2: the misaligned copy with its stores
// misaligned too, out[i + K] = in[i + K].
//
// Version 2 shifts only the reads: its stores still start every warp on a
// sector boundary. Chapter 01's --offset shifts every array, so there the
// stores straddle 5 sectors per warp instruction too, the first and the last
// written in part (the rest of each by the neighbouring warp). Reads of a
// sector a neighbour also asked for are served again from L1 or L2; writes
// go to L2 either way. This row measures what misaligned stores add, beside
// version 2 in the same run (the profile test offset_stores counts the
// store sectors and DRAM traffic of both).
#pragma once

#include "block_size.cuh"   // kThreads
#include "strided_copy.cuh" // copy_strided: v1's loop

#include "steps/error.hpp"

namespace ch02::offset_both {

// The same loop as copy_offset (version 2), under its own name for the
// profiler; both pointers arrive shifted.
__global__ void copy_offset_both(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  strided_copy::copy_strided<1>(in, out, n);
}

/// out[offset + i] = in[offset + i] for i < n_in - offset (nothing when
/// offset >= n_in).
inline void launch(const float* in, float* out, std::size_t n_in, std::size_t offset, const steps::DeviceInfo& dev,
                   cudaStream_t s) {
  if (offset >= n_in) return;
  const std::size_t n = n_in - offset;
  copy_offset_both<<<steps::full_wave_blocks(dev, n, kThreads), kThreads, 0, s>>>(in + offset, out + offset, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch02::offset_both
