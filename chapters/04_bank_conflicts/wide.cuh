// Chapter 04: 8- and 16-byte accesses (float2, float4).
//
// A warp's 4-byte load asks for 32 x 4 = 128 bytes: one pass over the 32
// banks when nothing conflicts. A float2 load asks for 256 bytes and a
// float4 load for 512, more than the banks can deliver in one clock. The
// hardware splits such a request into passes of 128 bytes, in lane order:
//
//   float2: 2 passes   lanes 0-15 | 16-31              (16 lanes x 8 B)
//   float4: 4 passes   lanes 0-7 | 8-15 | 16-23 | 24-31 (8 lanes x 16 B)
//
// and only lanes of the same pass can conflict. A float4 load by 32 lanes
// of consecutive float4s therefore takes 4 passes, not 1, and that is not a
// conflict: 512 bytes at 128 bytes per clock. Nsight Compute reports 4
// wavefronts and 0 bank conflicts for it.
//
// Stride 2 (in float4s, i.e. lanes 32 bytes apart): lanes 0-7 of the first
// pass read bytes 0, 32, 64, ... 224, in banks 0-3, 8-11, 16-19, 24-27, then
// (lane 4, byte 128) banks 0-3 again: 2-way inside the pass, 8 passes.
//
//   lane:    0      1      2      3      4      5      6      7
//   banks:  0-3   8-11  16-19  24-27   0-3   8-11  16-19  24-27
//
// What wide accesses buy: the same bytes in a half or a quarter of the
// load instructions (fewer instructions to issue, fewer address
// computations), not more bytes per clock than 4-byte loads, which
// already fill the banks.
//
// Measured on the H200: float2_stride_1 at 100.2% {n:04:float2_stride_1:pbase} and float4_stride_1 at
// 99.2% {n:04:float4_stride_1:pbase} of stride_1, and float4_stride_2 at
// 1.97x {n:04:float4_stride_2:ms/04:float4_stride_1:ms} the time of float4_stride_1.
#pragma once

#include "strided.cuh"

namespace ch04::wide {

/// float2 or float4 loads at `stride` (in accesses of that type): the stride
/// kernel with a wider access type.
template <class T>
void launch(const float* in, std::size_t n, int stride, float* out, cudaStream_t s) {
  static_assert(sizeof(T) == 8 || sizeof(T) == 16, "wide loads are float2 or float4 (float: the stride sweep)");
  strided::launch<T>(in, n, stride, out, s);
}

} // namespace ch04::wide
