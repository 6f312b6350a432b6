// Chapter 10: the per-tensor cuBLASLt rows' problem (a reference: a
// different, easier product than the chapter's fine-grained one), and how
// a cuBLASLt row says which algorithm it chose.
#pragma once

#include "problem.cuh"
#include "v0_cublaslt.cuh"

#include "steps/chapter.hpp"

#include <memory>
#include <string>

namespace ch10 {

/// What a cuBLASLt plan chose, for the row's notes: which of the
/// heuristic's candidates won (0 = its own first choice).
inline std::string choice_of(const v0::CublasLtFp8& plan) {
  return "heuristic candidate " + std::to_string(plan.chosen()) + " of " + std::to_string(plan.candidates()) +
         " is the fastest of the " + std::to_string(plan.runnable()) + " that ran (mean of back-to-back calls; " +
         v0::lt_version() + ")";
}

/// cuBLASLt's per-tensor rows: the per-tensor product (a different, easier
/// problem than the fine-grained one), whatever scaling the command line
/// asks for; scales through the scale pointers (SCALAR_32F). Each row (one
/// per accumulation mode) makes its plan on first use (the untimed
/// verification run), as its state (Run::row_state), and notes its choice.
class CublasLtProblem : public Fp8Data {
public:
  CublasLtProblem(const steps::Options& opts, steps::Run&)
      : Fp8Data(opts, Scaling::per_tensor), handle_(v0::make_lt_handle()) {}

  std::string describe() const {
    return summary("cuBLASLt, a different problem: D (bf16) = A (e4m3) * B^T (e4m3), FP32 accumulation, one scale "
                   "per tensor (scale pointers)");
  }

  void run(bool fast, steps::Run& run) {
    auto& plan = run.row_state<std::unique_ptr<v0::CublasLtFp8>>(); // freed with the row, before handle_
    if (!plan) {
      plan = std::make_unique<v0::CublasLtFp8>(handle_.get(), m(), n(), k(), fast, v0::LtScales::per_tensor,
                                               operands().sa.data(), operands().sb.data());
      plan->select_algorithm(operands().a.data(), operands().b.data(), 1.0f, d(), run.stream());
      run.row_note(choice_of(*plan));
      return;
    }
    plan->run(operands().a.data(), operands().b.data(), 1.0f, d(), run.stream());
  }

private:
  v0::LtHandle handle_;
};

} // namespace ch10
