// Chapter 10: the warp-specialized block of v4, which v5 runs too: its
// shape, its shared memory, and the math warpgroups' K loop (math_tile).
//
//   block = 3 warpgroups (384 threads), tile 128 x 128
//   warpgroup 0, the producer (producer.cuh; 40 registers per thread)
//   warpgroups 1 and 2, the math (232 registers per thread), rows 0-63 and
//   64-127 of the tile; per K block kb:
//     wait full[s(kb+1)]; issue the 4 wgmma of kb + 1      (tensor cores stay busy)
//     wait for kb's wgmma; arrive empty[s(kb)]; promote kb  (CUDA cores)
//
//   time ->        kb=0         kb=1         kb=2
//   tensor cores:  [wgmma 0]    [wgmma 1]    [wgmma 2]   ...
//   CUDA cores:                 [promote 0]  [promote 1] ...
//
// Two sets of 64 partial sums per thread (block kb's, promoted, and kb + 1's,
// in flight) plus the 64 totals: 192 of the 232 registers.
#pragma once

#include "fp8_gemm.cuh"
#include "ring.cuh"
#include "trace.cuh"
#include "wgmma_math.cuh"

#include "steps/ptx.cuh"

#include <cstdint>

namespace ch10::pipeline {

namespace ptx = steps::ptx;

constexpr int kMathGroups = 2;
constexpr int BLOCK_M = kMathGroups * wg::kMathRows, BLOCK_N = wg::kTileN; // 128 x 128
constexpr int kThreads = 128 * (1 + kMathGroups);                           // 384
constexpr int kABytes = BLOCK_M * wg::kRowBytes;                            // 16 KB
constexpr int kStageBytes = kABytes + BLOCK_N * wg::kRowBytes;              // 32 KB
/// A's scales of one stage: one K block of the tile's 128 rows.
constexpr int kScaleBytes = BLOCK_M * 4;                                    // 512 B
/// The epilogue buffer of one math warpgroup: 64 rows of 128 BF16 (256 B).
constexpr int kOutRowBytes = BLOCK_N * 2;
constexpr int kOutBytes = wg::kMathRows * kOutRowBytes;                     // 16 KB
/// Shared memory of a block with `stages` stages: the ring, the epilogue
/// buffers, the ring's A scales, the 2 x stages mbarriers, and 1 KB to align
/// the ring to 1024.
constexpr int smem_bytes(int stages) {
  return stages * (kStageBytes + kScaleBytes) + kMathGroups * kOutBytes + 2 * stages * 8 + 1024;
}
constexpr int kProducerRegs = 40, kMathRegs = 232;

/// A block's shared memory, from its 1024-aligned start:
///   ring (Stages x 32 KB) | epilogue buffers (2 x 16 KB) | A scales (Stages x 512 B) | full[] | empty[]
template <int Stages>
struct Smem {
  std::uint8_t* ring;
  std::uint8_t* out;
  float* scales; ///< stage s: the tile's 128 rows' A scales of the K block in ring stage s
  std::uint64_t* full;
  std::uint64_t* empty;
  __device__ explicit Smem(std::uint8_t* base)
      : ring(base), out(base + Stages * kStageBytes), scales(reinterpret_cast<float*>(out + kMathGroups * kOutBytes)),
        full(reinterpret_cast<std::uint64_t*>(scales + Stages * BLOCK_M)), empty(full + Stages) {}
};

static_assert(smem_bytes(kMaxStages) <= 232448, "more shared memory than an H100/H200 block may have");
static_assert(kProducerRegs * 128 + kMathRegs * 128 * kMathGroups <= 65536, "more registers than an SM has");

/// One math warpgroup's K loop for one tile: total = the tile's 64 x 128
/// piece over K blocks kb0 .. kb0 + num_kb - 1, promoted block by block. Block kb's partial sums live in partial0
/// when kb is even and in partial1 when odd: two explicit register sets and
/// the loop unrolled by 2, so that no register array is ever indexed at run
/// time (that would put it in local memory).
/// `a_lo`, `b_lo`: the descriptor low words of stage 0's A rows of this
/// warpgroup and of stage 0's B (ptx::wgmma_desc_sw128_lo); stage s is
/// s * kStageBytes / 16 further.
/// Everything in this loop is issued by the same warps that promote: per K
/// block and warp, 64 FFMA and 4 wgmma, and as few other instructions as we
/// could make it (the lesson's v4 section counts them).
/// `sa`: the shared-window address (ptx::smem_addr) of this thread's first
/// row's A scale in stage 0 (thread_scales); its second row's is 8 floats
/// further, stage s's BlockM * s. Read with ld.shared: through a generic
/// pointer the compiler made them generic loads (LD, not LDS), with 64-bit
/// address arithmetic (in v6 that cost 2.4% to 4.9%; the lesson, v6).
/// `sb`: the tile's B scale of K block kb0 in global memory, `sb_step`
/// floats to the next K block.
/// `trace`: the recorder of the warp-roles timeline (trace.cuh; NoTrace,
/// nothing, unless traced).
/// `BlockM`: rows of the block's tile (128, two math warpgroups; v8: 64,
/// one), which sets the size of a stage (A's rows, then B's 128) and of its
/// A scales.
template <int Stages, int BlockM = BLOCK_M, class Tracer = NoTrace>
__device__ __forceinline__ void math_tile(std::uint32_t sa, const float* sb, int sb_step, std::uint32_t a_lo,
                                          std::uint32_t b_lo, std::uint64_t* full, std::uint64_t* empty,
                                          Ring<Stages>& ring, int num_kb, float (&total)[wg::kAccum],
                                          float (&partial0)[wg::kAccum], float (&partial1)[wg::kAccum],
                                          Tracer&& trace = Tracer{}) {
  constexpr int kStage = (BlockM + BLOCK_N) * wg::kRowBytes; // v4: 32 KB
  const bool signals = threadIdx.x % 32 == 0; // lane 0 arrives on empty[] for its warp
  Ring<Stages> ahead = ring; // `ring`: the next block to promote; `ahead`: the next to issue
  // Wait for the next block's stage and issue its wgmma; its scales start
  // loading (the B scale from global memory before the wait, A's two from
  // the stage after it); they are first used after the following block's
  // wgmma is issued. Loaded two blocks ahead instead, they were moved from
  // register to register on the way, and each move waited for its load.
  auto start = [&](float(&partial)[wg::kAccum]) {
    const float b = *sb;
    sb += sb_step;
    const std::uint32_t stage_lo = ahead.stage * (kStage >> 4);
    trace(TraceEvent::data_wait);
    ptx::mbarrier_wait(&full[ahead.stage], ahead.phase);
    trace(TraceEvent::data);
    const std::uint32_t stage_sa = sa + ahead.stage * (BlockM * 4);
    const wg::BlockScales sc{ptx::ld_shared_f32(stage_sa), ptx::ld_shared_f32(stage_sa + 32), b};
    wg::issue_k_block(partial, a_lo + stage_lo, b_lo + stage_lo);
    ahead.advance();
    return sc;
  };
  // The oldest block's wgmma are done (waited for): free its stage, promote it.
  // The __syncwarp orders the other lanes' reads of the stage's A scales
  // before lane 0's arrive (the memory model's rule, not only lockstep), as
  // in v6; measured at no cost in both.
  auto finish = [&](float(&partial)[wg::kAccum], const wg::BlockScales& sc) {
    __syncwarp();
    if (signals) ptx::mbarrier_arrive(&empty[ring.stage]); // this warp no longer reads the stage
    wg::promote(total, partial, sc);
    trace(TraceEvent::promoted);
    ring.advance();
  };
  wg::BlockScales sc0 = start(partial0), sc1;
  int kb = 0;
  for (; kb + 2 < num_kb; kb += 2) { // blocks kb + 1 and kb + 2 both exist
    sc1 = start(partial1);
    trace(TraceEvent::mma_wait);
    ptx::wgmma_wait<1>();            // block kb is done; kb + 1 may still run
    trace(TraceEvent::mma_done);
    finish(partial0, sc0);
    sc0 = start(partial0);
    trace(TraceEvent::mma_wait);
    ptx::wgmma_wait<1>();
    trace(TraceEvent::mma_done);
    finish(partial1, sc1);
  }
  if (kb + 1 < num_kb) {             // two blocks left: kb (in flight) and kb + 1
    sc1 = start(partial1);
    trace(TraceEvent::mma_wait);
    ptx::wgmma_wait<1>();
    trace(TraceEvent::mma_done);
    finish(partial0, sc0);
    trace(TraceEvent::mma_wait);
    ptx::wgmma_wait<0>();
    trace(TraceEvent::mma_done);
    finish(partial1, sc1);
  } else {                           // one block left: kb
    trace(TraceEvent::mma_wait);
    ptx::wgmma_wait<0>();
    trace(TraceEvent::mma_done);
    finish(partial0, sc0);
  }
}

} // namespace ch10::pipeline
