// Chapter 10, version 0: cuBLASLt's FP8 matmul, the vendor baseline.
//
// cuBLASLt is column-major. Our matrices are row-major, and a row-major
// matrix read as column-major is its transpose, so:
//
//   row-major D (M x N, ld N)          is  column-major D^T (N x M, ld N)
//   row-major A (M x K, ld K)          is  column-major A^T (K x M, ld K)
//   row-major B (N x K, ld K)          is  column-major B^T (K x N, ld K)
//
//   D = A * B^T   <=>   D^T = B * A^T = (B^T)^T * (A^T)
//
// In cuBLASLt's names (D = op(A) * op(B)): its "A" is our B, stored K x N
// with ld K and transposed (TRANSA = T), m = N; its "B" is our A, stored
// K x M with ld K, not transposed (TRANSB = N), n = M; k = K; its D is
// N x M with ld N. That is "TN", the only FP8 layout cuBLASLt supports on
// Hopper, with both operands K-major. Every leading dimension and pointer
// must allow 16-byte alignment: K % 16 == 0 (E4M3 rows) and N % 8 == 0
// (BF16 rows of D).
//
// NOTE: per-tensor scales are folded into alpha (alpha = sA * sB, beta = 0).
// Setting CUBLASLT_MATMUL_DESC_A_SCALE_POINTER / B_SCALE_POINTER made every
// heuristic algorithm return CUBLAS_STATUS_NOT_SUPPORTED on our H200
// (cuBLASLt 13.1, TN, BF16 C and D) while the same call without them ran;
// a per-tensor scale is a plain factor on the whole product, so alpha gives
// the same result. cuBLASLt here runs per-tensor scaling only: with
// fine-grained scaling its rows still compute the per-tensor product (and
// are checked against it), as the vendor speed to measure against.
//
// On the H200 at 8192 x 8192 x 4096: 1421 TFLOP/s by default, 1550 with fast accumulation.
#pragma once

#include "fp8_gemm.cuh"

#include "steps/cublas.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"

#include <cublasLt.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace ch10::v0 {

/// Workspace for cuBLASLt: 32 MiB is what NVIDIA recommends on Hopper;
/// cudaMalloc returns 256-byte aligned memory, as cuBLASLt requires.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
/// Heuristic candidates to try; the fastest that runs is kept.
constexpr int kCandidates = 8;

/// Owning cuBLASLt handle (steps::Handle destroys it).
using LtHandle = steps::Handle<cublasLtHandle_t, cublasLtDestroy>;

/// A new cuBLASLt handle.
inline LtHandle make_lt_handle() {
  LtHandle h;
  CUBLAS_CHECK(cublasLtCreate(h.out()));
  return h;
}

/// One FP8 matmul configuration (shape, accumulation mode) with its chosen
/// algorithm: D (m x n, BF16) = alpha * A (m x k, E4M3) * B^T (B n x k, E4M3).
class CublasLtFp8 {
public:
  CublasLtFp8(cublasLtHandle_t lt, int m, int n, int k, bool fast_accum) : lt_(lt), workspace_(kWorkspaceBytes) {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
    // 0 (default): the partial sums are promoted to FP32 periodically; 1: they are not (faster, less precise).
    const std::int8_t fast = fast_accum ? 1 : 0;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    // Layouts as stored (before op), column-major: see the comment at the top.
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, CUDA_R_8F_E4M3, k, n, k)); // our B: K x N, ld K
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, CUDA_R_8F_E4M3, k, m, k)); // our A: K x M, ld K
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_layout_, CUDA_R_16BF, n, m, n));    // our D: N x M, ld N
  }
  ~CublasLtFp8() {
    if (d_layout_) cublasLtMatrixLayoutDestroy(d_layout_);
    if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
    if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }
  CublasLtFp8(const CublasLtFp8&) = delete;
  CublasLtFp8& operator=(const CublasLtFp8&) = delete;

  /// Asks the heuristic for up to kCandidates algorithms, runs each once
  /// untimed and once timed, and keeps the fastest that runs. Writes D.
  void select_algorithm(const std::uint8_t* a, const std::uint8_t* b, float alpha, __nv_bfloat16* d,
                        cudaStream_t stream) {
    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::size_t ws = kWorkspaceBytes;
    cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
    int returned = 0;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                             sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(lt_, desc_, a_layout_, b_layout_, d_layout_, d_layout_, pref, kCandidates,
                                          results, &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    CUBLAS_CHECK(st);

    steps::Event start, stop;
    float best_ms = std::numeric_limits<float>::max();
    for (int i = 0; i < returned; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
      if (matmul(results[i].algo, a, b, alpha, d, stream) != CUBLAS_STATUS_SUCCESS) continue; // not for this problem
      CUDA_CHECK(cudaStreamSynchronize(stream));
      start.record(stream);
      CUBLAS_CHECK(matmul(results[i].algo, a, b, alpha, d, stream));
      stop.record(stream);
      stop.synchronize();
      const float ms = steps::Event::elapsed_ms(start, stop);
      if (ms < best_ms) {
        best_ms = ms;
        algo_ = results[i].algo;
        have_algo_ = true;
      }
    }
    if (!have_algo_)
      throw steps::Error("cuBLASLt", "CUBLAS_STATUS_NOT_SUPPORTED",
                         "none of the " + std::to_string(returned) + " heuristic algorithms runs this FP8 matmul",
                         "CublasLtFp8::select_algorithm", __FILE__, __LINE__);
  }

  /// D = alpha * A * B^T with the chosen algorithm (select_algorithm first).
  void run(const std::uint8_t* a, const std::uint8_t* b, float alpha, __nv_bfloat16* d, cudaStream_t stream) {
    if (!have_algo_) throw std::logic_error("CublasLtFp8::run before select_algorithm");
    CUBLAS_CHECK(matmul(algo_, a, b, alpha, d, stream));
  }

  bool ready() const { return have_algo_; } ///< an algorithm has been chosen

private:
  cublasStatus_t matmul(const cublasLtMatmulAlgo_t& algo, const std::uint8_t* a, const std::uint8_t* b, float alpha,
                        __nv_bfloat16* d, cudaStream_t stream) {
    const float beta = 0.0f;
    // cuBLASLt's A is our B and its B our A (see the top); C is D, with the
    // same descriptor, and beta = 0 so it is never read.
    return cublasLtMatmul(lt_, desc_, &alpha, b, a_layout_, a, b_layout_, &beta, d, d_layout_, d, d_layout_, &algo,
                          workspace_.data(), kWorkspaceBytes, stream);
  }

  cublasLtHandle_t lt_;
  steps::DeviceBuffer<unsigned char> workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool have_algo_ = false;
};

} // namespace ch10::v0
