// Chapter 10: your exercise as a row of the chapter's table ("yours"), built
// when exercises/10_fp8_gemm compiles. Its own problem: the chapter's
// product in the scaling the command line asks for, with the scales of A
// and B spelled out in the exercise's form (one per row of A, one per row of
// B, per K block), checked like the chapter's tensor-core versions.
#pragma once

#include "fp8_gemm_1x128.hpp"
#include "problem.cuh"
#include "reference.hpp"

#include "steps/chapter.hpp"
#include "steps/memory.hpp"

#include <string>
#include <vector>

namespace ch10 {

class YoursProblem : public Fp8Data {
public:
  YoursProblem(const steps::Options& opts, steps::Run&) : Fp8Data(opts, scaling_of(opts)) {
    // Your function takes one scale per row of A and per row of B (column of
    // D) and K block: spell this run's scales out in that form.
    const int kbs = k_blocks(k());
    const HostOperand& a = operands().host_a;
    const HostOperand& b = operands().host_b;
    std::vector<float> sa(static_cast<std::size_t>(m()) * kbs), sb(static_cast<std::size_t>(n()) * kbs);
    for (int kb = 0; kb < kbs; ++kb) {
      for (int r = 0; r < m(); ++r) sa[static_cast<std::size_t>(r) * kbs + kb] = a.scale(r, kb);
      for (int c = 0; c < n(); ++c) sb[static_cast<std::size_t>(c) * kbs + kb] = b.scale(c, kb);
    }
    sa_ = steps::DeviceBuffer<float>(sa.size());
    sb_ = steps::DeviceBuffer<float>(sb.size());
    sa_.copy_from_host(sa);
    sb_.copy_from_host(sb);
  }

  std::string describe() const {
    return summary(std::string("exercise 10: D (bf16) = A (e4m3) * B^T (e4m3), ") + scaling_name(scaling()) +
                   " passed as 1 x 128 scales of every row of A and of B");
  }

  void launch(cudaStream_t stream) {
    ex10::fp8_gemm_1x128(m(), n(), k(), reinterpret_cast<const __nv_fp8_e4m3*>(operands().a.data()), sa_.data(),
                         reinterpret_cast<const __nv_fp8_e4m3*>(operands().b.data()), sb_.data(), d(), stream);
  }

private:
  steps::DeviceBuffer<float> sa_, sb_;
};

inline steps::GroupPtr yours_group() {
  steps::GroupOptions options; // FP8 mma.sync, like v2
  options.unavailable = [](const steps::Options&, const steps::Run& run) {
    return steps::unmet({kFp8MmaFeatures, ex10::fp8_gemm_code_probe()}, run.device());
  };
  return steps::group<YoursProblem>(
      {fp8_row<YoursProblem>("yours", "exercise 10: your mma.sync GEMM with 1 x 128 scales on both operands",
                             steps::Role::yours, gamma_tensor_cores,
                             [](YoursProblem& p, steps::Run& run) { p.launch(run.stream()); })},
      options);
}

} // namespace ch10
