#include "steps/catch.hpp"
#include "steps/timing.hpp"

TEST_CASE("median, min, max and mean", "[timing]") {
  const auto odd = steps::compute_stats({5, 1, 3});
  CHECK(odd.median == 3);
  CHECK(odd.min == 1);
  CHECK(odd.max == 5);
  CHECK(odd.mean == 3);
  CHECK(odd.count == 3);
  const auto even = steps::compute_stats({4, 1, 3, 2});
  CHECK(even.median == 2.5);
  // One outlier moves the mean but not the median: why the course reports medians.
  const auto outlier = steps::compute_stats({1, 1, 1, 1, 100});
  CHECK(outlier.median == 1);
  CHECK(outlier.mean == Approx(20.8));
  CHECK_THROWS_AS(steps::compute_stats({}), std::invalid_argument);
}

TEST_CASE("bandwidth and FLOP rates", "[timing]") {
  CHECK(steps::gbps(4e9, 1.0) == Approx(4000.0));   // 4 GB in 1 ms = 4 TB/s
  CHECK(steps::tflops(2e12, 2.0) == Approx(1000.0)); // 2 TFLOP in 2 ms
  CHECK(steps::gbps(1, 0) == 0.0);
}

TEST_CASE("timed loop: untimed work before every run, outside the events", "[timing]") {
  std::string order;
  steps::detail::timed_loop(
      2, 3, [&] { order += "b"; }, [&] { order += "w"; }, [&](int i) { order += "(" + std::to_string(i); },
      [&](int) { order += ")"; }, [&] { order += "|"; });
  // Two warm-up runs, a wait, three timed runs each with its before-work
  // ahead of the start event, a wait.
  CHECK(order == "bwbw|b(0w)b(1w)b(2w)|");
}
