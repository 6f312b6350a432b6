// Chapter 03: shared-memory tiling, on the FP32 matrix multiply C = A * B.
//
// A matrix multiply does 2 * M * N * K floating-point operations on
// 4 * (M * K + K * N + M * N) bytes: at 4096^3 that is 683 FLOP per byte, so
// it could run at the arithmetic limit, if every byte were fetched once. The
// naive kernel instead fetches two floats per multiply-add. Each version
// below reuses what it loads more (shared-memory tiles, then registers) and
// spends fewer instructions moving it, and the last ones run close to cuBLAS:
//
//   v1 naive            one thread per C element, warps walk down the rows
//   v2 naive_coalesced  the same, warps walk along the rows
//   v3 tiled_16/32      TILE x TILE tiles of A and B in shared memory
//   v4 blocktile_1d     64 x 64 tiles, 8 results per thread
//   v5 blocktile_2d     128 x 128 tiles, 8 x 8 results per thread
//   v6 vectorized       float4 copies, A transposed in shared memory
//   v7 warptile         64 x 32 warp tiles, conflict-free shared loads
//   v8 double_buffer    the next slice loads while this one is computed
//
// Verification: for small problems every version (and cuBLAS) is compared
// with an FP64 CPU product. For large ones that would take minutes, so cuBLAS
// runs once up front, its result is checked in FP64 on a few hundred random
// elements, and every version is compared with it element by element.
//
// Run: ./tutorial run 03    (or build/bin/ch03_tiling --help)
#include "gemm.cuh"
#include "v1_naive.cuh"
#include "v2_naive_coalesced.cuh"
#include "v3_tiled.cuh"
#include "v4_blocktile_1d.cuh"
#include "v5_blocktile_2d.cuh"
#include "v6_vectorized.cuh"
#include "v7_warptile.cuh"
#include "v8_double_buffer.cuh"

#include "steps/chapter.hpp"
#include "steps/cublas.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#if STEPS_WITH_EXERCISE
#include "sgemm_nt.hpp"
#endif

#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ch03 {

constexpr float kLo = -1.0f, kHi = 1.0f; // inputs are uniform in [kLo, kHi): rms 1 / sqrt(3)

/// Up to this many multiply-adds, the reference is a full FP64 CPU product.
constexpr double kFullCheckLimit = double(1 << 28);
/// Elements of the cuBLAS result checked in FP64 beyond that (plus 4 corners).
constexpr int kSpotChecks = 256;

/// How far an FP32 result may be from another FP32 result of the same
/// product (or from the exact one). Each element sums k products one after
/// the other; each addition rounds by up to u = 2^-24 of the running sum,
/// whose size after i terms is about s * sqrt(i) (s = rms(a) * rms(b) = 1/3
/// for our inputs). These k errors add up like a random walk, to a standard
/// deviation of about u * s * k / sqrt(6) for one result and u * s * k /
/// sqrt(3) for the difference of two. The bound per element is 8 * u * s * k,
/// about 14 of those standard deviations: a correct kernel never fails it
/// (16 million elements at 4096^3 reach about 5.5), while a single wrong
/// product, of size ~ s, is far larger. The relative L2 error of the whole
/// matrix gets the same walk divided by |C| ~ s * sqrt(k): bound 8 * u * sqrt(k).
steps::Tolerance gemm_tolerance(std::int64_t k) {
  const double u = std::ldexp(1.0, -24), s = 1.0 / 3.0, kd = static_cast<double>(k);
  return {8.0 * u * s * kd, 0.0, 8.0 * u * std::sqrt(kd)};
}

/// Elements of a rows x cols matrix, or OutOfMemory when the count overflows.
std::size_t elements(std::int64_t rows, std::int64_t cols) {
  const auto limit = static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max() / sizeof(float));
  const auto r = static_cast<std::uint64_t>(rows), c = static_cast<std::uint64_t>(cols);
  if (r != 0 && c > limit / r)
    throw steps::OutOfMemory("a " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " float matrix does not fit in memory (its byte count overflows; use a smaller --size)");
  return static_cast<std::size_t>(r * c);
}

std::int64_t dimension(const steps::Options& opts, const char* name) {
  const std::int64_t v = opts.get(name);
  return v != 0 ? v : opts.size;
}

/// Inputs, output, cuBLAS reference and CPU checks of one run of the chapter.
class MatMul {
public:
  MatMul(const steps::Options& opts, const steps::DeviceInfo&)
      : m_(dimension(opts, "--m")), n_(dimension(opts, "--n")), k_(dimension(opts, "--k")),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        a_(elements(m_, k_)), b_(elements(k_, n_)), c_(elements(m_, n_)), ref_(elements(m_, n_))
#if STEPS_WITH_EXERCISE
        , bt_(elements(n_, k_))
#endif
  {
    if (m_ > INT_MAX || n_ > INT_MAX || k_ > INT_MAX)
      throw std::invalid_argument("every dimension must be at most " + std::to_string(INT_MAX) +
                                  " (cuBLAS and the kernels index with int)");
    steps::fill_uniform_device(a_.data(), a_.size(), opts.seed, kLo, kHi);
    steps::fill_uniform_device(b_.data(), b_.size(), opts.seed + 1, kLo, kHi);
    CUDA_CHECK(cudaDeviceSynchronize());
    a_host_ = a_.to_host();
    b_host_ = b_.to_host();

    // The vendor result, once, in FP32 without tensor cores.
    CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
    run_cublas(ref_.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    ref_host_ = ref_.to_host();

    full_check_ = static_cast<double>(m_) * static_cast<double>(n_) * static_cast<double>(k_) <= kFullCheckLimit;
    if (full_check_)
      compute_full_reference();
    else
      spot_check_cublas(opts.seed);

#if STEPS_WITH_EXERCISE
    // Your exercise multiplies by B stored transposed (n x k).
    std::vector<float> bt(bt_.size());
    for (std::size_t i = 0; i < static_cast<std::size_t>(k_); ++i)
      for (std::size_t j = 0; j < static_cast<std::size_t>(n_); ++j) bt[j * k_ + i] = b_host_[i * n_ + j];
    bt_.copy_from_host(bt);
#endif
  }

  std::string describe() const {
    auto mib = [](std::size_t count) { return steps::format_bytes(4.0 * static_cast<double>(count)); };
    return "C = A * B in FP32, row-major, M x N x K = " + std::to_string(m_) + " x " + std::to_string(n_) + " x " +
           std::to_string(k_) + " (A " + mib(a_.size()) + ", B " + mib(b_.size()) + ", C " + mib(c_.size()) +
           "); " +
           (full_check_ ? std::string("checked against an FP64 CPU product")
                        : "checked against cuBLAS, itself checked in FP64 at 4 corners and " +
                              std::to_string(kSpotChecks) + " random elements");
  }

  steps::Work work(const std::string&) const {
    const double m = static_cast<double>(m_), n = static_cast<double>(n_), k = static_cast<double>(k_);
    return {4.0 * (m * k + k * n + m * n), 2.0 * m * n * k}; // each matrix once; one multiply + one add per term
  }

  void reset(const std::string&) { c_.poison(); } // NaN everywhere: unwritten elements show

  steps::Comparison check(const std::string& name) const {
    const steps::Comparison guards = c_.check_guards();
    if (!guards.ok) return guards;
    if (name == "cublas" && !full_check_ && !spot_.ok) return spot_;
    const std::vector<float> got = c_.download();
    steps::Comparison r = full_check_ ? steps::compare(got.data(), want_.data(), got.size(), gemm_tolerance(k_))
                                      : steps::compare(got, ref_host_, gemm_tolerance(k_));
    r.row_length = static_cast<std::size_t>(n_); // report the first wrong element as (row, column)
    return r;
  }

  /// cuBLAS is column-major. A row-major matrix read as column-major is its
  /// transpose, so row-major C = A B is column-major C^T = B^T A^T: pass B
  /// first, and swap m and n.
  void run_cublas(float* c, cudaStream_t stream) const {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSetStream(cublas_, stream));
    CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, n(), m(), k(), &one, b_.data(), n(), a_.data(),
                             k(), &zero, c, n()));
  }

  Gemm gemm() { return {m(), n(), k(), a_.data(), b_.data(), c_.data()}; }
  float* c() { return c_.data(); }
#if STEPS_WITH_EXERCISE
  const float* bt() const { return bt_.data(); }
#endif
  const float* a() const { return a_.data(); }
  int m() const { return static_cast<int>(m_); }
  int n() const { return static_cast<int>(n_); }
  int k() const { return static_cast<int>(k_); }

private:
  // Every element, in FP64: row r of C accumulates A(r, i) * row i of B.
  void compute_full_reference() {
    const std::size_t m = m_, n = n_, k = k_;
    want_.assign(m * n, 0.0);
    for (std::size_t r = 0; r < m; ++r) {
      double* w = &want_[r * n];
      for (std::size_t i = 0; i < k; ++i) {
        const double av = a_host_[r * k + i];
        const float* b_row = &b_host_[i * n];
        for (std::size_t j = 0; j < n; ++j) w[j] += av * b_row[j];
      }
    }
  }

  // cuBLAS's result at the four corners and kSpotChecks random elements,
  // against FP64 dot products.
  void spot_check_cublas(std::uint64_t seed) {
    const std::size_t m = m_, n = n_, k = k_;
    std::vector<std::size_t> at = {0, n - 1, (m - 1) * n, m * n - 1};
    for (int s = 0; s < kSpotChecks; ++s)
      at.push_back(steps::splitmix64(seed ^ (0xC0FFEEull + 2 * s)) % m * n + steps::splitmix64(seed + 2 * s + 1) % n);
    std::vector<float> got;
    std::vector<double> want;
    for (const std::size_t e : at) {
      const std::size_t r = e / n, col = e % n;
      double sum = 0;
      for (std::size_t i = 0; i < k; ++i) sum += static_cast<double>(a_host_[r * k + i]) * b_host_[i * n + col];
      want.push_back(sum);
      got.push_back(ref_host_[e]);
    }
    spot_ = steps::compare(got.data(), want.data(), got.size(), gemm_tolerance(k_));
    if (!spot_.ok) spot_.first_bad = at[spot_.first_bad]; // report it as an element of C
    spot_.row_length = n;
  }

  std::int64_t m_, n_, k_;
  steps::DeviceBuffer<float> a_, b_;
  steps::GuardedBuffer<float> c_; // guard zones catch stores outside C
  steps::DeviceBuffer<float> ref_;
#if STEPS_WITH_EXERCISE
  steps::DeviceBuffer<float> bt_;
#endif
  steps::CublasHandle cublas_;
  std::vector<float> a_host_, b_host_, ref_host_;
  std::vector<double> want_;
  bool full_check_ = false;
  steps::Comparison spot_;
};

using Version = steps::Version<MatMul>;

// The registry: the CLI, the table and the JSON all come from this list.
const std::vector<Version> kVersions = {
    {"cublas", "cuBLAS SGEMM in FP32 (CUBLAS_DEFAULT_MATH: no tensor cores)", steps::Role::baseline,
     [](MatMul& p, cudaStream_t s) { p.run_cublas(p.c(), s); }},
    {"naive", "v1: one thread per element of C, threadIdx.x down the rows (uncoalesced)", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v1::launch(p.gemm(), s); }},
    {"naive_coalesced", "v2: one thread per element of C, threadIdx.x along the rows", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v2::launch(p.gemm(), s); }},
    {"tiled_16", "v3: 16 x 16 tiles of A and B in shared memory, one element per thread", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v3::launch<16>(p.gemm(), s); }},
    {"tiled_32", "v3: 32 x 32 tiles of A and B in shared memory, one element per thread", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v3::launch<32>(p.gemm(), s); }},
    {"blocktile_1d", "v4: 64 x 64 x 8 tiles, 8 elements (one column) per thread", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v4::launch(p.gemm(), s); }},
    {"blocktile_2d", "v5: 128 x 128 x 8 tiles, 8 x 8 elements per thread", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v5::launch(p.gemm(), s); }},
    {"vectorized", "v6: v5 with float4 copies and A transposed in shared memory", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v6::launch(p.gemm(), s); }},
    {"warptile", "v7: v6 with 64 x 32 warp tiles: conflict-free float4 shared loads", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v7::launch(p.gemm(), s); }},
    {"double_buffer", "v8: v7 with two shared buffers: the next slice loads during the math", steps::Role::version,
     [](MatMul& p, cudaStream_t s) { v8::launch(p.gemm(), s); }},
#if STEPS_WITH_EXERCISE
    {"yours", "exercise 03: your tiled C = A * B^T (B given transposed), any shape", steps::Role::yours,
     [](MatMul& p, cudaStream_t s) {
       ex03::sgemm_nt(p.m(), p.n(), p.k(), p.a(), p.k(), p.bt(), p.k(), p.c(), p.n(), s);
     }},
#endif
};

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.number = "03";
  i.binary = "ch03_tiling";
  i.title = "Shared-memory tiling (FP32 matrix multiply)";
  i.summary = "Multiplies two FP32 matrices with eight kernel versions, from one thread per element to "
              "register-blocked, double-buffered tiles, and compares them with cuBLAS SGEMM (no tensor cores).";
  i.metric = steps::Metric::flops;
  // 4096^3: three 64 MiB matrices (with the cuBLAS copy of C, 4x the H200's
  // L2), about 137 GFLOP: long enough to time, short enough for seconds.
  i.default_size = 4096;
  i.size_help = "matrix side: an N x N x N product (--m, --n, --k override single dimensions)";
  i.default_iters = 10;
  i.default_warmup = 2;
  i.work_note = "TFLOP/s: 2 * M * N * K floating-point operations (a multiply and an add per term) per second, "
                "1 TFLOP = 1e12.";
  i.goal = 0.80;
  i.goal_text = ">= 0.80x cuBLAS SGEMM (FP32) at 4096^3";
  i.int_options.push_back({"--m", "M", "rows of A and C; 0: use --size", 0, 0, INT_MAX});
  i.int_options.push_back({"--n", "N", "columns of B and C; 0: use --size", 0, 0, INT_MAX});
  i.int_options.push_back({"--k", "K", "columns of A, rows of B (the length of each dot product); 0: use --size",
                           0, 0, INT_MAX});
  return i;
}

} // namespace ch03

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch03::info(), ch03::kVersions); }
