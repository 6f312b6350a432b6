#include "steps/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace steps {

std::string format_value(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

namespace {
template <class Ref>
Comparison compare_impl(const float* got, const Ref* expected, std::size_t n, const Tolerance& tol) {
  Comparison c;
  c.count = n;
  double err2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = got[i];
    const double e = static_cast<double>(expected[i]);
    const bool finite = std::isfinite(g);
    const double diff = finite ? std::fabs(g - e) : INFINITY;
    if (!finite) c.non_finite = true;
    // Written so that a NaN difference fails too (NaN <= x is false).
    const bool good = finite && diff <= tol.abs + tol.rel * std::fabs(e);
    if (!good) {
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
  c.ok = c.bad_count == 0 && !c.non_finite && c.rel_l2_error <= tol.rel_l2;
  return c;
}
} // namespace

Comparison compare(const float* got, const float* expected, std::size_t n, const Tolerance& tol) {
  return compare_impl(got, expected, n, tol);
}

Comparison compare(const float* got, const double* expected, std::size_t n, const Tolerance& tol) {
  return compare_impl(got, expected, n, tol);
}

Comparison compare(const std::vector<float>& got, const std::vector<float>& expected, const Tolerance& tol) {
  if (got.size() != expected.size()) {
    Comparison c;
    c.ok = false;
    c.count = got.size();
    c.bad_count = 1;
    c.first_bad = std::min(got.size(), expected.size());
    c.rel_l2_error = INFINITY;
    return c;
  }
  return compare_impl(got.data(), expected.data(), got.size(), tol);
}

std::string Comparison::describe(std::size_t columns) const {
  Comparison c = *this;
  c.row_length = columns;
  return c.describe();
}

std::string Comparison::describe() const {
  std::string d = describe_flat();
  if (ok || out_of_bounds || bad_count == 0 || row_length == 0) return d;
  const std::string at = "[" + std::to_string(first_bad) + "]";
  const std::string rc = at + " (row " + std::to_string(first_bad / row_length) + ", column " +
                         std::to_string(first_bad % row_length) + ")";
  return d.replace(d.find(at), at.size(), rc);
}

std::string Comparison::describe_flat() const {
  if (out_of_bounds) {
    const bool after = outside_index >= static_cast<long long>(count);
    const long long dist = after ? outside_index - static_cast<long long>(count) + 1 : -outside_index;
    return "wrote outside the array: element [" + std::to_string(outside_index) + "] is " +
           std::to_string(dist) + (after ? " past the end" : " before the start") + " of an array of " +
           std::to_string(count) + " (" + std::to_string(bad_count) + " stray element(s)): a missing bounds check?";
  }
  if (ok) return "all " + std::to_string(count) + " elements match (max error " +
                 format_value(max_abs_error) + ", relative L2 error " + format_value(rel_l2_error) + ")";
  if (bad_count == 0)
    return "every element is within its bound but the relative L2 error " + format_value(rel_l2_error) +
           " is too large: a small error spread over the whole result";
  return "first wrong element [" + std::to_string(first_bad) + "]: expected " +
         format_value(expected_at_first_bad) + ", got " + format_value(got_at_first_bad) + " (" +
         std::to_string(bad_count) + " of " + std::to_string(count) + " wrong" +
         (non_finite ? ", NaN/Inf present" : "") + ")";
}

} // namespace steps
