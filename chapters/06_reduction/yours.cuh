// Chapter 06: your exercise as a row of the chapter's table ("yours"), built
// when exercises/06_reduction compiles. Its own problem: max |x[i]| and its
// smallest index over --size floats (the same bytes as the sum), checked
// exactly against a CPU scan.
#pragma once

#include "absmax.hpp"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ch06 {

class AbsMax {
public:
  AbsMax(const steps::Options& opts, steps::Run&)
      : n_(static_cast<std::size_t>(opts.size)), offset_(static_cast<std::size_t>(opts.get("--offset"))),
        x_(n_, offset_), out_(kResultWords), workspace_(ex06::kWorkspaceBytes) {
    steps::fill_uniform_device(x_.data(), n_, opts.seed + 20, -1.0f, 1.0f);
    CUDA_CHECK(cudaDeviceSynchronize());
    // The reference: a scan in index order; a strict > keeps the first of
    // equal magnitudes (at 2^28 uniform floats, |x| = 1 occurs about 16 times).
    const std::size_t chunk = std::min<std::size_t>(n_, std::size_t{1} << 24);
    std::vector<float> host(std::max<std::size_t>(1, chunk));
    for (std::size_t at = 0; at < n_; at += chunk) {
      const std::size_t count = std::min(chunk, n_ - at);
      CUDA_CHECK(cudaMemcpy(host.data(), x_.data() + at, count * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < count; ++i)
        if (std::fabs(host[i]) > want_.value) want_ = {std::fabs(host[i]), at + i};
    }
  }

  std::string describe() const {
    return "exercise 06: max |x| and its smallest index, n = " + std::to_string(n_) + " floats, offset " +
           std::to_string(offset_);
  }

  void launch(cudaStream_t s) { ex06::absmax(x_.data(), n_, result_ptr(), workspace_.data(), s); }
  /// The result poisoned, the workspace full of garbage (as the grader does).
  void reset() {
    out_.poison();
    workspace_.fill_bytes(0xA5);
  }

  /// Exact: element [0] of the comparison is the value, [1] the index.
  steps::Comparison check() {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    const std::vector<std::uint64_t> words = out_.download();
    ex06::Result got;
    std::memcpy(&got, words.data(), sizeof got);
    const double g[2] = {got.value, static_cast<double>(got.index)};
    const double w[2] = {want_.value, static_cast<double>(want_.index)};
    return steps::compare_each(
        2, [&g](std::size_t i) { return g[i]; }, [&w](std::size_t i) { return w[i]; },
        [](std::size_t, double) { return 0.0; }, 0.0);
  }

  std::size_t n() const { return n_; }

private:
  // The one Result lives in a guarded buffer of 64-bit words (GuardedBuffer
  // compares its guard values as numbers, which a struct is not).
  static constexpr std::size_t kResultWords = sizeof(ex06::Result) / sizeof(std::uint64_t);
  static_assert(sizeof(ex06::Result) == kResultWords * sizeof(std::uint64_t), "Result is two 64-bit words");
  ex06::Result* result_ptr() { return reinterpret_cast<ex06::Result*>(out_.data()); }

  std::size_t n_, offset_;
  steps::GuardedBuffer<float> x_;
  steps::GuardedBuffer<std::uint64_t> out_;
  steps::DeviceBuffer<unsigned char> workspace_;
  ex06::Result want_{-1.0f, 0};
};

inline steps::GroupPtr yours_group() {
  steps::Row<AbsMax> r;
  r.name = "yours";
  r.what = "exercise 06: your absmax, max |x| and its index (4 bytes read per element, like the sum)";
  r.role = steps::Role::yours;
  r.launch = [](AbsMax& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const AbsMax& p) { return steps::Work{4.0 * static_cast<double>(p.n())}; };
  r.reset = [](AbsMax& p) { p.reset(); };
  r.check = [](AbsMax& p) { return p.check(); };
  return steps::group<AbsMax>({r});
}

} // namespace ch06
