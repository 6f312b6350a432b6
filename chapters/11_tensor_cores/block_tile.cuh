// Chapter 11: the block tile of versions 2 and 3: its shape, its layout in
// shared memory, the copy of one slice into it and the store of the results.
// Version 2 introduces it; version 3 keeps it and changes only how a warp
// reads its fragments out of it.
//
//   block tile 128 x 128 of C, 8 warps     one warp: 64 x 32 = 4 x 4 mma tiles of 16 x 8
//   +-------+-------+-------+-------+
//   | warp0 | warp1 | warp2 | warp3 |      A slice: 128 rows (m) x 32 k,   rows 40 BF16 (80 B) apart
//   +-------+-------+-------+-------+      B slice:  32 rows (k) x 128 n,  rows 136 BF16 (272 B) apart
//   | warp4 | warp5 | warp6 | warp7 |
//   +-------+-------+-------+-------+
//
// Padding. Without it, the rows of the A slice would be 64 bytes apart and
// those of B 256: the 8 rows a fragment load touches at once would share
// banks (2-way for A, 8-way for B). With 8 more BF16 per row, row r starts
// 20 r (A) or 68 r (B) words in: 8 consecutive rows start in 8 different
// groups of 4 banks, so every fragment load below is conflict-free.
#pragma once

#include "bf16_gemm.cuh"

#include "steps/tile_copy.cuh"

#include <cstdint>

namespace ch11::block_tile {

constexpr int BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 32;
constexpr int kWarpsM = 2, kWarpsN = 4;
constexpr int kThreads = 32 * kWarpsM * kWarpsN; // 256
constexpr int WARP_M = BLOCK_M / kWarpsM;        // 64
constexpr int WARP_N = BLOCK_N / kWarpsN;        // 32
constexpr int kMmaM = WARP_M / 16;               // 4 mma tiles down
constexpr int kMmaN = WARP_N / 8;                // 4 mma tiles across
constexpr int kLdA = BLOCK_K + 8;                // 40 BF16 = 80 bytes per A row
constexpr int kLdB = BLOCK_N + 8;                // 136 BF16 = 272 bytes per B row
static_assert(kLdA % 8 == 0 && kLdB % 8 == 0, "rows start on 16-byte boundaries (16-byte copies, ldmatrix)");

/// One slice of A and B in shared memory (18,944 bytes: static shared memory).
struct Slice {
  std::uint16_t a[BLOCK_M * kLdA]; // A(m0 + r, k0 + i) at a[r * kLdA + i]
  std::uint16_t b[BLOCK_K * kLdB]; // B(k0 + i, n0 + c) at b[i * kLdB + c]
};

/// Copies A rows m0.., columns k0.. and B rows k0.., columns n0.. into `s`,
/// zeros outside the matrices. Synchronous: a barrier must follow.
__device__ __forceinline__ void load_slice(Slice& s, const Gemm& g, int m0, int n0, int k0, steps::tiles::Copy how) {
  steps::tiles::copy_tile<BLOCK_M, BLOCK_K, kThreads>(s.a, bits(g.a), g.m, g.k, m0, k0, how,
                                                      [](int r, int chunk) { return r * kLdA + chunk * 8; });
  steps::tiles::copy_tile<BLOCK_K, BLOCK_N, kThreads>(s.b, bits(g.b), g.k, g.n, k0, n0, how,
                                                      [](int r, int chunk) { return r * kLdB + chunk * 8; });
}

/// Stores a warp's 64 x 32 results, whose top-left corner in C is (row0, col0).
__device__ __forceinline__ void store_warp_tile(const Gemm& g, int row0, int col0,
                                               const float (&acc)[kMmaM][kMmaN][4]) {
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) store_accumulator(g, row0 + mi * 16, col0 + ni * 8, acc[mi][ni]);
}

/// The block's whole product, versions 2 and 3 alike: for each 32-deep slice,
/// copy it into `slice`, let every warp multiply its 64 x 32 piece of it with
/// `warp_slice(acc, slice, warp_row, warp_col)` (the one thing the versions
/// do differently), then store the warp tiles.
template <class WarpSlice>
__device__ __forceinline__ void multiply_block(const Gemm& g, steps::tiles::Copy how, Slice& slice,
                                               WarpSlice warp_slice) {
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int m0 = static_cast<int>(blockIdx.y) * BLOCK_M, n0 = static_cast<int>(blockIdx.x) * BLOCK_N;
  const int warp_row = (warp / kWarpsN) * WARP_M, warp_col = (warp % kWarpsN) * WARP_N;
  float acc[kMmaM][kMmaN][4] = {};
  for (int k0 = 0; k0 < g.k; k0 += BLOCK_K) {
    load_slice(slice, g, m0, n0, k0, how);
    __syncthreads(); // the slice is in shared memory
    warp_slice(acc, slice, warp_row, warp_col);
    __syncthreads(); // everyone is done with it before the next copy overwrites it
  }
  store_warp_tile(g, m0 + warp_row, n0 + warp_col, acc);
}

} // namespace ch11::block_tile
