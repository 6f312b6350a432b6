// Chapter 03: your exercise as a row of the chapter's table ("yours"), built
// when exercises/03_tiling compiles. Its own problem: C = A * B^T with B
// given transposed (n x k, the layout of a linear layer's weights), on the
// same M x N x K, the same random A and B and the same reference as the
// chapter's rows, so its TFLOP/s compare directly with theirs.
#pragma once

#include "sgemm_nt.hpp"

#include "reference.hpp"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ch03 {

class MatMulNT {
public:
  MatMulNT(const steps::Options& opts, steps::Run&)
      : d_(dims(opts)), a_(steps::checked_elements(d_.m, d_.k)), bt_(steps::checked_elements(d_.n, d_.k)),
        c_(steps::checked_elements(d_.m, d_.n)) {
    d_.require_int();
    // B (k x n) exists only while the reference is made: the reference and
    // cuBLAS take it as it is, your code gets its transpose.
    steps::DeviceBuffer<float> b(steps::checked_elements(d_.k, d_.n));
    steps::fill_uniform_device(a_.data(), a_.size(), opts.seed, kLo, kHi);
    steps::fill_uniform_device(b.data(), b.size(), opts.seed + 1, kLo, kHi);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> b_host = b.to_host();
    std::vector<float> bt(bt_.size());
    const std::size_t n = static_cast<std::size_t>(d_.n), k = static_cast<std::size_t>(d_.k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < n; ++j) bt[j * k + i] = b_host[i * n + j];
    bt_.copy_from_host(bt);
    ref_.emplace(d_, a_.data(), b.data(), a_.to_host(), b_host, opts.seed);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::string describe() const {
    return "exercise 03: C = A * B^T in FP32, B given transposed (n x k), M x N x K = " + d_.text() + "; " +
           ref_->how();
  }

  void launch(cudaStream_t s) {
    const int m = static_cast<int>(d_.m), n = static_cast<int>(d_.n), k = static_cast<int>(d_.k);
    ex03::sgemm_nt(m, n, k, a_.data(), k, bt_.data(), k, c_.data(), n, s);
  }
  steps::Work work() const { return d_.work(); }
  void poison() { c_.poison(); }
  steps::Comparison check() { return ref_->check(c_); }

private:
  Dims d_;
  steps::DeviceBuffer<float> a_, bt_;
  steps::GuardedBuffer<float> c_;
  std::optional<Reference> ref_;
};

inline steps::GroupPtr yours_group() {
  steps::Row<MatMulNT> r;
  r.name = "yours";
  r.what = "exercise 03: your tiled C = A * B^T (B given transposed), any shape";
  r.role = steps::Role::yours;
  r.launch = [](MatMulNT& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const MatMulNT& p) { return p.work(); };
  r.reset = [](MatMulNT& p) { p.poison(); };
  r.check = [](MatMulNT& p) { return p.check(); };
  return steps::group<MatMulNT>({r});
}

} // namespace ch03
