/// @file tile_copy.cuh
/// @brief Copies one tile of a row-major matrix of 16-bit values (BF16,
///        FP16) from global into shared memory, zero-filled where the tile
///        overhangs the matrix: chapter 11's versions and exercise 11's given
///        kernel share it.
///
/// A tile is ROWS x COLS elements starting at (r0, c0) of a rows x cols
/// matrix, rows `cols` elements apart (packed). It moves in chunks of 8
/// elements (16 bytes), thread `tid` of `kThreads` taking chunks tid,
/// tid + kThreads, ...: consecutive threads take consecutive chunks of a row
/// (coalesced). Where each chunk lands in shared memory is the caller's
/// choice (`offset(row, chunk)`, in elements: padded rows, a swizzle).
///
/// Three ways to copy, one per situation:
///  - `Copy::async`: cp.async, 16 bytes a chunk, zeros for chunks outside
///    the matrix (sm_80+). Needs `chunks_fit`.
///  - `Copy::vector`: one 16-byte load and store through registers a chunk.
///    Needs `chunks_fit`.
///  - `Copy::scalar`: 8 guarded 2-byte loads a chunk, packed and stored as 16
///    bytes: right for every shape and alignment, slower.
/// `chunks_fit(cols, base)` holds when every chunk is wholly inside or wholly
/// outside the matrix and 16-byte aligned: cols a multiple of 8 and the
/// matrix 16-byte aligned (c0 is always a multiple of 8).
#pragma once

#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace steps::tiles {

/// Elements of 16 bits in one 16-byte chunk.
constexpr int kChunk = 8;

/// How copy_tile moves a chunk (see the file's comment).
enum class Copy : int { scalar = 0, vector = 1, async = 2 };

/// True when a packed matrix with `cols` 16-bit elements per row, starting
/// at `base`, may be copied in 16-byte chunks.
inline bool chunks_fit(long long cols, const void* base) { return cols % kChunk == 0 && is_aligned(base, 16); }

/// Copies the ROWS x COLS tile at (r0, c0) of `src` (rows x cols, packed,
/// 16-bit elements) into shared memory at `dst` + offset(row, chunk),
/// zeros where the tile lies outside the matrix. With Copy::async the copies
/// are only issued: commit and wait for them (steps::ptx::cp_async_commit,
/// cp_async_wait) before a barrier makes them visible; the other modes are
/// done when this returns (a barrier still has to follow).
template <int ROWS, int COLS, int kThreads, class Offset>
__device__ __forceinline__ void copy_tile(std::uint16_t* dst, const std::uint16_t* src, int rows, int cols, int r0,
                                          int c0, Copy how, Offset offset) {
  static_assert(COLS % kChunk == 0, "a tile row is a whole number of 16-byte chunks");
  constexpr int kChunksPerRow = COLS / kChunk;
  constexpr int kChunks = ROWS * kChunksPerRow;
#pragma unroll
  for (int i = static_cast<int>(threadIdx.x); i < kChunks; i += kThreads) {
    const int row = i / kChunksPerRow, chunk = i % kChunksPerRow;
    const int gr = r0 + row, gc = c0 + chunk * kChunk;
    std::uint16_t* d = dst + offset(row, chunk);
    const std::uint16_t* s = src + static_cast<std::size_t>(gr) * cols + gc; // read only when inside
    if (how == Copy::async) {
#if STEPS_PTX_CP_ASYNC
      const bool inside = gr < rows && gc < cols;
      ptx::cp_async_16_or_zero(d, inside ? s : src, inside);
#else
      __trap(); // no cp.async below sm_80: a kernel that asks for it must not run there
#endif
    } else if (how == Copy::vector) {
      *reinterpret_cast<uint4*>(d) = (gr < rows && gc < cols) ? *reinterpret_cast<const uint4*>(s)
                                                              : make_uint4(0, 0, 0, 0);
    } else {
      std::uint32_t packed[4];
#pragma unroll
      for (int e = 0; e < kChunk; e += 2) {
        const std::uint32_t lo = (gr < rows && gc + e < cols) ? s[e] : 0u;
        const std::uint32_t hi = (gr < rows && gc + e + 1 < cols) ? s[e + 1] : 0u;
        packed[e / 2] = lo | (hi << 16);
      }
      *reinterpret_cast<uint4*>(d) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
  }
}

} // namespace steps::tiles
