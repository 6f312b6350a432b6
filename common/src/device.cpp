#include "steps/device.hpp"

#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/timing.hpp"

#include <cuda_runtime.h>

#include <cctype>

namespace steps {

double theoretical_bandwidth_gbs(int mem_clock_khz, int bus_width_bits) {
  // Double data rate: two transfers per clock, each bus_width_bits wide.
  return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

std::string device_slug(const std::string& name) {
  std::string s = name;
  const std::string prefix = "NVIDIA ";
  if (s.compare(0, prefix.size(), prefix) == 0) s = s.substr(prefix.size());
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return s.empty() ? "unknown_gpu" : s;
}

std::string DeviceInfo::slug() const { return device_slug(name); }

bool gpu_available(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason) {
      if (err == cudaErrorInsufficientDriver)
        *reason = "no usable CUDA GPU: no NVIDIA driver is loaded, or it is older than this CUDA runtime "
                  "(cudaErrorInsufficientDriver)";
      else if (err == cudaErrorNoDevice)
        *reason = "no CUDA GPU found (cudaErrorNoDevice)";
      else
        *reason = std::string("no usable CUDA GPU (") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err) + ")";
    }
    return false;
  }
  if (count == 0) {
    if (reason) *reason = "no CUDA GPU found";
    return false;
  }
  return true;
}

DeviceInfo query_device(int index) {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  DeviceInfo d;
  d.index = index;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.global_mem_bytes = p.totalGlobalMem;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.smem_per_block_optin = p.sharedMemPerBlockOptin;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.regs_per_sm = p.regsPerMultiprocessor;
  // CUDA 13 removed the clock fields from cudaDeviceProp: ask for attributes.
  CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, index));
  d.peak_bandwidth_gbs = theoretical_bandwidth_gbs(d.mem_clock_khz, d.mem_bus_bits);
  return d;
}

double measure_copy_bandwidth_gbs(std::size_t bytes, int iters) {
  DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  src.fill_bytes(0x3C);
  TimingOptions opts;
  opts.iters = iters;
  const Stats s = time_gpu(
      [&](cudaStream_t stream) {
        CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
      },
      opts);
  return gbps(2.0 * static_cast<double>(bytes), s.median);
}

} // namespace steps
