// Chapter 10: the epilogue of the warp-specialized versions (v4 to v8): a
// math warpgroup's finished 64-row piece of the tile, FP32 in registers,
// becomes BF16 in D.
//
// Registers cannot go to global memory in whole rows: a thread holds 2
// columns of each 8 (the wgmma fragment, wgmma_math.cuh), so stored
// directly, a warp writes 4-byte pieces scattered over 8 rows. Both forms
// below first write the piece into a shared-memory buffer of the warpgroup,
// then D is written in whole rows:
//   store_tile      the warpgroup reads the buffer back in 16-byte chunks
//                   and stores them (any N);
//   store_tile_tma  the copy engine stores the buffer (a TMA store: N a
//                   multiple of 8, so that D has a tensor map), while the
//                   warpgroup goes on with its next tile.
#pragma once

#include "fp8_gemm.cuh"
#include "wgmma_math.cuh"

#include "steps/ptx.cuh"

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

namespace ch10 {

namespace ptx = steps::ptx;

/// Writes one math warpgroup's 64 x (Accum / 2) piece of D (rows m0..,
/// columns n0..; v4: 64 x 128, v6: 64 x 192)
/// through its shared buffer `out`:
///   1. each thread writes its BF16 pairs into `out`, row-major (v4: 256-byte rows),
///      16-byte chunk c of row r stored at chunk c ^ (r % 8): the 8 rows of a
///      fragment store then hit 8 different chunks, all 32 banks;
///   2. the warpgroup reads it back in 16-byte chunks, 16 lanes per row, and
///      writes D with whole rows (v4: 256 bytes per half-warp).
/// (Measured, not as designed: Nsight Compute counted about 1.7 wavefronts
/// per fragment store and 7.5 per 16-byte load request here, not 1 and 4.
/// Not explained; the TMA path, store_tile_tma, uses stmatrix instead.)
/// Named barrier `bar` (128 threads) separates the phases, and keeps the
/// next tile from overwriting `out` while it is still being read.
template <int Accum>
__device__ __forceinline__ void store_tile(const Fp8Gemm& p, const float (&total)[Accum], std::uint8_t* out, int m0,
                                          int n0, int bar) {
  constexpr int kBufRowBytes = Accum * 4; // 64 rows x (Accum / 2) BF16 columns; v4: 256 B
  const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
#pragma unroll
  for (int i = 0; i < Accum / 4; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = 16 * warp + lane / 4 + 8 * h;
      *reinterpret_cast<__nv_bfloat162*>(out + r * kBufRowBytes + ((i ^ (r % 8)) * 16) + 4 * (lane % 4)) =
          __floats2bfloat162_rn(total[4 * i + 2 * h], total[4 * i + 2 * h + 1]);
    }
  ptx::named_barrier_sync(bar, 128);
  constexpr int kChunksPerRow = kBufRowBytes / 16; // v4: 16
  const bool vector_ok = p.n % 8 == 0;             // every row of D starts 16-byte aligned
  // Not unrolled: unrolled, its addresses took registers that v6's math
  // warpgroups do not have (ptxas spilled 12 bytes there).
#pragma unroll 1
  for (int j = 0; j < wg::kMathRows * kChunksPerRow / 128; ++j) {
    const int idx = j * 128 + tid, r = idx / kChunksPerRow, c = idx % kChunksPerRow;
    const int row = m0 + r, col = n0 + 8 * c;
    if (row >= p.m || col >= p.n) continue;
    const uint4 v = *reinterpret_cast<const uint4*>(out + r * kBufRowBytes + ((c ^ (r % 8)) * 16));
    __nv_bfloat16* dst = p.d + static_cast<std::size_t>(row) * p.n + col;
    if (vector_ok && col + 8 <= p.n) {
      *reinterpret_cast<uint4*>(dst) = v;
    } else {
      const std::uint32_t w[4] = {v.x, v.y, v.z, v.w}; // 8 BF16, taken apart with constant indices
#pragma unroll
      for (int x = 0; x < 8; ++x)
        if (col + x < p.n) reinterpret_cast<std::uint16_t*>(dst)[x] = static_cast<std::uint16_t>(w[x / 2] >> (16 * (x % 2)));
    }
  }
  ptx::named_barrier_sync(bar, 128);
}

/// The epilogue through TMA (when N is a multiple of 8, so that D has a
/// tensor map): the same piece, but the warpgroup only writes it
/// into shared memory and one thread hands it to the copy engine, which
/// stores it while the warpgroup goes on with the next tile.
///   `out`: Accum / 32 boxes of 64 rows x 64 columns (128 B), columns 0-63,
///   64-127, ..., each in the 128-byte swizzle TMA expects (16-byte chunk c of
///   row r at slot c ^ (r % 8)).
///   1. thread 0 waits until the previous tile's stores have read `out`;
///   2. each warp writes its 16 rows with stmatrix (one instruction per
///      16 x 16 block, v4: 8 per thread, where 4-byte stores took 32), then
///      fence.proxy.async: the writes become visible to the copy engine;
///   3. named barrier; thread 0 issues the TMA stores, one per box (rows and columns
///      past D are not written) and commits them as one bulk group.
template <int Accum>
__device__ __forceinline__ void store_tile_tma(const CUtensorMap* map_d, const float (&total)[Accum],
                                               std::uint8_t* out, int m0, int n0, int bar) {
  constexpr int kBoxBytes = wg::kMathRows * 128; // 64 rows x 64 BF16
  const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
  if (tid == 0) ptx::bulk_wait_read<0>();
  ptx::named_barrier_sync(bar, 128);
  // One stmatrix per 16 x 16 block of the warp's 16 rows: matrices 0-3 are
  // rows 0-7 / 8-15 of 8-column chunk i, then of chunk i + 1.
  auto pack = [](float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  };
  const int j = lane / 8, r = 16 * warp + 8 * (j % 2) + lane % 8;
#pragma unroll
  for (int i = 0; i < Accum / 4; i += 2) {
    const int chunk = i + j / 2, box = chunk / 8, c = chunk % 8;
    ptx::stmatrix_x4(out + box * kBoxBytes + r * 128 + ((c ^ (r % 8)) * 16), pack(total[4 * i], total[4 * i + 1]),
                     pack(total[4 * i + 2], total[4 * i + 3]), pack(total[4 * i + 4], total[4 * i + 5]),
                     pack(total[4 * i + 6], total[4 * i + 7]));
  }
  ptx::fence_proxy_async();
  ptx::named_barrier_sync(bar, 128);
  if (tid == 0) {
#pragma unroll
    for (int box = 0; box < Accum / 32; ++box) ptx::tma_store_2d(map_d, out + box * kBoxBytes, n0 + 64 * box, m0);
    ptx::bulk_commit();
  }
}

} // namespace ch10
