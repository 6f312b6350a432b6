// Chapter 10: a control row: the same product in BF16 on cuBLAS.
//
// The chapter's quantized inputs, dequantized (x' = scale * decode(q), in
// FP32) and rounded to BF16, multiplied by cuBLAS with FP32 accumulation into
// BF16 D. It shows what the FP8 versions buy over the 16-bit tensor cores on
// the same shape (dense BF16 runs at half the FP8 rate on Hopper). It is not
// the same problem to the last bit: rounding s * q to BF16 (8 significant
// bits) changes each input by up to 2^-8 of itself, so it is checked with a
// wider bound (gamma_bf16_inputs in reference.hpp) and shown as a reference
// row, never ranked. The BF16 copies are made once, untimed.
#pragma once

#include "fp8_gemm.cuh"
#include "quantize.cuh"

#include "steps/cublas.hpp"
#include "steps/error.hpp"
#include "steps/memory.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>

namespace ch10::control {

/// out[i] = bf16(in[i]), round to nearest even.
__global__ void to_bf16_kernel(const float* in, std::size_t count, __nv_bfloat16* out) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}

/// The BF16 inputs and a cuBLAS handle; run() computes D = A' * B'^T.
class CublasBf16 {
public:
  /// Dequantizes `p`'s A and B and rounds them to BF16 (default stream, synchronised).
  explicit CublasBf16(const Fp8Gemm& p)
      : m_(p.m), n_(p.n), k_(p.k), a_(static_cast<std::size_t>(p.m) * p.k), b_(static_cast<std::size_t>(p.n) * p.k) {
    {
      steps::DeviceBuffer<float> tmp(std::max(a_.size(), b_.size()));
      dequantize(p.a, p.m, p.k, p.sa, false, tmp.data());
      to_bf16_kernel<<<4096, 256>>>(tmp.data(), a_.size(), a_.data());
      CUDA_CHECK_LAUNCH();
      dequantize(p.b, p.n, p.k, p.sb, false, tmp.data());
      to_bf16_kernel<<<4096, 256>>>(tmp.data(), b_.size(), b_.data());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    // Tensor cores for BF16 with FP32 accumulation (CUBLAS_COMPUTE_32F), and
    // no split-K partial sums rounded to BF16 on the way (reduced-precision
    // reductions would break the bound of gamma_bf16_inputs).
    CUBLAS_CHECK(cublasSetMathMode(cublas_, static_cast<cublasMath_t>(
                                                CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  }

  /// D (m x n, BF16, row-major) = A' (m x k) * B'^T (B' n x k): column-major
  /// D^T = B' A'^T, as in v0_cublaslt.cuh (B' read transposed: "TN").
  void run(__nv_bfloat16* d, cudaStream_t stream) {
    CUBLAS_CHECK(cublasSetStream(cublas_, stream));
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, n_, m_, k_, &one, b_.data(), CUDA_R_16BF, k_,
                              a_.data(), CUDA_R_16BF, k_, &zero, d, CUDA_R_16BF, n_, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  }

private:
  int m_, n_, k_;
  steps::DeviceBuffer<__nv_bfloat16> a_, b_;
  steps::CublasHandle cublas_;
};

} // namespace ch10::control
