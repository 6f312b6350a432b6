// Chapter 03: the product's shape and the reference every row is checked
// against, shared by the chapter's problem (main.cu) and your exercise's row
// (yours.cuh).
//
// For small problems the reference is an FP64 CPU product of every element.
// For large ones that would take minutes, so cuBLAS computes the product once
// up front, its result is checked in FP64 on a few hundred elements, and
// every row is compared with it element by element.
#pragma once

#include "tolerance.hpp"

#include "steps/cli.hpp"
#include "steps/cublas.hpp"
#include "steps/gemm_dims.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/summary.hpp"

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ch03 {

/// Up to this many multiply-adds, the reference is a full FP64 CPU product.
constexpr double kFullCheckLimit = double(1 << 28);
/// Elements of the cuBLAS result checked in FP64 beyond that (plus 4 corners).
constexpr int kSpotChecks = 256;

/// M x N x K of the product, FP32 A, B and C (steps/gemm_dims.hpp).
using Dims = steps::GemmDims;
inline Dims dims(const steps::Options& opts) { return Dims::from(opts, 4, 4, 4); }

/// A cuBLAS handle in plain FP32 (CUBLAS_DEFAULT_MATH: no TF32 tensor cores).
inline steps::CublasHandle fp32_cublas() {
  steps::CublasHandle h;
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  return h;
}

/// Row-major, packed C = A * B with cuBLAS. cuBLAS is column-major. A
/// row-major matrix read as column-major is its transpose, so row-major
/// C = A B is column-major C^T = B^T A^T: pass B first, and swap m and n.
inline void cublas_sgemm(cublasHandle_t h, const Dims& d, const float* a, const float* b, float* c,
                         cudaStream_t stream) {
  const float one = 1.0f, zero = 0.0f;
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  CUBLAS_CHECK(cublasSetStream(h, stream));
  CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n));
}

/// The reference of one product C = A * B (A m x k, B k x n, row-major,
/// packed), and the check of a result against it.
class Reference {
public:
  /// a, b: the inputs on the device; a_host, b_host: the same values on the host.
  Reference(const Dims& d, const float* a, const float* b, const std::vector<float>& a_host,
            const std::vector<float>& b_host, std::uint64_t seed)
      : d_(d), full_(static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k) <=
                     kFullCheckLimit) {
    if (full_) {
      compute_full(a_host, b_host);
      return;
    }
    // The vendor result, once.
    const steps::CublasHandle cublas = fp32_cublas();
    steps::DeviceBuffer<float> c(steps::checked_elements(d.m, d.n));
    cublas_sgemm(cublas, d, a, b, c.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    cublas_host_ = c.to_host();
    spot_check_cublas(a_host, b_host, seed);
  }

  /// How results are checked (for the problem's describe()).
  std::string how() const {
    return full_ ? std::string("checked against an FP64 CPU product")
                 : "checked against cuBLAS, itself checked in FP64 at 4 corners and " + std::to_string(kSpotChecks) +
                       " random elements";
  }

  /// C (m x n, packed, in a guarded buffer) against the reference.
  steps::Comparison check(const steps::GuardedBuffer<float>& c) {
    const steps::Comparison guards = c.check_guards();
    if (!guards.ok) return guards;
    c.download(got_);
    const steps::Tolerance tol = fp32_dot_tolerance(d_.k);
    steps::Comparison r = full_ ? steps::compare(got_.data(), want_.data(), got_.size(), tol)
                                : steps::compare(got_, cublas_host_, tol);
    r.row_length = static_cast<std::size_t>(d_.n); // report the first wrong element as (row, column)
    return r;
  }

  /// The cuBLAS row: its result, and whether cuBLAS's reference itself
  /// passed the FP64 spot check (a cuBLAS row compared with cuBLAS's own
  /// result would pass whatever cuBLAS computed).
  steps::Comparison check_vendor(const steps::GuardedBuffer<float>& c) {
    if (!full_ && !spot_.ok) return spot_;
    return check(c);
  }

private:
  // Every element, in FP64: row r of C accumulates A(r, i) * row i of B.
  void compute_full(const std::vector<float>& a, const std::vector<float>& b) {
    const std::size_t m = d_.m, n = d_.n, k = d_.k;
    want_.assign(m * n, 0.0);
    for (std::size_t r = 0; r < m; ++r) {
      double* w = &want_[r * n];
      for (std::size_t i = 0; i < k; ++i) {
        const double av = a[r * k + i];
        const float* b_row = &b[i * n];
        for (std::size_t j = 0; j < n; ++j) w[j] += av * b_row[j];
      }
    }
  }

  // cuBLAS's result at the four corners and kSpotChecks random elements,
  // against FP64 dot products.
  void spot_check_cublas(const std::vector<float>& a, const std::vector<float>& b, std::uint64_t seed) {
    const std::size_t m = d_.m, n = d_.n, k = d_.k;
    std::vector<std::size_t> at = {0, n - 1, (m - 1) * n, m * n - 1};
    for (int s = 0; s < kSpotChecks; ++s)
      at.push_back(steps::splitmix64(seed ^ (0xC0FFEEull + 2 * s)) % m * n + steps::splitmix64(seed + 2 * s + 1) % n);
    std::vector<float> got;
    std::vector<double> want;
    for (const std::size_t e : at) {
      const std::size_t r = e / n, col = e % n;
      double sum = 0;
      for (std::size_t i = 0; i < k; ++i) sum += static_cast<double>(a[r * k + i]) * b[i * n + col];
      want.push_back(sum);
      got.push_back(cublas_host_[e]);
    }
    spot_ = steps::compare(got.data(), want.data(), got.size(), fp32_dot_tolerance(d_.k));
    if (!spot_.ok) spot_.first_bad = at[spot_.first_bad]; // report it as an element of C
    spot_.row_length = n;
  }

  Dims d_;
  bool full_;
  std::vector<double> want_;       // full check: the FP64 product
  std::vector<float> cublas_host_; // otherwise: cuBLAS's result...
  steps::Comparison spot_;         // ...and how it fared in FP64
  std::vector<float> got_;         // reused between checks
};

} // namespace ch03
