// The test main shared by every Catch2 binary of the course.
//
// Built twice: for host tests (runs anywhere) and, with STEPS_TESTS_NEED_GPU,
// for graders, where it exits 77 (ctest: skipped) with the reason when there
// is no usable GPU, or when the build has no code for it, instead of failing
// every test case.
#if STEPS_CATCH2_MAJOR < 3
#define CATCH_CONFIG_RUNNER
#endif
#include "steps/catch.hpp"

#if STEPS_TESTS_NEED_GPU
#include "steps/arch.hpp"
#include "steps/device.hpp"
#include <cuda_runtime.h>
#include <iostream>
#endif

int main(int argc, char** argv) {
#if STEPS_TESTS_NEED_GPU
  std::string reason;
  if (!steps::gpu_available(&reason)) {
    std::cout << "SKIPPED: " << reason << ": this grader needs a GPU to run your kernel.\n";
    return 77;
  }
  if (const std::string why = steps::build_code_missing(steps::query_device(0)); !why.empty()) {
    std::cout << "SKIPPED: " << why << ": this grader cannot run your kernel on GPU 0.\n";
    return 77;
  }
#endif
  return Catch::Session().run(argc, argv);
}
