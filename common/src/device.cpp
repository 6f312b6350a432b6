#include "steps/device.hpp"

#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/timing.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

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

std::string machine_name(const DeviceInfo& first, int gpu_count) {
  return (gpu_count > 1 ? std::to_string(gpu_count) + "x" : std::string()) + first.slug();
}

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
  d.async_engine_count = p.asyncEngineCount;
  // CUDA 13 removed the clock fields from cudaDeviceProp: ask for attributes.
  CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, index));
  d.peak_bandwidth_gbs = theoretical_bandwidth_gbs(d.mem_clock_khz, d.mem_bus_bits);
  return d;
}

Clocks current_clocks(int index) {
  // NVML's C API, declared here (the toolkit may lack nvml.h): every call
  // returns 0 on success; clock type 1 is the SM clock, 2 the memory clock.
  using Init = int (*)();
  using ByBusId = int (*)(const char*, void**);
  using ClockInfo = int (*)(void*, int, unsigned int*);
  static void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  Clocks c;
  if (!lib) return c;
  static const bool ready = [] {
    const auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
    return init && init() == 0;
  }();
  const auto by_bus = reinterpret_cast<ByBusId>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  const auto clock = reinterpret_cast<ClockInfo>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError(); // leave no error behind for the caller's next check
    return c;
  }
  char bus[32] = {};
  if (!ready || !by_bus || !clock || index < 0 || index >= count ||
      cudaDeviceGetPCIBusId(bus, sizeof bus, index) != cudaSuccess) {
    cudaGetLastError();
    return c;
  }
  void* dev = nullptr;
  unsigned int mhz = 0;
  if (by_bus(bus, &dev) != 0) return c;
  if (clock(dev, 1, &mhz) == 0) c.sm_mhz = static_cast<int>(mhz);
  if (clock(dev, 2, &mhz) == 0) c.mem_mhz = static_cast<int>(mhz);
  return c;
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
