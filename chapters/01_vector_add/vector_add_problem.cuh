// Chapter 01: the arrays every row of the chapter's table adds or copies,
// as a problem: inputs a and b (--offset floats past a 16-byte boundary),
// output c, and the checks against the CPU references.
#pragma once

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace ch01 {

/// Inputs a and b, output c, and the CPU references of the chapter's rows.
class VectorAdd {
public:
  VectorAdd(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(static_cast<std::size_t>(opts.size)),
        offset_(static_cast<std::size_t>(opts.get("--offset"))),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        a_(n_, offset_), b_(n_, offset_), c_(n_, offset_) {
    // Random inputs, generated on the GPU, copied back for the reference.
    steps::fill_uniform_device(a_.data(), n_, opts.seed, -1.0f, 1.0f);
    steps::fill_uniform_device(b_.data(), n_, opts.seed + 1, -1.0f, 1.0f);
    a_host_ = a_.download();
    b_host_ = b_.download();
  }

  std::string describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "c = a + b, n = %zu floats (3 arrays of %s), offset %zu", n_,
                  steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(), offset_);
    return buf;
  }

  /// NaN everywhere in c: an element no thread writes shows.
  void poison() { c_.poison(); }

  /// c == a + b exactly: one float addition rounds the same way on the CPU
  /// and the GPU.
  steps::Comparison check_sum() {
    if (sum_.empty()) {
      sum_.resize(n_);
      for (std::size_t i = 0; i < n_; ++i) sum_[i] = a_host_[i] + b_host_[i];
    }
    return check_against(sum_);
  }

  /// c == a exactly (the copy baseline).
  steps::Comparison check_copy() { return check_against(a_host_); }

  const float* a() const { return a_.data(); }
  const float* b() const { return b_.data(); }
  float* c() { return c_.data(); }
  std::size_t n() const { return n_; }
  const steps::DeviceInfo& dev() const { return dev_; }

private:
  steps::Comparison check_against(const std::vector<float>& want) {
    const steps::Comparison guards = c_.check_guards();
    if (!guards.ok) return guards;
    c_.download(got_);
    return steps::compare(got_, want, steps::Tolerance::exact());
  }

  steps::DeviceInfo dev_;
  std::size_t n_, offset_;
  steps::GuardedBuffer<float> a_, b_, c_;
  std::vector<float> a_host_, b_host_, sum_, got_; // got_ is reused between checks
};

} // namespace ch01
