// Chapter 11: one C = A * B in BF16 as a problem of the chapter's table:
// inputs A and B, output C, the cuBLAS baseline and the reference C is
// checked against (reference.cuh).
#pragma once

#include "bf16_gemm.cuh"
#include "reference.cuh"

#include "steps/chapter.hpp"
#include "steps/cublas.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <cublas_v2.h>

#include <optional>
#include <string>

namespace ch11 {

/// Inputs A (m x k) and B (k x n) in BF16, output C (m x n) in FP32, and the
/// reference of one C = A * B.
class MatMul {
public:
  MatMul(const steps::Options& opts, steps::Run&)
      : d_(dims(opts)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        a_(steps::checked_elements(d_.m, d_.k, 2)), b_(steps::checked_elements(d_.k, d_.n, 2)),
        c_(steps::checked_elements(d_.m, d_.n)) {
    d_.require_int();
    steps::fill_uniform_bf16_device(reinterpret_cast<std::uint16_t*>(a_.data()), a_.size(), opts.seed, kLo, kHi);
    steps::fill_uniform_bf16_device(reinterpret_cast<std::uint16_t*>(b_.data()), b_.size(), opts.seed + 1, kLo, kHi);
    CUDA_CHECK(cudaDeviceSynchronize());
    ref_.emplace(d_, a_.data(), false, b_.data(), opts.seed);
    // Tensor cores for BF16 with FP32 accumulation (CUBLAS_COMPUTE_32F), and
    // no partial sums rounded to BF16 on the way.
    CUBLAS_CHECK(cublasSetMathMode(cublas_, static_cast<cublasMath_t>(
                                                CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  }

  std::string describe() const {
    auto mib = [](double bytes) { return steps::format_bytes(bytes); };
    return "C = A * B, A and B in BF16, C in FP32 (FP32 accumulation), row-major, M x N x K = " + d_.text() +
           " (A " + mib(2.0 * a_.size()) + ", B " + mib(2.0 * b_.size()) + ", C " + mib(4.0 * c_.size()) + "); " +
           ref_->how();
  }

  steps::Work work() const { return d_.work(); }
  void poison() { c_.poison(); } // NaN everywhere: unwritten elements show
  steps::Comparison check() { return ref_->check(c_); }

  /// cuBLAS is column-major. A row-major matrix read as column-major is its
  /// transpose, so row-major C = A B is column-major C^T = B^T A^T: pass B
  /// first, and swap m and n (chapter 03 does the same in FP32).
  void run_cublas(cudaStream_t stream) {
    const float one = 1.0f, zero = 0.0f;
    const int m = static_cast<int>(d_.m), n = static_cast<int>(d_.n), k = static_cast<int>(d_.k);
    CUBLAS_CHECK(cublasSetStream(cublas_, stream));
    CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b_.data(), CUDA_R_16BF, n, a_.data(),
                              CUDA_R_16BF, k, &zero, c_.data(), CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  }
  Gemm gemm() {
    return {static_cast<int>(d_.m), static_cast<int>(d_.n), static_cast<int>(d_.k), a_.data(), b_.data(), c_.data()};
  }

private:
  Dims d_;
  steps::DeviceBuffer<bf16> a_, b_;
  steps::GuardedBuffer<float> c_; // guard zones catch stores outside C
  steps::CublasHandle cublas_;
  std::optional<Reference> ref_;
};

} // namespace ch11
