// Chapter 02, version 2: a misaligned copy, out[i] = in[i + K].
//
// Change from version 1 (stride 1): the reads start K floats past the start
// of the array, so each warp's 128 contiguous bytes no longer begin on a
// sector boundary. With K = 1 they straddle 5 sectors instead of 4:
//
//   aligned    |xxxxxxxx|xxxxxxxx|xxxxxxxx|xxxxxxxx|          4 sectors
//   K = 1      |.xxxxxxx|xxxxxxxx|xxxxxxxx|xxxxxxxx|x.......| 5 sectors
//
// The warps ask for 25% {n:100*(5-4)/4|.0f} more sectors, but the extra one is the next warp's
// first sector, usually still in L1 or L2 when it is asked for again: DRAM
// moves every byte once. On the H200: 2784 GB/s {n:02:offset:gbps} against
// 3056 GB/s {n:02:stride_1:gbps} aligned. Misalignment also rules out the wide loads of version 3, which
// need aligned addresses.
#pragma once

#include "block_size.cuh"   // kThreads
#include "strided_copy.cuh" // copy_strided: v1's loop

#include "steps/error.hpp"

namespace ch02::v2 {

// The same loop as copy_stride_01, under its own name for the profiler.
__global__ void copy_offset(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  strided_copy::copy_strided<1>(in, out, n);
}

/// out[i] = in[offset + i] for i < n_in - offset (nothing when offset >= n_in).
inline void launch(const float* in, float* out, std::size_t n_in, std::size_t offset, const steps::DeviceInfo& dev,
                   cudaStream_t s) {
  if (offset >= n_in) return;
  const std::size_t n = n_in - offset;
  copy_offset<<<steps::full_wave_blocks(dev, n, kThreads), kThreads, 0, s>>>(in + offset, out, n);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch02::v2
