// steps_watchdog_demo: hangs on purpose, under a watchdog of 2 s, to show
// that a hang ends with a message and exit code 3 (steps::kHangExitCode).
//
//   steps_watchdog_demo          a kernel spins on a flag that no thread sets
//   steps_watchdog_demo --host   a host wait that never ends (no GPU needed)
#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/watchdog.hpp"

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstring>
#include <iostream>
#include <mutex>

namespace {

// Waits for *flag to become non-zero: it never does.
__global__ void spin_forever(const volatile int* flag) {
  while (*flag == 0) {
  }
}

} // namespace

int main(int argc, char** argv) {
  const bool host = argc > 1 && std::strcmp(argv[1], "--host") == 0;
  const std::string what = host ? "a host wait" : "a kernel spinning on a flag nobody sets";
  if (host) {
    steps::Watchdog dog(2, "steps_watchdog_demo: " + what + " did not finish within 2 s (watchdog)");
    std::mutex m;
    std::condition_variable cv;
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [] { return false; }); // never returns
    return 0;
  }
  std::string reason;
  if (!steps::gpu_available(&reason)) {
    std::cout << "steps_watchdog_demo: skipped: " << reason << "\n";
    return 77;
  }
  try {
    steps::DeviceBuffer<int> flag(1);
    CUDA_CHECK(cudaMemset(flag.data(), 0, sizeof(int)));
    steps::Stream stream;
    spin_forever<<<1, 32, 0, stream>>>(flag.data());
    CUDA_CHECK_LAUNCH();
    steps::synchronize_or_timeout(stream.get(), 2,
                                  "steps_watchdog_demo: " + what + " did not finish within 2 s (watchdog)");
  } catch (const std::exception& e) {
    std::cout << "steps_watchdog_demo: error: " << e.what() << "\n";
    return 1;
  }
  std::cout << "steps_watchdog_demo: the kernel finished: it should not have\n";
  return 0;
}
