// steps_gpu_probe: says whether a usable CUDA GPU is here.
//
//   steps_gpu_probe            exit 0 and one line per GPU, or exit 77 and why not
//   steps_gpu_probe --slug     the short name of GPU 0 for results files ("H200")
//   steps_gpu_probe --copy-bw  also measure device-to-device copy bandwidth
//
// Used by ./tutorial (to say "no GPU" once) and by the sanitizer tests.
#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/report.hpp"

#include <cuda_runtime.h>

#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
  const bool slug = argc > 1 && std::strcmp(argv[1], "--slug") == 0;
  const bool copy_bw = argc > 1 && std::strcmp(argv[1], "--copy-bw") == 0;
  std::string reason;
  if (!steps::gpu_available(&reason)) {
    std::cout << reason << "\n";
    return 77;
  }
  try {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (slug) {
      std::cout << steps::query_device(0).slug() << "\n";
      return 0;
    }
    for (int i = 0; i < count; ++i) {
      const steps::DeviceInfo d = steps::query_device(i);
      std::cout << "GPU " << i << ": " << d.name << ", compute capability " << d.cc() << ", " << d.sm_count
                << " SMs, " << steps::format_bytes(static_cast<double>(d.global_mem_bytes)) << ", theoretical "
                << steps::fixed(d.peak_bandwidth_gbs, 0) << " GB/s\n";
    }
    if (copy_bw)
      std::cout << "cudaMemcpy device-to-device, 1 GiB: "
                << steps::fixed(steps::measure_copy_bandwidth_gbs(std::size_t{1} << 30), 0)
                << " GB/s (read + write)\n";
  } catch (const std::exception& e) {
    std::cout << "GPU present but not usable: " << e.what() << "\n";
    return 77;
  }
  return 0;
}
