// Chapter 05: your exercise as a row of the chapter's table ("yours"), built
// when exercises/05_transpose compiles. Its own problem: your transpose of
// a --rows x --cols matrix (--size when 0) with tight row pitches (ld_in =
// cols, ld_out = rows), so that it moves the same bytes as the chapter's
// versions; checked exactly against the CPU transpose.
#pragma once

#include "cpu_reference.hpp"
#include "launch.cuh"
#include "transpose.hpp"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <string>
#include <vector>

namespace ch05 {

class YourTranspose {
public:
  YourTranspose(const steps::Options& opts, steps::Run&)
      : rows64_(steps::dimension(opts, "--rows")), cols64_(steps::dimension(opts, "--cols")),
        n_(steps::checked_elements(rows64_, cols64_, sizeof(float))), in_(n_), out_(n_) {
    check_grid_limits(rows64_, cols64_); // also keeps rows, cols and the pitches inside ex05's int API
    rows_ = static_cast<int>(rows64_);
    cols_ = static_cast<int>(cols64_);
    steps::fill_uniform_device(in_.data(), n_, opts.seed + 10, -1.0f, 1.0f);
    want_ = cpu_transpose(in_.download(), rows_, cols_);
  }

  std::string describe() const {
    return "exercise 05: out = transpose(in), in: " + std::to_string(rows_) + " x " + std::to_string(cols_) +
           " floats, tight row pitches (ld_in = cols, ld_out = rows)";
  }

  void launch(cudaStream_t s) { ex05::transpose(rows_, cols_, in_.data(), cols_, out_.data(), rows_, s); }
  void poison() { out_.poison(); }

  steps::Comparison check() {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    steps::Comparison c = steps::compare(out_.download(), want_, steps::Tolerance::exact());
    c.row_length = static_cast<std::size_t>(rows_); // out is cols x rows
    return c;
  }

  std::size_t n() const { return n_; }

private:
  std::int64_t rows64_, cols64_;
  std::size_t n_;
  int rows_ = 0, cols_ = 0;
  steps::GuardedBuffer<float> in_, out_;
  std::vector<float> want_;
};

inline steps::GroupPtr yours_group() {
  steps::Row<YourTranspose> r;
  r.name = "yours";
  r.what = "exercise 05: your transpose of a matrix view (here with tight row pitches)";
  r.role = steps::Role::yours;
  r.launch = [](YourTranspose& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const YourTranspose& p) { return steps::Work{2 * 4 * static_cast<double>(p.n()), 0}; };
  r.reset = [](YourTranspose& p) { p.poison(); };
  r.check = [](YourTranspose& p) { return p.check(); };
  return steps::group<YourTranspose>({r});
}

} // namespace ch05
