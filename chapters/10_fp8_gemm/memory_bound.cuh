// Chapter 10: the memory bound of a shape, measured in the same run.
//
// A GEMM must at least read A and B once and write D once: M K + N K bytes
// of FP8 and 2 M N of BF16 (fp8_gemm_work; the scales are a few KB more).
// The reference row `memory_bound` copies that many bytes, device to device
// (half of them read, half written), timed like every row: with
// --flush-l2, from a cold L2. Its time is the least a kernel of this shape
// can take on this GPU's DRAM, measured rather than taken from a datasheet;
// its TFLOP/s (the GEMM's FLOP over that time) is the roof the versions are
// read against where DRAM limits (M = 128: the lesson's roofline).
#pragma once

#include "problem.cuh" // fp8_gemm_work

#include "steps/chapter.hpp"
#include "steps/cli.hpp"
#include "steps/compare.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"

#include <cstdint>
#include <string>

namespace ch10 {

class MemoryBound {
public:
  MemoryBound(const steps::Options& opts, steps::Run&)
      : m_(steps::dimension(opts, "--m")), n_(steps::dimension(opts, "--n")), k_(opts.get("--k")),
        floats_(steps::ceil_div<std::size_t>(static_cast<std::size_t>(work().bytes / 2), 4)), src_(floats_),
        dst_(floats_) {
    steps::fill_uniform_device(src_.data(), floats_, opts.seed, -1.0f, 1.0f, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  /// The GEMM's bytes and FLOP, as the kernels' rows count them.
  steps::Work work() const { return fp8_gemm_work(m_, n_, k_); }

  std::string describe() const {
    return "the memory bound: " + std::to_string(2 * floats_ * 4) + " bytes moved (a copy of " +
           std::to_string(floats_ * 4) + "), as many as a " + std::to_string(m_) + " x " + std::to_string(n_) +
           " x " + std::to_string(k_) + " FP8 GEMM must move";
  }

  void copy(cudaStream_t stream) {
    CUDA_CHECK(cudaMemcpyAsync(dst_.data(), src_.data(), floats_ * 4, cudaMemcpyDeviceToDevice, stream));
  }
  void poison() { dst_.fill_bytes(0xFF); }
  steps::Comparison check() const {
    return steps::compare(dst_.to_host(), src_.to_host(), steps::Tolerance::exact());
  }

private:
  std::int64_t m_, n_, k_;
  std::size_t floats_;
  steps::DeviceBuffer<float> src_, dst_;
};

/// The row: its time is the shape's memory bound, its TFLOP/s the roof.
inline steps::Row<MemoryBound> memory_bound_row() {
  steps::Row<MemoryBound> r = steps::make_row<MemoryBound>(
      "memory_bound",
      "reference: a device-to-device copy of the bytes this GEMM must move (A, B read, D written): the least time "
      "DRAM allows",
      steps::Role::reference, [](MemoryBound& p, steps::Run& run) { p.copy(run.stream()); },
      [](const MemoryBound& p) { return p.work(); });
  r.reset = [](MemoryBound& p) { p.poison(); };
  r.check = [](MemoryBound& p) { return p.check(); };
  return r;
}

} // namespace ch10
