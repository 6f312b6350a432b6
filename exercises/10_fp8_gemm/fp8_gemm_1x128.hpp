/// @file fp8_gemm_1x128.hpp
/// @brief Exercise 10: the function you implement in fp8_gemm_1x128.cu.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

namespace ex10 {

/// K elements that share one scale.
constexpr int kScaleBlock = 128;

/// D = A * B^T with 1 x 128 scales on both operands, on the GPU, in `stream`:
///
///     D(r, c) = sum over kb of scale_a[r * kbs + kb] * scale_b[c * kbs + kb]
///                            * sum over k in block kb of A(r, k) * B(c, k)
///
/// with kbs = ceil(k / 128) K blocks (the last one may be partial) and k in
/// block kb meaning kb * 128 <= k < min(k, (kb + 1) * 128).
///
/// - a: m x k E4M3, row-major (K-major); b: n x k E4M3, row-major (K-major);
///   both 16-byte aligned.
/// - scale_a: m x kbs FP32, row-major (one scale per row of A and K block);
///   scale_b: n x kbs FP32, row-major (one per row of B, i.e. per column of
///   D, and K block).
/// - d: m x n BF16, row-major; every element written once, nothing outside.
/// - m >= 1, n >= 1, k >= 16 and a multiple of 16; A (m x k), B (n x k) and
///   D (m x n) each have fewer than 2^31 elements, so every offset fits in an
///   int (throws std::invalid_argument otherwise).
///
/// Accumulates each K block's products on the tensor cores and adds the
/// scaled block sums in FP32 ("promotion"). Returns without waiting for the
/// GPU; reports a bad launch by throwing (CUDA_CHECK_LAUNCH).
void fp8_gemm_1x128(int m, int n, int k, const __nv_fp8_e4m3* a, const float* scale_a, const __nv_fp8_e4m3* b,
                    const float* scale_b, __nv_bfloat16* d, cudaStream_t stream);

/// A kernel compiled with your code (given.cuh defines it, in your .cu file):
/// the grader and the chapter's `yours` row ask the CUDA runtime which code
/// of it runs on this GPU, so that a build whose code for this GPU compiled
/// mma.sync on FP8 out is skipped with what to rebuild for, not run empty.
const void* fp8_gemm_code_probe();

} // namespace ex10
