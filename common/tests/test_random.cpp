#include "steps/catch.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cmath>

TEST_CASE("random data is deterministic for a seed and differs across seeds", "[random]") {
  const auto a = steps::random_vector(1000, 7);
  const auto b = steps::random_vector(1000, 7);
  const auto c = steps::random_vector(1000, 8);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(steps::uniform_at(7, 123, -1, 1) == a[123]);
}

TEST_CASE("random data stays in range and is not zeros", "[random]") {
  const auto v = steps::random_vector(100000, 3, -2.0f, 5.0f);
  CHECK(*std::min_element(v.begin(), v.end()) >= -2.0f);
  CHECK(*std::max_element(v.begin(), v.end()) < 5.0f);
  const auto zeros = std::count(v.begin(), v.end(), 0.0f);
  CHECK(zeros < 5);
  double mean = 0;
  for (float x : v) mean += x;
  mean /= static_cast<double>(v.size());
  CHECK(std::fabs(mean - 1.5) < 0.05); // uniform on [-2, 5)
  // Neighbouring elements are not correlated in an obvious way.
  std::size_t rises = 0;
  for (std::size_t i = 1; i < v.size(); ++i) rises += v[i] > v[i - 1];
  CHECK(std::fabs(static_cast<double>(rises) / static_cast<double>(v.size()) - 0.5) < 0.02);
}
