// The test main shared by every Catch2 binary of the course.
//
// Built twice: for host tests (runs anywhere) and, with STEPS_TESTS_NEED_GPU,
// for graders, where it exits 77 (ctest: skipped) with the reason when there
// is no usable GPU, instead of failing every test case.
#if STEPS_CATCH2_MAJOR < 3
#define CATCH_CONFIG_RUNNER
#endif
#include "steps/catch.hpp"

#if STEPS_TESTS_NEED_GPU
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
#endif
  return Catch::Session().run(argc, argv);
}
