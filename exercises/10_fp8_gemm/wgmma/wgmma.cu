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
  const std::uint64_t address = ptx::smem_addr(tile); // the tile's shared-memory address (bytes)
  // TODO 1: the descriptor's fields (PTX ISA, "Matrix Descriptor Format"):
  //   bits  0-13  the start address, encoded as (address & 0x3FFFF) >> 4
  //   bits 16-29  the leading dimension byte offset, encoded the same way
  //   bits 32-45  the stride dimension byte offset: from one group of 8 rows
  //               to the next, encoded the same way
  //   bits 49-51  the base offset: 0 (the tiles start on 1024-byte boundaries)
  //   bits 62-63  the swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte;
  //               it must be the one the TMA map wrote (given.cuh)
  (void)address;
  return 0;
}

/// partial = A tile (64 rows x 128 K) times B tile (128 rows x 128 K)^T: four
/// wgmma of 32 K each, the first one overwriting partial, the others adding
/// to it; returns with the results in the registers.
__device__ void k_block(Accumulators& partial, const std::uint8_t* a_tile, const std::uint8_t* b_tile) {
  // TODO 2: the four wgmma of this K block with wg_mma(partial, desc_a,
  // desc_b, accumulate): wgmma k32 reads 32 bytes of K from each row, so
  // step k starts 32 * k bytes into each tile. The promotion (given) has read
  // and changed partial since the last wgmma: what must come first? Then
  // make the results land in partial before you return (wg_commit, wg_wait).
  (void)partial, (void)a_tile, (void)b_tile;
}

} // namespace ex10::wgmma
