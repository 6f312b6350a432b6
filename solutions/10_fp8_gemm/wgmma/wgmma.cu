// Exercise 10, part 3: wgmma from shared memory.
//
// Read chapters/10_fp8_gemm/v3_wgmma.cuh first, then
// exercises/10_fp8_gemm/wgmma/README.md.
// Grade with: ./tutorial grade 10 wgmma     Hints: ./tutorial hint 10 wgmma
//
// TMA has copied a 64 x 128-byte tile of A and a 128 x 128-byte tile of B
// (both K-major: 128 bytes = 128 E4M3 values of K per row) into shared
// memory, each starting on a 1024-byte boundary, laid out with the 128-byte
// swizzle. The tensor cores read them through descriptors: your two
// functions describe the tiles and multiply them. Everything else is given
// (given.cuh).
#include "wgmma.hpp"

#include "given.cuh" // the tiles, the ring of two stages, the wgmma wrappers, the launch

#include <cstdint>

namespace ex10::wgmma {

/// The 64-bit shared-memory matrix descriptor of `tile`: rows of 128 bytes,
/// 8-row groups 1024 bytes apart, the 128-byte swizzle, `tile` on a
/// 1024-byte boundary (or 32, 64, 96 bytes past one: a step along K).
__device__ std::uint64_t make_descriptor(const std::uint8_t* tile) {
  const std::uint64_t address = ptx::smem_addr(tile);
  const std::uint64_t start = (address & 0x3FFFF) >> 4; // bits 0-13: the address in 16-byte units
  const std::uint64_t leading = 1;                      // bits 16-29: unused for swizzled K-major tiles ("assumed 1")
  const std::uint64_t stride = 1024 >> 4;               // bits 32-45: from one 8-row group to the next
  const std::uint64_t swizzle = 1;                      // bits 62-63: 1 = the 128-byte swizzle of the TMA map
  return start | (leading << 16) | (stride << 32) | (swizzle << 62);
}

/// partial = A tile (64 rows x 128 K) times B tile (128 rows x 128 K)^T: four
/// wgmma of 32 K each, the first one overwriting partial, the others adding
/// to it; returns with the results in the registers.
__device__ void k_block(Accumulators& partial, const std::uint8_t* a_tile, const std::uint8_t* b_tile) {
  wg_fence(); // the promotion touched partial since the last wgmma
#pragma unroll
  for (int k = 0; k < BLOCK_K / 32; ++k)
    wg_mma(partial, make_descriptor(a_tile + 32 * k), make_descriptor(b_tile + 32 * k), k > 0);
  wg_commit();
  wg_wait();
}

} // namespace ex10::wgmma
