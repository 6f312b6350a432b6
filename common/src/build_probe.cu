// Whether this build holds code for a GPU: asked of a kernel of the shared
// library, which every chapter program and grader links and which is
// compiled for the build's architecture list (CMAKE_CUDA_ARCHITECTURES).
#include "steps/arch.hpp"

#include <cuda_runtime.h>

namespace steps {
namespace {
__global__ void build_probe_kernel() {}
} // namespace

std::string build_code_missing(const DeviceInfo& dev) {
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess || current != dev.index) {
    (void)cudaGetLastError();
    if (cudaSetDevice(dev.index) != cudaSuccess) {
      (void)cudaGetLastError();
      return "";  // not this function's error to report: the caller's next CUDA call says it
    }
  }
  const KernelCode code = kernel_code(reinterpret_cast<const void*>(&build_probe_kernel));
  // Only the runtime's own "no code for this device" answers count: any other
  // failure is not this check's to report (the program's next CUDA call says it).
  if (!code.found && code.error != "cudaErrorNoKernelImageForDevice" && code.error != "cudaErrorInvalidDeviceFunction")
    return "";
  return code_missing(code, dev.cc_major, dev.cc_minor, {});
}

} // namespace steps
