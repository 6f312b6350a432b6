// Exercise 10: what is given (and correct): the tiles, the shared-memory
// pipeline and the tensor-core steps, the same as the chapter's v2
// (chapters/10_fp8_gemm/v2_mma_sync.cuh). Your fp8_gemm_1x128.cu and the
// solution both include this file; you do not need to change it.
//
// 128 x 128 tiles of D, 256 threads = 8 warps of 64 x 32, K in slices of 128
// bytes (= one scale block), double-buffered with cp.async. The PTX
// instructions come from the course's steps/ptx.cuh (common/include/steps/;
// its comments say what each one does and which fragment element each lane
// holds).
#pragma once

#include "fp8_gemm_1x128.hpp"

#include "steps/ptx.cuh" // cp.async and mma.sync

#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ex10 {
// Named (not anonymous): the stub and the solution share it.
namespace detail {

using steps::ptx::cp_async_16;
using steps::ptx::cp_async_commit;
using steps::ptx::cp_async_wait;
using steps::ptx::mma_m16n8k32_e4m3;

constexpr int BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 128;
constexpr int kWarpsN = 4;                      // warps 0-3 take rows 0-63, warps 4-7 rows 64-127
constexpr int kThreads = 256;
constexpr int WARP_M = 64, WARP_N = 32;
constexpr int kMmaM = WARP_M / 16;              // 4 mma tiles (16 rows each) down
constexpr int kMmaN = WARP_N / 8;               // 4 mma tiles (8 columns each) across
constexpr int kRowBytes = BLOCK_K + 16;         // padded: conflict-free fragment loads
constexpr int kStageBytes = (BLOCK_M + BLOCK_N) * kRowBytes;
constexpr int kStages = 2;
constexpr int kSmemBytes = kStages * kStageBytes;
static_assert(BLOCK_K == kScaleBlock, "one K slice is one scale block");

/// Accumulators of one warp: [mma tile down][mma tile across][4 registers].
/// Register j of tile (mi, ni) of lane (g = lane / 4, t = lane % 4) holds
///   j = 0: row mi * 16 + g,     column ni * 8 + 2t
///   j = 1: row mi * 16 + g,     column ni * 8 + 2t + 1
///   j = 2: row mi * 16 + g + 8, column ni * 8 + 2t
///   j = 3: row mi * 16 + g + 8, column ni * 8 + 2t + 1
/// of the warp's 64 x 32 piece (PTX ISA: mma.m16n8k32 fragments).
/// (A typedef: Doxygen 1.9 misreads the `using` form of an array type.)
typedef float Accumulators[kMmaM][kMmaN][4];

/// Starts copying K slice `kb` of A rows m0.. and B rows n0.. into `stage`
/// (A rows first, then B rows, kRowBytes apart); zeros outside A, B or K.
__device__ __forceinline__ void load_stage(std::uint8_t* stage, const std::uint8_t* a, const std::uint8_t* b, int m,
                                           int n, int k, int m0, int n0, int kb) {
  constexpr int kChunksPerRow = BLOCK_K / 16;
  const int k0 = kb * BLOCK_K;
#pragma unroll 1 // unrolled, 8 addresses stay alive in registers: spills with 128 accumulators
  for (int i = 0; i < (BLOCK_M + BLOCK_N) * kChunksPerRow / kThreads; ++i) {
    const int chunk = threadIdx.x + i * kThreads;
    const int row = chunk / kChunksPerRow, col = (chunk % kChunksPerRow) * 16;
    const bool is_a = row < BLOCK_M;
    const int global_row = is_a ? m0 + row : n0 + (row - BLOCK_M);
    std::uint8_t* dst = stage + row * kRowBytes + col;
    if (global_row < (is_a ? m : n) && k0 + col < k)
      cp_async_16(dst, (is_a ? a : b) + static_cast<std::size_t>(global_row) * k + k0 + col);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
}

/// acc += the warp's piece of (A slice) x (B slice)^T: 4 steps of 32 K.
__device__ __forceinline__ void mma_stage(Accumulators& acc, const std::uint8_t* stage, int warp_row, int warp_col,
                                          int g, int t) {
  const std::uint8_t* a_tile = stage;
  const std::uint8_t* b_tile = stage + BLOCK_M * kRowBytes;
#pragma unroll
  for (int ks = 0; ks < BLOCK_K; ks += 32) {
    std::uint32_t af[kMmaM][4], bf[kMmaN][2];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
      const std::uint8_t* p = a_tile + (warp_row + mi * 16 + g) * kRowBytes + ks + 4 * t;
      af[mi][0] = *reinterpret_cast<const std::uint32_t*>(p);                      // row g,     k 4t..
      af[mi][1] = *reinterpret_cast<const std::uint32_t*>(p + 8 * kRowBytes);      // row g + 8, k 4t..
      af[mi][2] = *reinterpret_cast<const std::uint32_t*>(p + 16);                 // row g,     k 16 + 4t..
      af[mi][3] = *reinterpret_cast<const std::uint32_t*>(p + 8 * kRowBytes + 16); // row g + 8, k 16 + 4t..
    }
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      const std::uint8_t* q = b_tile + (warp_col + ni * 8 + g) * kRowBytes + ks + 4 * t;
      bf[ni][0] = *reinterpret_cast<const std::uint32_t*>(q);                      // column g, k 4t..
      bf[ni][1] = *reinterpret_cast<const std::uint32_t*>(q + 16);                 // column g, k 16 + 4t..
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) mma_m16n8k32_e4m3(acc[mi][ni], af[mi], bf[ni]);
  }
}

__device__ __forceinline__ void zero_accumulators(Accumulators& acc) {
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[mi][ni][j] = 0.0f;
}

/// An empty kernel, compiled for the same architectures as your kernel.
__global__ void code_probe_kernel() {}

} // namespace detail

// fp8_gemm_1x128.hpp: your library's code, as the runtime picks it for this GPU.
const void* fp8_gemm_code_probe() { return reinterpret_cast<const void*>(detail::code_probe_kernel); }

namespace detail {

/// The sizes fp8_gemm_1x128 takes (see fp8_gemm_1x128.hpp): m, n >= 1, k a
/// positive multiple of 16, and fewer than 2^31 elements in A (m x k), B
/// (n x k) and D (m x n), so that every element's offset fits in an int.
/// Throws std::invalid_argument otherwise.
inline void check_arguments(int m, int n, int k) {
  const std::string shape = std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k);
  if (m < 1 || n < 1 || k < 16 || k % 16 != 0)
    throw std::invalid_argument("fp8_gemm_1x128: need m, n >= 1 and k a positive multiple of 16 (got " + shape + ")");
  const long long mk = 1LL * m * k, nk = 1LL * n * k, mn = 1LL * m * n;
  if (mk > INT_MAX || nk > INT_MAX || mn > INT_MAX)
    throw std::invalid_argument("fp8_gemm_1x128: A (m x k), B (n x k) and D (m x n) must each have fewer than 2^31 "
                                "elements, so that offsets fit in an int (got " + shape + ")");
}

} // namespace detail
} // namespace ex10
