// Chapter 05: the matrix every row of the chapter moves, as a problem of
// the chapter's table: input, output, and the checks against the CPU
// references (the copies against the input itself, the transposes against
// the CPU transpose).
#pragma once

#include "cpu_reference.hpp"
#include "launch.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ch05 {

/// The matrix every row of the chapter moves: input, output, and the CPU
/// references of the copies (in itself) and of the transposes.
class Transpose {
public:
  /// The problem line: shape and size.
  std::string describe() const {
    char buf[200];
    std::snprintf(buf, sizeof buf, "out = transpose(in), in: %d x %d floats (%s), out: %d x %d", rows_, cols_,
                  steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(), cols_, rows_);
    return buf;
  }

  Transpose(const steps::Options& opts, steps::Run&)
      : rows64_(steps::dimension(opts, "--rows")), cols64_(steps::dimension(opts, "--cols")),
        n_(steps::checked_elements(rows64_, cols64_, sizeof(float))),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        in_(n_), out_(n_) {
    check_grid_limits(rows64_, cols64_);
    rows_ = static_cast<int>(rows64_);
    cols_ = static_cast<int>(cols64_);
    // Random input, generated on the GPU, copied back for the references.
    steps::fill_uniform_device(in_.data(), n_, opts.seed, -1.0f, 1.0f);
    in_host_ = in_.download();
  }

  /// Every row, the copies included, reads the matrix once and writes it once.
  steps::Work work() const { return {2 * 4 * static_cast<double>(n_), 0}; }

  /// NaN everywhere in out: an element no thread writes shows.
  void poison() { out_.poison(); }

  /// out == in exactly (the copies); a bad element is reported as (row, column) of in.
  steps::Comparison check_copy() { return check_against(in_host_, cols_); }

  /// out == transpose(in) exactly: moving bytes rounds nothing. A bad
  /// element is reported as (row, column) of out, which is cols x rows.
  steps::Comparison check_transpose() {
    if (transposed_.empty()) transposed_ = cpu_transpose(in_host_, rows_, cols_);
    return check_against(transposed_, rows_);
  }

  const float* in() const { return in_.data(); }
  float* out() { return out_.data(); }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  std::size_t bytes() const { return n_ * sizeof(float); }

private:
  steps::Comparison check_against(const std::vector<float>& want, int row_length) {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    out_.download(got_);
    steps::Comparison c = steps::compare(got_, want, steps::Tolerance::exact());
    c.row_length = static_cast<std::size_t>(row_length);
    return c;
  }

  std::int64_t rows64_, cols64_;
  std::size_t n_;
  int rows_ = 0, cols_ = 0;
  steps::GuardedBuffer<float> in_, out_;
  std::vector<float> in_host_, transposed_, got_; // transposed_: built by the first transpose check
};

} // namespace ch05
