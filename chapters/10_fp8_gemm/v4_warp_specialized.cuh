// Chapter 10, version 4: warp-specialized, pipelined, persistent.
//
// Change from version 3: the block's warpgroups get different jobs, and the
// loads run as far ahead of the math as shared memory allows.
//
//   block = 3 warpgroups (384 threads), tile 128 x 128, 5 stages of 32 KB
//   (--stages 2..5 picks another depth: the sweep in the lesson)
//
//   warpgroup 0, the producer (1 thread works; 40 registers per thread):
//     for each tile, for each K block:
//       wait empty[s]          (the math warpgroups are done with stage s)
//       expect_tx full[s], 32 KB + 512 B; TMA A (128 x 128 B), B (128 x 128 B)
//       and A's 128 scales of the K block (512 B) -> stage s
//   warpgroups 1 and 2, the math (232 registers per thread), rows 0-63 and 64-127:
//     for each tile, for each K block kb:
//       wait full[s(kb+1)]; issue the 4 wgmma of kb + 1      (tensor cores stay busy)
//       wait for kb's wgmma; arrive empty[s(kb)]; promote kb  (CUDA cores)
//     store the tile through shared memory; meanwhile the producer is
//     already loading the next tile's first stages
//
//   stage ring:  s = 0 1 2 3 4 0 1 2 ...   the phase bit flips each lap
//   full[s]:  1 arrival (producer's expect_tx) + 32.5 KB of TMA bytes per phase
//   empty[s]: 8 arrivals (lane 0 of each math warp) per phase
//
//   time ->        kb=0         kb=1         kb=2
//   tensor cores:  [wgmma 0]    [wgmma 1]    [wgmma 2]   ...
//   CUDA cores:                 [promote 0]  [promote 1] ...
//
// Why each piece:
//   - Several stages in flight hide the memory latency: 5 x 32.5 KB of the
//     227 KB of shared memory (the epilogue buffers take 32 KB more). A sixth
//     no longer fits beside the scales; before they moved into the stages it
//     did, and did not help (the lesson's stage sweep).
//   - Two math warpgroups, and in each the wgmma of block kb + 1 in flight
//     while block kb is promoted: the tensor cores never wait for the
//     promotion. (Two sets of 64 partial sums plus 64 totals per thread.)
//   - setmaxnreg: the producer needs few registers, the math warpgroups many:
//     40 + 2 x 232 per thread fills the register file as far as a
//     384-thread block may.
//   - A's scales come with the stage (one 512-byte TMA box from the
//     K-block-major copy Fp8Gemm::sa_by_kb), the B scale from global memory
//     through a per-thread pointer; both are read one block ahead and
//     multiplied late (wg::promote).
//   - The epilogue goes through shared memory: when N is a multiple of 8 the
//     copy engine stores the tile (a TMA store, store_tile_tma); otherwise
//     every thread reads the buffer back and stores 16-byte pieces
//     (store_tile).
//   - Persistent: one block per SM loops over tiles (grouped by 8 rows of
//     tiles, so that the tiles running at once share A and B in L2).
//
// Ablation switches (experiments only: the results are wrong, run with
// --no-verify): building with -DCH10_ABLATE_LOADS (no TMA loads: the stages
// "arrive" with whatever they hold), -DCH10_ABLATE_PROMOTION (no promotion)
// or -DCH10_ABLATE_EPILOGUE (no stores of D) shows what each piece costs:
//   cmake --preset default -B build-ablate -DCMAKE_CUDA_FLAGS=-DCH10_ABLATE_PROMOTION
//   cmake --build build-ablate --target ch10_fp8_gemm
//   build-ablate/bin/ch10_fp8_gemm --variant warp_specialized --no-verify
// The lesson's table "What v4's time is made of" has the H200's numbers.
//
// On the H200 at 8192 x 8192 x 4096, in the last benchmark run:
// 1378 TFLOP/s {n:10:warp_specialized:value|.0f}, 1.04x {n:10:warp_specialized:base} cuBLASLt block-scaled.
#pragma once

#include "fp8_gemm.cuh"
#include "tma.hpp"
#include "wgmma_math.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ch10::v4 {

namespace ptx = steps::ptx;

constexpr int kMathGroups = 2;
constexpr int BLOCK_M = kMathGroups * wg::kMathRows, BLOCK_N = wg::kTileN; // 128 x 128
constexpr int kThreads = 128 * (1 + kMathGroups);                           // 384
/// Pipeline depths the kernel is compiled for (--stages); 5, the default,
/// fills shared memory (the lesson's stage sweep).
constexpr int kMinStages = 2, kMaxStages = 5, kDefaultStages = 5;
constexpr int kABytes = BLOCK_M * wg::kRowBytes;                            // 16 KB
constexpr int kStageBytes = kABytes + BLOCK_N * wg::kRowBytes;              // 32 KB
/// A's scales of one stage: one K block of the tile's 128 rows.
constexpr int kScaleBytes = BLOCK_M * 4;                                    // 512 B
/// v6's stages also hold B's scales of the K block (produce_k_blocks<..., true>): 8
/// column blocks (32 bytes), copied from the 16-byte aligned group of 4
/// that holds the tile's first block (a bulk copy needs 16-byte aligned
/// addresses), so in the copy the tile's first block is number
/// (n0 / 128) % 4 and a 192-column tile's second block the one after it.
constexpr int kBScaleCopy = 8;
/// Floats of scales per stage, A's (one per row of a `block_m`-row tile)
/// and, with `copy_b`, B's copy after them, padded to 128 bytes: TMA writes
/// only to 128-byte aligned shared memory.
STEPS_HD constexpr int scale_stride(int block_m, bool copy_b) { return block_m + (copy_b ? 128 / 4 : 0); }
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
/// Tiles are handed out in groups of this many rows of tiles (see
/// tile_index; 12 measured best of 8, 12, 16 and 24: the lesson, v4).
constexpr int kGroupM = 12;

/// A block's shared memory (v4 and v5), from its 1024-aligned start:
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

/// Where a math thread finds its first row's A scale in stage 0 of the
/// scales (v4, v5, v6): warpgroup `math` owns rows 64 math .., its warp
/// `warp` rows 16 warp .., the lane rows lane / 4 and lane / 4 + 8 of those
/// (the wgmma fragment); the second row's scale is 8 further, stage s's
/// BLOCK_M * s further.
__device__ __forceinline__ const float* thread_scales(const float* scales, int math, int warp, int lane) {
  return scales + math * wg::kMathRows + 16 * warp + lane / 4;
}
/// Where the B scale of the column block that holds column `n` is in a
/// stage's copy of B's scales (kBScaleCopy), for a tile whose first column
/// is n0: the copy starts at block (n0 / 128) & ~3.
__device__ __forceinline__ int b_scale_in_copy(int n0, int n) {
  return (n >> kScaleBlockLog2) - ((n0 >> kScaleBlockLog2) & ~3);
}

static_assert(smem_bytes(kMaxStages) <= 232448, "more shared memory than an H100/H200 block may have");
static_assert(kProducerRegs * 128 + kMathRegs * 128 * kMathGroups <= 65536, "more registers than an SM has");

/// The tile that work item t covers. Consecutive t walk down a group of
/// kGroupM rows of tiles before moving one column right, so that the ~132
/// tiles running at once cover about 12 rows x 11 columns of tiles: 12 panels
/// of A and 11 of B, which stay in L2, instead of 2 rows x all columns.
/// (tile_index gives the tile's row and column in the grid of tiles, for
/// any tile shape; tile_at its first row and column of D for v4's tiles.)
__device__ __forceinline__ void tile_index(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = kGroupM * tiles_n;
  const int first_m = (t / per_group) * kGroupM;
  const int rows = min(kGroupM, tiles_m - first_m);
  const int r = t % per_group;
  tm = first_m + r % rows;
  tn = r / rows;
}
__device__ __forceinline__ void tile_at(int t, int tiles_m, int tiles_n, int& m0, int& n0) {
  int tm, tn;
  tile_index(t, tiles_m, tiles_n, tm, tn);
  m0 = tm * BLOCK_M;
  n0 = tn * BLOCK_N;
}

/// Where a role is in the ring of stages: the stage, and the parity of the
/// lap around the ring (it flips each time the stage index wraps to 0).
template <int Stages>
struct Ring {
  int stage = 0;
  std::uint32_t phase = 0;
  __device__ void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

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
/// further, stage s's BLOCK_M * s. Read with ld.shared: through a generic
/// pointer the compiler made them generic loads (LD, not LDS), with 64-bit
/// address arithmetic (in v6 that cost 2.4% to 4.9%; the lesson, v6).
/// `sb`: the tile's B scale of K block kb0 in global memory, `sb_step`
/// floats to the next K block.
template <int Stages>
__device__ __forceinline__ void math_tile(std::uint32_t sa, const float* sb, int sb_step, std::uint32_t a_lo,
                                          std::uint32_t b_lo, std::uint64_t* full, std::uint64_t* empty,
                                          Ring<Stages>& ring, int num_kb, float (&total)[wg::kAccum],
                                          float (&partial0)[wg::kAccum], float (&partial1)[wg::kAccum]) {
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
    const std::uint32_t stage_lo = ahead.stage * (kStageBytes >> 4);
    ptx::mbarrier_wait(&full[ahead.stage], ahead.phase);
    const std::uint32_t stage_sa = sa + ahead.stage * (BLOCK_M * 4);
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
#ifdef CH10_ABLATE_PROMOTION
    if (num_kb < 0) // never: the promotion is compiled but not run
#endif
      wg::promote(total, partial, sc);
    ring.advance();
  };
  wg::BlockScales sc0 = start(partial0), sc1;
  int kb = 0;
  for (; kb + 2 < num_kb; kb += 2) { // blocks kb + 1 and kb + 2 both exist
    sc1 = start(partial1);
    ptx::wgmma_wait<1>();            // block kb is done; kb + 1 may still run
    finish(partial0, sc0);
    sc0 = start(partial0);
    ptx::wgmma_wait<1>();
    finish(partial1, sc1);
  }
  if (kb + 1 < num_kb) {             // two blocks left: kb (in flight) and kb + 1
    sc1 = start(partial1);
    ptx::wgmma_wait<1>();
    finish(partial0, sc0);
    ptx::wgmma_wait<0>();
    finish(partial1, sc1);
  } else {                           // one block left: kb
    ptx::wgmma_wait<0>();
    finish(partial0, sc0);
  }
}

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

/// Thread 0 initialises the ring's barriers (v4, v5 and v6): full[s] completes
/// on the producer's expect_tx and the TMA bytes, empty[s] on one arrival
/// per math warp. Then the last block-wide barrier: from here on the roles
/// only meet at mbarriers.
template <int Stages>
__device__ __forceinline__ void init_ring(std::uint64_t* full, std::uint64_t* empty) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 4 * kMathGroups);
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();
}

/// The producer (one thread; v4, v5, v6 and v7), one piece of work: K
/// blocks kb0 .. kb1 - 1 of tile (tm, tn). For each, wait until the math
/// warps have released stage s (`ring`: where the producer is in the ring,
/// kept from one piece to the next), then load A's BlockM rows and B's
/// BlockN rows of the K block into it by TMA. A stage is the A box
/// followed by the B box. With them, A's scales of the stage's K block and the tile's BlockM rows,
/// one box of BlockM floats from `map_sa` (Fp8Gemm::sa_by_kb, where they are
/// contiguous), to `scales` + BlockM * stage, counted on the same full[s].
/// Rows past M arrive as zeros, like their A rows. With CopyB (v6, v7), B's
/// scales of the K block too, after A's: kBScaleCopy floats from
/// `sb_by_kb` (Fp8Gemm::sb_by_kb, `sb_ld` floats per K block), one bulk
/// copy; blocks past N in it are padding zeros or other K blocks' scales,
/// which multiply columns of zeros that are never stored.
template <int Stages, int BlockM, int BlockN, bool CopyB = false>
__device__ __forceinline__ void produce_k_blocks(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                                 const CUtensorMap* map_sa, const float* sb_by_kb, int sb_ld,
                                                 std::uint8_t* smem, float* scales, std::uint64_t* full,
                                                 std::uint64_t* empty, Ring<Stages>& ring, int tm, int tn, int kb0,
                                                 int kb1) {
  constexpr int kA = BlockM * wg::kRowBytes, kStage = kA + BlockN * wg::kRowBytes;
  constexpr int kBytes = kStage + (BlockM + (CopyB ? kBScaleCopy : 0)) * 4;
  for (int kb = kb0; kb < kb1; ++kb) {
    ptx::mbarrier_wait(&empty[ring.stage], ring.phase ^ 1); // first lap: passes at once
    std::uint8_t* stage = smem + ring.stage * kStage;
#ifndef CH10_ABLATE_LOADS
    ptx::mbarrier_arrive_expect_tx(&full[ring.stage], kBytes);
    ptx::tma_load_2d(stage, map_a, &full[ring.stage], kb * wg::kBlockK, tm * BlockM);
    ptx::tma_load_2d(stage + kA, map_b, &full[ring.stage], kb * wg::kBlockK, tn * BlockN);
    float* stage_scales = scales + ring.stage * scale_stride(BlockM, CopyB);
    ptx::tma_load_2d(stage_scales, map_sa, &full[ring.stage], tm * BlockM, kb);
    if constexpr (CopyB) { // from the group of 4 (16-byte aligned) that holds the tile's first block
      const float* sb = sb_by_kb + static_cast<std::size_t>(kb) * sb_ld + ((tn * BlockN / kScaleBlock) & ~3);
      ptx::bulk_load(stage_scales + BlockM, sb, kBScaleCopy * 4, &full[ring.stage]);
    }
#else
    (void)stage;
    (void)kBytes;
    ptx::mbarrier_arrive(&full[ring.stage]); // the stage "arrives" with whatever it holds
#endif
    ring.advance();
  }
}

/// The producer of v4 and v5: for each of this block's tiles (first_tile,
/// then every tile_step-th, below tiles_m * tiles_n), K blocks kb0 .. kb1 - 1
/// (v4: tiles blockIdx.x, + gridDim.x, ..., every K block; v5: one tile,
/// its slice of K).
template <int Stages, int BlockM, int BlockN>
__device__ __forceinline__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                        const CUtensorMap* map_sa, std::uint8_t* smem, float* scales,
                                        std::uint64_t* full, std::uint64_t* empty, int tiles_m, int tiles_n,
                                        int first_tile, int tile_step, int kb0, int kb1) {
  ptx::tma_prefetch_map(map_a);
  ptx::tma_prefetch_map(map_b);
  ptx::tma_prefetch_map(map_sa);
  Ring<Stages> ring;
  for (int t = first_tile; t < tiles_m * tiles_n; t += tile_step) {
    int tm, tn;
    tile_index(t, tiles_m, tiles_n, tm, tn);
    produce_k_blocks<Stages, BlockM, BlockN>(map_a, map_b, map_sa, nullptr, 0, smem, scales, full, empty, ring, tm,
                                             tn, kb0, kb1);
  }
}

template <int Stages>
__global__ void __launch_bounds__(kThreads, 1)
    fp8_gemm_warp_specialized(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                              const __grid_constant__ CUtensorMap map_sa, const __grid_constant__ CUtensorMap map_d,
                              bool tma_store, Fp8Gemm p) {
  extern __shared__ std::uint8_t smem_raw[];
  const Smem<Stages> sm(wg::align_1024(smem_raw));
  std::uint8_t* smem = sm.ring;
  std::uint8_t* out = sm.out; // kMathGroups epilogue buffers
  std::uint64_t* full = sm.full;
  std::uint64_t* empty = sm.empty;

  init_ring<Stages>(full, empty);

  const int tiles_m = steps::ceil_div(p.m, BLOCK_M), tiles_n = steps::ceil_div(p.n, BLOCK_N);
  const int tiles = tiles_m * tiles_n;
  const int num_kb = k_blocks(p.k);
  // 0 producer, 1.. math. Read from lane 0, so that the compiler knows it is
  // the same in the whole warp: the shared-memory addresses and descriptors
  // computed from it then live in uniform registers.
  const int role = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);

  if (role == 0) {
    ptx::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0)
      produce<Stages, BLOCK_M, BLOCK_N>(&map_a, &map_b, &map_sa, smem, sm.scales, full, empty, tiles_m, tiles_n,
                                        blockIdx.x, gridDim.x, 0, num_kb);
  } else {
    ptx::setmaxnreg_inc<kMathRegs>();
    const int math = role - 1; // rows 64 * math .. of the tile
    const int warp_in_group = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const std::uint32_t a_lo = ptx::wgmma_desc_sw128_lo(smem + math * wg::kMathRows * wg::kRowBytes);
    const std::uint32_t b_lo = ptx::wgmma_desc_sw128_lo(smem + kABytes);
    const std::uint32_t sa = ptx::smem_addr(thread_scales(sm.scales, math, warp_in_group, lane));
    Ring<Stages> ring;
    float partial0[wg::kAccum] = {}, partial1[wg::kAccum] = {};
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int m0, n0;
      tile_at(t, tiles_m, tiles_n, m0, n0);
      float total[wg::kAccum] = {};
      math_tile(sa, p.sb.address(n0, 0), p.sb.kb_stride, a_lo, b_lo, full, empty, ring, num_kb, total, partial0,
                partial1);
      const int row0 = m0 + math * wg::kMathRows;
#ifndef CH10_ABLATE_EPILOGUE
      if (tma_store) {
        if (row0 < p.m) store_tile_tma(&map_d, total, out + math * kOutBytes, row0, n0, 1 + math);
      } else {
        store_tile(p, total, out + math * kOutBytes, row0, n0, 1 + math);
      }
#else
      if (p.m < 0) store_tile(p, total, out + math * kOutBytes, row0, n0, 1 + math); // compiled, never run
#endif
    }
    // The last stores must finish reading shared memory before the block ends.
    if (tma_store && threadIdx.x % 128 == 0) ptx::bulk_wait<0>();
  }
}

/// Calls f(std::integral_constant<int, S>{}) with S = `stages`: the ring
/// depth as a compile-time constant (v4 and v5 are compiled for each).
template <class F>
decltype(auto) with_stages(int stages, F&& f) {
  switch (stages) {
  case 2: return f(std::integral_constant<int, 2>{});
  case 3: return f(std::integral_constant<int, 3>{});
  case 4: return f(std::integral_constant<int, 4>{});
  case 5: return f(std::integral_constant<int, 5>{});
  default: throw std::invalid_argument(std::to_string(stages) + " stages (v4 and v5 are compiled for 2 to 5)");
  }
}
static_assert(kMinStages == 2 && kMaxStages == 5, "with_stages lists the depths one by one");

template <int Stages>
void launch_stages(const Fp8Gemm& p, const CUtensorMap& map_a, const CUtensorMap& map_b, const CUtensorMap& map_sa,
                   const CUtensorMap& map_d, bool tma_store, int grid, cudaStream_t stream) {
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_warp_specialized<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  smem_bytes(Stages)));
  fp8_gemm_warp_specialized<Stages>
      <<<grid, kThreads, smem_bytes(Stages), stream>>>(map_a, map_b, map_sa, map_d, tma_store, p);
  CUDA_CHECK_LAUNCH();
}

/// v4 with a ring of `stages` stages (kMinStages .. kMaxStages).
inline void launch(const Fp8Gemm& p, cudaStream_t stream, int stages = kDefaultStages) {
  const CUtensorMap map_a = make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M);
  const CUtensorMap map_b = make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N);
  const CUtensorMap map_sa = make_tensor_map_scales(p.sa_by_kb, p.m, k_blocks(p.k), p.sa_by_kb_ld, BLOCK_M);
  CUtensorMap map_d{}; // stays zero (unused) when N is not a multiple of 8
  const bool tma_store = make_tensor_map_d(p.d, p.m, p.n, wg::kMathRows, map_d);
  const int sms = sm_count();
  // One block per SM (a block takes most of the SM's shared memory and all
  // of its registers), never more blocks than tiles.
  const long long tiles = static_cast<long long>(steps::ceil_div(p.m, BLOCK_M)) * steps::ceil_div(p.n, BLOCK_N);
  if (tiles > INT_MAX) throw std::invalid_argument("v4: more than 2^31 - 1 tiles");
  const int grid = static_cast<int>(std::min<long long>(sms, tiles));
  with_stages(stages, [&](auto depth) { launch_stages<decltype(depth)::value>(p, map_a, map_b, map_sa, map_d, tma_store, grid, stream);
  });
}

} // namespace ch10::v4
