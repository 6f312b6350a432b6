#include "steps/catch.hpp"
#include "steps/compare.hpp"

#include <cmath>
#include <limits>
#include <vector>

using steps::compare;
using steps::Tolerance;

TEST_CASE("identical results pass with zero error", "[compare]") {
  const std::vector<float> v{1.0f, -2.5f, 3.25f};
  const auto c = compare(v, v, Tolerance::exact());
  CHECK(c.ok);
  CHECK(c.bad_count == 0);
  CHECK(c.max_abs_error == 0.0);
  CHECK(c.rel_l2_error == 0.0);
  CHECK(c.describe().find("all 3 elements match") != std::string::npos);
}

TEST_CASE("the first wrong element is reported with its values", "[compare]") {
  const std::vector<float> expected{1, 2, 3, 4, 5};
  std::vector<float> got = expected;
  got[2] = 3.5f;
  got[4] = 0.0f;
  const auto c = compare(got, expected, Tolerance::fp32());
  CHECK_FALSE(c.ok);
  CHECK(c.bad_count == 2);
  CHECK(c.first_bad == 2);
  CHECK(c.expected_at_first_bad == 3.0);
  CHECK(c.got_at_first_bad == 3.5);
  CHECK(c.max_abs_error == 5.0);
  const std::string d = c.describe();
  CHECK(d.find("[2]") != std::string::npos);
  CHECK(d.find("expected 3") != std::string::npos);
  CHECK(d.find("got 3.5") != std::string::npos);
  CHECK(d.find("2 of 5 wrong") != std::string::npos);
}

TEST_CASE("NaN and Inf never pass, whatever the tolerance", "[compare]") {
  const Tolerance loose{1e30, 1e30, 1e30};
  const std::vector<float> expected{1, 2, 3};
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    std::vector<float> got = expected;
    got[1] = bad;
    const auto c = compare(got, expected, loose);
    CHECK_FALSE(c.ok);
    CHECK(c.non_finite);
    CHECK(c.first_bad == 1);
    CHECK(c.describe().find("NaN/Inf") != std::string::npos);
  }
}

TEST_CASE("the element-wise bound is abs + rel * |expected|", "[compare]") {
  const Tolerance tol{0.1, 0.01, 1.0};
  const std::vector<float> expected{100.0f};
  CHECK(compare(std::vector<float>{101.0f}, expected, tol).ok);   // error 1.0 <= 0.1 + 1.0
  CHECK_FALSE(compare(std::vector<float>{101.2f}, expected, tol).ok);
  CHECK(compare(std::vector<float>{0.05f}, std::vector<float>{0.0f}, tol).ok); // abs part near zero
}

TEST_CASE("a small error everywhere fails on relative L2 error", "[compare]") {
  const Tolerance tol{1.0, 0.0, 1e-3};
  std::vector<float> expected(1000, 1.0f), got(1000, 1.01f);
  const auto c = compare(got, expected, tol);
  CHECK(c.bad_count == 0);
  CHECK_FALSE(c.ok);
  CHECK(c.rel_l2_error == Approx(0.01).epsilon(1e-3));
  CHECK(c.describe().find("relative L2") != std::string::npos);
}

TEST_CASE("comparing against a double reference", "[compare]") {
  const std::vector<double> expected{0.1, 0.2};
  const std::vector<float> got{0.1f, 0.2f};
  CHECK(compare(got.data(), expected.data(), 2, Tolerance::fp32()).ok);
  CHECK_FALSE(compare(got.data(), expected.data(), 2, Tolerance::exact()).ok);
}

TEST_CASE("size mismatch and empty inputs", "[compare]") {
  CHECK_FALSE(compare(std::vector<float>{1}, std::vector<float>{1, 2}, Tolerance::fp32()).ok);
  CHECK(compare(std::vector<float>{}, std::vector<float>{}, Tolerance::exact()).ok);
}

TEST_CASE("format_value prints special values and enough digits", "[compare]") {
  CHECK(steps::format_value(std::nan("")) == "nan");
  CHECK(steps::format_value(INFINITY) == "inf");
  CHECK(steps::format_value(-INFINITY) == "-inf");
  CHECK(steps::format_value(0.1f) == "0.100000001");
  CHECK(steps::format_value(2.0) == "2");
}

TEST_CASE("matrix results name the row and column of the first bad element", "[compare]") {
  std::vector<float> expected(12, 1.0f), got(12, 1.0f);
  got[7] = 2.0f; // row 1, column 3 of a 3 x 4 matrix
  const auto c = compare(got, expected, Tolerance::exact());
  CHECK(c.describe(4).find("[7] (row 1, column 3)") != std::string::npos);
  CHECK(compare(expected, expected, Tolerance::exact()).describe(4).find("row") == std::string::npos);
}

TEST_CASE("out-of-bounds writes are described as such", "[compare]") {
  steps::Comparison c;
  c.ok = false;
  c.out_of_bounds = true;
  c.count = 100;
  c.outside_index = 102;
  c.bad_count = 2;
  CHECK(c.describe().find("3 past the end of an array of 100") != std::string::npos);
  c.outside_index = -1;
  CHECK(c.describe().find("1 before the start") != std::string::npos);
}

TEST_CASE("a failed comparison's note comes first in its description", "[compare]") {
  const std::vector<float> got{1, 5}, want{1, 2};
  auto c = steps::compare(got, want, steps::Tolerance::exact());
  c.note = "tile column 0 is a 32-way bank conflict";
  CHECK(c.describe().rfind("tile column 0 is a 32-way bank conflict: first wrong element [1]", 0) == 0);
  const auto good = steps::compare(want, want, steps::Tolerance::exact());
  CHECK(good.describe().find("all 2 elements match") == 0);
}

TEST_CASE("compare_exact: one value, equal or not, with the meaning of a difference", "[compare]") {
  const steps::Comparison same = steps::compare_exact(42, 42, "never shown");
  CHECK(same.ok);
  CHECK(same.count == 1);
  const steps::Comparison differ = steps::compare_exact(41, 42, "a word was skipped");
  CHECK_FALSE(differ.ok);
  CHECK(differ.bad_count == 1);
  CHECK(differ.got_at_first_bad == 41);
  CHECK(differ.expected_at_first_bad == 42);
  CHECK(differ.describe().find("a word was skipped") != std::string::npos);
}
