// Chapter 10: FP8 GEMM on Hopper: scaled FP8 products, from CUDA cores to a
// warp-specialized wgmma pipeline, checked and measured against cuBLASLt.
//
// D (BF16, M x N) = A (E4M3, M x K) * B^T (B: E4M3, N x K), both inputs
// K-major, FP32 accumulation, with per-tensor or fine-grained scales (A:
// 1 x 128, B: 128 x 128; see fp8_gemm.cuh). The inputs are random FP32
// matrices with block-to-block changes of magnitude and a few outliers,
// quantized on the GPU (quantize.cuh; not timed).
//
//   v0 cublaslt / cublaslt_fast  cuBLASLt FP8 matmul (per-tensor scales in alpha),
//                                default and fast accumulation
//   v1 naive                     one thread per element of D, CUDA cores
//   v2 mma_sync                  128 x 128 tiles, mma.sync m16n8k32 E4M3, FP32 promotion per 128 K
//   v3 wgmma                     64 x 128 tiles, TMA + mbarrier, 2 stages, one warpgroup's wgmma
//   v4 warp_specialized          128 x 128 tiles, a TMA producer warpgroup and two wgmma
//                                warpgroups, 6-stage ring, setmaxnreg, persistent
//
// Verification: for small problems every version is compared with an FP64
// CPU product of the quantized inputs. For large ones, cuBLAS SGEMM (FP32,
// no tensor cores) multiplies the dequantized inputs once, is itself checked
// in FP64 on 260 elements, and every version is compared with it. The bound
// each element must meet is derived in reference.hpp (compare_bf16) and
// below (accumulation_gamma).
//
// Run: ./tutorial run 10    (or build/bin/ch10_fp8_gemm --help)
#include "fp8_gemm.cuh"
#include "mistakes.cuh"
#include "quantize.cuh"
#include "reference.hpp"
#include "v0_cublaslt.cuh"
#include "v1_naive.cuh"
#include "v2_mma_sync.cuh"
#include "v3_wgmma.cuh"
#include "v4_warp_specialized.cuh"

#include "steps/chapter.hpp"
#include "steps/cli.hpp"
#include "steps/cublas.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"
#include "steps/report.hpp"

#if STEPS_WITH_EXERCISE
#include "fp8_gemm_1x128.hpp"
#endif

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ch10 {

/// Up to this many multiply-adds, the reference is a full FP64 CPU product.
constexpr double kCpuReferenceLimit = double(1 << 27);
/// Random elements checked in FP64 (plus the 4 corners): the GPU reference's
/// own check and the sample for the quantization error.
constexpr int kSamples = 256;

/// How far a version's FP32 value may be from the exact product, as a
/// fraction gamma of S = sum over k of |sA sB qA qB| (the bound of any
/// summation order's rounding error is proportional to S):
///   - CUDA-core FP32 (v1, mistakes): a chain of at most 128 fused
///     multiply-adds per block (128 roundings of 2^-24), 3 for scaling it,
///     one per block for the total: (128 + 4 + K blocks) * 2^-24.
///   - tensor cores with promotion every 128 K (v2, v3, v4, yours): at most 4
///     mma k32 steps accumulate inside the tensor core, which keeps about 14
///     bits of the aligned sum (DeepSeek-V3, section 3.3.2): about 2^-13 of
///     the sum per step, 2^-11 for 4; twice that as margin: 2^-10.
///   - cuBLASLt: its promotion interval is not documented and fast
///     accumulation does not promote at all (up to K / 32 steps inside the
///     tensor core): 2^-8.
double accumulation_gamma(const std::string& name, int k) {
  if (name == "cublaslt" || name == "cublaslt_fast") return std::ldexp(1.0, -8);
  if (name == "mma_sync" || name == "wgmma" || name == "warp_specialized" || name == "yours")
    return std::ldexp(1.0, -10);
  return (kScaleBlock + 4 + k_blocks(k)) * std::ldexp(1.0, -24);
}

/// Elements of a rows x cols matrix, or OutOfMemory when the count overflows.
std::size_t elements(std::int64_t rows, std::int64_t cols) {
  const auto limit = static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max() / sizeof(float));
  const auto r = static_cast<std::uint64_t>(rows), c = static_cast<std::uint64_t>(cols);
  if (r != 0 && c > limit / r)
    throw steps::OutOfMemory("a " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " matrix does not fit in memory (its byte count overflows; use a smaller --size)");
  return static_cast<std::size_t>(r * c);
}

/// M and N default to --size; K has its own default.
std::int64_t dimension(const steps::Options& opts, const char* name) {
  const std::int64_t v = opts.get(name);
  return v != 0 ? v : opts.size;
}

Scaling scaling_of(const steps::Options& opts) {
  return opts.has("--per-tensor") ? Scaling::per_tensor : Scaling::fine;
}

const char* scaling_name(Scaling s) {
  return s == Scaling::per_tensor ? "per-tensor scales" : "fine-grained scales (A 1 x 128, B 128 x 128)";
}

/// One scaling of A and B on the GPU: codes and scales.
struct DeviceQuantized {
  DeviceQuantized(std::int64_t m, std::int64_t n, std::int64_t k, Scaling s)
      : a(elements(m, k)), b(elements(n, k)),
        sa(OperandScales::count(s, false, static_cast<int>(std::min<std::int64_t>(m, INT_MAX)),
                                static_cast<int>(std::min<std::int64_t>(k, INT_MAX)))),
        sb(OperandScales::count(s, true, static_cast<int>(std::min<std::int64_t>(n, INT_MAX)),
                                static_cast<int>(std::min<std::int64_t>(k, INT_MAX)))) {}
  steps::DeviceBuffer<std::uint8_t> a, b; ///< E4M3 codes
  steps::DeviceBuffer<float> sa, sb;      ///< their scales
};

/// Inputs, outputs, references and checks of one run of the chapter.
class Fp8GemmProblem {
public:
  Fp8GemmProblem(const steps::Options& opts, const steps::DeviceInfo&)
      : m_(dimension(opts, "--m")), n_(dimension(opts, "--n")), k_(opts.get("--k")), scaling_(scaling_of(opts)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        tensor_(m_, n_, k_, Scaling::per_tensor), fine_(m_, n_, k_, Scaling::fine), d_(elements(m_, n_)) {
    if (m_ > INT_MAX || n_ > INT_MAX || k_ > INT_MAX)
      throw std::invalid_argument("every dimension must be at most " + std::to_string(INT_MAX) +
                                  " (cuBLASLt and the kernels index rows with int)");
    const int m = static_cast<int>(m_), n = static_cast<int>(n_), k = static_cast<int>(k_);

    // FP32 inputs (temporary), quantized both ways on the GPU.
    std::vector<float> a32_host, b32_host;
    {
      steps::DeviceBuffer<float> a32(elements(m, k)), b32(elements(n, k));
      steps::DeviceBuffer<unsigned int> amax(1);
      const int outliers = static_cast<int>(opts.get("--outlier-exponent"));
      make_inputs(a32.data(), m, k, MagnitudeModel{opts.seed, 1, 32, true, outliers});
      make_inputs(b32.data(), n, k, MagnitudeModel{opts.seed + 1, kScaleBlock, 16, false, outliers});
      for (DeviceQuantized* q : {&tensor_, &fine_}) {
        const Scaling s = q == &tensor_ ? Scaling::per_tensor : Scaling::fine;
        compute_scales(a32.data(), m, k, s, false, q->sa.data(), amax.data());
        compute_scales(b32.data(), n, k, s, true, q->sb.data(), amax.data());
        quantize(a32.data(), m, k, OperandScales::layout(s, false, k, q->sa.data()), q->a.data());
        quantize(b32.data(), n, k, OperandScales::layout(s, true, k, q->sb.data()), q->b.data());
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      a32_host = a32.to_host();
      b32_host = b32.to_host();
    }
    for (int i = 0; i < 2; ++i) {
      const DeviceQuantized& q = i == 0 ? tensor_ : fine_;
      const Scaling s = i == 0 ? Scaling::per_tensor : Scaling::fine;
      host_a_[i] = HostOperand{m, k, s, false, q.a.to_host(), q.sa.to_host()};
      host_b_[i] = HostOperand{n, k, s, true, q.b.to_host(), q.sb.to_host()};
    }

    // Sampled positions: 4 corners and kSamples random elements of D.
    samples_ = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
    for (int s = 0; s < kSamples; ++s)
      samples_.push_back({static_cast<int>(steps::splitmix64(opts.seed ^ (0xC0FFEEull + 2 * s)) % m),
                          static_cast<int>(steps::splitmix64(opts.seed + 2 * s + 1) % n)});

    check_quantization_on_host(a32_host, b32_host, opts.seed);
    measure_quantization_error(a32_host, b32_host);

    full_cpu_check_ = static_cast<double>(m) * n * static_cast<double>(k) <= kCpuReferenceLimit;
    // cuBLASLt's alpha: the two per-tensor scales.
    alpha_ = host_a_[0].scales[0] * host_b_[0].scales[0];

#if STEPS_WITH_EXERCISE
    // Your exercise takes one scale per row of A and per row of B (column of
    // D) and K block: spell this run's scales out in that form.
    const HostOperand& ha = host_a_[index(scaling_)];
    const HostOperand& hb = host_b_[index(scaling_)];
    std::vector<float> sa_rows(static_cast<std::size_t>(m) * k_blocks(k)), sb_rows(static_cast<std::size_t>(n) * k_blocks(k));
    for (int kb = 0; kb < k_blocks(k); ++kb) {
      for (int r = 0; r < m; ++r) sa_rows[static_cast<std::size_t>(r) * k_blocks(k) + kb] = ha.scale(r, kb);
      for (int c = 0; c < n; ++c) sb_rows[static_cast<std::size_t>(c) * k_blocks(k) + kb] = hb.scale(c, kb);
    }
    ex_sa_ = steps::DeviceBuffer<float>(sa_rows.size());
    ex_sb_ = steps::DeviceBuffer<float>(sb_rows.size());
    ex_sa_.copy_from_host(sa_rows);
    ex_sb_.copy_from_host(sb_rows);
#endif
  }

  std::string describe() const {
    auto pct = [](double v) { return steps::fixed(100 * v, 3) + "%"; };
    return std::string("D (bf16) = A (e4m3) * B^T (e4m3), FP32 accumulation, ") + scaling_name(scaling_) +
           "; M x N x K = " + std::to_string(m_) + " x " + std::to_string(n_) + " x " + std::to_string(k_) + " (A " +
           steps::format_bytes(static_cast<double>(m_) * k_) + ", B " + steps::format_bytes(static_cast<double>(n_) * k_) +
           ", D " + steps::format_bytes(2.0 * static_cast<double>(m_) * n_) + "); checked against " +
           (full_cpu_check_ ? "an FP64 CPU product of the quantized inputs"
                            : "cuBLAS SGEMM (FP32) of the dequantized inputs, itself checked in FP64 on " +
                                  std::to_string(samples_.size()) + " elements") +
           ". Quantization error of D vs the exact product of the FP32 inputs (|error| / |exact| over " +
           std::to_string(samples_.size()) + " sampled elements, median / 90th percentile): per-tensor " +
           pct(quant_error_[0][0]) + " / " + pct(quant_error_[0][1]) + ", fine-grained " + pct(quant_error_[1][0]) +
           " / " + pct(quant_error_[1][1]);
  }

  steps::Work work(const std::string&) const {
    const double m = static_cast<double>(m_), n = static_cast<double>(n_), k = static_cast<double>(k_);
    return {m * k + n * k + 2 * m * n, 2 * m * n * k}; // 1-byte inputs read once, 2-byte D written once
  }

  void reset(const std::string&) { d_.poison(); } // 0xFFFF: a BF16 NaN, so unwritten elements show

  steps::Comparison check(const std::string& name) const {
    const steps::Comparison guards = d_.check_guards();
    if (!guards.ok) return guards;
    // cuBLASLt always runs the per-tensor product; every other row, this run's scaling.
    const bool lt = name == "cublaslt" || name == "cublaslt_fast";
    const Expected& e = expected(lt ? Scaling::per_tensor : scaling_);
    d_.download(got_);
    return compare_bf16(got_, e, accumulation_gamma(name, k()), static_cast<std::size_t>(n_));
  }

  /// The problem as the kernels see it, with this run's scaling.
  Fp8Gemm gemm() {
    const DeviceQuantized& q = scaling_ == Scaling::per_tensor ? tensor_ : fine_;
    return {m(), n(), k(), q.a.data(), q.b.data(), OperandScales::layout(scaling_, false, k(), q.sa.data()),
            OperandScales::layout(scaling_, true, k(), q.sb.data()), d()};
  }

  /// cuBLASLt, per-tensor scales; the algorithm is chosen on first use (in
  /// the untimed verification run).
  void run_cublaslt(bool fast, cudaStream_t stream) {
    auto& lt = fast ? lt_fast_ : lt_default_;
    if (!lt_handle_) lt_handle_ = std::make_unique<v0::LtHandle>();
    if (!lt) {
      lt = std::make_unique<v0::CublasLtFp8>(lt_handle_->get(), m(), n(), k(), fast);
      lt->select_algorithm(tensor_.a.data(), tensor_.b.data(), alpha_, d(), stream);
    }
    lt->run(tensor_.a.data(), tensor_.b.data(), alpha_, d(), stream);
  }

#if STEPS_WITH_EXERCISE
  void run_yours(cudaStream_t stream) {
    const DeviceQuantized& q = scaling_ == Scaling::per_tensor ? tensor_ : fine_;
    ex10::fp8_gemm_1x128(m(), n(), k(), reinterpret_cast<const __nv_fp8_e4m3*>(q.a.data()), ex_sa_.data(),
                         reinterpret_cast<const __nv_fp8_e4m3*>(q.b.data()), ex_sb_.data(), d(), stream);
  }
#endif

  int m() const { return static_cast<int>(m_); }
  int n() const { return static_cast<int>(n_); }
  int k() const { return static_cast<int>(k_); }
  __nv_bfloat16* d() { return reinterpret_cast<__nv_bfloat16*>(d_.data()); }

private:
  static int index(Scaling s) { return s == Scaling::per_tensor ? 0 : 1; }

  // The GPU's scales and codes against the host's: all scales, and the codes
  // of the first and last rows and 16 random ones of each operand.
  void check_quantization_on_host(const std::vector<float>& a32, const std::vector<float>& b32, std::uint64_t seed) {
    auto rows_of = [&](int rows, std::uint64_t salt) {
      std::vector<int> r = {0, rows - 1};
      for (int i = 0; i < 16; ++i) r.push_back(static_cast<int>(steps::splitmix64(seed ^ salt ^ i) % rows));
      return r;
    };
    for (int i = 0; i < 2; ++i) {
      std::string err = check_quantization(a32, host_a_[i], rows_of(m(), 0xA11));
      if (err.empty()) err = check_quantization(b32, host_b_[i], rows_of(n(), 0xB22));
      if (!err.empty())
        throw std::runtime_error(std::string("the GPU's quantization (") + scaling_name(host_a_[i].scaling) +
                                 ") differs from the host's: " + err);
    }
  }

  // |R - T| / |T| at the sampled elements, T the exact product of the FP32
  // inputs and R that of the quantized ones: what FP8 costs before any GEMM
  // rounding. Median and 90th percentile per scaling.
  void measure_quantization_error(const std::vector<float>& a32, const std::vector<float>& b32) {
    for (int i = 0; i < 2; ++i) {
      std::vector<double> rel;
      for (const auto& [r, c] : samples_) {
        double t = 0;
        for (int kk = 0; kk < k(); ++kk)
          t += static_cast<double>(a32[static_cast<std::size_t>(r) * k() + kk]) * b32[static_cast<std::size_t>(c) * k() + kk];
        if (t == 0) continue;
        rel.push_back(std::fabs(exact_element(host_a_[i], host_b_[i], r, c).value - t) / std::fabs(t));
      }
      std::sort(rel.begin(), rel.end());
      quant_error_[i][0] = rel.empty() ? 0 : rel[rel.size() / 2];
      quant_error_[i][1] = rel.empty() ? 0 : rel[std::min(rel.size() - 1, rel.size() * 9 / 10)];
    }
  }

  // The reference of scaling `s`, made on first use.
  const Expected& expected(Scaling s) const {
    std::optional<Expected>& e = expected_[index(s)];
    if (!e) e = full_cpu_check_ ? cpu_reference(host_a_[index(s)], host_b_[index(s)]) : gpu_reference(s);
    return *e;
  }

  // cuBLAS SGEMM (FP32 CUDA cores, no tensor cores) of the dequantized
  // inputs, and of their absolute values for S; then R checked in FP64 at
  // the sampled elements.
  Expected gpu_reference(Scaling s) const {
    const DeviceQuantized& q = s == Scaling::per_tensor ? tensor_ : fine_;
    const int m = this->m(), n = this->n(), k = this->k();
    Expected e;
    {
      steps::DeviceBuffer<float> a(elements(m, k)), b(elements(n, k)), r(elements(m, n)), abs_sum(elements(m, n));
      if (!cublas_) {
        cublas_.emplace();
        // Pedantic: plain FP32, whatever NVIDIA_TF32_OVERRIDE says.
        CUBLAS_CHECK(cublasSetMathMode(*cublas_, CUBLAS_PEDANTIC_MATH));
      }
      const float one = 1.0f, zero = 0.0f;
      for (const bool absolute : {false, true}) {
        dequantize(q.a.data(), m, k, OperandScales::layout(s, false, k, q.sa.data()), absolute, a.data());
        dequantize(q.b.data(), n, k, OperandScales::layout(s, true, k, q.sb.data()), absolute, b.data());
        // Row-major D (m x n) = A B^T is column-major D^T (n x m) = B (A^T):
        // B is column-major k x n (transposed: op T), A column-major k x m.
        CUBLAS_CHECK(cublasSgemm(*cublas_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b.data(), k, a.data(), k, &zero,
                                 absolute ? abs_sum.data() : r.data(), n));
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      e.value = r.to_host();
      e.abs_sum = abs_sum.to_host();
    }
    // Any FP32 summation order: within (k - 1) * 2^-24 of the sum of |terms|;
    // plus one rounding per dequantized input and one per product.
    e.gamma_ref = (k + 4) * std::ldexp(1.0, -24);
    for (const auto& [r, c] : samples_) {
      const ExactElement x = exact_element(host_a_[index(s)], host_b_[index(s)], r, c);
      const float got = e.value[static_cast<std::size_t>(r) * n + c];
      if (!(std::fabs(got - x.value) <= e.gamma_ref * x.abs_sum))
        throw std::runtime_error("the cuBLAS reference failed its own FP64 check at D(" + std::to_string(r) + ", " +
                                 std::to_string(c) + "): expected " + steps::format_value(x.value) + ", cuBLAS gave " +
                                 steps::format_value(got) + "; nothing can be verified");
    }
    return e;
  }

  std::int64_t m_, n_, k_;
  Scaling scaling_;
  DeviceQuantized tensor_, fine_;
  steps::GuardedBuffer<std::uint16_t> d_; // BF16 bits; guard zones catch stores outside D
#if STEPS_WITH_EXERCISE
  steps::DeviceBuffer<float> ex_sa_, ex_sb_;
#endif
  HostOperand host_a_[2], host_b_[2]; // [0] per tensor, [1] fine
  std::vector<std::pair<int, int>> samples_;
  double quant_error_[2][2] = {};     // [scaling][median, p90]
  bool full_cpu_check_ = false;
  float alpha_ = 1.0f;
  std::unique_ptr<v0::LtHandle> lt_handle_;
  std::unique_ptr<v0::CublasLtFp8> lt_default_, lt_fast_;
  mutable std::optional<steps::CublasHandle> cublas_;
  mutable std::optional<Expected> expected_[2];
  mutable std::vector<std::uint16_t> got_; // reused between checks
};

using Version = steps::Version<Fp8GemmProblem>;

// The registry: the CLI, the table and the JSON all come from this list.
const std::vector<Version> kVersions = {
    {"cublaslt", "v0: cuBLASLt FP8 matmul, default accumulation (per-tensor scales in alpha)", steps::Role::baseline,
     [](Fp8GemmProblem& p, cudaStream_t s) { p.run_cublaslt(false, s); }},
    {"cublaslt_fast", "v0: cuBLASLt FP8 matmul, FAST_ACCUM = 1 (no promotion; per-tensor scales)",
     steps::Role::baseline, [](Fp8GemmProblem& p, cudaStream_t s) { p.run_cublaslt(true, s); }},
    {"naive", "v1: one thread per element of D, FP32 on the CUDA cores", steps::Role::version,
     [](Fp8GemmProblem& p, cudaStream_t s) { v1::launch(p.gemm(), s); }},
    {"mma_sync", "v2: 128 x 128 tiles, mma.sync m16n8k32 E4M3, FP32 promotion every 128 K", steps::Role::version,
     [](Fp8GemmProblem& p, cudaStream_t s) { v2::launch(p.gemm(), s); }},
    {"wgmma", "v3: 64 x 128 tiles, TMA + mbarrier double buffer, wgmma m64n128k32, one warpgroup",
     steps::Role::version, [](Fp8GemmProblem& p, cudaStream_t s) { v3::launch(p.gemm(), s); }},
    {"warp_specialized", "v4: TMA producer + 2 wgmma warpgroups, 6-stage mbarrier ring, overlapped promotion, persistent",
     steps::Role::version, [](Fp8GemmProblem& p, cudaStream_t s) { v4::launch(p.gemm(), s); }},
#if STEPS_WITH_EXERCISE
    {"yours", "exercise 10: your mma.sync GEMM with 1 x 128 scales on both operands", steps::Role::yours,
     [](Fp8GemmProblem& p, cudaStream_t s) { p.run_yours(s); }},
#endif
    {"mistake_scale_after_k", "scales applied once after the whole K sum (right only per tensor)",
     steps::Role::mistake,
     [](Fp8GemmProblem& p, cudaStream_t s) { mistakes::launch<mistakes::Bug::scale_after_k>(p.gemm(), s); }},
    {"mistake_k_tail_dropped", "K / 128 blocks: the partial last K block is skipped", steps::Role::mistake,
     [](Fp8GemmProblem& p, cudaStream_t s) { mistakes::launch<mistakes::Bug::k_tail_dropped>(p.gemm(), s); }},
};

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.number = "10";
  i.binary = "ch10_fp8_gemm";
  i.title = "FP8 GEMM on Hopper";
  i.summary = "Multiplies E4M3 matrices with per-tensor or fine-grained (1 x 128 / 128 x 128) scales into BF16: "
              "CUDA cores, mma.sync, wgmma + TMA, and a warp-specialized pipeline, against cuBLASLt's FP8 matmul.";
  i.metric = steps::Metric::flops;
  // 8192 x 8192 x 4096: 32 MiB per FP8 input, 128 MiB of BF16 output (with
  // the inputs of both scalings, 4x the H200's L2), 550 GFLOP.
  i.default_size = 8192;
  i.size_help = "M = N = SIZE: rows of A and of B (--m, --n override them; K is --k)";
  i.default_iters = 10;
  i.default_warmup = 2;
  i.work_note = "TFLOP/s: 2 * M * N * K floating-point operations per second, 1 TFLOP = 1e12. cuBLASLt runs "
                "per-tensor scaling in every mode (the scales folded into alpha).";
  i.goal = 0.70;
  i.goal_text = ">= 0.70x cuBLASLt (default accumulation)";
  i.min_cc_major = 9;
  i.min_cc_minor = 0;
  i.needs = "Hopper (sm_90) FP8 tensor cores";
  i.int_options.push_back({"--m", "M", "rows of A and D; 0: --size", 0, 0, INT_MAX});
  i.int_options.push_back({"--n", "N", "rows of B, columns of D; 0: --size; a multiple of 8 for cuBLASLt",
                           0, 0, INT_MAX});
  i.int_options.push_back({"--k", "K", "the dot-product length, a multiple of 16", 4096, 16, INT_MAX});
  i.int_options.push_back({"--outlier-exponent", "E",
                           "outlier rows of A and blocks of B are 2^E times larger than the rest", kDefaultOutlierExponent,
                           0, 24});
  i.flag_options.push_back({"--per-tensor", "one FP32 scale per tensor (default: fine-grained)"});
  i.flag_options.push_back({"--fine", "fine-grained scales: A 1 x 128, B 128 x 128 (the default)"});
  return i;
}

/// The shape rules the command line cannot express, checked before any GPU
/// work. Returns an exit code to stop with (2 usage error, 77 skipped), or -1.
int check_arguments(const steps::ChapterInfo& info, int argc, char** argv) {
  steps::Options opts;
  try {
    opts = steps::make_cli(info).parse(argc, argv);
  } catch (const steps::UsageError&) {
    return -1; // run_chapter reports it
  }
  if (opts.help || opts.list) return -1;
  auto usage = [&](const std::string& what) {
    std::cerr << info.binary << ": error: " << what << " (see --help)\n";
    return 2;
  };
  if (opts.has("--per-tensor") && opts.has("--fine")) return usage("--per-tensor and --fine: choose one scaling");
  const std::int64_t k = opts.get("--k"), n = dimension(opts, "--n");
  if (k % 16 != 0)
    return usage("--k " + std::to_string(k) +
                 ": K must be a multiple of 16 (rows of E4M3 must be whole 16-byte chunks for cp.async and cuBLASLt)");
  bool lt = opts.variants.empty();
  for (const auto& v : opts.variants) lt = lt || v == "cublaslt" || v == "cublaslt_fast";
  if (lt && n % 8 != 0)
    return usage("--n " + std::to_string(n) +
                 ": N must be a multiple of 8 for cuBLASLt (rows of BF16 D must start 16-byte aligned); the other "
                 "versions take any N: --variant naive,mma_sync,wgmma,warp_specialized");
  // The kernels are built for sm_90a only (no PTX), which runs on Hopper and
  // nothing newer; older GPUs are turned away by run_chapter (min_cc).
  std::string reason;
  int count = 0;
  if (steps::gpu_available(&reason) && cudaGetDeviceCount(&count) == cudaSuccess && opts.device < count) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, opts.device) == cudaSuccess && prop.major > 9) {
      std::cerr << info.binary << ": skipped: this chapter is built for sm_90a (Hopper) only; GPU " << opts.device
                << " (" << prop.name << ") is " << prop.major << "." << prop.minor << "\n";
      return 77;
    }
  }
  return -1;
}

} // namespace ch10

int main(int argc, char** argv) {
  const steps::ChapterInfo info = ch10::info();
  if (const int code = ch10::check_arguments(info, argc, argv); code >= 0) return code;
  return steps::run_chapter(argc, argv, info, ch10::kVersions);
}
