// Chapter 10, version 2: tensor cores through mma.sync, with FP32 promotion
// every 128 K.
//
// Change from version 1: a block of 256 threads computes a 128 x 128 tile of
// D. Each 128-deep slice of A and B goes to shared memory once (cp.async,
// double-buffered: the next slice loads while this one is multiplied) and
// is read from there by 8 warps, each of which owns a 64 x 32 piece of the
// tile and multiplies with mma.sync m16n8k32 (16 x 8 x 32 per instruction).
//
//   block tile 128 x 128                 one warp: 64 x 32 = 4 x 4 mma tiles of 16 x 8
//   +-------+-------+-------+-------+
//   | warp0 | warp1 | warp2 | warp3 |    A slice (128 rows x 128 B) --+
//   +-------+-------+-------+-------+                                 +--> shared memory,
//   | warp4 | warp5 | warp6 | warp7 |    B slice (128 rows x 128 B) --+    rows padded to 144 B
//   +-------+-------+-------+-------+
//
// Promotion. The tensor cores add up FP8 products in a reduced-precision
// accumulator (DeepSeek-V3 reports about 14 bits kept on Hopper). So each
// 128-deep K block starts from a zeroed accumulator `partial` (4 mma k32
// steps), and only then is it scaled and added to the FP32 total on the CUDA
// cores:
//     total += sA(row, kb) * sB(col block, kb) * partial
// BLOCK_K = 128 = the scale block, so a K tile is exactly one scale block and
// BLOCK_N = 128 means one B scale per tile and K block. Per-tensor scaling
// runs the same code with constant scales.
//
// Tails. Rows past M or N and bytes past K are filled with zeros in shared
// memory (zero products add nothing), and the stores check both bounds.
//
// What mma.sync E4M3 is on Hopper. The FP8 form of mma.sync is an Ada
// (sm_89) instruction; sm_90 has no FP8 mma.sync in hardware. For one
// m16n8k32 e4m3 the compiler emits, by target (nvcc 13.0, disassembled):
//   sm_89:   QMMA.16832.F32.E4M3.E4M3          (one FP8 tensor-core op)
//   sm_90a:  12 x F2FP.F16.E4M3.UNPACK_B        (FP8 -> FP16, two codes each)
//             2 x HMMA.16816.F32                (two FP16 tensor-core ops)
// So on the H200 this version runs the FP16 tensor cores, at the FP16 rate,
// behind conversions: its speed is not what FP8 mma.sync costs where it
// exists. Hopper's FP8 tensor cores are reached only through wgmma (the
// next version).
#pragma once

#include "fp8_gemm.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <stdexcept>

namespace ch10::v2 {

namespace ptx = steps::ptx;

constexpr int BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 128;
constexpr int kWarpsM = 2, kWarpsN = 4;              // 8 warps
constexpr int kThreads = 32 * kWarpsM * kWarpsN;     // 256
constexpr int WARP_M = BLOCK_M / kWarpsM;            // 64
constexpr int WARP_N = BLOCK_N / kWarpsN;            // 32
constexpr int kMmaM = WARP_M / 16;                   // 4 mma tiles down
constexpr int kMmaN = WARP_N / 8;                    // 4 mma tiles across
/// A shared-memory row holds 128 K bytes plus 16 of padding. Unpadded, the
/// 8 rows g = 0..7 that a fragment load touches would be 128 B apart: the
/// same 4 banks, an 8-way conflict. At 144 B they start 4 banks apart and
/// the 32 lanes (8 rows x 4 words) hit 32 different banks.
constexpr int kRowBytes = BLOCK_K + 16;
constexpr int kStageBytes = (BLOCK_M + BLOCK_N) * kRowBytes; // A rows, then B rows: 36,864 B
constexpr int kStages = 2;
constexpr int kSmemBytes = kStages * kStageBytes;            // 73,728 B: above 48 KB, so opted in

static_assert(BLOCK_K == kScaleBlock, "one K tile must be one scale block: the promotion happens per K tile");
static_assert(BLOCK_N == kScaleBlock, "one B scale per tile and K block needs BLOCK_N == 128");
static_assert(BLOCK_K % 32 == 0 && kRowBytes % 16 == 0, "16-byte cp.async chunks, 32-deep mma steps");

/// Starts the asynchronous copy of K block `kb` of the A rows m0.. and B rows
/// n0.. of this tile into one stage. 256 rows x 8 chunks of 16 bytes, 8 per
/// thread; consecutive threads take consecutive chunks of a row (coalesced).
/// Chunks outside A, B or K are zeros (K is a multiple of 16, so a chunk is
/// either wholly inside or wholly outside).
__device__ __forceinline__ void load_stage(std::uint8_t* stage, const Fp8Gemm& p, int m0, int n0, int kb) {
  constexpr int kChunksPerRow = BLOCK_K / 16;
  const int k0 = kb * BLOCK_K;
  // Not unrolled: unrolled, the compiler keeps 8 source addresses alive
  // through the whole main loop, and with 128 accumulators per thread that
  // pushes it past 255 registers (spills). One loop counter is cheaper.
#pragma unroll 1
  for (int i = 0; i < (BLOCK_M + BLOCK_N) * kChunksPerRow / kThreads; ++i) {
    const int chunk = threadIdx.x + i * kThreads;
    const int row = chunk / kChunksPerRow;                // 0..255: A rows, then B rows
    const int col = (chunk % kChunksPerRow) * 16;         // byte within the K slice
    const bool is_a = row < BLOCK_M;
    const int global_row = is_a ? m0 + row : n0 + (row - BLOCK_M);
    std::uint8_t* dst = stage + row * kRowBytes + col;
    if (global_row < (is_a ? p.m : p.n) && k0 + col < p.k) {
      const std::uint8_t* src = (is_a ? p.a : p.b) + static_cast<std::size_t>(global_row) * p.k + k0 + col;
      ptx::cp_async_16(dst, src);
    } else {
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    }
  }
}

/// partial += the warp's 64 x 32 piece of (A slice) x (B slice)^T: 4 steps of
/// 32 K, each 4 x 4 mma.sync. Fragment registers come straight from the
/// K-major rows in shared memory (see ptx::mma_m16n8k32_e4m3 for which).
__device__ __forceinline__ void mma_stage(float (&partial)[kMmaM][kMmaN][4], const std::uint8_t* stage, int warp_row,
                                          int warp_col, int g, int t) {
  const std::uint8_t* a_tile = stage;                        // BLOCK_M rows of kRowBytes
  const std::uint8_t* b_tile = stage + BLOCK_M * kRowBytes;  // BLOCK_N rows of kRowBytes
#pragma unroll
  for (int ks = 0; ks < BLOCK_K; ks += 32) {
    std::uint32_t a[kMmaM][4], b[kMmaN][2];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
      // Row g of this 16-row mma tile, at k = ks + 4t; row g + 8 is 8 rows down; k + 16 is 16 bytes on.
      const std::uint8_t* p = a_tile + (warp_row + mi * 16 + g) * kRowBytes + ks + 4 * t;
      a[mi][0] = *reinterpret_cast<const std::uint32_t*>(p);
      a[mi][1] = *reinterpret_cast<const std::uint32_t*>(p + 8 * kRowBytes);
      a[mi][2] = *reinterpret_cast<const std::uint32_t*>(p + 16);
      a[mi][3] = *reinterpret_cast<const std::uint32_t*>(p + 8 * kRowBytes + 16);
    }
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      // Column g of this 8-column mma tile = row g of the B slice.
      const std::uint8_t* q = b_tile + (warp_col + ni * 8 + g) * kRowBytes + ks + 4 * t;
      b[ni][0] = *reinterpret_cast<const std::uint32_t*>(q);
      b[ni][1] = *reinterpret_cast<const std::uint32_t*>(q + 16);
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) ptx::mma_m16n8k32_e4m3(partial[mi][ni], a[mi], b[ni]);
  }
}

__global__ void __launch_bounds__(kThreads, 1) fp8_gemm_mma_sync(Fp8Gemm p) {
#if STEPS_PTX_FP8_MMA // FP8 mma.sync: sm_89 and later (steps/ptx.cuh)
  extern __shared__ __align__(128) std::uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;                  // the PTX fragment coordinates
  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  const int warp_row = (warp / kWarpsN) * WARP_M;        // within the tile
  const int warp_col = (warp % kWarpsN) * WARP_N;
  const int num_kb = k_blocks(p.k);                      // ceil: the last block may be partial

  float total[kMmaM][kMmaN][4] = {};                     // FP32, across all K blocks

  // Prologue: K block 0 on its way.
  load_stage(smem, p, m0, n0, 0);
  ptx::cp_async_commit();

  // Main loop: one K block (= one scale block) per iteration.
  for (int kb = 0; kb < num_kb; ++kb) {
    if (kb + 1 < num_kb) load_stage(smem + ((kb + 1) % kStages) * kStageBytes, p, m0, n0, kb + 1);
    ptx::cp_async_commit();     // (an empty group in the last iteration keeps the count uniform)
    ptx::cp_async_wait<1>();    // everything but the newest group has landed: block kb is here
    __syncthreads();            // ... for every thread's copies

    float partial[kMmaM][kMmaN][4] = {};                 // a fresh accumulator per K block
    mma_stage(partial, smem + (kb % kStages) * kStageBytes, warp_row, warp_col, g, t);

    // Promotion: scale the block's sums and add them in FP32. The scales of
    // this K block: the tile's B block, and rows g and g + 8 of each mma tile
    // (0 for rows past M, whose partial sums are 0 anyway).
    const float sb = p.sb.at(n0, kb);
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_row + mi * 16 + g + 8 * h;
        const float s = (row < p.m ? p.sa.at(row, kb) : 0.0f) * sb;
#pragma unroll
        for (int ni = 0; ni < kMmaN; ++ni) {
          total[mi][ni][2 * h] += s * partial[mi][ni][2 * h];         // column 2t
          total[mi][ni][2 * h + 1] += s * partial[mi][ni][2 * h + 1]; // column 2t + 1
        }
      }

    __syncthreads(); // everyone is done with this stage before the next iteration refills it
  }

  // Epilogue: d[0], d[1] are row g, columns 2t, 2t + 1; d[2], d[3] row g + 8.
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      const int row = m0 + warp_row + mi * 16 + g;
      const int col = n0 + warp_col + ni * 8 + 2 * t;
      store_pair(p, row, col, total[mi][ni][0], total[mi][ni][1]);
      store_pair(p, row + 8, col, total[mi][ni][2], total[mi][ni][3]);
    }
#endif
}

inline void launch(const Fp8Gemm& p, cudaStream_t stream) {
  const int grid_y = steps::ceil_div(p.m, BLOCK_M);
  if (grid_y > 65535) throw std::invalid_argument("v2: M is too large for one grid (at most 8388480 rows)");
  // More than 48 KB of dynamic shared memory must be asked for explicitly.
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_mma_sync, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(p.n, BLOCK_N)), static_cast<unsigned>(grid_y));
  fp8_gemm_mma_sync<<<grid, kThreads, kSmemBytes, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::v2
