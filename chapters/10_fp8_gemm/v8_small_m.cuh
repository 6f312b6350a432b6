// Chapter 10, version 8: tiles of 64 rows, for the shapes of inference.
//
// Change from version 4: the tile is 64 x 128, and a block has one math
// warpgroup (and the producer). Nothing in the K loop changes: the math
// warpgroup runs v4's loop (pipeline::math_tile) on its 64 rows, as each of
// v4's two did.
//
// Why: at M = 128 (a batch of 128 tokens) D has one row of 128 x 128
// tiles, and B is the data: N x K bytes, used by only 128 rows (the lesson's
// roofline: DRAM limits these shapes). At N = 7168, v4 has 56 tiles: 56 of
// the 132 SMs pull B from DRAM, each with its ring of 5 stages, and 76
// stay idle. Tiles of 64 rows make two rows of tiles, twice as many: 112
// blocks pull B's tiles, two blocks each (the tiles above each other run at
// the same time, so the second read of a B tile finds it in L2: the tile
// order, scheduler.cuh). A stage is smaller (8 KB of A + 16 KB of B), so the
// ring of the same shared memory is deeper: 8 stages, 128 KB of B in flight
// per SM where v4 has 80 KB.
//
//   block = 2 warpgroups (256 threads), tile 64 x 128, 8 stages of 24 KB
//   warpgroup 0: the producer, as in v4 (A's box is 64 rows)
//   warpgroup 1: the math of v4's warpgroups, on the tile's 64 rows
//
// The price: one math warpgroup per SM, where v4 has two. Where the tensor
// cores limit (M = 4096 and the default shape), v8 runs at about half of
// v4's speed; it is a version for the shapes where DRAM limits.
//
// (No setmaxnreg: with 256 threads a thread may have 255 registers, more
// than the math warpgroup's 232.)
#pragma once

#include "epilogue.cuh"
#include "fp8_gemm.cuh"
#include "pipeline.cuh"
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

namespace ch10::v8 {

namespace ptx = steps::ptx;

constexpr int BLOCK_M = wg::kMathRows, BLOCK_N = pipeline::BLOCK_N; // 64 x 128
constexpr int kThreads = 256;
constexpr int kStages = 8;
constexpr int kABytes = BLOCK_M * wg::kRowBytes;                 // 8 KB
constexpr int kStageBytes = kABytes + BLOCK_N * wg::kRowBytes;   // 24 KB
constexpr int kScaleBytes = BLOCK_M * 4;                         // 256 B
constexpr int kOutBytes = pipeline::kOutBytes;                   // 16 KB
/// The ring, the epilogue buffer, the A scales, full[] and empty[], and 1 KB
/// to align the ring to 1024.
constexpr int kSmemBytes = kStages * (kStageBytes + kScaleBytes) + kOutBytes + 2 * kStages * 8 + 1024;
static_assert(kSmemBytes <= 232448, "more shared memory than an H100/H200 block may have");
static_assert(kStageBytes % 1024 == 0 && kABytes % 1024 == 0, "stages and B must start 1024-byte aligned");

__global__ void __launch_bounds__(kThreads, 1)
    fp8_gemm_small_m(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                     const __grid_constant__ CUtensorMap map_sa, const __grid_constant__ CUtensorMap map_d,
                     bool tma_store, Fp8Gemm p) {
#if STEPS_PTX_SM90A // wgmma, TMA: sm_90a only (steps/ptx.cuh)
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* ring_memory = wg::align_1024(smem_raw);
  std::uint8_t* out = ring_memory + kStages * kStageBytes;
  auto* scales = reinterpret_cast<float*>(out + kOutBytes); // stage s: the tile's 64 A scales
  auto* full = reinterpret_cast<std::uint64_t*>(scales + kStages * BLOCK_M);
  std::uint64_t* empty = full + kStages;

  init_ring<kStages, 1>(full, empty);

  const int tiles_m = steps::ceil_div(p.m, BLOCK_M), tiles_n = steps::ceil_div(p.n, BLOCK_N);
  const int tiles = tiles_m * tiles_n;
  const int num_kb = k_blocks(p.k);
  const int role = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0); // 0 producer, 1 math

  if (role == 0) {
    if (threadIdx.x == 0)
      produce<kStages, BLOCK_M, BLOCK_N>(&map_a, &map_b, &map_sa, ring_memory, scales, full, empty, tiles_m,
                                         tiles_n, blockIdx.x, gridDim.x, 0, num_kb);
  } else {
    const int warp_in_group = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const std::uint32_t a_lo = ptx::wgmma_desc_sw128_lo(ring_memory);
    const std::uint32_t b_lo = ptx::wgmma_desc_sw128_lo(ring_memory + kABytes);
    const std::uint32_t sa = ptx::smem_addr(thread_scales(scales, 0, warp_in_group, lane));
    Ring<kStages> ring;
    float partial0[wg::kAccum] = {}, partial1[wg::kAccum] = {};
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int m0, n0;
      tile_at<BLOCK_M, BLOCK_N>(t, tiles_m, tiles_n, m0, n0);
      float total[wg::kAccum] = {};
      pipeline::math_tile<kStages, BLOCK_M>(sa, p.sb.address(n0, 0), p.sb.kb_stride, a_lo, b_lo, full, empty, ring,
                                            num_kb, total, partial0, partial1);
      if (tma_store) {
        if (m0 < p.m) store_tile_tma(&map_d, total, out, m0, n0, 1);
      } else {
        store_tile(p, total, out, m0, n0, 1);
      }
    }
    // The last stores must finish reading shared memory before the block ends.
    if (tma_store && threadIdx.x % 128 == 0) ptx::bulk_wait<0>();
  }
#endif
}

/// Tiles of 64 x 128 in problem `p`.
inline long long tile_count(const Fp8Gemm& p) {
  return static_cast<long long>(steps::ceil_div(p.m, BLOCK_M)) * steps::ceil_div(p.n, BLOCK_N);
}

/// v8: one block per SM (never more than tiles), persistent, as v4.
inline void launch(const Fp8Gemm& p, cudaStream_t stream) {
  const CUtensorMap map_a = make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M);
  const CUtensorMap map_b = make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N);
  const CUtensorMap map_sa = make_tensor_map_scales(p.sa_by_kb, p.m, k_blocks(p.k), p.sa_by_kb_ld, BLOCK_M);
  CUtensorMap map_d{};
  const bool tma_store = make_tensor_map_d(p.d, p.m, p.n, wg::kMathRows, map_d);
  const long long tiles = tile_count(p);
  if (tiles > INT_MAX) throw std::invalid_argument("v8: more than 2^31 - 1 tiles");
  const int grid = static_cast<int>(std::min<long long>(sm_count(), tiles));
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_small_m, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  fp8_gemm_small_m<<<grid, kThreads, kSmemBytes, stream>>>(map_a, map_b, map_sa, map_d, tma_store, p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::v8
