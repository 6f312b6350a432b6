// Chapter 01: your exercise as a row of the chapter's table ("yours"), built
// when exercises/01_vector_add compiles. Its own problem: y = 2 x - 0.5 y on
// arrays of --size elements (same bytes as a + b), checked against a CPU
// reference computed in double.
#pragma once

#include "axpby.hpp"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <string>
#include <vector>

namespace ch01 {

class Axpby {
public:
  static constexpr float kAlpha = 2.0f;
  static constexpr float kBeta = -0.5f;

  Axpby(const steps::Options& opts, steps::Run&)
      : n_(static_cast<std::size_t>(opts.size)), offset_(static_cast<std::size_t>(opts.get("--offset"))),
        x_(n_, offset_), y_(n_, offset_), y_in_(n_) {
    steps::fill_uniform_device(x_.data(), n_, opts.seed + 10, -1.0f, 1.0f);
    steps::fill_uniform_device(y_in_.data(), n_, opts.seed + 11, -1.0f, 1.0f);
    const std::vector<float> x = x_.download(), y = y_in_.to_host();
    want_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i)
      want_[i] = static_cast<float>(double{kAlpha} * x[i] + double{kBeta} * y[i]);
  }

  std::string describe() const {
    return "exercise 01: y = 2 x - 0.5 y in place, n = " + std::to_string(n_) + " floats, offset " +
           std::to_string(offset_);
  }

  void launch(cudaStream_t s) { ex01::axpby(kAlpha, x_.data(), kBeta, y_.data(), n_, s); }
  /// y starts as the input again (the update is in place).
  void restore(cudaStream_t s) { y_.copy_from_device(y_in_.data(), s); }

  steps::Comparison check() {
    const steps::Comparison guards = y_.check_guards();
    if (!guards.ok) return guards;
    return steps::compare(y_.download(), want_, steps::Tolerance::fp32());
  }

  std::size_t n() const { return n_; }

private:
  std::size_t n_, offset_;
  steps::GuardedBuffer<float> x_, y_;
  steps::DeviceBuffer<float> y_in_;
  std::vector<float> want_;
};

inline steps::GroupPtr yours_group() {
  steps::Row<Axpby> r;
  r.name = "yours";
  r.what = "exercise 01: your axpby, y = 2x - 0.5y in place (12 bytes per element, like a + b)";
  r.role = steps::Role::yours;
  r.launch = [](Axpby& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const Axpby& p) { return steps::Work{12.0 * static_cast<double>(p.n()), 3.0 * static_cast<double>(p.n())}; };
  r.reset = [](Axpby& p) { p.restore(nullptr); };
  r.check = [](Axpby& p) { return p.check(); };
  return steps::group<Axpby>({r});
}

} // namespace ch01
