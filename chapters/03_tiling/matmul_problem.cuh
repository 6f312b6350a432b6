// Chapter 03: one C = A * B as a problem of the chapter's table: inputs A
// and B, output C, and the reference C is checked against (reference.hpp).
#pragma once

#include "gemm.cuh"
#include "reference.hpp"

#include "steps/chapter.hpp"
#include "steps/cublas.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <climits>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ch03 {

/// Inputs A and B, output C, and the reference of one C = A * B.
class MatMul {
public:
  MatMul(const steps::Options& opts, steps::Run&)
      : d_(dims(opts)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        a_(steps::checked_elements(d_.m, d_.k)), b_(steps::checked_elements(d_.k, d_.n)),
        c_(steps::checked_elements(d_.m, d_.n)) {
    d_.require_int();
    steps::fill_uniform_device(a_.data(), a_.size(), opts.seed, kLo, kHi);
    steps::fill_uniform_device(b_.data(), b_.size(), opts.seed + 1, kLo, kHi);
    CUDA_CHECK(cudaDeviceSynchronize());
    ref_.emplace(d_, a_.data(), b_.data(), a_.to_host(), b_.to_host(), opts.seed);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::string describe() const {
    auto mib = [](std::size_t count) { return steps::format_bytes(4.0 * static_cast<double>(count)); };
    return "C = A * B in FP32, row-major, M x N x K = " + d_.text() + " (A " + mib(a_.size()) + ", B " +
           mib(b_.size()) + ", C " + mib(c_.size()) + "); " + ref_->how();
  }

  steps::Work work() const { return d_.work(); }
  void poison() { c_.poison(); } // NaN everywhere: unwritten elements show
  steps::Comparison check() { return ref_->check(c_); }
  steps::Comparison check_cublas() { return ref_->check_vendor(c_); }

  void run_cublas(cudaStream_t stream) { cublas_sgemm(cublas_, d_, a_.data(), b_.data(), c_.data(), stream); }
  Gemm gemm() {
    return {static_cast<int>(d_.m), static_cast<int>(d_.n), static_cast<int>(d_.k), a_.data(), b_.data(),
            c_.data()};
  }

private:
  Dims d_;
  steps::DeviceBuffer<float> a_, b_;
  steps::GuardedBuffer<float> c_; // guard zones catch stores outside C
  steps::CublasHandle cublas_ = fp32_cublas();
  std::optional<Reference> ref_;
};

} // namespace ch03
