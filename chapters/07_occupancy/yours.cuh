// Chapter 07: exercise 07's GPU part as a row of the chapter's table
// ("yours_convolve"), built when exercises/07_occupancy/convolve compiles.
// Its own problem: a 1-D convolution of radius 8 over --size floats (capped
// at ex07::kMaxN), weights in constant memory, tiles in 48 KiB + 64 bytes of
// shared memory per block. Integer data make every output exact; the check
// compares the first and last two tiles whole and every 97th output between.
#pragma once

#include "convolve.hpp"

#include "steps/chapter.hpp"
#include "steps/compare.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ch07 {

class Convolve {
public:
  static constexpr int kRadius = 8;

  Convolve(const steps::Options& opts, steps::Run&)
      : n_(static_cast<int>(std::min<std::int64_t>(opts.size, ex07::kMaxN))), x_(integers(n_, opts.seed + 30)),
        w_(integers(2 * kRadius + 1, opts.seed + 31)), dx_(static_cast<std::size_t>(n_)),
        dy_(static_cast<std::size_t>(n_)) {
    dx_.upload(x_.data());
  }

  std::string describe() const {
    return "exercise 07: 1-D convolution, radius " + std::to_string(kRadius) + ", n = " + std::to_string(n_) +
           " floats (small integers: exact)";
  }

  void launch(cudaStream_t s) {
    ex07::set_weights(w_.data(), kRadius, s);
    ex07::convolve(dx_.data(), dy_.data(), n_, kRadius, s);
  }
  void reset() { dy_.poison(); }

  steps::Comparison check() {
    const steps::Comparison guards = dy_.check_guards();
    if (!guards.ok) return guards;
    const std::vector<float> got = dy_.download();
    // The outputs checked: two whole tiles at each end (halos, the short last
    // tile) and every 97th in between.
    std::vector<std::size_t> at;
    const std::size_t n = static_cast<std::size_t>(n_), edge = 2 * static_cast<std::size_t>(ex07::kTile);
    for (std::size_t i = 0; i < n; i += (i < edge || i + edge >= n) ? 1 : 97) at.push_back(i);
    return steps::compare_each(
        at.size(), [&](std::size_t k) { return got[at[k]]; }, [&](std::size_t k) { return expected(at[k]); },
        [](std::size_t, double) { return 0.0; }, 0.0);
  }

  double n() const { return n_; }

private:
  static std::vector<float> integers(int count, std::uint64_t seed) {
    std::vector<float> v = steps::random_vector(static_cast<std::size_t>(count), seed);
    for (float& f : v) f = std::round(f * 8.0f);
    return v;
  }
  double expected(std::size_t i) const {
    double sum = 0;
    for (int j = -kRadius; j <= kRadius; ++j) {
      const long long k = static_cast<long long>(i) + j;
      if (k >= 0 && k < n_) sum += static_cast<double>(w_[static_cast<std::size_t>(j + kRadius)]) * x_[static_cast<std::size_t>(k)];
    }
    return sum;
  }

  int n_;
  std::vector<float> x_, w_;
  steps::GuardedBuffer<float> dx_, dy_;
};

inline steps::GroupPtr yours_convolve_group() {
  steps::Row<Convolve> r;
  r.name = "yours_convolve";
  r.what = "exercise 07: your 1-D convolution (constant weights, > 48 KiB shared tiles); GB/s of x read + y written";
  r.role = steps::Role::yours;
  r.launch = [](Convolve& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const Convolve& p) {
    return steps::Work{8.0 * p.n(), 2.0 * (2 * Convolve::kRadius + 1) * p.n()};
  };
  r.reset = [](Convolve& p) { p.reset(); };
  r.check = [](Convolve& p) { return p.check(); };
  return steps::group<Convolve>({r});
}

} // namespace ch07
