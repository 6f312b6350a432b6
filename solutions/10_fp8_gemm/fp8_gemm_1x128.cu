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
#include "given.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstddef>
#include <cstdint>

namespace ex10 {
namespace detail {

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
    cp_async_wait<1>(); // slice kb has landed (this thread's copies) ...
    __syncthreads();    // ... and everyone's

    zero_accumulators(partial);
    mma_stage(partial, smem + (kb % kStages) * kStageBytes, warp_row, warp_col, g, t);
    promote(total, partial, scale_a, scale_b, m, n, kbs, kb, m0 + warp_row, n0 + warp_col, g, t);

    __syncthreads(); // the stage is refilled in the next iteration
  }
  cp_async_wait<0>(); // no copy still in flight when the block exits (if the loop never ran)
  store_results(total, d, m, n, m0 + warp_row, n0 + warp_col, g, t);
}

} // namespace detail

void fp8_gemm_1x128(int m, int n, int k, const __nv_fp8_e4m3* a, const float* scale_a, const __nv_fp8_e4m3* b,
                    const float* scale_b, __nv_bfloat16* d, cudaStream_t stream) {
  using namespace detail;
  check_arguments(m, n, k);
  const int kbs = steps::ceil_div(k, kScaleBlock); // K blocks, the last one partial when k % 128 != 0
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_1x128_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(n, BLOCK_N)), static_cast<unsigned>(steps::ceil_div(m, BLOCK_M)));
  fp8_gemm_1x128_kernel<<<grid, kThreads, kSmemBytes, stream>>>(m, n, k, reinterpret_cast<const std::uint8_t*>(a),
                                                                scale_a, reinterpret_cast<const std::uint8_t*>(b),
                                                                scale_b, d, kbs);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex10
