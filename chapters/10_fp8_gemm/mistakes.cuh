// Chapter 10: the classic mistakes of scaled FP8 GEMMs, on purpose. Run them with
//   ch10_fp8_gemm --mistakes
// and watch the check catch each one (with the default fine-grained scales
// and a K that is not a multiple of 128). Both are version 1 with one line
// changed, so that the bug is the only difference.
#pragma once

#include "fp8_gemm.cuh"
#include "v1_naive.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"

namespace ch10::mistakes {

enum class Bug {
  scale_after_k,    ///< sums all of K, then applies the scales of K block 0 once
  k_tail_dropped,   ///< K / 128 blocks instead of ceil(K / 128): the partial last block is skipped
};

template <Bug kBug>
__global__ void fp8_gemm_naive_broken(Fp8Gemm p) {
  const int col = blockIdx.x * v1::kBlockX + threadIdx.x;
  const int row = blockIdx.y * v1::kBlockY + threadIdx.y;
  if (row >= p.m || col >= p.n) return;
  const std::uint8_t* a_row = p.a + static_cast<std::size_t>(row) * p.k;
  const std::uint8_t* b_row = p.b + static_cast<std::size_t>(col) * p.k;
  if constexpr (kBug == Bug::scale_after_k) {
    // Mistake: one sum over all of K, scaled once. Right only when every K
    // block has the same scales (per-tensor scaling).
    float sum = 0.0f;
    for (int k = 0; k < p.k; k += 16)
      sum = dot16_e4m3(*reinterpret_cast<const uint4*>(a_row + k), *reinterpret_cast<const uint4*>(b_row + k), sum);
    p.d[static_cast<std::size_t>(row) * p.n + col] = __float2bfloat16_rn(p.sa.at(row, 0) * p.sb.at(col, 0) * sum);
  } else {
    float total = 0.0f;
    for (int kb = 0; kb < p.k / kScaleBlock; ++kb) { // mistake: should be k_blocks(p.k), rounded up
      float partial = 0.0f;
      for (int k = kb * kScaleBlock; k < (kb + 1) * kScaleBlock; k += 16)
        partial = dot16_e4m3(*reinterpret_cast<const uint4*>(a_row + k), *reinterpret_cast<const uint4*>(b_row + k),
                             partial);
      total += p.sa.at(row, kb) * p.sb.at(col, kb) * partial;
    }
    p.d[static_cast<std::size_t>(row) * p.n + col] = __float2bfloat16_rn(total);
  }
}

template <Bug kBug>
void launch(const Fp8Gemm& p, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(p.n, v1::kBlockX)),
                  static_cast<unsigned>(steps::ceil_div(p.m, v1::kBlockY)));
  fp8_gemm_naive_broken<kBug><<<grid, dim3(v1::kBlockX, v1::kBlockY), 0, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::mistakes
