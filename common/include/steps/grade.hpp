/// @file grade.hpp
/// @brief The grader harness every exercise shares: the shape loop, the
///        watchdog, the CUDA-error hints and the speed report.
///
/// A grader writes only what is particular to its exercise: the shapes, one
/// function that runs the learner's code on a shape and returns what is wrong
/// ("" when right), and hints for its own mistakes:
/// @code
/// TEST_CASE("axpby on odd sizes", "[axpby]") {
///   steps::grade::shapes<Shape>({{1, 0}, {257, 3}}, name_of, run_shape);
/// }
/// @endcode
/// Each shape runs on fresh seeded random data under a watchdog: a kernel
/// that never finishes ends the grader with a message (a hang is a
/// rejection, exit code 3), never a frozen terminal. An integer division by
/// zero in the learner's host code (SIGFPE) ends it with a message too (exit
/// code 1), not with a crash. Every correct shape is one passed assertion, so
/// a passing grade says how many shapes it checked.
///
/// The learner's function gets a grade::BusyStream (grade_support.hpp): a
/// non-blocking stream with work still pending ahead of the call, so work
/// that is not in that stream (the legacy default stream, a synchronous
/// cudaMemcpy or cudaMemset) gives a wrong result on every run.
#pragma once

#include "steps/arch.hpp"
#include "steps/catch.hpp"
#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/grade_support.hpp"
#include "steps/timing.hpp"
#include "steps/watchdog.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace steps::grade {

/// Exercise-specific words for a CUDA error ("" when it has none).
using ErrorHint = std::function<std::string(const Error&)>;

/// Runs `check(shape, seed)` on every shape and fails the test case at the
/// first one that returns a problem (or throws a CUDA error). Seeds are 11,
/// 21, 31... in shape order, the same on every run. `seconds`: the watchdog
/// per shape (raise it for shapes past 2^31 elements, whose CPU reference
/// alone takes tens of seconds).
template <class Shape, class NameOf, class Check>
void shapes(const std::vector<Shape>& list, NameOf name_of, Check check, const ErrorHint& hint = {},
            double seconds = kShapeTimeout) {
  std::uint64_t seed = 1;
  for (const auto& s : list) {
    const std::string name = name_of(s);
    INFO(name);
    std::string problem;
    seed += 10;
    {
      Watchdog dog(seconds, hang_message(name, seconds));
      ArithmeticGuard guard(name);
      try {
        problem = check(s, seed);
      } catch (const Error& e) {
        problem = "a CUDA error: " + std::string(e.what()) + explain_error(e);
        if (hint) {
          const std::string extra = hint(e);
          if (!extra.empty()) problem += "\n  Hint: " + extra;
        }
      }
    }
    if (!problem.empty()) FAIL(problem);
    SUCCEED("correct: " << name);
  }
}

/// Ends the grader with exit code 77 (skipped) and one line saying why,
/// unless GPU 0 has every feature in `needs` (the architecture table,
/// steps/arch.hpp) and, when `needs.kernel` is given, the binary holds that
/// kernel's code for it: the same decision as a chapter row's Row::needs.
/// `what` says what the exercise is ("FP8 mma.sync"). Checked once per process.
inline void require(const Needs& needs, const std::string& what) {
  static const bool checked = [&] {
    const DeviceInfo dev = query_device(0);
    if (const std::string why = unmet(needs, dev); !why.empty()) {
      std::cout << "SKIPPED: this exercise (" << what << ") cannot run on GPU 0 (" << dev.name << "): " << why
                << "\n";
      std::exit(77);
    }
    return true;
  }();
  (void)checked;
}

} // namespace steps::grade
