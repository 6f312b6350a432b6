// Chapter 10: the 128 x 192 wide-tile kernel of versions 6 and 7, for any
// schedule of tiles.
//
// Version 6 introduces it (v6_wide_tiles.cuh says why: the tile, the two
// halves of 96 columns, the scales, the registers) and runs it on whole
// tiles (AllTiles, scheduler.cuh); version 7 runs the same kernel, the same
// machine code for the same schedule, on the whole waves and again on the
// pieces of the last wave (its LastWave schedule, whose kSplits makes the
// kernel contribute or gather a piece). Here: the shapes and budgets, the
// kernel, its tensor maps, and the launch of one schedule.
#pragma once

#include "epilogue.cuh"
#include "fp8_gemm.cuh"
#include "producer.cuh"
#include "ring.cuh"
#include "scheduler.cuh"
#include "tma.hpp"
#include "wgmma_math.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace ch10::wide_tiles {

namespace ptx = steps::ptx;

constexpr int kMathGroups = 2;
constexpr int BLOCK_M = kMathGroups * wg::kMathRows, BLOCK_N = 192;
constexpr int kThreads = 128 * (1 + kMathGroups);
constexpr int kAccum = wg::kMathRows * BLOCK_N / 128; // 96 FP32 per thread
constexpr int kStages = 4;
/// setmaxnreg (v6_wide_tiles.cuh): the producer needs fewer than 24.
constexpr int kProducerRegs = 24, kMathRegs = 240;
static_assert(kProducerRegs * 128 + kMathRegs * 128 * kMathGroups <= 65536, "more registers than an SM has");
constexpr int kABytes = BLOCK_M * wg::kRowBytes;               // 16 KB
constexpr int kStageBytes = kABytes + BLOCK_N * wg::kRowBytes; // 40 KB
constexpr int kOutBytes = wg::kMathRows * BLOCK_N * 2;         // 24 KB per math warpgroup
constexpr int kScaleStride = scale_stride(BLOCK_M, BScales::in_stage); // A's and B's scales of one stage, in floats
constexpr int kSmemBytes = kStages * (kStageBytes + kScaleStride * 4) + kMathGroups * kOutBytes + 2 * kStages * 8 + 1024;
static_assert(kSmemBytes <= 232448, "more shared memory than an H100/H200 block may have");
static_assert(kStageBytes % 1024 == 0 && kABytes % 1024 == 0, "stages and B must start 1024-byte aligned");

/// This thread's scales of one K block: its two rows' A scales, and B's
/// scale for each 64-column chunk of the tile.
struct Scales {
  float a0, a1, b[3];
};

/// Registers of one half tile (64 x 96): a K block's wgmma are issued as
/// two groups, columns 0-95 and 96-191.
constexpr int kHalf = kAccum / 2;
/// B's rows 96.. of a stage, as a step of the descriptor's low word.
constexpr std::uint32_t kHalfBLo = (BLOCK_N / 2) * wg::kRowBytes >> 4;

/// total += sA(row) * sB(chunk) * half for half H of the tile: register
/// 4i .. 4i + 3 of the half is column group 12H + i / 4 of the tile
/// (totals 48H + i ..), in 64-column chunk (96H + 8 (i / 4)) / 64.
template <int H>
__device__ __forceinline__ void promote_half(float (&total)[kAccum], float (&half)[kHalf], Scales sc) {
  wg::fence_operands(half);
  // Keeps the scale products here, below the wgmma issued just before (as in wg::promote).
  asm volatile("" : "+f"(sc.a0), "+f"(sc.a1), "+f"(sc.b[0]), "+f"(sc.b[1]), "+f"(sc.b[2]));
  float s0[3], s1[3];
#pragma unroll
  for (int c = H; c < H + 2; ++c) { // chunks 0, 1 (H = 0) or 1, 2 (H = 1)
    s0[c] = sc.a0 * sc.b[c];
    s1[c] = sc.a1 * sc.b[c];
  }
#pragma unroll
  for (int i = 0; i < kHalf; i += 4) {
    const int c = (96 * H + 8 * (i / 4)) / 64, t = kHalf * H + i;
    total[t] = fmaf(s0[c], half[i], total[t]);
    total[t + 1] = fmaf(s0[c], half[i + 1], total[t + 1]);
    total[t + 2] = fmaf(s1[c], half[i + 2], total[t + 2]);
    total[t + 3] = fmaf(s1[c], half[i + 3], total[t + 3]);
  }
}

/// The kernel: the producer and ring of v4 (producer.cuh, ring.cuh), and
/// math warpgroups with one partial set, in two halves (see the top of this
/// file). `sched` says which tiles, and which of their K blocks, a block
/// works on (scheduler.cuh): v6 runs AllTiles, every tile whole. A schedule
/// whose pieces are parts of tiles (Schedule::kSplits) also says how a
/// piece's sums reach the block that stores the tile: a block that does
/// not start the tile hands them over (sched.contribute), one that does
/// not end it adds the others' (sched.gather).
template <class Schedule>
__global__ void __launch_bounds__(kThreads, 1)
    fp8_gemm_wide_tiles(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                        const __grid_constant__ CUtensorMap map_sa, const __grid_constant__ CUtensorMap map_d,
                        bool tma_store, Fp8Gemm p, Schedule sched) {
#if STEPS_PTX_SM90A // wgmma, setmaxnreg, TMA: sm_90a only (steps/ptx.cuh)
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = wg::align_1024(smem_raw);
  std::uint8_t* out = smem + kStages * kStageBytes;
  auto* scales = reinterpret_cast<float*>(out + kMathGroups * kOutBytes); // stage s: A's, B's (producer.cuh)
  auto* full = reinterpret_cast<std::uint64_t*>(scales + kStages * kScaleStride);
  std::uint64_t* empty = full + kStages;

  init_ring<kStages, kMathGroups>(full, empty);

  const int tiles_m = steps::ceil_div(p.m, BLOCK_M), tiles_n = steps::ceil_div(p.n, BLOCK_N);
  const int role = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);

  if (role == 0) {
    ptx::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      ptx::tma_prefetch_map(&map_a);
      ptx::tma_prefetch_map(&map_b);
      ptx::tma_prefetch_map(&map_sa);
      Ring<kStages> ring;
      sched.for_each([&](int t, int kb0, int kb1) {
        int tm, tn;
        tile_index(t, tiles_m, tiles_n, tm, tn);
        produce_k_blocks<kStages, BLOCK_M, BLOCK_N, BScales::in_stage>(&map_a, &map_b, &map_sa, p.sb_by_kb,
                                                                       p.sb_by_kb_ld, smem, scales, full, empty, ring,
                                                                       tm, tn, kb0, kb1);
      });
    }
  } else {
    ptx::setmaxnreg_inc<kMathRegs>();
    const int math = role - 1;
    const int warp_in_group = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const bool signals = lane == 0;
    const std::uint32_t a_lo = ptx::wgmma_desc_sw128_lo(smem + math * wg::kMathRows * wg::kRowBytes);
    const std::uint32_t b_lo = ptx::wgmma_desc_sw128_lo(smem + kABytes);
    // This thread's A scales and B's scales (kBScaleCopy) in stage 0, as
    // 32-bit shared addresses, read with ld.shared: through the float*
    // they were generic loads (LD with 64-bit address arithmetic), 2.4% to
    // 4.9% slower (the lesson).
    const std::uint32_t sa = ptx::smem_addr(thread_scales(scales, math, warp_in_group, lane));
    const std::uint32_t sb = ptx::smem_addr(scales + BLOCK_M);
    Ring<kStages> ring;
    float half0[kHalf] = {}, half1[kHalf] = {};
    sched.for_each([&](int t, int kb0, int kb1) {
      const int num_kb = kb1 - kb0; // this piece's K blocks (v6: all of them)
      int tm, tn;
      tile_index(t, tiles_m, tiles_n, tm, tn);
      const int m0 = tm * BLOCK_M, n0 = tn * BLOCK_N, row0 = m0 + math * wg::kMathRows;
      // Which of the stage's B scales each 64-column chunk reads: the
      // tile's first block or the next. (Chunks past N read some finite
      // scale and multiply zeros: their columns are not stored.)
      const int b0 = b_scale_in_copy(n0, n0), b1 = b_scale_in_copy(n0, n0 + 64), b2 = b_scale_in_copy(n0, n0 + 128);
      float total[kAccum] = {};
      Ring<kStages> ahead = ring; // the block whose halves are issued next
      // Half 0 of the next block: wait for its stage, read its scales, issue.
      auto start0 = [&](Scales& sc) {
        const std::uint32_t stage_lo = ahead.stage * (kStageBytes >> 4);
        ptx::mbarrier_wait(&full[ahead.stage], ahead.phase);
        const std::uint32_t at = ahead.stage * (kScaleStride * 4);
        sc.a0 = ptx::ld_shared_f32(sa + at);
        sc.a1 = ptx::ld_shared_f32(sa + at + 32);
        sc.b[0] = ptx::ld_shared_f32(sb + at + 4 * b0);
        sc.b[1] = ptx::ld_shared_f32(sb + at + 4 * b1);
        sc.b[2] = ptx::ld_shared_f32(sb + at + 4 * b2);
        wg::issue_k_block(half0, a_lo + stage_lo, b_lo + stage_lo);
      };
      auto start1 = [&] {
        const std::uint32_t stage_lo = ahead.stage * (kStageBytes >> 4);
        wg::issue_k_block(half1, a_lo + stage_lo, b_lo + stage_lo + kHalfBLo);
        ahead.advance();
      };
      // Lane 0 releases a stage for its warp, after a __syncwarp: the other
      // lanes' reads of the stage's scales then happen before the arrive,
      // and so before the producer's next copy into the stage, by the
      // memory model's rules, not only because the warp runs in step.
      // (Measured: no cost. racecheck still reports the bulk copy of B's
      // scales as racing with those reads: it does not follow the copy's
      // completion through the mbarrier; CMakeLists.txt.)
      auto release = [&](int stage) {
        __syncwarp();
        if (signals) ptx::mbarrier_arrive(&empty[stage]);
      };
      // One block kb whose two halves are in flight, and a next one: promote
      // half 0 while half 1 runs, issue the next block's half 0, promote half
      // 1 while that runs, issue the next block's half 1.
      auto step = [&](const Scales& cur, Scales& next) {
        ptx::wgmma_wait<1>(); // half 0 of kb done
        promote_half<0>(total, half0, cur);
        start0(next);
        ptx::wgmma_wait<1>(); // half 1 of kb done (the next half 0 may run)
        release(ring.stage);
        ring.advance();
        promote_half<1>(total, half1, cur);
        start1();
      };
      Scales sc0, sc1;
      start0(sc0);
      start1();
      int kb = 0;
      for (; kb + 2 < num_kb; kb += 2) { // blocks kb + 1 and kb + 2 exist
        step(sc0, sc1);
        step(sc1, sc0);
      }
      // The last block, after one more step or not: each path ends with
      // nothing in flight (wgmma in flight where two paths join make ptxas
      // serialize them, C7514).
      auto last = [&](const Scales& cur) {
        ptx::wgmma_wait<1>();
        promote_half<0>(total, half0, cur);
        ptx::wgmma_wait<0>();
        release(ring.stage);
        ring.advance();
        promote_half<1>(total, half1, cur);
      };
      if (kb + 1 < num_kb) {
        step(sc0, sc1);
        last(sc1);
      } else {
        last(sc0);
      }
      if constexpr (Schedule::kSplits) { // a piece of a tile
        if (kb0 > 0) return sched.contribute(math, total); // another block adds it and stores the tile
        if (kb1 < sched.num_kb) sched.gather(math, total); // add the other blocks' pieces
      }
      if (tma_store) {
        if (row0 < p.m) store_tile_tma(&map_d, total, out + math * kOutBytes, row0, n0, 1 + math);
      } else {
        store_tile(p, total, out + math * kOutBytes, row0, n0, 1 + math);
      }
    });
    if (tma_store && threadIdx.x % 128 == 0) ptx::bulk_wait<0>();
  }
#endif
}

/// What the kernel needs besides the problem: the tensor maps of A, B, A's
/// scales and D (map_d only where N allows a TMA store).
struct Maps {
  CUtensorMap a, b, sa, d;
  bool tma_store;
  explicit Maps(const Fp8Gemm& p)
      : a(make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M)), b(make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N)),
        sa(make_tensor_map_scales(p.sa_by_kb, p.m, k_blocks(p.k), p.sa_by_kb_ld, BLOCK_M)), d{},
        tma_store(make_tensor_map_d(p.d, p.m, p.n, wg::kMathRows, d)) {
    if (p.sb_by_kb == nullptr) throw std::invalid_argument("v6: no K-block-major B scales (Fp8Gemm::sb_by_kb)");
  }
};

/// Tiles of 128 x 192 in problem `p`.
inline long long tile_count(const Fp8Gemm& p) {
  return static_cast<long long>(steps::ceil_div(p.m, BLOCK_M)) * steps::ceil_div(p.n, BLOCK_N);
}

/// Launches the kernel with schedule `sched` on `grid` blocks; with
/// `cooperative`, as a cooperative launch (all blocks resident at once, or
/// the launch fails: for a schedule whose blocks wait for each other).
template <class Schedule>
void launch_schedule(const Fp8Gemm& p, const Schedule& sched, int grid, bool cooperative, cudaStream_t stream) {
  const Maps maps(p);
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_wide_tiles<Schedule>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  kSmemBytes));
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned int>(grid));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  config.attrs = cooperative ? &attr : nullptr;
  config.numAttrs = cooperative ? 1 : 0;
  CUDA_CHECK(cudaLaunchKernelEx(&config, fp8_gemm_wide_tiles<Schedule>, maps.a, maps.b, maps.sa, maps.d,
                                maps.tma_store, p, sched));
  CUDA_CHECK_LAUNCH();
}

/// Whole tiles on one block per SM (never more than tiles), persistent:
/// version 6, and version 7 where it cuts nothing.
inline void launch_all_tiles(const Fp8Gemm& p, cudaStream_t stream) {
  const long long tiles = tile_count(p);
  if (tiles > INT_MAX) throw std::invalid_argument("v6: more than 2^31 - 1 tiles");
  const int grid = static_cast<int>(std::min<long long>(sm_count(), tiles));
  launch_schedule(p, AllTiles{static_cast<int>(tiles), k_blocks(p.k)}, grid, false, stream);
}

} // namespace ch10::wide_tiles
