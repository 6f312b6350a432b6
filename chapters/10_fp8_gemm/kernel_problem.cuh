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
#include <optional>
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

  /// v5, or v4 where its plan does not split K. The plan is the row's
  /// state, made on first use (it asks the occupancy calculator) and noted.
  void run_split_k(steps::Run& run) {
    auto& plan = run.row_state<std::optional<v5::Plan>>();
    if (!plan) {
      plan = v5::plan(gemm(), stages_);
      run.row_note(plan->describe());
    }
    if (plan->splits == 1) return v4::launch(gemm(), run.stream(), stages_);
    v5::launch(gemm(), *plan, stages_, run.stream());
  }
  /// Whether v5 splits K here (its row's same_as, asked before the row
  /// runs: the same plan as run_split_k's, made again).
  bool split_k_splits() { return v5::plan(gemm(), stages_).splits > 1; }

  /// v7. Its plan (the cut, its slots and flags) is the row's state, made
  /// on first use and noted.
  void run_stream_k(steps::Run& run) {
    auto& plan = run.row_state<std::unique_ptr<v7::Plan>>();
    if (!plan) {
      plan = std::make_unique<v7::Plan>(gemm(), min_saving_);
      run.row_note(plan->describe());
    }
    plan->launch(gemm(), run.stream());
  }
  /// Whether v7 cuts the last wave here (its row's same_as: the plan's cut,
  /// without its buffers).
  bool stream_k_splits() { return v7::cut_of(gemm(), min_saving_).splits(); }

  std::string describe() const {
    return summary(std::string("D (bf16) = A (e4m3) * B^T (e4m3), FP32 accumulation, ") + scaling_name(scaling()));
  }

  /// cuBLASLt on these inputs and scales: block scaling (our fine scales in
  /// its layouts, copied once, untimed) or the per-tensor scale pointers.
  /// The plan is the row's state, made and its algorithm chosen on first use
  /// (the untimed verification run), and its choice noted.
  void run_cublaslt(steps::Run& run) {
    auto& lt = run.row_state<LtState>();
    if (!lt.plan) {
      lt.handle = v0::make_lt_handle();
      const bool block = scaling() == Scaling::fine;
      const float* sa = operands().sa.data();
      const float* sb = operands().sb.data();
      if (block) {
        sa = operands().sa_by_kb.data(); // cuBLASLt's 1 x 128 layout when M % 4 == 0 (cublaslt_needs)
        const std::vector<float> b = v0::lt_scales_of(operands().host_b.scales, n(), k());
        lt.sb = steps::DeviceBuffer<float>(b.size());
        lt.sb.copy_from_host(b);
        sb = lt.sb.data();
      }
      lt.plan = std::make_unique<v0::CublasLtFp8>(lt.handle.get(), m(), n(), k(), false,
                                                  block ? v0::LtScales::block : v0::LtScales::per_tensor, sa, sb);
      lt.plan->select_algorithm(operands().a.data(), operands().b.data(), 1.0f, d(), run.stream());
      run.row_note(choice_of(*lt.plan));
      return;
    }
    lt.plan->run(operands().a.data(), operands().b.data(), 1.0f, d(), run.stream());
  }

  /// cuBLAS BF16 on these inputs dequantized to BF16 (made once, untimed:
  /// the row's state).
  void run_bf16(steps::Run& run) {
    auto& bf16 = run.row_state<std::unique_ptr<control::CublasBf16>>();
    if (!bf16) bf16 = std::make_unique<control::CublasBf16>(gemm());
    bf16->run(d(), run.stream());
  }

private:
  /// The cuBLASLt row's state (members in this order: the plan goes first,
  /// the handle last).
  struct LtState {
    v0::LtHandle handle;
    steps::DeviceBuffer<float> sb; // B's block scales in cuBLASLt's layout
    std::unique_ptr<v0::CublasLtFp8> plan;
  };

  int stages_;
  int min_saving_; // K blocks a cut of v7 must save (--min-saving)
};

/// A version whose plan may not split (v5, v7): where it does not, the row
/// runs `otherwise`'s kernel and says so (steps::Row::same_as), so that the
/// table does not rank one kernel twice. Hopper only.
steps::Row<KernelProblem> splitting_row(std::string name, std::string what, void (KernelProblem::*launch)(steps::Run&),
                                        bool (KernelProblem::*splits)(), const char* otherwise) {
  steps::Row<KernelProblem> r =
      fp8_row<KernelProblem>(std::move(name), std::move(what), steps::Role::version, gamma_tensor_cores,
                             [launch](KernelProblem& p, steps::Run& run) { (p.*launch)(run); });
  r.same_as = [splits, otherwise](KernelProblem& p) { return (p.*splits)() ? std::string() : std::string(otherwise); };
  r.needs = steps::Needs{kHopperFeatures, reinterpret_cast<const void*>(v4::fp8_gemm_warp_specialized<kMaxStages>)};
  return r;
}

/// v5's row: where its plan does not split K it runs v4's kernel.
steps::Row<KernelProblem> split_k_row() {
  return splitting_row(
      "split_k", "v5: v4, or with too few tiles for the GPU: K split over a cluster, summed in distributed shared memory",
      &KernelProblem::run_split_k, &KernelProblem::split_k_splits, kWarpSpecialized);
}

/// v7's row: where nothing is split it runs v6's kernel.
steps::Row<KernelProblem> stream_k_row() {
  return splitting_row("stream_k", "v7: v6 on the whole waves, then the last wave's tiles cut by K over the idle SMs",
                       &KernelProblem::run_stream_k, &KernelProblem::stream_k_splits, kWideTiles);
}

} // namespace ch10
