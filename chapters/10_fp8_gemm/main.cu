// Chapter 10: FP8 GEMM on Hopper: scaled FP8 products, from CUDA cores to a
// warp-specialized wgmma pipeline, checked and measured against cuBLASLt.
//
// D (BF16, M x N) = A (E4M3, M x K) * B^T (B: E4M3, N x K), both inputs
// K-major, FP32 accumulation, with per-tensor or fine-grained scales (A:
// 1 x 128, B: 128 x 128; see fp8_gemm.cuh). The inputs are random FP32
// matrices with block-to-block changes of magnitude and a few outliers,
// quantized on the GPU (quantize.cuh; not timed).
//
//   v0 cublaslt                  cuBLASLt FP8 matmul, default accumulation (per-tensor scales in
//                                alpha): the baseline
//      cublaslt_fast             the same with fast accumulation: a reference row (it does not promote)
//   v1 naive                     one thread per element of D, CUDA cores
//   v2 mma_sync                  128 x 128 tiles, mma.sync m16n8k32 E4M3, FP32 promotion per 128 K
//   v3 wgmma                     64 x 128 tiles, TMA + mbarrier, 2 stages, one warpgroup's wgmma
//   v4 warp_specialized          128 x 128 tiles, a TMA producer warpgroup and two wgmma
//                                warpgroups, 6-stage ring, setmaxnreg, persistent
//
// Two groups of rows, each with its own data (problem.cuh): cuBLASLt runs the
// per-tensor product in every mode; the chapter's kernels run the scaling the
// command line asks for. Every row is checked against a reference of its own
// product, with the accumulation error of the way it sums (reference.hpp).
//
// Run: ./tutorial run 10    (or build/bin/ch10_fp8_gemm --help)
#include "fp8_gemm.cuh"
#include "mistakes.cuh"
#include "problem.cuh"
#include "reference.hpp"
#include "v0_cublaslt.cuh"
#include "v1_naive.cuh"
#include "v2_mma_sync.cuh"
#include "v3_wgmma.cuh"
#include "v4_warp_specialized.cuh"

#include "steps/chapter.hpp"
#include "steps/cli.hpp"
#include "steps/device.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <climits>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace ch10 {

// The rows the shape rules and the goal name (the registry uses the same names).
constexpr const char* kCublasLt = "cublaslt";
constexpr const char* kCublasLtFast = "cublaslt_fast";

/// cuBLASLt's rows: the per-tensor product (its scales folded into alpha, see
/// v0_cublaslt.cuh), whatever scaling the command line asks for; one plan
/// per accumulation mode, chosen on first use (in the untimed verification run).
class CublasLtProblem : public Fp8Data {
public:
  CublasLtProblem(const steps::Options& opts, steps::Run&)
      : Fp8Data(opts, Scaling::per_tensor), handle_(v0::make_lt_handle()),
        alpha_(operands().host_a.scales[0] * operands().host_b.scales[0]) {}

  std::string describe() const {
    return summary("cuBLASLt: D (bf16) = A (e4m3) * B^T (e4m3), FP32 accumulation, per-tensor scales (in alpha)");
  }

  void run(bool fast, cudaStream_t stream) {
    std::unique_ptr<v0::CublasLtFp8>& plan = plans_[fast ? 1 : 0];
    if (!plan) {
      plan = std::make_unique<v0::CublasLtFp8>(handle_.get(), m(), n(), k(), fast);
      plan->select_algorithm(operands().a.data(), operands().b.data(), alpha_, d(), stream);
    }
    plan->run(operands().a.data(), operands().b.data(), alpha_, d(), stream);
  }

private:
  v0::LtHandle handle_;
  float alpha_; // sA * sB
  std::unique_ptr<v0::CublasLtFp8> plans_[2]; // [default, fast accumulation]
};

/// The chapter's kernels (and its mistakes): the scaling the command line
/// asks for; the problem line also says what each scaling costs.
class KernelProblem : public Fp8Data {
public:
  KernelProblem(const steps::Options& opts, steps::Run&) : Fp8Data(opts, scaling_of(opts), true) {}

  std::string describe() const {
    return summary(std::string("D (bf16) = A (e4m3) * B^T (e4m3), FP32 accumulation, ") + scaling_name(scaling()));
  }
};

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  using steps::Role;
  using Lt = CublasLtProblem;
  using Kernels = KernelProblem;
  std::vector<steps::GroupPtr> groups{
      steps::group<Lt>({
          fp8_row<Lt>(kCublasLt, "v0: cuBLASLt FP8 matmul, default accumulation (per-tensor scales in alpha)",
                      Role::baseline, gamma_cublaslt, [](Lt& p, cudaStream_t s) { p.run(false, s); }),
          fp8_row<Lt>(kCublasLtFast, "v0: cuBLASLt FP8 matmul, FAST_ACCUM = 1 (no promotion; per-tensor scales)",
                      Role::reference, gamma_cublaslt, [](Lt& p, cudaStream_t s) { p.run(true, s); }),
      }),
      steps::group<Kernels>({
          fp8_row<Kernels>("naive", "v1: one thread per element of D, FP32 on the CUDA cores", Role::version,
                     gamma_cuda_cores, [](Kernels& p, cudaStream_t s) { v1::launch(p.gemm(), s); }),
          fp8_row<Kernels>("mma_sync", "v2: 128 x 128 tiles, mma.sync m16n8k32 E4M3, FP32 promotion every 128 K",
                     Role::version, gamma_tensor_cores, [](Kernels& p, cudaStream_t s) { v2::launch(p.gemm(), s); }),
          fp8_row<Kernels>("wgmma", "v3: 64 x 128 tiles, TMA + mbarrier double buffer, wgmma m64n128k32, one warpgroup",
                     Role::version, gamma_tensor_cores, [](Kernels& p, cudaStream_t s) { v3::launch(p.gemm(), s); }),
          fp8_row<Kernels>("warp_specialized",
                     "v4: TMA producer + 2 wgmma warpgroups, 6-stage mbarrier ring, overlapped promotion, persistent",
                     Role::version, gamma_tensor_cores, [](Kernels& p, cudaStream_t s) { v4::launch(p.gemm(), s); }),
          fp8_row<Kernels>("mistake_scale_after_k", "scales applied once after the whole K sum (right only per tensor)",
                     Role::mistake, gamma_cuda_cores,
                     [](Kernels& p, cudaStream_t s) { mistakes::launch<mistakes::Bug::scale_after_k>(p.gemm(), s); }),
          fp8_row<Kernels>("mistake_k_tail_dropped", "K / 128 blocks: the partial last K block is skipped", Role::mistake,
                     gamma_cuda_cores,
                     [](Kernels& p, cudaStream_t s) { mistakes::launch<mistakes::Bug::k_tail_dropped>(p.gemm(), s); }),
      })};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

/// Hopper's dense FP8 tensor-core rate: 8192 FLOP per clock per SM (E4M3
/// inputs, FP32 accumulation; 1979 TFLOP/s for an H100 SXM's 132 SMs at
/// 1830 MHz), times the SM boost clock the device reports.
steps::Peak fp8_tensor_peak(const steps::DeviceInfo& dev) {
  return {"FP8 tensor", dev.sm_count * 8192.0 * dev.sm_clock_khz * 1e3 / 1e12,
          std::to_string(dev.sm_count) + " SMs x 8192 FLOP/clock (dense E4M3 tensor cores) x " +
              std::to_string(dev.sm_clock_khz / 1000) + " MHz (the boost clock)"};
}

/// The shape rules the command line cannot express: a usage error (exit 2)
/// before any GPU work.
void validate(const steps::Options& opts) {
  if (opts.has("--per-tensor") && opts.has("--fine"))
    throw steps::UsageError("--per-tensor and --fine: choose one scaling");
  const std::int64_t k = opts.get("--k"), n = steps::dimension(opts, "--n");
  if (k % 16 != 0)
    throw steps::UsageError("--k " + std::to_string(k) +
                            ": K must be a multiple of 16 (rows of E4M3 must be whole 16-byte chunks for cp.async "
                            "and cuBLASLt)");
  const bool lt = steps::selected(opts, kCublasLt, steps::Role::baseline) ||
                  steps::selected(opts, kCublasLtFast, steps::Role::reference);
  if (lt && n % 8 != 0)
    throw steps::UsageError("--n " + std::to_string(n) +
                            ": N must be a multiple of 8 for cuBLASLt (rows of BF16 D must start 16-byte aligned); "
                            "the other versions take any N: --variant naive,mma_sync,wgmma,warp_specialized");
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Multiplies E4M3 matrices with per-tensor or fine-grained (1 x 128 / 128 x 128) scales into BF16: "
              "CUDA cores, mma.sync, wgmma + TMA, and a warp-specialized pipeline, against cuBLASLt's FP8 matmul.";
  i.metric = steps::Metric::flops;
  // 8192 x 8192 x 4096: 32 MiB per FP8 input, 128 MiB of BF16 output (3x
  // the H200's 60 MiB L2), 550 GFLOP.
  i.default_size = 8192;
  i.size_help = "M = N = SIZE: rows of A and of B (--m, --n override them; K is --k)";
  i.default_iters = 10;
  i.default_warmup = 2;
  i.work_note = "TFLOP/s: 2 * M * N * K floating-point operations per second, 1 TFLOP = 1e12. cuBLASLt runs "
                "per-tensor scaling in every mode (the scales folded into alpha).";
  i.baseline = kCublasLt;
  i.goals = {{"best", kCublasLt, 0.70, ">= 0.70x cuBLASLt (default accumulation)"}};
  i.peak = fp8_tensor_peak;
  // The kernels are sm_90a machine code (no PTX): Hopper and nothing else.
  i.min_cc_major = 9;
  i.min_cc_minor = 0;
  i.max_cc_major = 9;
  i.max_cc_minor = 0;
  i.needs = "Hopper (sm_90a) FP8 tensor cores";
  i.int_options.push_back({"--m", "M", "rows of A and D; 0: --size", 0, 0, INT_MAX});
  i.int_options.push_back({"--n", "N", "rows of B, columns of D; 0: --size; a multiple of 8 for cuBLASLt",
                           0, 0, INT_MAX});
  i.int_options.push_back({"--k", "K", "the dot-product length, a multiple of 16", 4096, 16, INT_MAX});
  i.int_options.push_back({"--outlier-exponent", "E",
                           "outlier rows of A and blocks of B are 2^E times larger than the rest", kDefaultOutlierExponent,
                           0, 24});
  i.flag_options.push_back({"--per-tensor", "one FP32 scale per tensor (default: fine-grained)"});
  i.flag_options.push_back({"--fine", "fine-grained scales: A 1 x 128, B 128 x 128 (the default)"});
  i.validate = validate;
  return i;
}

} // namespace ch10

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch10::info(), ch10::registry()); }
