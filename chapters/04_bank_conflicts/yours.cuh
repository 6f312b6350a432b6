// Chapter 04: your exercise as a row of the chapter's table ("yours"), built
// when exercises/04_bank_conflicts compiles. Its own problem, unrelated to the
// microbenchmark's buffers: y = A x with A of kGemvCols columns (not a
// multiple of 32: the last tile of every row is partial) and as many rows as
// --size allows. Entries are multiples of 1/16 between -1 and 1, so every sum
// is exact in float, in any order (see exercises/04_bank_conflicts/README.md).
//
// Verified when y is exactly right AND your tile layout is conflict-free:
// every warp access to the tile (a row store, a column read) takes one
// shared-memory pass. The Problem line says in words what your layout does.
#pragma once

#include "bench.cuh"
#include "gemv.hpp"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace ch04 {

/// Columns of the exercise's A: 16 whole tiles and a partial one of 5.
constexpr int kGemvCols = 517;

/// A multiple of 1/16 in [-1, 1], never 0.
inline float gemv_value(std::uint64_t seed, std::size_t i) {
  float k = std::floor(steps::uniform_at(seed, i, -16.0f, 16.0f)); // -16 .. 15
  if (k >= 0) k += 1;                                                // -16..-1, 1..16: never 0
  return k / 16.0f;
}

/// Shared-memory passes a warp needs to access elements (row, col) of your
/// tile for k = 0..31, with row = line (a row store) or col = line (a column
/// read): the most distinct words any one bank has to deliver.
inline int tile_passes(bool is_row, int line) {
  std::vector<std::vector<int>> words(kBanks);
  for (int k = 0; k < ex04::TILE; ++k) {
    const int w = ex04::tile_offset(is_row ? line : k, is_row ? k : line);
    auto& bank = words[static_cast<std::size_t>(((w % kBanks) + kBanks) % kBanks)];
    if (std::find(bank.begin(), bank.end(), w) == bank.end()) bank.push_back(w);
  }
  std::size_t most = 0;
  for (const auto& b : words) most = std::max(most, b.size());
  return static_cast<int>(most);
}

/// Your tile layout in words: "conflict-free", or the first row or column
/// that conflicts and what it costs.
inline std::string describe_layout() {
  for (const bool is_row : {false, true}) {
    for (int line = 0; line < ex04::TILE; ++line) {
      const int passes = tile_passes(is_row, line);
      if (passes <= 1) continue;
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "NOT conflict-free: tile %s %d is a %d-way bank conflict (%d shared-memory passes per warp %s "
                    "instead of 1)",
                    is_row ? "row" : "column", line, passes, passes, is_row ? "store" : "read");
      return buf;
    }
  }
  return "conflict-free (every row store and every column read of the tile: 1 pass)";
}

class Gemv {
public:
  Gemv(const steps::Options& opts, steps::Run&)
      : m_(static_cast<int>(std::clamp<std::int64_t>(opts.size / kGemvCols, 1, std::int64_t{1} << 20))),
        // Device memory first: a size that does not fit fails here.
        a_(static_cast<std::size_t>(m_) * kGemvCols), x_(kGemvCols), y_(static_cast<std::size_t>(m_)),
        layout_(describe_layout()) {
    std::vector<float> a(a_.size()), x(x_.size());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = gemv_value(opts.seed + 1, i);
    for (std::size_t j = 0; j < x.size(); ++j) x[j] = gemv_value(opts.seed + 2, j);
    a_.upload(a.data());
    x_.upload(x.data());
    want_.assign(static_cast<std::size_t>(m_), 0.0);
    for (int r = 0; r < m_; ++r)
      for (int c = 0; c < kGemvCols; ++c)
        want_[r] += static_cast<double>(a[static_cast<std::size_t>(r) * kGemvCols + c]) * x[c];
  }

  std::string describe() const {
    return "exercise 04: your gemv, y = A x with A " + std::to_string(m_) + " x " + std::to_string(kGemvCols) +
           "; your tile layout: " + layout_;
  }

  void launch(cudaStream_t s) { ex04::gemv(a_.data(), x_.data(), y_.data(), m_, kGemvCols, s); }
  /// NaN everywhere in y: a row no thread writes shows.
  void poison() { y_.poison(); }

  /// y exactly (multiples of 1/256 below 2^16: no rounding in any order);
  /// then the layout: element k is the number of shared-memory passes a warp
  /// needs to read tile column k (then, once those are all 1, to store tile
  /// row k); each must be 1.
  steps::Comparison check() {
    steps::Comparison c = y_.check_guards();
    if (!c.ok) return c;
    y_.download(got_);
    c = steps::compare(got_.data(), want_.data(), got_.size(), steps::Tolerance::exact());
    if (!c.ok) return c;
    for (const bool rows : {false, true}) {
      std::vector<float> passes(ex04::TILE), one_pass(ex04::TILE, 1.0f);
      for (int k = 0; k < ex04::TILE; ++k) passes[k] = static_cast<float>(tile_passes(rows, k));
      steps::Comparison layout = steps::compare(passes, one_pass, steps::Tolerance::exact());
      if (!layout.ok) {
        layout.note = "your tile layout is " + layout_;
        return layout;
      }
    }
    return c;
  }

  double elements() const { return static_cast<double>(m_) * kGemvCols; }

private:
  int m_;
  steps::GuardedBuffer<float> a_, x_, y_;
  std::string layout_;
  std::vector<double> want_;
  std::vector<float> got_;
};

inline steps::GroupPtr yours_group() {
  steps::Row<Gemv> r;
  r.name = "yours";
  r.what = "exercise 04: your gemv y = A x (A: rows x 517); verified: y exactly, then the shared-memory passes "
           "of a warp's read of tile column [k] (then store of tile row [k]), 1 each (32 = a 32-way conflict)";
  r.role = steps::Role::yours;
  r.launch = [](Gemv& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const Gemv& p) { return steps::Work{8.0 * p.elements(), 2.0 * p.elements()}; };
  r.reset = [](Gemv& p) { p.poison(); };
  r.check = [](Gemv& p) { return p.check(); };
  return steps::group<Gemv>({r});
}

} // namespace ch04
