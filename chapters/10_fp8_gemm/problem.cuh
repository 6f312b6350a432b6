// Chapter 10: the data every group of rows builds for itself
// (kernel_problem.cuh, cublaslt_problem.cuh and yours.cuh have the
// groups): the shape from the command line, FP32 inputs made and quantized
// on the GPU in one scaling, their host copies, the output D, and the
// reference D is checked against, made on first use.
//
// Verification: for small problems (up to 2^27 multiply-adds) the reference
// is an FP64 CPU product of the quantized inputs. For large ones, cuBLAS
// SGEMM (FP32, no tensor cores) multiplies the dequantized inputs once, is
// itself checked in FP64 on 260 elements, and every row is compared with it.
// The bound each element must meet is derived in reference.hpp
// (compare_bf16); each row carries the accumulation error of the way it
// sums (its Gamma).
#pragma once

#include "fp8_gemm.cuh"
#include "quantize.cuh"
#include "reference.hpp"

#include "steps/chapter.hpp"
#include "steps/cli.hpp"
#include "steps/cublas.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/report.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ch10 {

/// Up to this many multiply-adds, the reference is a full FP64 CPU product.
constexpr double kCpuReferenceLimit = double(1 << 27);
/// Random elements checked in FP64 (plus the 4 corners): the GPU reference's
/// own check.
constexpr int kSamples = 256;
/// Elements of D the quantization error is measured at (all of D when it
/// has fewer): 2^14. The sampling error of a percentile shrinks as
/// 1 / sqrt(count): 2^14 is 63 times the 260 elements used before, about 8x
/// less noise (with 260, the 90th percentiles of some shapes put
/// fine-grained scaling behind per-tensor scaling).
constexpr std::size_t kQuantizationSamples = std::size_t{1} << 14;

/// The scaling the command line asks for (--per-tensor; default fine).
inline Scaling scaling_of(const steps::Options& opts) {
  return opts.has("--per-tensor") ? Scaling::per_tensor : Scaling::fine;
}

inline const char* scaling_name(Scaling s) {
  return s == Scaling::per_tensor ? "per-tensor scales" : "fine-grained scales (A 1 x 128, B 128 x 128)";
}

/// One scaling of A and B: codes and scales on the GPU, and their host
/// copies (filled by Fp32Inputs::quantize_into).
struct Operands {
  Operands(std::int64_t m, std::int64_t n, std::int64_t k, Scaling s)
      : scaling(s), a(steps::checked_elements(m, k, 1)), b(steps::checked_elements(n, k, 1)),
        sa(OperandScales::count(s, false, clamp(m), clamp(k))), sb(OperandScales::count(s, true, clamp(n), clamp(k))) {}
  Scaling scaling;
  steps::DeviceBuffer<std::uint8_t> a, b; ///< E4M3 codes
  steps::DeviceBuffer<float> sa, sb;      ///< their scales
  steps::DeviceBuffer<float> sa_by_kb;    ///< A's scales K-block-major (Fp8Gemm::sa_by_kb)
  steps::DeviceBuffer<float> sb_by_kb;    ///< B's scales K-block-major (Fp8Gemm::sb_by_kb)
  HostOperand host_a, host_b;             ///< the same on the host

private:
  static int clamp(std::int64_t v) { return static_cast<int>(std::min<std::int64_t>(v, INT_MAX)); }
};

/// The chapter's FP32 inputs, on the GPU and the host, while operands are
/// quantized from them: random values whose magnitude changes from block to
/// block, with outlier rows of A and blocks of B (quantize.cuh).
struct Fp32Inputs {
  Fp32Inputs(const steps::Options& opts, int m, int n, int k)
      : m(m), n(n), k(k), a(steps::checked_elements(m, k)), b(steps::checked_elements(n, k)), amax(1),
        seed(opts.seed) {
    const int outliers = static_cast<int>(opts.get("--outlier-exponent"));
    make_inputs(a.data(), m, k, MagnitudeModel{seed, 1, 32, true, outliers});
    make_inputs(b.data(), n, k, MagnitudeModel{seed + 1, kScaleBlock, 16, false, outliers});
    CUDA_CHECK(cudaDeviceSynchronize());
    a_host = a.to_host();
    b_host = b.to_host();
  }

  /// Quantizes A and B into `q` (its scaling) on the GPU, copies the codes
  /// and scales to the host, and checks them against the host's own
  /// quantization: all scales, and the codes of 18 rows of each operand.
  void quantize_into(Operands& q) const {
    const Scaling s = q.scaling;
    compute_scales(a.data(), m, k, s, false, q.sa.data(), amax.data());
    compute_scales(b.data(), n, k, s, true, q.sb.data(), amax.data());
    quantize(a.data(), m, k, OperandScales::layout(s, false, k, q.sa.data()), q.a.data());
    quantize(b.data(), n, k, OperandScales::layout(s, true, k, q.sb.data()), q.b.data());
    CUDA_CHECK(cudaDeviceSynchronize());
    q.host_a = HostOperand{m, k, s, false, q.a.to_host(), q.sa.to_host()};
    q.host_b = HostOperand{n, k, s, true, q.b.to_host(), q.sb.to_host()};
    // K-block-major copies of the scales (A's: 1/32 of A's bytes); untimed setup.
    const auto upload = [](const std::vector<float>& v, steps::DeviceBuffer<float>& to) {
      to = steps::DeviceBuffer<float>(v.size());
      to.copy_from_host(v);
    };
    upload(scales_by_k_block(q.host_a), q.sa_by_kb);
    upload(scales_by_k_block(q.host_b), q.sb_by_kb);
    std::string err = check_quantization(a_host, q.host_a, rows_to_check(m, seed ^ 0xA11));
    if (err.empty()) err = check_quantization(b_host, q.host_b, rows_to_check(n, seed ^ 0xB22));
    if (!err.empty())
      throw std::runtime_error(std::string("the GPU's quantization (") + scaling_name(s) +
                               ") differs from the host's: " + err);
  }

  int m, n, k;
  steps::DeviceBuffer<float> a, b;           ///< m x k and n x k FP32
  mutable steps::DeviceBuffer<unsigned int> amax; ///< scratch for per-tensor scales
  std::uint64_t seed;
  std::vector<float> a_host, b_host;
};

/// The work of an M x N x K FP8 GEMM, as every row of the chapter counts it:
/// 1-byte A and B read once, 2-byte D written once; 2 M N K flops.
inline steps::Work fp8_gemm_work(std::int64_t m, std::int64_t n, std::int64_t k) {
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  return {M * K + N * K + 2 * M * N, 2 * M * N * K};
}

/// One product in one scaling: operands, D, the reference and the check.
/// The problem types of kernel_problem.cuh, cublaslt_problem.cuh and
/// yours.cuh derive from it and add what
/// their rows need (cuBLASLt plans, the exercise's scale layout).
class Fp8Data {
public:
  /// `measure_quantization`: also measure what each scaling costs against
  /// the exact product of the FP32 inputs (shown by summary()).
  Fp8Data(const steps::Options& opts, Scaling scaling, bool measure_quantization = false)
      : m_(steps::dimension(opts, "--m")), n_(steps::dimension(opts, "--n")), k_(opts.get("--k")),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        q_(m_, n_, k_, scaling), d_(steps::checked_elements(m_, n_, 2)) {
    if (m_ > INT_MAX || n_ > INT_MAX || k_ > INT_MAX)
      throw std::invalid_argument("every dimension must be at most " + std::to_string(INT_MAX) +
                                  " (cuBLASLt and the kernels index rows with int)");
    const Fp32Inputs in(opts, m(), n(), k());
    in.quantize_into(q_);
    samples_ = sample_positions(opts.seed, m(), n(), kSamples);
    if (measure_quantization) {
      const std::vector<std::pair<int, int>> elements =
          quantization_sample(opts.seed, m(), n(), kQuantizationSamples);
      for (const Scaling s : {Scaling::per_tensor, Scaling::fine}) {
        std::optional<Operands> other; // the scaling this problem does not run, only for its error
        if (s != scaling) in.quantize_into(other.emplace(m_, n_, k_, s));
        const Operands& q = s == scaling ? q_ : *other;
        quant_error_[s == Scaling::fine] = quantization_error(in.a_host, in.b_host, q.host_a, q.host_b, elements);
      }
    }
    quant_measured_ = measure_quantization;
    full_cpu_check_ = static_cast<double>(m_) * static_cast<double>(n_) * static_cast<double>(k_) <= kCpuReferenceLimit;
  }

  int m() const { return static_cast<int>(m_); }
  int n() const { return static_cast<int>(n_); }
  int k() const { return static_cast<int>(k_); }
  Scaling scaling() const { return q_.scaling; }
  const Operands& operands() const { return q_; }
  __nv_bfloat16* d() { return reinterpret_cast<__nv_bfloat16*>(d_.data()); }

  /// The problem as the kernels see it.
  Fp8Gemm gemm() {
    return {m(), n(), k(), q_.a.data(), q_.b.data(), OperandScales::layout(q_.scaling, false, k(), q_.sa.data()),
            OperandScales::layout(q_.scaling, true, k(), q_.sb.data()), d(), q_.sa_by_kb.data(), sa_by_kb_ld(m()),
            q_.sb_by_kb.data(), sb_by_kb_ld(n())};
  }

  steps::Work work() const { return fp8_gemm_work(m_, n_, k_); }

  /// 0xFFFF everywhere in D: a BF16 NaN, so that an element nobody writes shows.
  void poison() { d_.poison(); }

  /// D against the reference, with accumulation error `gamma` (see compare_bf16).
  steps::Comparison check(double gamma) {
    const steps::Comparison guards = d_.check_guards();
    if (!guards.ok) return guards;
    d_.download(got_);
    return compare_bf16(got_, expected(), gamma, static_cast<std::size_t>(n_));
  }

  /// What quantization costs, as extra columns of the row that shows it: the
  /// median and 90th percentile of |error| / |exact| of D, in %, for each
  /// scaling (none when this problem did not measure it).
  std::vector<steps::Extra> quantization_extras() const {
    if (!quant_measured_) return {};
    return {{"quant_p50_%_per_tensor", 100 * quant_error_[0].median, 2},
            {"quant_p90_%_per_tensor", 100 * quant_error_[0].p90, 2},
            {"quant_p50_%_fine", 100 * quant_error_[1].median, 2},
            {"quant_p90_%_fine", 100 * quant_error_[1].p90, 2}};
  }

  /// "`what`; M x N x K = ...; checked against ..." (and what quantization
  /// costs, when measured): the problem line of a group.
  std::string summary(const std::string& what) const {
    auto pct = [](double v) { return steps::fixed(100 * v, 3) + "%"; };
    std::string s = what + "; M x N x K = " + std::to_string(m_) + " x " + std::to_string(n_) + " x " +
                    std::to_string(k_) + " (A " + steps::format_bytes(static_cast<double>(m_) * k_) + ", B " +
                    steps::format_bytes(static_cast<double>(n_) * k_) + ", D " +
                    steps::format_bytes(2.0 * static_cast<double>(m_) * n_) + "); checked against " +
                    (full_cpu_check_ ? "an FP64 CPU product of the quantized inputs"
                                     : "cuBLAS SGEMM (FP32) of the dequantized inputs, itself checked in FP64 on " +
                                           std::to_string(samples_.size()) + " elements");
    if (quant_measured_)
      s += ". Quantization error of D vs the exact product of the FP32 inputs (|error| / |exact| over " +
           std::to_string(quant_error_[1].elements) +
           (static_cast<std::size_t>(m_ * n_) <= kQuantizationSamples ? " elements (all of D but exact zeros)"
                                                                    : " distinct sampled elements") +
           ", median / 90th percentile): per-tensor " + pct(quant_error_[0].median) + " / " +
           pct(quant_error_[0].p90) + ", fine-grained " + pct(quant_error_[1].median) + " / " +
           pct(quant_error_[1].p90);
    return s;
  }

private:
  const Expected& expected() {
    if (!expected_) expected_ = full_cpu_check_ ? cpu_reference(q_.host_a, q_.host_b) : gpu_reference();
    return *expected_;
  }

  // cuBLAS SGEMM (FP32 CUDA cores, no tensor cores) of the dequantized
  // inputs, and of their absolute values for S; then R checked in FP64 at
  // the sampled elements.
  Expected gpu_reference() const {
    const int m = this->m(), n = this->n(), k = this->k();
    Expected e;
    {
      steps::DeviceBuffer<float> a(steps::checked_elements(m, k)), b(steps::checked_elements(n, k)),
          r(steps::checked_elements(m, n)), abs_sum(steps::checked_elements(m, n));
      steps::CublasHandle cublas;
      // Pedantic: plain FP32, whatever NVIDIA_TF32_OVERRIDE says.
      CUBLAS_CHECK(cublasSetMathMode(cublas, CUBLAS_PEDANTIC_MATH));
      const float one = 1.0f, zero = 0.0f;
      for (const bool absolute : {false, true}) {
        dequantize(q_.a.data(), m, k, OperandScales::layout(q_.scaling, false, k, q_.sa.data()), absolute, a.data());
        dequantize(q_.b.data(), n, k, OperandScales::layout(q_.scaling, true, k, q_.sb.data()), absolute, b.data());
        // Row-major D (m x n) = A B^T is column-major D^T (n x m) = B (A^T):
        // B is column-major k x n (transposed: op T), A column-major k x m.
        CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b.data(), k, a.data(), k, &zero,
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
      const ExactElement x = exact_element(q_.host_a, q_.host_b, r, c);
      const float got = e.value[static_cast<std::size_t>(r) * n + c];
      if (!(std::fabs(got - x.value) <= e.gamma_ref * x.abs_sum))
        throw std::runtime_error("the cuBLAS reference failed its own FP64 check at D(" + std::to_string(r) + ", " +
                                 std::to_string(c) + "): expected " + steps::format_value(x.value) + ", cuBLAS gave " +
                                 steps::format_value(got) + "; nothing can be verified");
    }
    return e;
  }

  std::int64_t m_, n_, k_;
  Operands q_;
  steps::GuardedBuffer<std::uint16_t> d_; // BF16 bits; guard zones catch stores outside D
  std::vector<std::pair<int, int>> samples_;
  QuantizationError quant_error_[2]; // [per tensor, fine]
  bool quant_measured_ = false;
  bool full_cpu_check_ = false;
  std::optional<Expected> expected_;
  std::vector<std::uint16_t> got_; // reused between checks
};

// What a row needs of the GPU, from the architecture table (steps/arch.hpp):
// where the GPU lacks it, or the binary's code for this GPU compiled the
// row's kernel out, the row is skipped with the reason (steps::Row::needs).

/// v3b to v8: Hopper's own instructions (wgmma, setmaxnreg), TMA and
/// mbarrier transactions, in sm_90a machine code.
inline const std::vector<steps::Feature> kHopperFeatures{steps::Feature::tma, steps::Feature::mbarrier_tx,
                                                         steps::Feature::wgmma};
/// v3a: wgmma, fed by cp.async (no TMA, no mbarrier), in sm_90a machine code.
inline const std::vector<steps::Feature> kWgmmaCpAsyncFeatures{steps::Feature::cp_async, steps::Feature::wgmma};
/// v2 and the exercise: mma.sync on FP8 operands (sm_89 and newer).
inline const std::vector<steps::Feature> kFp8MmaFeatures{steps::Feature::fp8_mma};
/// The cuBLAS BF16 control: BF16 tensor cores (sm_80 and newer).
inline const std::vector<steps::Feature> kBf16Features{steps::Feature::mma_bf16};

/// Row `r`, which needs `features` and the code of `kernel` (one of its
/// kernels, or nullptr for a library's) for this GPU.
template <class P>
steps::Row<P> needing(steps::Row<P> r, std::vector<steps::Feature> features, const void* kernel) {
  r.needs = {std::move(features), kernel};
  return r;
}

/// A row over problem `P` (an Fp8Data): D poisoned before the verification
/// run, then checked with the accumulation error `gamma` of the way the row
/// sums. `launch` gets the row's Run: its stream, and for a row that plans
/// on first use, its state and notes (Run::row_state, Run::row_note).
template <class P>
steps::Row<P> fp8_row(std::string name, std::string what, steps::Role role, Gamma gamma,
                      std::function<void(P&, steps::Run&)> launch) {
  steps::Row<P> r = steps::make_row<P>(std::move(name), std::move(what), role, std::move(launch),
                                       [](const P& p) { return p.work(); });
  r.reset = [](P& p) { p.poison(); };
  r.check = [gamma](P& p) { return p.check(gamma(p.k())); };
  return r;
}

/// Row `r`, skipped where `why` says it cannot run (steps::Row::unavailable).
template <class P>
steps::Row<P> needs(steps::Row<P> r, std::function<std::string(const P&, const steps::Run&)> why) {
  r.unavailable = std::move(why);
  return r;
}

/// `r` with extra columns.
template <class P>
steps::Row<P> with_extras(steps::Row<P> r, std::function<std::vector<steps::Extra>(const P&)> extras) {
  r.extras = std::move(extras);
  return r;
}

} // namespace ch10
