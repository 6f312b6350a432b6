// Exercise 10 (solution): an FP8 GEMM with 1 x 128 scales on both operands.
//
// Read chapters/10_fp8_gemm first (v2_mma_sync.cuh is the starting point),
// then exercises/10_fp8_gemm/README.md.
// Grade with: ./tutorial grade 10        Hints: ./tutorial hint 10
//
// The chapter's v2 has one B scale per 128 x 128 block, so a 128-wide tile
// of D needs one B scale per K block. Here B has one scale per row (= per
// column of D), so every accumulator of a thread may need its own pair of
// scales: the promotion has to know which row and column each accumulator
// register belongs to.
#include "fp8_gemm_1x128.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ex10 {
// Named (not anonymous) so that a helper the stub does not call yet draws no
// "never referenced" warning.
namespace detail {

// ---------------------------------------------------------------------------
// Given: the tiles, the shared-memory pipeline and the tensor-core steps.
// Same as the chapter's v2: 128 x 128 tiles of D, 256 threads = 8 warps of
// 64 x 32, K in slices of 128 bytes (= one scale block), double-buffered.
// ---------------------------------------------------------------------------

constexpr int BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 128;
constexpr int kWarpsN = 4;                      // warps 0-3 take rows 0-63, warps 4-7 rows 64-127
constexpr int kThreads = 256;
constexpr int WARP_M = 64, WARP_N = 32;
constexpr int kMmaM = WARP_M / 16;              // 4 mma tiles (16 rows each) down
constexpr int kMmaN = WARP_N / 8;               // 4 mma tiles (8 columns each) across
constexpr int kRowBytes = BLOCK_K + 16;         // padded: conflict-free fragment loads
constexpr int kStageBytes = (BLOCK_M + BLOCK_N) * kRowBytes;
constexpr int kStages = 2;
constexpr int kSmemBytes = kStages * kStageBytes;
static_assert(BLOCK_K == kScaleBlock, "one K slice is one scale block");

/// Accumulators of one warp: [mma tile down][mma tile across][4 registers].
/// Register j of tile (mi, ni) of lane (g = lane / 4, t = lane % 4) holds
///   j = 0: row mi * 16 + g,     column ni * 8 + 2t
///   j = 1: row mi * 16 + g,     column ni * 8 + 2t + 1
///   j = 2: row mi * 16 + g + 8, column ni * 8 + 2t
///   j = 3: row mi * 16 + g + 8, column ni * 8 + 2t + 1
/// of the warp's 64 x 32 piece (PTX ISA: mma.m16n8k32 fragments).
/// (A typedef: Doxygen 1.9 misreads the `using` form of an array type.)
typedef float Accumulators[kMmaM][kMmaN][4];

__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src) {
  const auto dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem_src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all_but_newest() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

__device__ __forceinline__ void mma_m16n8k32_e4m3(float (&d)[4], const std::uint32_t (&a)[4],
                                                  const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// Starts copying K slice `kb` of A rows m0.. and B rows n0.. into `stage`
/// (A rows first, then B rows, kRowBytes apart); zeros outside A, B or K.
__device__ __forceinline__ void load_stage(std::uint8_t* stage, const std::uint8_t* a, const std::uint8_t* b, int m,
                                           int n, int k, int m0, int n0, int kb) {
  constexpr int kChunksPerRow = BLOCK_K / 16;
  const int k0 = kb * BLOCK_K;
#pragma unroll 1 // unrolled, 8 addresses stay alive in registers: spills with 128 accumulators
  for (int i = 0; i < (BLOCK_M + BLOCK_N) * kChunksPerRow / kThreads; ++i) {
    const int chunk = threadIdx.x + i * kThreads;
    const int row = chunk / kChunksPerRow, col = (chunk % kChunksPerRow) * 16;
    const bool is_a = row < BLOCK_M;
    const int global_row = is_a ? m0 + row : n0 + (row - BLOCK_M);
    std::uint8_t* dst = stage + row * kRowBytes + col;
    if (global_row < (is_a ? m : n) && k0 + col < k)
      cp_async_16(dst, (is_a ? a : b) + static_cast<std::size_t>(global_row) * k + k0 + col);
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
  }
}

/// acc += the warp's piece of (A slice) x (B slice)^T: 4 steps of 32 K.
__device__ __forceinline__ void mma_stage(Accumulators& acc, const std::uint8_t* stage, int warp_row, int warp_col,
                                          int g, int t) {
  const std::uint8_t* a_tile = stage;
  const std::uint8_t* b_tile = stage + BLOCK_M * kRowBytes;
#pragma unroll
  for (int ks = 0; ks < BLOCK_K; ks += 32) {
    std::uint32_t af[kMmaM][4], bf[kMmaN][2];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
      const std::uint8_t* p = a_tile + (warp_row + mi * 16 + g) * kRowBytes + ks + 4 * t;
      af[mi][0] = *reinterpret_cast<const std::uint32_t*>(p);                      // row g,     k 4t..
      af[mi][1] = *reinterpret_cast<const std::uint32_t*>(p + 8 * kRowBytes);      // row g + 8, k 4t..
      af[mi][2] = *reinterpret_cast<const std::uint32_t*>(p + 16);                 // row g,     k 16 + 4t..
      af[mi][3] = *reinterpret_cast<const std::uint32_t*>(p + 8 * kRowBytes + 16); // row g + 8, k 16 + 4t..
    }
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      const std::uint8_t* q = b_tile + (warp_col + ni * 8 + g) * kRowBytes + ks + 4 * t;
      bf[ni][0] = *reinterpret_cast<const std::uint32_t*>(q);                      // column g, k 4t..
      bf[ni][1] = *reinterpret_cast<const std::uint32_t*>(q + 16);                 // column g, k 16 + 4t..
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) mma_m16n8k32_e4m3(acc[mi][ni], af[mi], bf[ni]);
  }
}

__device__ __forceinline__ void zero_accumulators(Accumulators& acc) {
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[mi][ni][j] = 0.0f;
}

// ---------------------------------------------------------------------------
// Yours: promotion, epilogue, K blocks.
// ---------------------------------------------------------------------------

/// total += scale_a(row, kb) * scale_b(col, kb) * partial, for every
/// accumulator register of this thread. row0 / col0: the first row and column
/// of D that this warp covers. Rows past m and columns past n have partial
/// sums of 0 (zero-filled tiles) and no scales: skip their scales.
__device__ __forceinline__ void promote(Accumulators& total, const Accumulators& partial, const float* scale_a,
                                        const float* scale_b, int m, int n, int kbs, int kb, int row0, int col0, int g,
                                        int t) {
  // The B scales of this thread's 2 columns in each of the 4 mma tiles across.
  float sb[kMmaN][2];
#pragma unroll
  for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int col = col0 + ni * 8 + 2 * t + j;
      sb[ni][j] = col < n ? scale_b[static_cast<std::size_t>(col) * kbs + kb] : 0.0f;
    }
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi) {
    // The A scales of this thread's 2 rows (g and g + 8) in mma tile mi.
    float sa[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + mi * 16 + g + 8 * h;
      sa[h] = row < m ? scale_a[static_cast<std::size_t>(row) * kbs + kb] : 0.0f;
    }
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      total[mi][ni][0] += sa[0] * sb[ni][0] * partial[mi][ni][0];
      total[mi][ni][1] += sa[0] * sb[ni][1] * partial[mi][ni][1];
      total[mi][ni][2] += sa[1] * sb[ni][0] * partial[mi][ni][2];
      total[mi][ni][3] += sa[1] * sb[ni][1] * partial[mi][ni][3];
    }
  }
}

/// Writes this thread's results to D as BF16, inside the m x n matrix only.
__device__ __forceinline__ void store_results(const Accumulators& total, __nv_bfloat16* d, int m, int n, int row0,
                                              int col0, int g, int t) {
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int row = row0 + mi * 16 + g + 8 * (j / 2);
        const int col = col0 + ni * 8 + 2 * t + (j % 2);
        if (row < m && col < n) d[static_cast<std::size_t>(row) * n + col] = __float2bfloat16_rn(total[mi][ni][j]);
      }
}

__global__ void __launch_bounds__(kThreads, 1)
    fp8_gemm_1x128_kernel(int m, int n, int k, const std::uint8_t* a, const float* scale_a, const std::uint8_t* b,
                          const float* scale_b, __nv_bfloat16* d, int kbs) {
  extern __shared__ __align__(128) std::uint8_t smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  const int warp_row = (warp / kWarpsN) * WARP_M, warp_col = (warp % kWarpsN) * WARP_N;

  Accumulators total = {};   // FP32, over all K blocks
  Accumulators partial = {}; // one K block, on the tensor cores

  load_stage(smem, a, b, m, n, k, m0, n0, 0);
  cp_async_commit();
  for (int kb = 0; kb < kbs; ++kb) {
    if (kb + 1 < kbs) load_stage(smem + ((kb + 1) % kStages) * kStageBytes, a, b, m, n, k, m0, n0, kb + 1);
    cp_async_commit();
    cp_async_wait_all_but_newest(); // slice kb has landed (this thread's copies) ...
    __syncthreads();                // ... and everyone's

    zero_accumulators(partial);
    mma_stage(partial, smem + (kb % kStages) * kStageBytes, warp_row, warp_col, g, t);
    promote(total, partial, scale_a, scale_b, m, n, kbs, kb, m0 + warp_row, n0 + warp_col, g, t);

    __syncthreads(); // the stage is refilled in the next iteration
  }
  cp_async_wait_all(); // no copy still in flight when the block exits (if the loop never ran)
  store_results(total, d, m, n, m0 + warp_row, n0 + warp_col, g, t);
}

} // namespace detail

void fp8_gemm_1x128(int m, int n, int k, const __nv_fp8_e4m3* a, const float* scale_a, const __nv_fp8_e4m3* b,
                    const float* scale_b, __nv_bfloat16* d, cudaStream_t stream) {
  using namespace detail;
  if (m < 1 || n < 1 || k < 16 || k % 16 != 0)
    throw std::invalid_argument("fp8_gemm_1x128: need m, n >= 1 and k a positive multiple of 16 (got " +
                                std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k) + ")");
  const int kbs = steps::ceil_div(k, kScaleBlock); // K blocks, the last one partial when k % 128 != 0
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_1x128_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(n, BLOCK_N)), static_cast<unsigned>(steps::ceil_div(m, BLOCK_M)));
  fp8_gemm_1x128_kernel<<<grid, kThreads, kSmemBytes, stream>>>(m, n, k, reinterpret_cast<const std::uint8_t*>(a),
                                                                scale_a, reinterpret_cast<const std::uint8_t*>(b),
                                                                scale_b, d, kbs);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex10
