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
// Scales. cuBLASLt takes them through CUBLASLT_MATMUL_DESC_A_SCALE_POINTER /
// B_SCALE_POINTER (device pointers to FP32), and how it reads them through
// A_SCALE_MODE / B_SCALE_MODE:
//
//   per tensor:  SCALAR_32F (the default): one float each
//   fine:        its A = our B: BLK128x128_32F, one float per 128 x 128 block
//                its B = our A: VEC128_32F, one float per 1 x 128 block
//
// (cuBLASLt's A is our B, so our B's 128 x 128 blocks go to A_SCALE_MODE: the
// pairs BLK x VEC and VEC x BLK are both allowed on Hopper, BLK x BLK is not.)
// Its block-scale tensors are laid out differently from `sa` and `sb`: the
// 1 x 128 scales "outer-dimension-major", i.e. for K block kb the M scales
// of all rows of A are contiguous, so M must be a multiple of 4 (every K
// block's column 16-byte aligned): that is Fp8Gemm::sa_by_kb, which the
// warp-specialized kernels read too; the 128 x 128 scales (lt_scales_of
// below) K-block-major with a row stride rounded up to a multiple of 4
// (cuBLAS documentation, "scaling factors layouts"; a missing padding is
// silently wrong when ceil(K / 128) % 4 != 0, as PyTorch's scaled_mm found:
// pytorch/pytorch pull request 166752).
// Fast accumulation is not available with block scaling.
//
// An earlier draft of this chapter folded the per-tensor scales into alpha
// and said the scale pointers made every algorithm NOT_SUPPORTED on our H200.
// That did not reproduce: it was a misuse in that draft's test (its exact
// call was not kept), not a limit of cuBLASLt. Set as here (the attribute's
// value is the device pointer itself: pass its address and sizeof(void*)),
// cuBLASLt 13.1 runs per-tensor and block scaling on the H200, as measured by
// the course authors; every row here checks its result on every run.
//
// If a cuBLASLt here has no algorithm for a configuration, the row fails
// with one line saying which scale modes and which version; the other rows
// still run.
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
#include <vector>

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

/// How a plan passes the scales (see the top).
enum class LtScales {
  alpha,      ///< per tensor, folded into alpha = sA * sB (no scale pointers)
  per_tensor, ///< per tensor, SCALAR_32F through the scale pointers
  block,      ///< fine: our A VEC128_32F, our B BLK128x128_32F through the scale pointers
};

/// cuBLAS 12.9 brought the Hopper block-scale modes (VEC128_32F,
/// BLK128x128_32F); an older cuBLAS has the per-tensor modes only. "" when
/// this build has them, else why the block-scaled row cannot run (its
/// `unavailable` reason: the row is skipped, the other rows run).
inline std::string lt_block_scales_missing() {
#if CUBLAS_VERSION >= 120900
  return "";
#else
  return "cuBLASLt's block scaling (VEC128_32F, BLK128x128_32F) needs cuBLAS 12.9 or newer; this program was built "
         "with cuBLAS " + std::to_string(CUBLAS_VERSION);
#endif
}

inline const char* lt_scales_name(LtScales s) {
  switch (s) {
    case LtScales::alpha: return "per-tensor scales in alpha";
    case LtScales::per_tensor: return "per-tensor scales (SCALAR_32F scale pointers)";
    case LtScales::block: return "block scales (A_SCALE_MODE BLK128x128_32F for our B, B_SCALE_MODE VEC128_32F for our A)";
  }
  return "?";
}

/// B's fine scales (row-major over the block grid, fp8_gemm.cuh) in
/// cuBLASLt's 128 x 128 block-scale layout, on the host (A's: sa_by_kb):
///   lt[rb * ld + kb] = ours[rb * kbs + kb], ld = kbs rounded up to 4
/// (kbs = ceil(K / 128), `rows` rows of B). The padding of the rows stays zero.
inline std::vector<float> lt_scales_of(const std::vector<float>& ours, int rows, int k) {
  const int kbs = k_blocks(k);
  const int rbs = steps::ceil_div(rows, kScaleBlock), ld = steps::ceil_div(kbs, 4) * 4;
  std::vector<float> lt(static_cast<std::size_t>(rbs) * ld, 0.0f);
  for (int rb = 0; rb < rbs; ++rb)
    for (int kb = 0; kb < kbs; ++kb)
      lt[static_cast<std::size_t>(rb) * ld + kb] = ours[static_cast<std::size_t>(rb) * kbs + kb];
  return lt;
}

/// "cuBLASLt 130100": the version of the library this program runs with.
inline std::string lt_version() { return "cuBLASLt " + std::to_string(cublasLtGetVersion()); }

/// One FP8 matmul configuration (shape, accumulation mode, scales) with its
/// chosen algorithm: D (m x n, BF16) = A (m x k, E4M3) * B^T (B n x k, E4M3),
/// scaled as `scales` says. `sa`, `sb`: device scales of our A and B in
/// cuBLASLt's layout (one float each per tensor; nullptr for LtScales::alpha).
class CublasLtFp8 {
public:
  CublasLtFp8(cublasLtHandle_t lt, int m, int n, int k, bool fast_accum, LtScales scales, const float* sa,
              const float* sb)
      : lt_(lt), scales_(scales), fast_(fast_accum), workspace_(kWorkspaceBytes) {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
    // 0 (default): the partial sums are promoted to FP32 periodically; 1: they are not (faster, less precise).
    const std::int8_t fast = fast_accum ? 1 : 0;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    if (scales != LtScales::alpha) {
      // cuBLASLt's A is our B and its B our A (see the top). The attribute's
      // value is the device pointer: pass its address.
#if CUBLAS_VERSION >= 120900
      const std::int32_t mode_a = scales == LtScales::block ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
                                                             : CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
      const std::int32_t mode_b = scales == LtScales::block ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
                                                             : CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
#else // no block-scale modes: the block row is skipped before it gets here (lt_block_scales_missing)
      if (scales == LtScales::block) throw std::runtime_error(lt_block_scales_missing());
      const std::int32_t mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, mode_b = mode_a;
#endif
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a, sizeof mode_a));
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b, sizeof mode_b));
      const void* a_scales = sb;
      const void* b_scales = sa;
      CUBLAS_CHECK(
          cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scales, sizeof a_scales));
      CUBLAS_CHECK(
          cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scales, sizeof b_scales));
    }
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

  /// Asks the heuristic for up to kCandidates algorithms; runs each that
  /// runs once untimed, then kTimedCalls times back to back, and keeps the
  /// one with the least mean time (not simply the heuristic's first). Writes
  /// D. Throws steps::Error, in one line, when none runs.
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
    if (st != CUBLAS_STATUS_SUCCESS) returned = 0; // reported below, with what was asked for

    steps::Event start, stop;
    float best_ms = std::numeric_limits<float>::max();
    cublasStatus_t last = st;
    for (int i = 0; i < returned; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
      last = matmul(results[i].algo, a, b, alpha, d, stream);
      if (last != CUBLAS_STATUS_SUCCESS) continue; // not for this problem
      CUDA_CHECK(cudaStreamSynchronize(stream));
      start.record(stream);
      for (int c = 0; c < kTimedCalls; ++c) CUBLAS_CHECK(matmul(results[i].algo, a, b, alpha, d, stream));
      stop.record(stream);
      stop.synchronize();
      const float ms = steps::Event::elapsed_ms(start, stop) / kTimedCalls;
      ++runnable_;
      if (ms < best_ms) {
        best_ms = ms;
        algo_ = results[i].algo;
        chosen_ = i;
        have_algo_ = true;
      }
    }
    candidates_ = returned;
    if (!have_algo_)
      throw steps::Error("cuBLASLt", cublasGetStatusName(last),
                         lt_version() + " has no algorithm that runs this FP8 matmul with " +
                             lt_scales_name(scales_) + (fast_ ? ", fast accumulation" : "") + " (" +
                             std::to_string(returned) + " heuristic candidates): the row is not verified",
                         "CublasLtFp8::select_algorithm", __FILE__, __LINE__);
    // The chosen candidate again, last: D holds its result.
    CUBLAS_CHECK(matmul(algo_, a, b, alpha, d, stream));
  }

  /// D = A * B^T with the chosen algorithm (select_algorithm first).
  void run(const std::uint8_t* a, const std::uint8_t* b, float alpha, __nv_bfloat16* d, cudaStream_t stream) {
    if (!have_algo_) throw std::logic_error("CublasLtFp8::run before select_algorithm");
    CUBLAS_CHECK(matmul(algo_, a, b, alpha, d, stream));
  }

  bool ready() const { return have_algo_; } ///< an algorithm has been chosen
  int chosen() const { return chosen_; }    ///< its index in the heuristic's list (0 = its first choice)
  int candidates() const { return candidates_; } ///< candidates the heuristic returned
  int runnable() const { return runnable_; }     ///< of those, how many ran

private:
  /// Back-to-back calls per candidate when choosing.
  static constexpr int kTimedCalls = 5;

  cublasStatus_t matmul(const cublasLtMatmulAlgo_t& algo, const std::uint8_t* a, const std::uint8_t* b, float alpha,
                        __nv_bfloat16* d, cudaStream_t stream) {
    const float beta = 0.0f;
    // cuBLASLt's A is our B and its B our A (see the top); C is D, with the
    // same descriptor, and beta = 0 so it is never read.
    return cublasLtMatmul(lt_, desc_, &alpha, b, a_layout_, a, b_layout_, &beta, d, d_layout_, d, d_layout_, &algo,
                          workspace_.data(), kWorkspaceBytes, stream);
  }

  cublasLtHandle_t lt_;
  LtScales scales_;
  bool fast_;
  steps::DeviceBuffer<unsigned char> workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool have_algo_ = false;
  int chosen_ = -1, candidates_ = 0, runnable_ = 0;
};

} // namespace ch10::v0
