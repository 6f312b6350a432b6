// Exercise 11: what mma_tile.cu (yours and the solution) is given: the tile
// shapes, the layout of a slice in shared memory, its copy from global
// memory, and the probe the grader reads your fragments with. Do not change
// this file.
//
//   block tile 128 x 128 of C, 8 warps       one warp: 64 x 32 = 4 x 4 mma tiles of 16 x 8
//   +-------+-------+-------+-------+
//   | warp0 | warp1 | warp2 | warp3 |        A^T slice: 32 rows (k) x 128 m, rows kLd = 136 BF16 apart
//   +-------+-------+-------+-------+        B slice:   32 rows (k) x 128 n, rows kLd = 136 BF16 apart
//   | warp4 | warp5 | warp6 | warp7 |
//   +-------+-------+-------+-------+
//
// Both slices are stored as they are in memory: a row of shared memory is
// one k, and runs along m (for A) or n (for B). Element (k0 + i, m0 + j) of
// A^T, that is A(m0 + j, k0 + i), is slice.at[i * kLd + j]. The 8 BF16 of
// padding per row put 8 consecutive rows in 8 different groups of 4 banks
// (row r starts 68 r words in), so ldmatrix reads them without conflicts.
#pragma once

#include "mma_tile.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"
#include "steps/tile_copy.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace ex11 {

namespace ptx = steps::ptx;

constexpr int BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 32;
constexpr int kWarpsM = 2, kWarpsN = 4;
constexpr int kThreads = 32 * kWarpsM * kWarpsN; // 256
constexpr int WARP_M = BLOCK_M / kWarpsM;        // 64
constexpr int WARP_N = BLOCK_N / kWarpsN;        // 32
constexpr int kMmaM = WARP_M / 16;               // 4 mma tiles down
constexpr int kMmaN = WARP_N / 8;                // 4 mma tiles across
constexpr int kLd = 128 + 8;                     // BF16 per row of a slice: 272 bytes

/// One slice in shared memory (17,408 bytes).
struct Slice {
  std::uint16_t at[BLOCK_K * kLd]; // A^T(k0 + i, m0 + j) = A(m0 + j, k0 + i) at at[i * kLd + j]
  std::uint16_t b[BLOCK_K * kLd];  // B(k0 + i, n0 + j) at b[i * kLd + j]
};

/// Copies rows k0 .. k0 + 31 of A^T (columns m0..) and of B (columns n0..)
/// into `s`, zeros outside the matrices. Synchronous: a barrier must follow.
__device__ __forceinline__ void load_slice(Slice& s, const std::uint16_t* at, const std::uint16_t* b, int m, int n,
                                           int k, int m0, int n0, int k0, steps::tiles::Copy how) {
  auto padded = [](int r, int chunk) { return r * kLd + chunk * 8; };
  steps::tiles::copy_tile<BLOCK_K, BLOCK_M, kThreads>(s.at, at, k, m, k0, m0, how, padded);
  steps::tiles::copy_tile<BLOCK_K, BLOCK_N, kThreads>(s.b, b, k, n, k0, n0, how, padded);
}

// What you write in mma_tile.cu (declared here so the probe below can call it).
__device__ void load_a_fragment(std::uint32_t (&a)[4], const std::uint16_t* at_tile, int k0, int m0);
__device__ void load_b_fragments(std::uint32_t (&b)[4], const std::uint16_t* b_tile, int k0, int n0);

/// The BF16 quiet NaN the probe fills its tiles with.
constexpr std::uint16_t kBf16NaN = 0x7FC0;

/// One warp: fills a slice with NaN but for the 16 x 16 blocks at (k0, m0)
/// of A^T and (k0, n0) of B, which hold 16 * (m - m0) + (k - k0) (resp. n):
/// integers below 256, exact in BF16. Then your two loads; their registers
/// go to `out`.
__global__ void probe_kernel(int k0, int m0, int n0, FragmentProbe* out) {
  __shared__ __align__(16) Slice s;
  const int lane = static_cast<int>(threadIdx.x);
  for (int i = lane; i < BLOCK_K * kLd; i += 32) {
    const int r = i / kLd, j = i % kLd;
    const bool in_a = r >= k0 && r < k0 + 16 && j >= m0 && j < m0 + 16;
    const bool in_b = r >= k0 && r < k0 + 16 && j >= n0 && j < n0 + 16;
    s.at[i] = in_a ? __bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(16 * (j - m0) + (r - k0)))) : kBf16NaN;
    s.b[i] = in_b ? __bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(16 * (j - n0) + (r - k0)))) : kBf16NaN;
  }
  __syncwarp();
  std::uint32_t a[4], b[4];
  load_a_fragment(a, s.at, k0, m0);
  load_b_fragments(b, s.b, k0, n0);
  for (int i = 0; i < 4; ++i) {
    out->a[lane][i] = a[i];
    out->b[lane][i] = b[i];
  }
}

void probe_fragments(int k0, int m0, int n0, FragmentProbe* out) {
  probe_kernel<<<1, 32>>>(k0, m0, n0, out);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

const void* kernel_code_probe() { return reinterpret_cast<const void*>(probe_kernel); }

} // namespace ex11
