/// @file device.hpp
/// @brief What the GPU is and how fast its memory can be: facts read from
///        device attributes, and a measured copy bandwidth.
#pragma once

#include <string>

namespace steps {

/// Facts about one GPU, read with cudaGetDeviceProperties and
/// cudaDeviceGetAttribute (CUDA 13 removed the clock fields from
/// cudaDeviceProp, so those come from attributes).
struct DeviceInfo {
  int index = 0;                      ///< CUDA device ordinal
  std::string name;                   ///< e.g. "NVIDIA H200"
  int cc_major = 0;                   ///< compute capability, major
  int cc_minor = 0;                   ///< compute capability, minor
  int sm_count = 0;                   ///< streaming multiprocessors
  std::size_t global_mem_bytes = 0;   ///< total device memory
  std::size_t l2_bytes = 0;           ///< L2 cache size
  std::size_t smem_per_block_optin = 0; ///< shared memory a block may opt in to
  int max_threads_per_sm = 0;         ///< resident threads per SM
  int regs_per_sm = 0;                ///< 32-bit registers per SM
  int async_engine_count = 0;         ///< copy engines that overlap kernels (cudaDeviceProp::asyncEngineCount)
  int mem_clock_khz = 0;              ///< memory clock
  int mem_bus_bits = 0;               ///< memory bus width
  int sm_clock_khz = 0;               ///< SM boost clock
  double peak_bandwidth_gbs = 0;      ///< theoretical DRAM bandwidth
  int run_sm_clock_mhz = 0;           ///< SM clock read at the end of a run (NVML; 0: unknown)
  int run_mem_clock_mhz = 0;          ///< memory clock read at the end of a run (NVML; 0: unknown)

  /// "9.0"
  std::string cc() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
  /// A short name for file names: "NVIDIA H200" -> "H200".
  std::string slug() const;
};

/// The clocks a GPU runs at now, in MHz.
struct Clocks {
  int sm_mhz = 0;  ///< SM (graphics) clock; 0 when unknown
  int mem_mhz = 0; ///< memory clock; 0 when unknown
};

/// Reads the current clocks of CUDA device `index` through NVML, which is
/// loaded at run time (libnvidia-ml.so.1 comes with the driver, not the
/// toolkit): {0, 0} where NVML or the GPU is missing, never an error. Chapter
/// programs store them with their results, so a number can be read against
/// the clock it was measured at (an H200 boosts up to 1980 MHz, lower when
/// hot or power-capped).
Clocks current_clocks(int index);

/// Theoretical DRAM bandwidth in GB/s: two transfers per clock (double data
/// rate) times the bus width in bytes. H200: 2 * 3.201e9 * 6016 / 8 = 4814 GB/s.
double theoretical_bandwidth_gbs(int mem_clock_khz, int bus_width_bits);

/// Short name for results files: drops a leading "NVIDIA " and turns
/// characters other than letters, digits, '-' and '_' into '_'.
std::string device_slug(const std::string& name);

/// The name of a run's results file (docs/results/NAME.json), the one place
/// it is made: the slug of the first GPU, with "Nx" before it for a run on
/// N > 1 GPUs ("H200", "2xH200").
std::string machine_name(const DeviceInfo& first, int gpu_count);

/// True when at least one usable CUDA GPU exists; otherwise false with the
/// reason (no driver, no device, ...) in `reason`. Never throws.
bool gpu_available(std::string* reason = nullptr);

/// Reads the facts of device `index` (throws steps::Error if it fails).
DeviceInfo query_device(int index);

/// Measures device-to-device cudaMemcpy bandwidth on `bytes`-sized buffers
/// (median of `iters` runs after a warm-up), counting bytes read plus bytes
/// written, as all bandwidth numbers in this course do.
double measure_copy_bandwidth_gbs(std::size_t bytes, int iters = 20);

} // namespace steps
