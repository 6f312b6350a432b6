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
  return compare_each(
      n, [got](std::size_t i) { return got[i]; }, [expected](std::size_t i) { return expected[i]; },
      [&tol](std::size_t, double e) { return tol.abs + tol.rel * std::fabs(e); }, tol.rel_l2);
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
  if (!ok && !note.empty()) d = note + ": " + d;
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
