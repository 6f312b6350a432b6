// The shape of a matrix product C (M x N) = A (M x K) * B (K x N) as the
// GEMM chapters read it from the command line, and the work it does.
#pragma once

#include "steps/cli.hpp"
#include "steps/summary.hpp"

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace steps {

/// M x N x K of a product (--m, --n, --k, each defaulting to --size) and the
/// bytes of one element of A, B and C.
struct GemmDims {
  std::int64_t m = 0, n = 0, k = 0;
  int a_bytes = 4, b_bytes = 4, c_bytes = 4;

  static GemmDims from(const Options& opts, int a_bytes, int b_bytes, int c_bytes) {
    return {dimension(opts, "--m"), dimension(opts, "--n"), dimension(opts, "--k"), a_bytes, b_bytes, c_bytes};
  }
  /// Throws when a dimension does not fit the int that cuBLAS and the kernels take.
  void require_int() const {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
      throw std::invalid_argument("every dimension must be at most " + std::to_string(INT_MAX) +
                                  " (cuBLAS and the kernels index with int)");
  }
  /// 2 M N K flops (a multiply and an add per term) on each matrix's bytes, once.
  Work work() const {
    const double md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
    return {a_bytes * md * kd + b_bytes * kd * nd + c_bytes * md * nd, 2.0 * md * nd * kd};
  }
  std::string text() const { return std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k); }
};

/// The settings the GEMM chapters (03, 11) share: an N x N x N product at
/// --size 4096 (--m, --n, --k override single dimensions), 10 timed runs
/// after 2 warm-ups, TFLOP/s, against the row "cublas".
inline void gemm_chapter_defaults(ChapterInfo& i) {
  i.metric = Metric::flops;
  i.default_size = 4096;
  i.size_help = "matrix side: an N x N x N product (--m, --n, --k override single dimensions)";
  i.default_iters = 10;
  i.default_warmup = 2;
  i.work_note = "TFLOP/s: 2 * M * N * K floating-point operations (a multiply and an add per term) per second, "
                "1 TFLOP = 1e12.";
  i.baseline = "cublas";
  i.int_options.push_back({"--m", "M", "rows of A and C; 0: use --size", 0, 0, INT_MAX});
  i.int_options.push_back({"--n", "N", "columns of B and C; 0: use --size", 0, 0, INT_MAX});
  i.int_options.push_back({"--k", "K", "columns of A, rows of B (the length of each dot product); 0: use --size",
                           0, 0, INT_MAX});
}

} // namespace steps
