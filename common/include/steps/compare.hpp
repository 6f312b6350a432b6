/// @file compare.hpp
/// @brief Checking results against a reference, with tolerances that fit the
///        precision, and a report a learner can act on.
///
/// Two measures, both required to pass:
///  - element-wise: |got - expected| <= abs + rel * |expected| for every element;
///    the first element that breaks it is reported with its index;
///  - relative L2 error ||got - expected|| / ||expected|| <= rel_l2, which
///    catches small errors spread everywhere (a wrong accumulation order in a
///    low precision, a missing scale).
/// NaN or Inf in the result never passes, whatever the tolerance.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace steps {

/// Tolerances for compare().
struct Tolerance {
  double abs = 0;    ///< absolute part of the element-wise bound
  double rel = 0;    ///< relative part of the element-wise bound
  double rel_l2 = 0; ///< bound on the relative L2 error of the whole result

  /// Exact results (copies, transposes): no error allowed.
  static Tolerance exact() { return {0, 0, 0}; }
  /// FP32 arithmetic with a few roundings per element (element-wise kernels).
  static Tolerance fp32() { return {1e-6, 1e-5, 1e-6}; }
  /// FP32 sums of many terms (reductions, FP32 GEMM): rounding grows with
  /// the length of the sum and its order differs from the CPU's.
  static Tolerance fp32_sum() { return {1e-5, 1e-4, 1e-5}; }
  /// TF32 tensor-core math (10-bit mantissa inputs).
  static Tolerance tf32() { return {1e-3, 5e-3, 1e-3}; }
  /// BF16 outputs (8 significant bits: one rounding of the output alone is
  /// up to 2^-8 relative).
  static Tolerance bf16() { return {1e-2, 1.6e-2, 8e-3}; }
};

/// The outcome of compare().
struct Comparison {
  bool ok = true;                 ///< passed both measures, no NaN/Inf
  std::size_t count = 0;          ///< elements compared
  std::size_t bad_count = 0;      ///< elements outside the element-wise bound
  std::size_t first_bad = 0;      ///< index of the first bad element (if any)
  double expected_at_first_bad = 0; ///< reference value there
  double got_at_first_bad = 0;    ///< result value there
  bool non_finite = false;        ///< a NaN or Inf was found in the result
  double max_abs_error = 0;       ///< largest |got - expected|
  double rel_l2_error = 0;        ///< ||got - expected|| / ||expected||
  bool out_of_bounds = false;     ///< a write landed outside the array (see GuardedBuffer)
  long long outside_index = 0;    ///< where, relative to the array's start (negative: before it)
  std::size_t row_length = 0;     ///< if set (a row-major matrix), describe() adds (row, column)
  std::string note;               ///< if set, what the failure means, in words; describe() puts it first

  /// One line for a learner, e.g. "first wrong element [1024]: expected
  /// 0.25, got nan (3 of 1025 wrong; max error ...)".
  std::string describe() const;
  /// Same, for a row-major matrix with `columns` columns: the first bad
  /// element is also given as (row, column).
  std::string describe(std::size_t columns) const;

private:
  std::string describe_flat() const;
};

/// The comparison loop every compare() shares, over callables: element i
/// passes when `got(i)` is finite and |got(i) - expected(i)| <= bound(i).
/// The relative L2 error must also stay within `rel_l2`. Use it directly for
/// a bound that differs per element (an error bound derived from each
/// element's terms, chapter 10) or for results stored in another type (BF16).
template <class Got, class Expected, class Bound>
Comparison compare_each(std::size_t n, Got got, Expected expected, Bound bound, double rel_l2) {
  Comparison c;
  c.count = n;
  double err2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(got(i));
    const double e = static_cast<double>(expected(i));
    const bool finite = std::isfinite(g);
    const double diff = finite ? std::fabs(g - e) : INFINITY;
    if (!finite) c.non_finite = true;
    // Written so that a NaN difference fails too (NaN <= x is false).
    if (!(finite && diff <= bound(i, e))) {
      if (c.bad_count == 0) {
        c.first_bad = i;
        c.expected_at_first_bad = e;
        c.got_at_first_bad = g;
      }
      ++c.bad_count;
    }
    if (finite) {
      c.max_abs_error = std::fmax(c.max_abs_error, diff);
      err2 += diff * diff;
    }
    ref2 += e * e;
  }
  if (c.non_finite) c.max_abs_error = INFINITY;
  c.rel_l2_error = c.non_finite ? INFINITY : (ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  c.ok = c.bad_count == 0 && !c.non_finite && !(c.rel_l2_error > rel_l2);
  return c;
}

/// Compares `n` results with `n` reference values (float or double).
Comparison compare(const float* got, const float* expected, std::size_t n, const Tolerance& tol);
/// @copydoc compare(const float*, const float*, std::size_t, const Tolerance&)
Comparison compare(const float* got, const double* expected, std::size_t n, const Tolerance& tol);
/// Vector convenience: sizes must match (otherwise the comparison fails).
Comparison compare(const std::vector<float>& got, const std::vector<float>& expected, const Tolerance& tol);

/// One value that must equal its expected value exactly (a checksum, an end
/// position): on a difference, the comparison fails with `note` saying what
/// the difference means.
inline Comparison compare_exact(double got, double expected, std::string note) {
  Comparison c;
  c.count = 1;
  if (got != expected) {
    c.ok = false;
    c.bad_count = 1;
    c.expected_at_first_bad = expected;
    c.got_at_first_bad = got;
    c.note = std::move(note);
  }
  return c;
}

/// Formats a value the way compare() reports it (enough digits to tell
/// neighbouring floats apart; "nan", "inf").
std::string format_value(double v);

} // namespace steps
