// Chapter 10: the problem of the chapter's kernels, its mistakes, the
// cuBLASLt baseline and the BF16 control: one scaling (the command line's),
// one set of quantized inputs, and the plans that v5, v7 and the vendor
// rows make on first use.
#pragma once

#include "cublas_bf16.cuh"
#include "cublaslt_problem.cuh" // choice_of
#include "problem.cuh"
#include "v0_cublaslt.cuh"
#include "v4_warp_specialized.cuh"
#include "v5_split_k.cuh"
#include "v7_stream_k.cuh"

#include "steps/chapter.hpp"
#include "steps/memory.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ch10 {

// The rows v5's and v7's rows run where they do not split (their same_as;
// the registry uses the same names).
constexpr const char* kWarpSpecialized = "warp_specialized";
constexpr const char* kWideTiles = "wide_tiles";

/// The chapter's kernels (and its mistakes), the cuBLASLt baseline and the
/// BF16 control: the scaling the command line asks for, on one set of
/// quantized inputs; the problem line also says what each scaling costs.
class KernelProblem : public Fp8Data {
public:
  KernelProblem(const steps::Options& opts, steps::Run&)
      : Fp8Data(opts, scaling_of(opts), true), stages_(static_cast<int>(opts.get("--stages"))),
        min_saving_(static_cast<int>(opts.get("--min-saving"))) {}

  /// The ring depth of v4 and v5 (--stages).
  int stages() const { return stages_; }

  /// v5's plan: made on first use and said once.
  const v5::Plan& split_plan() {
    if (!split_plan_) {
      split_plan_ = std::make_unique<v5::Plan>(v5::plan(gemm(), stages_));
      say(split_plan_->describe());
    }
    return *split_plan_;
  }
  /// v5, or v4 where its plan does not split K.
  void run_split_k(cudaStream_t stream) {
    if (split_plan().splits == 1) return v4::launch(gemm(), stream, stages_);
    v5::launch(gemm(), split_plan(), stages_, stream);
  }

  /// v7's plan (its slots and flags): made on first use and said once.
  v7::Plan& stream_plan() {
    if (!stream_plan_) {
      stream_plan_ = std::make_unique<v7::Plan>(gemm(), min_saving_);
      say(stream_plan_->describe());
    }
    return *stream_plan_;
  }
  void run_stream_k(cudaStream_t stream) { stream_plan().launch(gemm(), stream); }

  std::string describe() const {
    return summary(std::string("D (bf16) = A (e4m3) * B^T (e4m3), FP32 accumulation, ") + scaling_name(scaling()));
  }

  /// cuBLASLt on these inputs and scales: block scaling (our fine scales in
  /// its layouts, copied once, untimed) or the per-tensor scale pointers.
  /// The plan is made and its algorithm chosen on first use (the untimed
  /// verification run).
  void run_cublaslt(cudaStream_t stream) {
    if (!lt_plan_) {
      lt_handle_ = v0::make_lt_handle();
      const bool block = scaling() == Scaling::fine;
      const float* sa = operands().sa.data();
      const float* sb = operands().sb.data();
      if (block) {
        sa = operands().sa_by_kb.data(); // cuBLASLt's 1 x 128 layout when M % 4 == 0 (cublaslt_needs)
        const std::vector<float> b = v0::lt_scales_of(operands().host_b.scales, n(), k());
        lt_sb_ = steps::DeviceBuffer<float>(b.size());
        lt_sb_.copy_from_host(b);
        sb = lt_sb_.data();
      }
      lt_plan_ = std::make_unique<v0::CublasLtFp8>(lt_handle_.get(), m(), n(), k(), false,
                                                   block ? v0::LtScales::block : v0::LtScales::per_tensor, sa, sb);
      lt_plan_->select_algorithm(operands().a.data(), operands().b.data(), 1.0f, d(), stream);
      say(choice_of(*lt_plan_));
      return;
    }
    lt_plan_->run(operands().a.data(), operands().b.data(), 1.0f, d(), stream);
  }

  /// cuBLAS BF16 on these inputs dequantized to BF16 (made once, untimed).
  void run_bf16(cudaStream_t stream) {
    if (!bf16_) bf16_ = std::make_unique<control::CublasBf16>(gemm());
    bf16_->run(d(), stream);
  }

private:
  int stages_;
  int min_saving_; // K blocks a cut of v7 must save (--min-saving)
  std::unique_ptr<v5::Plan> split_plan_;
  std::unique_ptr<v7::Plan> stream_plan_;
  v0::LtHandle lt_handle_;
  steps::DeviceBuffer<float> lt_sb_; // B's block scales in cuBLASLt's layout
  std::unique_ptr<v0::CublasLtFp8> lt_plan_;
  std::unique_ptr<control::CublasBf16> bf16_;
};

/// v5's row: where its plan does not split K it runs v4's kernel, and says so
/// (steps::Row::same_as), so that the table does not rank one kernel twice.
steps::Row<KernelProblem> split_k_row() {
  steps::Row<KernelProblem> r = fp8_row<KernelProblem>(
      "split_k", "v5: v4, or with too few tiles for the GPU: K split over a cluster, summed in distributed shared memory",
      steps::Role::version, gamma_tensor_cores, [](KernelProblem& p, cudaStream_t s) { p.run_split_k(s); });
  r.same_as = [](KernelProblem& p) { return p.split_plan().splits == 1 ? std::string(kWarpSpecialized) : std::string(); };
  r.unavailable = [](const KernelProblem&, const steps::Run& run) { return needs_hopper(run); };
  return r;
}

/// v7's row: where nothing is split it runs v6's kernel, and says so.
steps::Row<KernelProblem> stream_k_row() {
  steps::Row<KernelProblem> r = fp8_row<KernelProblem>(
      "stream_k", "v7: v6 on the whole waves, then the last wave's tiles cut by K over the idle SMs",
      steps::Role::version, gamma_tensor_cores, [](KernelProblem& p, cudaStream_t s) { p.run_stream_k(s); });
  r.same_as = [](KernelProblem& p) { return p.stream_plan().splits() ? std::string() : std::string(kWideTiles); };
  r.unavailable = [](const KernelProblem&, const steps::Run& run) { return needs_hopper(run); };
  return r;
}

} // namespace ch10
