// Chapter 06: the problem every row sums, and its checks.
//
// The input x (uniform floats, or with --integers small nonzero integers
// whose sums are exact), the one-float result, the workspaces of v7, of the
// divergence pair and of CUB, and the double-precision reference. check()
// holds the result to the error bound of the row's summation tree
// (bound(depth)) and, with --repeat-check or for a deterministic row, runs
// it a second time and compares the bits. sum_row makes a row of it from
// what the row's sum is (Sum: how its result starts, its depth, its
// atomics) and its launch.
#pragma once

#include "block_size.cuh"
#include "divergence.cuh"
#include "v7_last_block.cuh" // v7::max_blocks: the size of its partials

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"
#include "steps/watchdog.hpp"

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ch06 {

/// Unit roundoff of float (round to nearest): every float addition returns
/// (a + b)(1 + d) with |d| <= u.
constexpr double kFloatUnit = 0x1p-24;
/// Unit roundoff of double.
constexpr double kDoubleUnit = 0x1p-53;

/// gamma_k = k u / (1 - k u): the relative error of k successive roundings
/// (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1). Infinite
/// when k u >= 1: no bound exists then.
inline double gamma_of(std::size_t k, double u) {
  const double ku = static_cast<double>(k) * u;
  return ku < 1 ? ku / (1 - ku) : INFINITY;
}

// Turns uniform values in [0, 16) into the integers -8..-1, 1..8 (never 0).
__global__ void to_nonzero_integers(float* x, std::size_t n) {
  for (std::size_t i = steps::global_index(); i < n; i += steps::grid_size()) {
    const float k = floorf(x[i]); // 0 .. 15
    x[i] = k < 8.0f ? k - 8.0f : k - 7.0f;
  }
}

/// The input x, the one-float result, the workspaces of v7, of the tree pair
/// and of CUB, and the reference: the sum and the sum of magnitudes of x,
/// in double.
class Reduction {
public:
  Reduction(const steps::Options& opts, steps::Run& run)
      : run_(run), dev_(run.device()), n_(static_cast<std::size_t>(opts.size)),
        offset_(static_cast<std::size_t>(opts.get("--offset"))), integers_(opts.has("--integers")),
        repeat_check_(opts.has("--repeat-check")),
        // Device memory first: a size that does not fit fails here.
        x_(n_, offset_), out_(1), partials_(v7::max_blocks(dev_)), done_(1),
        scratch_a_(std::max<std::size_t>(1, divergence::level_size(n_))),
        scratch_b_(std::max<std::size_t>(1, divergence::level_size(divergence::level_size(n_)))) {
    if (integers_) {
      steps::fill_uniform_device(x_.data(), n_, opts.seed, 0.0f, 16.0f, run_.stream());
      to_nonzero_integers<<<steps::full_wave_blocks(dev_, n_, kThreads), kThreads, 0, run_.stream()>>>(x_.data(), n_);
      CUDA_CHECK_LAUNCH();
    } else {
      steps::fill_uniform_device(x_.data(), n_, opts.seed, -1.0f, 1.0f, run_.stream());
    }
    CUDA_CHECK(cudaMemsetAsync(done_.data(), 0, sizeof(unsigned int), run_.stream()));
    CUDA_CHECK(cudaStreamSynchronize(run_.stream()));
    compute_reference();
    // CUB's temporary storage, sized and allocated here, never in a timed run.
    // 32-bit item counts where they suffice (CUB's common path).
    if (n_ <= static_cast<std::size_t>(INT_MAX))
      CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes_, x_.data(), out_.data(), static_cast<int>(n_)));
    else
      CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes_, x_.data(), out_.data(), static_cast<std::int64_t>(n_)));
    cub_temp_ = steps::DeviceBuffer<unsigned char>(std::max<std::size_t>(1, cub_bytes_));
  }

  std::string describe() const {
    char buf[256];
    std::snprintf(buf, sizeof buf, "sum of n = %zu floats (%s), %s, offset %zu", n_,
                  steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(),
                  !integers_ ? "uniform in [-1, 1)"
                  : exact_   ? "random integers in [-8, 8] without 0 (every partial sum exact: exact checks)"
                             : "random integers in [-8, 8] without 0 (sum |x| > 2^24: checked within the bound)",
                  offset_);
    return buf;
  }

  const float* x() const { return x_.data(); }
  float* out() { return out_.data(); }
  std::size_t n() const { return n_; }
  const steps::DeviceInfo& dev() const { return dev_; }
  float* partials() { return partials_.data(); }
  std::size_t partials_size() const { return partials_.size(); }
  unsigned int* done() { return done_.data(); }
  divergence::Scratch scratch() { return {scratch_a_.data(), scratch_b_.data()}; }

  /// cub::DeviceReduce::Sum with the storage sized in the constructor.
  void cub_sum(cudaStream_t s) {
    std::size_t bytes = cub_bytes_;
    if (n_ <= static_cast<std::size_t>(INT_MAX))
      CUDA_CHECK(cub::DeviceReduce::Sum(cub_temp_.data(), bytes, x_.data(), out_.data(), static_cast<int>(n_), s));
    else
      CUDA_CHECK(
          cub::DeviceReduce::Sum(cub_temp_.data(), bytes, x_.data(), out_.data(), static_cast<std::int64_t>(n_), s));
  }

  /// NaN in the result: a version that never writes it shows.
  void poison() { out_.poison(); }
  /// 0 in the result: the start value of the versions that accumulate with atomics.
  void zero(cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(out_.data(), 0, sizeof(float), s)); }

  /// The error bound for a version whose longest path from an element to
  /// the result has `depth` roundings:
  ///   |got - sum| <= gamma_depth(float) * sum |x_i|  +  2 gamma_n(double) * sum |x_i|
  /// The first term holds for ANY summation tree of that depth (each element
  /// is multiplied by at most `depth` factors (1 + d), |d| <= u); the second
  /// covers the double-precision reference and its sum of magnitudes. When
  /// the inputs are integers and sum |x_i| <= 2^24, every partial sum, in
  /// any order, is an integer a float holds exactly: no addition rounds, and
  /// the bound is 0.
  double bound(std::size_t depth) const {
    if (exact_) return 0.0;
    return (gamma_of(depth, kFloatUnit) + 2 * gamma_of(n_, kDoubleUnit)) * abs_sum_;
  }

  /// Checks the result against the reference within bound(depth). With
  /// --repeat-check, or for a version that promises determinism, runs it a
  /// second time (`run_again`) and compares the bits of the two results: a
  /// deterministic version fails if they differ.
  steps::Comparison check(const std::string& name, std::size_t depth, bool deterministic,
                          const std::function<void(cudaStream_t)>& run_again) {
    steps::Comparison c = out_.check_guards();
    if (!c.ok) return c;
    const float got = result();
    const double tol = bound(depth);
    c = steps::compare_each(
        1, [got](std::size_t) { return got; }, [this](std::size_t) { return sum_; },
        [tol](std::size_t, double) { return tol; },
        INFINITY); // one element: the element-wise bound is the whole check
    if (!deterministic && !repeat_check_) return c;

    run_again(run_.stream());
    steps::synchronize_or_timeout(run_.stream(), 120, "ch06_reduction: the second run of '" + name +
                                                          "' (--repeat-check) did not finish within 120 s");
    const float again = result();
    const bool same = bits(got) == bits(again);
    // What the second run shows is a note of the row (check() runs inside
    // it): printed under the table as "name: ...", and in the row's JSON.
    if (repeat_check_) {
      char line[400];
      std::snprintf(line, sizeof line,
                    "repeat-check: run 1 %.9g [0x%08x], run 2 %.9g [0x%08x]: %s; |error| %.3g, bound %.3g "
                    "(depth %zu)",
                    got, bits(got), again, bits(again), same ? "same bits" : "DIFFERENT bits",
                    std::fabs(static_cast<double>(got) - sum_), tol, depth);
      run_.row_note(line);
    }
    if (deterministic && !same && c.ok) {
      run_.row_note("two runs on the same input gave different bits (" + steps::format_value(got) + " and " +
                    steps::format_value(again) + "), but this version promises determinism");
      c.ok = false;
      c.bad_count = 1;
      c.first_bad = 0;
      c.expected_at_first_bad = got;
      c.got_at_first_bad = again;
    }
    return c;
  }

private:
  static std::uint32_t bits(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  }

  float result() const {
    float v = 0;
    CUDA_CHECK(cudaMemcpy(&v, out_.data(), sizeof v, cudaMemcpyDeviceToHost));
    return v;
  }

  // The reference: x is copied back in chunks (a 1 GiB input needs no 1 GiB
  // host copy) and summed in double, element by element.
  void compute_reference() {
    const std::size_t chunk = std::min<std::size_t>(n_, std::size_t{1} << 24);
    steps::PinnedBuffer<float> host(std::max<std::size_t>(1, chunk));
    double sum = 0, abs_sum = 0;
    for (std::size_t at = 0; at < n_; at += chunk) {
      const std::size_t count = std::min(chunk, n_ - at);
      CUDA_CHECK(cudaMemcpy(host.data(), x_.data() + at, count * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < count; ++i) {
        sum += host.data()[i];
        abs_sum += std::fabs(static_cast<double>(host.data()[i]));
      }
    }
    sum_ = sum;
    abs_sum_ = abs_sum;
    // Integers with sum |x| <= 2^24: every partial sum is exact in float, and
    // (far below 2^53) the double sums above are exact too.
    exact_ = integers_ && abs_sum_ <= 0x1p24;
  }

  steps::Run& run_;
  steps::DeviceInfo dev_;
  std::size_t n_, offset_;
  bool integers_, repeat_check_;
  steps::GuardedBuffer<float> x_, out_;
  steps::DeviceBuffer<float> partials_;
  steps::DeviceBuffer<unsigned int> done_;
  steps::DeviceBuffer<float> scratch_a_, scratch_b_;
  steps::DeviceBuffer<unsigned char> cub_temp_;
  std::size_t cub_bytes_ = 0;
  double sum_ = 0, abs_sum_ = 0;
  bool exact_ = false;
};

using Row = steps::Row<Reduction>;
using Launch = std::function<void(Reduction&, cudaStream_t)>;
using Depth = std::function<std::size_t(const Reduction&)>;
using Count = std::function<double(const Reduction&)>;

/// How a row's result starts.
enum class Start {
  zeroed,  ///< the kernel accumulates into it with atomics: 0 before every run (untimed)
  as_left, ///< the kernel writes it (or, for a mistake, forgets to zero it)
};

/// What a row's check needs to know besides its launch.
struct Sum {
  Start start = Start::as_left;
  bool deterministic = false; ///< promises the same bits on every run (checked)
  Depth depth;                ///< roundings on the longest path to the result
  Count float_atomics;        ///< float atomics per run (the table's column)
};

/// A row that sums x into the one-float result: 4 bytes read per element,
/// checked against the double-precision reference within the row's bound.
Row sum_row(std::string name, std::string what, steps::Role role, Sum sum, Launch launch) {
  Row r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [launch](Reduction& p, steps::Run& run) { launch(p, run.stream()); };
  r.work = [](const Reduction& p) {
    return steps::Work{4.0 * static_cast<double>(p.n()), static_cast<double>(p.n())};
  };
  r.reset = [](Reduction& p) { p.poison(); };
  if (sum.start == Start::zeroed) r.before_each = [](Reduction& p, cudaStream_t s) { p.zero(s); };
  r.extras = [count = sum.float_atomics](const Reduction& p) {
    return std::vector<steps::Extra>{{"float atomics", count(p), 0}};
  };
  r.check = [name = r.name, sum, launch](Reduction& p) {
    return p.check(name, sum.depth(p), sum.deterministic, [&p, &sum, &launch](cudaStream_t s) {
      if (sum.start == Start::zeroed) p.zero(s);
      launch(p, s);
    });
  };
  return r;
}

/// Float atomics of a kernel that makes one per block / per thread.
double per_block(std::size_t blocks) { return static_cast<double>(blocks); }

} // namespace ch06
