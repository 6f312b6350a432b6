// Chapter 10, version 6: wider tiles, 128 x 192.
//
// Change from version 4: the tile is 192 columns wide (wgmma m64n192k32),
// and each math warpgroup keeps ONE set of partial sums instead of two.
//
//   block = 3 warpgroups (384 threads), tile 128 x 192, 4 stages of 40 KB
//   warpgroup 0: the producer, as in v4 (B's box is 192 rows)
//   warpgroups 1 and 2, rows 0-63 and 64-127, for each K block:
//     wait full[s]; issue the 4 wgmma into `partial`; wait for them;
//     arrive empty[s]; promote (total += scales * partial)
//
// What it was built for: fewer shared-memory bytes per multiply-add. Per
// K block, v4's two warpgroups read 2 x (8 KB of A + 16 KB of B) from
// shared memory and TMA writes 32 KB: 80 KB per 128 x 128 x 128; here
// 2 x (8 + 24) KB read and 40 KB written for 1.5 times the work, 69 KB per
// 128 x 128 x 128. Nsight Compute agrees (L1/TEX throughput 85% in v4, 67%
// here), and yet v6 is slower than v4 wherever both fill the GPU (the
// lesson has the numbers): one partial set (below) costs more than the
// bytes save.
//
// Why it is slower: 96 registers of partial sums and 96 of totals per
// thread leave no room for a second partial set (v4 has 64 + 64 + 64), so
// a warpgroup cannot issue block kb + 1 before it has promoted block kb.
// Its tensor-core work stops while it promotes; the other warpgroup's wgmma
// were meant to fill that gap, but both wait on the same stage and promote
// at about the same time. (Making them take turns to issue, with two named
// barriers, did not help: measured, not kept.)
//
// Where it wins: a 192-wide tile makes fewer tiles, and on some shapes they
// fill the 132 SMs better. 128 x 24576: 192 tiles of 128 x 128 are 1.45
// waves (the second one less than half full), 128 tiles of 128 x 192 one.
//
// Scales: a 192-column tile starts at a multiple of 64, so each of its three
// 64-column chunks lies in one 128-row block of B's scales: a thread loads
// three B scales per K block (chunks 0, 1, 2) and its two A scales.
//
// The registers: v4's 40 (producer) + 2 x 232 left the math warpgroups a
// few short here (ptxas spilled 16 bytes); 24 + 2 x 240 fits.
//
// On the H200 at 8192 x 8192 x 4096, in the last benchmark run:
// 1344 TFLOP/s {n:10:wide_tiles:value|.0f}, 1.03x {n:10:wide_tiles:base} cuBLASLt block-scaled.
#pragma once

#include "fp8_gemm.cuh"
#include "ptx.cuh"
#include "tma.hpp"
#include "v4_warp_specialized.cuh"
#include "wgmma_math.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace ch10::v6 {

constexpr int kMathGroups = 2;
constexpr int BLOCK_M = kMathGroups * wg::kMathRows, BLOCK_N = 192;
constexpr int kThreads = 128 * (1 + kMathGroups);
constexpr int kAccum = wg::kMathRows * BLOCK_N / 128; // 96 FP32 per thread
constexpr int kStages = 4;
/// setmaxnreg (see above): the producer needs fewer than 24.
constexpr int kProducerRegs = 24, kMathRegs = 240;
static_assert(kProducerRegs * 128 + kMathRegs * 128 * kMathGroups <= 65536, "more registers than an SM has");
constexpr int kABytes = BLOCK_M * wg::kRowBytes;               // 16 KB
constexpr int kStageBytes = kABytes + BLOCK_N * wg::kRowBytes; // 40 KB
constexpr int kOutBytes = wg::kMathRows * BLOCK_N * 2;         // 24 KB per math warpgroup
constexpr int kScaleBytes = BLOCK_M * 4;                      // A's scales of one stage
constexpr int kSmemBytes = kStages * (kStageBytes + kScaleBytes) + kMathGroups * kOutBytes + 2 * kStages * 8 + 1024;
static_assert(kSmemBytes <= 232448, "more shared memory than an H100/H200 block may have");
static_assert(kStageBytes % 1024 == 0 && kABytes % 1024 == 0, "stages and B must start 1024-byte aligned");

/// This thread's scales of one K block: its two rows' A scales, and B's
/// scale for each 64-column chunk of the tile.
struct Scales {
  float a0, a1, b[3];
};

/// The tile's three B scales, one per 64-column chunk, K block after K
/// block (a per-thread pointer stepped by one K block). Chunks past N read
/// the last column's block: their columns are never stored. (A's scales come
/// with the stage, as in v4.)
struct BCursor {
  const float* b; // chunk 0's scale; chunks 1 and 2 are b1, b2 scales further
  int b1, b2, step;
  __device__ BCursor(const Fp8Gemm& p, int n0)
      : b(p.sb.address(n0, 0)), b1(static_cast<int>(p.sb.address(min(n0 + 64, p.n - 1), 0) - b)),
        b2(static_cast<int>(p.sb.address(min(n0 + 128, p.n - 1), 0) - b)), step(p.sb.kb_stride) {}
  __device__ void next(float (&out)[3]) {
    out[0] = b[0];
    out[1] = b[b1];
    out[2] = b[b2];
    b += step;
  }
};

/// total += sA(row) * sB(chunk) * partial: register 4i .. 4i + 3 lies in
/// column chunk i / 8.
__device__ __forceinline__ void promote(float (&total)[kAccum], float (&partial)[kAccum], const Scales& sc) {
  wg::fence_operands(partial);
  float s0[3], s1[3];
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    s0[c] = sc.a0 * sc.b[c];
    s1[c] = sc.a1 * sc.b[c];
  }
#pragma unroll
  for (int i = 0; i < kAccum; i += 4) {
    const int c = i / 32;
    total[i] = fmaf(s0[c], partial[i], total[i]);
    total[i + 1] = fmaf(s0[c], partial[i + 1], total[i + 1]);
    total[i + 2] = fmaf(s1[c], partial[i + 2], total[i + 2]);
    total[i + 3] = fmaf(s1[c], partial[i + 3], total[i + 3]);
  }
}

/// v6's kernel: v4's producer and ring (v4::init_ring, v4::produce), and
/// math warpgroups with one partial set (see the top of this file).
__global__ void __launch_bounds__(kThreads, 1)
    fp8_gemm_wide_tiles(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                        const __grid_constant__ CUtensorMap map_sa, const __grid_constant__ CUtensorMap map_d,
                        bool tma_store, Fp8Gemm p) {
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = wg::align_1024(smem_raw);
  std::uint8_t* out = smem + kStages * kStageBytes;
  auto* scales = reinterpret_cast<float*>(out + kMathGroups * kOutBytes); // stage s: BLOCK_M A scales
  auto* full = reinterpret_cast<std::uint64_t*>(scales + kStages * BLOCK_M);
  std::uint64_t* empty = full + kStages;

  static_assert(kMathGroups == v4::kMathGroups, "v4's ring: one empty[] arrival per math warp");
  v4::init_ring<kStages>(full, empty);

  const int tiles_m = steps::ceil_div(p.m, BLOCK_M), tiles_n = steps::ceil_div(p.n, BLOCK_N);
  const int tiles = tiles_m * tiles_n;
  const int num_kb = k_blocks(p.k);
  const int role = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);

  if (role == 0) {
    ptx::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0)
      v4::produce<kStages, BLOCK_M, BLOCK_N>(&map_a, &map_b, &map_sa, smem, scales, full, empty, tiles_m, tiles_n,
                                             blockIdx.x, gridDim.x, 0, num_kb);
  } else {
    ptx::setmaxnreg_inc<kMathRegs>();
    const int math = role - 1;
    const int warp_in_group = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const bool signals = lane == 0;
    const std::uint32_t a_lo = ptx::wgmma_desc_sw128_lo(smem + math * wg::kMathRows * wg::kRowBytes);
    const std::uint32_t b_lo = ptx::wgmma_desc_sw128_lo(smem + kABytes);
    const float* sa = scales + math * wg::kMathRows + 16 * warp_in_group + lane / 4; // this thread's first row
    v4::Ring<kStages> ring;
    float partial[kAccum] = {};
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int tm, tn;
      v4::tile_index(t, tiles_m, tiles_n, tm, tn);
      const int m0 = tm * BLOCK_M, n0 = tn * BLOCK_N, row0 = m0 + math * wg::kMathRows;
      BCursor cursor(p, n0);
      float total[kAccum] = {};
      for (int kb = 0; kb < num_kb; ++kb) {
        Scales sc;
        cursor.next(sc.b); // in flight while the wgmma run
        const std::uint32_t stage_lo = ring.stage * (kStageBytes >> 4);
        ptx::mbarrier_wait(&full[ring.stage], ring.phase);
        sc.a0 = sa[ring.stage * BLOCK_M];
        sc.a1 = sa[ring.stage * BLOCK_M + 8];
        wg::issue_k_block(partial, a_lo + stage_lo, b_lo + stage_lo);

        ptx::wgmma_wait<0>();
        if (signals) ptx::mbarrier_arrive(&empty[ring.stage]);
        promote(total, partial, sc);
        ring.advance();
      }
      if (tma_store) {
        if (row0 < p.m) v4::store_tile_tma(&map_d, total, out + math * kOutBytes, row0, n0, 1 + math);
      } else {
        v4::store_tile(p, total, out + math * kOutBytes, row0, n0, 1 + math);
      }
    }
    if (tma_store && threadIdx.x % 128 == 0) ptx::bulk_wait<0>();
  }
}

/// v6: one block per SM (never more than tiles), persistent.
inline void launch(const Fp8Gemm& p, cudaStream_t stream) {
  const CUtensorMap map_a = make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M);
  const CUtensorMap map_b = make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N);
  const CUtensorMap map_sa = make_tensor_map_scales(p.sa_by_kb, p.m, k_blocks(p.k), p.sa_by_kb_ld, BLOCK_M);
  CUtensorMap map_d{};
  const bool tma_store = make_tensor_map_d(p.d, p.m, p.n, wg::kMathRows, map_d);
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const long long tiles = static_cast<long long>(steps::ceil_div(p.m, BLOCK_M)) * steps::ceil_div(p.n, BLOCK_N);
  if (tiles > INT_MAX) throw std::invalid_argument("v6: more than 2^31 - 1 tiles");
  const int grid = static_cast<int>(std::min<long long>(sms, tiles));
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_wide_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  fp8_gemm_wide_tiles<<<grid, kThreads, kSmemBytes, stream>>>(map_a, map_b, map_sa, map_d, tma_store, p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::v6
