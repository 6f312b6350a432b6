// Chapter 04, the stride sweep: how many ways does one warp's load conflict?
//
// Shared memory is 32 banks, each 4 bytes wide; word w lives in bank w % 32.
// Each bank delivers one word per clock, so a warp's load takes as many
// passes ("wavefronts") as the most-used bank has distinct words to give.
// Here lane l of every warp reads word l * s (plus an offset the whole warp
// shares), so the lanes hit banks l * s % 32:
//
//   s = 1   lanes 0..31 -> banks 0..31                  1 pass   (conflict-free)
//   s = 2   lanes 0 and 16 -> bank 0, 1 and 17 -> 2 ... 2 passes (2-way)
//   s = 3   3 and 32 share no factor: all 32 banks      1 pass
//   s = 32  every lane -> bank 0                        32 passes (32-way)
//
// In general a stride s costs gcd(s, 32) passes: every odd stride is
// conflict-free, every power of two up to 32 is as bad as its size.
// (Lanes that read the SAME word do not conflict: the bank sends it once to
// all of them, a "broadcast".)
//
// The same kernel runs the chapter's 8- and 16-byte experiments (wide.cuh):
// T is float, float2 or float4 and the stride counts accesses of type T.
//
// Measured on the H200, the time of stride 1 times: stride 2 1.98x {n:04:stride_2:ms/04:stride_1:ms},
// stride 4 3.95x {n:04:stride_4:ms/04:stride_1:ms}, stride 8 7.89x {n:04:stride_8:ms/04:stride_1:ms},
// stride 16 15.76x {n:04:stride_16:ms/04:stride_1:ms}, stride 32 31.51x {n:04:stride_32:ms/04:stride_1:ms}.
#pragma once

#include "bench.cuh"

#include "steps/error.hpp"

#include <stdexcept>
#include <string>

namespace ch04::strided {

/// Floats in one access of type T.
template <class T>
constexpr int kWidth = sizeof(T) / sizeof(float);

/// Accesses of type T each thread makes per round: 128 bytes for every T.
template <class T>
constexpr int kSteps = TILE / kWidth<T>;

/// Accesses of type T in one tile.
template <class T>
constexpr int kAccesses = kTileWords / kWidth<T>;

/// Largest stride whose reads stay inside the doubled tile (see the kernel):
/// lane 31 reads up to access 31 * stride + 31 + 32 * (kSteps - 1), which
/// must be below 2 * kAccesses. (33 for float, 16 for float2, 8 for float4.)
template <class T>
constexpr int kMaxStride = (2 * kAccesses<T> - 1 - 31 - 32 * (kSteps<T> - 1)) / 31;

/// Lane l reads access l * stride + q % 32 + 32 * j at step j of round q.
/// Over 32 rounds that is every access of the tile once, for every lane.
template <class T>
__global__ void __launch_bounds__(kThreads) read_strided(const float* in, std::size_t n, int stride, float* out) {
  // The tile twice in a row (8 KiB), so that an access index past the end of
  // the tile needs no wrap-around (no modulo in the timed loop): access
  // k + kAccesses holds the same values as access k.
  __shared__ __align__(16) float words[2 * kTileWords];
  for (int i = threadIdx.x; i < kTileWords; i += blockDim.x) {
    const float v = tile_word(in, n, i);
    words[i] = v;
    words[i + kTileWords] = v;
  }
  __syncthreads();

  const T* tile = reinterpret_cast<const T*>(words);
  const int lane = threadIdx.x % 32;
  float sum = 0.0f;
  for (int q = 0; q < kRounds; ++q) {
    // This round's first access for this lane. It changes every round, so
    // the compiler cannot keep last round's values in registers.
    const T* p = tile + lane * stride + q % kCycle;
#pragma unroll
    for (int j = 0; j < kSteps<T>; ++j) sum += step_weight(j) * total(p[32 * j]);
  }
  out[out_index()] = sum;
}

/// Launches read_strided<T> over the n input words: one block per tile.
template <class T>
void launch(const float* in, std::size_t n, int stride, float* out, cudaStream_t stream) {
  if (stride < 1 || stride > kMaxStride<T>)
    throw std::invalid_argument("read_strided: stride " + std::to_string(stride) + " outside 1.." +
                                std::to_string(kMaxStride<T>));
  read_strided<T><<<blocks_for(n), kThreads, 0, stream>>>(in, n, stride, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch04::strided
