// Chapter 11: your exercise as a row of the chapter's table ("yours"), built
// when exercises/11_tensor_cores compiles. Its own problem: C = A * B with A
// given transposed (k x m, as a backward pass holds it), on the same M x N x K
// and the same kind of inputs as the chapter's rows, checked against the
// same FP64 reference, so its TFLOP/s compare directly with theirs.
#pragma once

#include "mma_tile.hpp"

#include "reference.cuh"

#include "steps/arch.hpp"
#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <optional>
#include <string>

namespace ch11 {

class MatMulTN {
public:
  MatMulTN(const steps::Options& opts, steps::Run&)
      : d_(dims(opts)), at_(steps::checked_elements(d_.k, d_.m, 2)), b_(steps::checked_elements(d_.k, d_.n, 2)),
        c_(steps::checked_elements(d_.m, d_.n)) {
    d_.require_int();
    steps::fill_uniform_bf16_device(reinterpret_cast<std::uint16_t*>(at_.data()), at_.size(), opts.seed, kLo, kHi);
    steps::fill_uniform_bf16_device(reinterpret_cast<std::uint16_t*>(b_.data()), b_.size(), opts.seed + 1, kLo, kHi);
    CUDA_CHECK(cudaDeviceSynchronize());
    ref_.emplace(d_, at_.data(), true, b_.data(), opts.seed);
  }

  std::string describe() const {
    return "exercise 11: C = A * B with A given transposed (k x m), BF16 in, FP32 out, M x N x K = " + d_.text() +
           "; " + ref_->how();
  }

  void launch(cudaStream_t s) {
    ex11::gemm_tn(static_cast<int>(d_.m), static_cast<int>(d_.n), static_cast<int>(d_.k), at_.data(), b_.data(),
                  c_.data(), s);
  }
  steps::Work work() const { return d_.work(); }
  void poison() { c_.poison(); }
  steps::Comparison check() { return ref_->check(c_); }

private:
  Dims d_;
  steps::DeviceBuffer<bf16> at_, b_;
  steps::GuardedBuffer<float> c_;
  std::optional<Reference> ref_;
};

inline steps::GroupPtr yours_group() {
  steps::Row<MatMulTN> r;
  r.name = "yours";
  r.what = "exercise 11: your mma.sync tile, A given transposed (ldmatrix.trans for both operands), any shape";
  r.role = steps::Role::yours;
  r.launch = [](MatMulTN& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const MatMulTN& p) { return p.work(); };
  r.reset = [](MatMulTN& p) { p.poison(); };
  r.check = [](MatMulTN& p) { return p.check(); };
  r.needs = {{steps::Feature::mma_bf16, steps::Feature::ldmatrix}, ex11::kernel_code_probe()};
  return steps::group<MatMulTN>({r});
}

} // namespace ch11
