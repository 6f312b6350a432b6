// Chapter 02, version 1: strided copies, out[i] = in[i * S].
//
// The idea: a warp's 32 threads issue one load instruction together, and the
// memory system serves it as whole 32-byte sectors. With S = 1 the warp's 32
// floats are 128 contiguous bytes: 4 sectors, every byte used ("coalesced").
// With S = 2 the same 32 floats span 256 bytes: 8 sectors, half of each
// wasted. From S = 8 on, every float sits in a sector of its own: 32 sectors,
// 28 of every 32 bytes moved for nothing.
//
//   S = 1   in: |xxxxxxxx|xxxxxxxx|xxxxxxxx|xxxxxxxx|            4 sectors / warp
//   S = 2   in: |x.x.x.x.|x.x.x.x.|x.x.x.x.|  ...  8 sectors    8 sectors / warp
//   S = 8   in: |x.......|x.......|x.......|  ... 32 sectors   32 sectors / warp
//
// Every version sweeps the same input array (size floats) and writes its
// ceil(size / S) results contiguously, so the writes stay coalesced and only
// the reads change. Measured on the H200 (useful bytes): S = 1 at
// 3056 GB/s {n:02:stride_1:gbps}, S = 2 at 2533 GB/s {n:02:stride_2:gbps},
// S = 8 at 933 GB/s {n:02:stride_8:gbps}, while the sector bytes moved stay
// near memcpy's speed up to S = 8 (beyond that, DRAM reads come in 64-byte
// pairs of sectors: see the README).
//
// One kernel per stride (a template body behind distinct names), so that
// Nsight Compute can pick each one by name: copy_stride_01 ... copy_stride_32.
// The body, copy_strided<S>, is in strided_copy.cuh: version 2 and the
// offset_both reference row run its S = 1 under names of their own.
#pragma once

#include "block_size.cuh"   // kThreads
#include "strided_copy.cuh" // copy_strided: the loop, a template on S

#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <stdexcept>
#include <string>

namespace ch02::v1 {

using steps::global_index;
using steps::grid_size;

// Grid-stride loop (chapter 01): one full wave of blocks walks all outputs.
// __restrict__ promises that in and out do not overlap, so the compiler may
// keep several loads in flight before the stores.
__global__ void copy_stride_01(const float* __restrict__ in, float* __restrict__ out, std::size_t n_out) {
  strided_copy::copy_strided<1>(in, out, n_out);
}
__global__ void copy_stride_02(const float* __restrict__ in, float* __restrict__ out, std::size_t n_out) {
  strided_copy::copy_strided<2>(in, out, n_out);
}
__global__ void copy_stride_04(const float* __restrict__ in, float* __restrict__ out, std::size_t n_out) {
  strided_copy::copy_strided<4>(in, out, n_out);
}
__global__ void copy_stride_08(const float* __restrict__ in, float* __restrict__ out, std::size_t n_out) {
  strided_copy::copy_strided<8>(in, out, n_out);
}
__global__ void copy_stride_16(const float* __restrict__ in, float* __restrict__ out, std::size_t n_out) {
  strided_copy::copy_strided<16>(in, out, n_out);
}
__global__ void copy_stride_32(const float* __restrict__ in, float* __restrict__ out, std::size_t n_out) {
  strided_copy::copy_strided<32>(in, out, n_out);
}

/// Results of a stride-`stride` copy of an `n_in`-float input: in[0],
/// in[stride], ... up to the last index below n_in.
inline std::size_t strided_count(std::size_t n_in, int stride) {
  return steps::ceil_div<std::size_t>(n_in, static_cast<std::size_t>(stride));
}

/// out[i] = in[i * stride] for i < strided_count(n_in, stride).
inline void launch(int stride, const float* in, float* out, std::size_t n_in, const steps::DeviceInfo& dev,
                   cudaStream_t s) {
  const std::size_t n_out = strided_count(n_in, stride);
  if (n_out == 0) return; // a grid of zero blocks is an invalid launch
  const unsigned int blocks = steps::full_wave_blocks(dev, n_out, kThreads);
  switch (stride) {
    case 1: copy_stride_01<<<blocks, kThreads, 0, s>>>(in, out, n_out); break;
    case 2: copy_stride_02<<<blocks, kThreads, 0, s>>>(in, out, n_out); break;
    case 4: copy_stride_04<<<blocks, kThreads, 0, s>>>(in, out, n_out); break;
    case 8: copy_stride_08<<<blocks, kThreads, 0, s>>>(in, out, n_out); break;
    case 16: copy_stride_16<<<blocks, kThreads, 0, s>>>(in, out, n_out); break;
    case 32: copy_stride_32<<<blocks, kThreads, 0, s>>>(in, out, n_out); break;
    default: throw std::invalid_argument("ch02::v1::launch: no kernel for stride " + std::to_string(stride));
  }
  CUDA_CHECK_LAUNCH();
}

} // namespace ch02::v1
