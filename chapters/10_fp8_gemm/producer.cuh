// Chapter 10: the producer of the warp-specialized versions (v4 to v8), and
// what one stage of the ring holds.
//
// One thread of the producer warpgroup does all the loading. Per K block:
//
//   wait empty[s]                         (the math warps are done with stage s)
//   expect_tx full[s], the stage's bytes  (the barrier now also waits for them)
//   TMA: A's BlockM rows x 128 B          -> stage s, 128-byte swizzle
//   TMA: B's BlockN rows x 128 B          -> stage s, after A
//   TMA: A's BlockM scales of the K block -> scales of stage s
//   (bulk copy: B's scales of the K block -> after A's, with BScales::in_stage)
//
// and the copy engine counts the bytes down on full[s]: the thread never
// waits for a load, only for a free stage. The scales are read from copies
// of A's and B's scales stored K block by K block (Fp8Gemm::sa_by_kb,
// sb_by_kb), where one K block's scales are contiguous: one copy each.
//
// A stage's scales, in floats:
//   [ A: BlockM, one per row of the tile | B: kBScaleCopy (in_stage only) ... ]
//   padded to 128 bytes (TMA writes only to 128-byte aligned shared memory)
#pragma once

#include "fp8_gemm.cuh"
#include "ring.cuh"
#include "scheduler.cuh"
#include "trace.cuh"
#include "wgmma_math.cuh"

#include "steps/ptx.cuh"

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace ch10 {

namespace ptx = steps::ptx;

/// Where the math warpgroups find B's scale of a K block: in global memory
/// (a 128-column tile needs one per K block), or copied into the stage with
/// A's (a 192-column tile spans two 128-column scale blocks).
enum class BScales { global, in_stage };

/// B's scales copied per stage (BScales::in_stage): 8 column blocks (32
/// bytes), from the 16-byte aligned group of 4 that holds the tile's first
/// block (a bulk copy needs 16-byte aligned addresses), so in the copy the
/// tile's first block is number (n0 / 128) % 4 and a 192-column tile's
/// second block the one after it.
constexpr int kBScaleCopy = 8;

/// Floats of scales per stage: A's (one per row of a `block_m`-row tile)
/// and, in_stage, B's copy after them, padded to 128 bytes.
STEPS_HD constexpr int scale_stride(int block_m, BScales b) {
  return block_m + (b == BScales::in_stage ? 128 / 4 : 0);
}

/// Where a math thread finds its first row's A scale in stage 0 of the
/// scales: warpgroup `math` owns rows 64 math .., its warp `warp` rows
/// 16 warp .., the lane rows lane / 4 and lane / 4 + 8 of those (the wgmma
/// fragment); the second row's scale is 8 further, stage s's
/// scale_stride * s further.
__device__ __forceinline__ const float* thread_scales(const float* scales, int math, int warp, int lane) {
  return scales + math * wg::kMathRows + 16 * warp + lane / 4;
}

/// Where the B scale of the column block that holds column `n` is in a
/// stage's copy of B's scales (kBScaleCopy), for a tile whose first column
/// is n0: the copy starts at block (n0 / 128) & ~3.
__device__ __forceinline__ int b_scale_in_copy(int n0, int n) {
  return (n >> kScaleBlockLog2) - ((n0 >> kScaleBlockLog2) & ~3);
}

/// The producer, one piece of work: K blocks kb0 .. kb1 - 1 of tile (tm,
/// tn). For each, wait until the math warps have released stage s (`ring`:
/// where the producer is in the ring, kept from one piece to the next),
/// then load A's BlockM rows and B's BlockN rows of the K block into it by
/// TMA. A stage is the A box followed by the B box. With them, A's scales
/// of the stage's K block and the tile's BlockM rows, one box of BlockM
/// floats from `map_sa` (Fp8Gemm::sa_by_kb, where they are contiguous), to
/// `scales` + scale_stride * stage, counted on the same full[s]. Rows past
/// M arrive as zeros, like their A rows. With BScales::in_stage, B's scales
/// of the K block too, after A's: kBScaleCopy floats from `sb_by_kb`
/// (Fp8Gemm::sb_by_kb, `sb_ld` floats per K block), one bulk copy; blocks
/// past N in it are padding zeros or other K blocks' scales, which multiply
/// columns of zeros that are never stored. `trace`: the recorder of the
/// warp-roles timeline (trace.cuh; NoTrace, nothing, unless traced).
template <int Stages, int BlockM, int BlockN, BScales B, class Tracer = NoTrace>
__device__ __forceinline__ void produce_k_blocks(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                                 const CUtensorMap* map_sa, const float* sb_by_kb, int sb_ld,
                                                 std::uint8_t* smem, float* scales, std::uint64_t* full,
                                                 std::uint64_t* empty, Ring<Stages>& ring, int tm, int tn, int kb0,
                                                 int kb1, Tracer&& trace = Tracer{}) {
  constexpr bool kCopyB = B == BScales::in_stage;
  constexpr int kA = BlockM * wg::kRowBytes, kStage = kA + BlockN * wg::kRowBytes;
  constexpr int kBytes = kStage + (BlockM + (kCopyB ? kBScaleCopy : 0)) * 4;
  for (int kb = kb0; kb < kb1; ++kb) {
    trace(TraceEvent::free_wait);
    ptx::mbarrier_wait(&empty[ring.stage], ring.phase ^ 1); // first lap: passes at once
    trace(TraceEvent::free);
    std::uint8_t* stage = smem + ring.stage * kStage;
    ptx::mbarrier_arrive_expect_tx(&full[ring.stage], kBytes);
    ptx::tma_load_2d(stage, map_a, &full[ring.stage], kb * wg::kBlockK, tm * BlockM);
    ptx::tma_load_2d(stage + kA, map_b, &full[ring.stage], kb * wg::kBlockK, tn * BlockN);
    float* stage_scales = scales + ring.stage * scale_stride(BlockM, B);
    ptx::tma_load_2d(stage_scales, map_sa, &full[ring.stage], tm * BlockM, kb);
    if constexpr (kCopyB) { // from the group of 4 (16-byte aligned) that holds the tile's first block
      const float* sb = sb_by_kb + static_cast<std::size_t>(kb) * sb_ld + ((tn * BlockN / kScaleBlock) & ~3);
      ptx::bulk_load(stage_scales + BlockM, sb, kBScaleCopy * 4, &full[ring.stage]);
    }
    ring.advance();
  }
}

/// The producer over whole tiles (B's scales from global memory): for each
/// of this block's tiles (first_tile, then every tile_step-th, below
/// tiles_m * tiles_n), K blocks kb0 .. kb1 - 1.
template <int Stages, int BlockM, int BlockN, class Tracer = NoTrace>
__device__ __forceinline__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                        const CUtensorMap* map_sa, std::uint8_t* smem, float* scales,
                                        std::uint64_t* full, std::uint64_t* empty, int tiles_m, int tiles_n,
                                        int first_tile, int tile_step, int kb0, int kb1, Tracer&& trace = Tracer{}) {
  ptx::tma_prefetch_map(map_a);
  ptx::tma_prefetch_map(map_b);
  ptx::tma_prefetch_map(map_sa);
  Ring<Stages> ring;
  for (int t = first_tile; t < tiles_m * tiles_n; t += tile_step) {
    int tm, tn;
    tile_index(t, tiles_m, tiles_n, tm, tn);
    produce_k_blocks<Stages, BlockM, BlockN, BScales::global>(map_a, map_b, map_sa, nullptr, 0, smem, scales, full,
                                                              empty, ring, tm, tn, kb0, kb1, trace);
  }
}

} // namespace ch10
