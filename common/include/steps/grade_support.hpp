/// @file grade_support.hpp
/// @brief The parts of the grader harness that need no test framework: error
///        hints, the hang message and the speed report (grade.hpp has the rest).
#pragma once

#include "steps/error.hpp"
#include "steps/timing.hpp"

#include <string>

namespace steps::grade {

/// Seconds one shape may take before it counts as a hang. The largest graded
/// shapes (with their CPU references) take a few seconds.
constexpr double kShapeTimeout = 30;

/// A CUDA error raised while running the learner's code, in a learner's
/// words: what it means and where to look.
std::string explain_error(const Error& e);

/// The watchdog message for a shape that did not finish.
std::string hang_message(const std::string& shape, double seconds = kShapeTimeout);

/// Prints the speed of the code under test: one line for people and one
/// `steps-speed label=... median_ms=... gbps=... tflops=...` line that
/// `./tutorial grade` reads (0 where a quantity does not apply).
void report_speed(const std::string& label, const Stats& ms, double bytes, double flops = 0);

} // namespace steps::grade
