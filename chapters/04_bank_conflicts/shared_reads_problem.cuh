// Chapter 04: the shared-memory microbenchmark as a problem of the
// chapter's table: the input words, every thread's output and the CPU
// reference of what each row reads (its Pattern), and the row builders of
// the stride sweep, the wide loads and the column reads; main.cu puts them
// in the registry.
#pragma once

#include "bench.cuh" // kThreads, blocks_for
#include "strided.cuh"
#include "wide.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ch04 {

/// Input word i: a whole number in [1, 127], never zero (see bench.cuh for
/// why whole numbers).
inline float input_value(std::uint64_t seed, std::size_t i) {
  return std::floor(steps::uniform_at(seed, i, 1.0f, 128.0f));
}

/// What a row reads, and so what its CPU reference is. Each row captures
/// its own Pattern, made from the same values as its launch.
struct Pattern {
  bool columns = true; ///< column reads of a tile (columns.cuh) or strided reads (strided.cuh)
  int width = 1;       ///< floats per access (strided reads)
  int stride = 1;      ///< in accesses (strided reads)

  /// Lane l reads row l of the tile, one column per step.
  static Pattern column_reads() { return {}; }
  /// Lane l reads accesses of `width` floats, `stride` accesses apart.
  static Pattern strided_reads(int width, int stride) { return {false, width, stride}; }
};

/// The input, every thread's output and the CPU reference of the
/// microbenchmark rows (all but "yours").
class SharedReads {
public:
  SharedReads(const steps::Options& opts, steps::Run&)
      : n_(static_cast<std::size_t>(opts.size)), blocks_(blocks_for(n_)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        in_(n_), out_(static_cast<std::size_t>(blocks_) * kThreads) {
    in_host_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) in_host_[i] = input_value(opts.seed, i);
    in_.upload(in_host_.data());
  }

  std::string describe() const {
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "%zu input words = %u blocks x one 32 x 32 tile; each thread reads %d x 128 B of shared memory "
                  "(%s per run)",
                  n_, blocks_, kRounds, steps::format_bytes(blocks_ * kBytesReadPerBlock).c_str());
    return buf;
  }

  /// Shared-memory bytes read by one run (the same for every row).
  steps::Work work() const { return {blocks_ * kBytesReadPerBlock, 0}; }

  /// NaN everywhere in the output: a thread that writes nothing shows.
  void poison() { out_.poison(); }

  /// Every thread's sum, compared exactly with what `pattern` makes it read:
  /// whole numbers below 2^24, so float sums are exact in any order.
  steps::Comparison check(const Pattern& pattern) {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    out_.download(got_);
    const std::vector<double> want = expected(pattern);
    return steps::compare(got_.data(), want.data(), got_.size(), steps::Tolerance::exact());
  }

  const float* in() const { return in_.data(); }
  float* out() { return out_.data(); }
  std::size_t n() const { return n_; }

private:
  // What every thread must have summed (see bench.cuh). Thread t of block b
  // depends only on b's tile and on its lane t % 32.
  std::vector<double> expected(const Pattern& p) const {
    constexpr double kCycles = kRounds / kCycle;
    std::vector<double> want(static_cast<std::size_t>(blocks_) * kThreads);
    std::vector<double> tile(kTileWords), per_lane(32), prefix;
    for (unsigned int b = 0; b < blocks_; ++b) {
      for (int i = 0; i < kTileWords; ++i) {
        const std::size_t g = static_cast<std::size_t>(b) * kTileWords + i;
        tile[i] = g < n_ ? in_host_[g] : 0.0;
      }
      if (p.columns) {
        // Lane l reads element (l, col) at step col, every round.
        for (int l = 0; l < 32; ++l) {
          double sum = 0;
          for (int c = 0; c < TILE; ++c) sum += step_weight(c) * tile[l * TILE + c];
          per_lane[l] = kRounds * sum;
        }
      } else {
        // Lane l reads access (l * stride + q + 32 j) mod accesses at step j of
        // round q: for each j, a window of 32 consecutive accesses (q = 0..31)
        // starting at (l * stride + 32 j) mod accesses. Window sums come from a
        // prefix sum over the tile taken twice (windows may wrap around).
        const int accesses = kTileWords / p.width;
        prefix.assign(2 * accesses + 1, 0.0);
        for (int k = 0; k < 2 * accesses; ++k) {
          double v = 0;
          for (int e = 0; e < p.width; ++e) v += tile[(k % accesses) * p.width + e];
          prefix[k + 1] = prefix[k] + v;
        }
        for (int l = 0; l < 32; ++l) {
          double sum = 0;
          for (int j = 0; j < TILE / p.width; ++j) {
            const int start = (l * p.stride + 32 * j) % accesses;
            sum += step_weight(j) * (prefix[start + 32] - prefix[start]);
          }
          per_lane[l] = kCycles * sum;
        }
      }
      for (int t = 0; t < kThreads; ++t) want[static_cast<std::size_t>(b) * kThreads + t] = per_lane[t % 32];
    }
    return want;
  }

  std::size_t n_;
  unsigned int blocks_;
  steps::GuardedBuffer<float> in_, out_;
  std::vector<float> in_host_, got_; // got_ is reused between checks
};

using Row = steps::Row<SharedReads>;
using Launch = std::function<void(const float* in, std::size_t n, float* out, cudaStream_t)>;

/// A row of the microbenchmark: `launch` reads in `pattern`, and the check
/// expects exactly what that pattern reads.
Row read_row(std::string name, std::string what, steps::Role role, Pattern pattern, Launch launch) {
  Row r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [launch](SharedReads& p, steps::Run& run) { launch(p.in(), p.n(), p.out(), run.stream()); };
  r.work = [](const SharedReads& p) { return p.work(); };
  r.reset = [](SharedReads& p) { p.poison(); };
  r.check = [pattern](SharedReads& p) { return p.check(pattern); };
  return r;
}

/// A row of the stride sweep: 4-byte loads, lanes `stride` words apart.
Row stride_row(int stride, steps::Role role, std::string what) {
  return read_row("stride_" + std::to_string(stride), std::move(what), role, Pattern::strided_reads(1, stride),
                  [stride](const float* in, std::size_t n, float* out, cudaStream_t s) {
                    strided::launch<float>(in, n, stride, out, s);
                  });
}

/// A row of the wide-load experiment: float2 or float4 loads, lanes
/// `stride` accesses apart. Named "float2_stride_S" or "float4_stride_S".
template <class T>
Row wide_row(int stride, std::string what) {
  constexpr int kWidth = strided::kWidth<T>;
  return read_row("float" + std::to_string(kWidth) + "_stride_" + std::to_string(stride), std::move(what),
                  steps::Role::reference, Pattern::strided_reads(kWidth, stride),
                  [stride](const float* in, std::size_t n, float* out, cudaStream_t s) {
                    wide::launch<T>(in, n, stride, out, s);
                  });
}

/// A column-read row: lane l reads row l of a 32 x 32 tile, column by column.
Row column_row(std::string name, std::string what, steps::Role role, Launch launch) {
  return read_row(std::move(name), std::move(what), role, Pattern::column_reads(), std::move(launch));
}

} // namespace ch04
