// Host tests of the architecture table (steps/arch.hpp): its rates give the
// datasheets' peaks, its limits agree with the CUDA Toolkit's own occupancy
// header, and the decisions "does this GPU have it" and "does this binary
// hold the code for it" say what to do.
#include "steps/arch.hpp"
#include "steps/catch.hpp"
#include "steps/occupancy.hpp"

#include <cuda_occupancy.h>

#include <cmath>
#include <cstdio>
#include <string>

using steps::Feature;
using steps::TensorType;

namespace {

// A device of `sms` SMs at `mhz` with the compute capability of `cc` (x10).
steps::DeviceInfo part(int cc, int sms, int mhz) {
  steps::DeviceInfo d;
  d.cc_major = cc / 10;
  d.cc_minor = cc % 10;
  d.sm_count = sms;
  d.sm_clock_khz = mhz * 1000;
  return d;
}

bool near(double got, double datasheet) { return std::fabs(got - datasheet) <= 0.01 * datasheet; }

} // namespace

// Each part's datasheet peak (dense, no sparsity), with the SM count and the
// boost clock the datasheet states; the table's per-clock rates must give it
// within 1%. The table of the five architectures is printed for the log.
TEST_CASE("arch: the rates give the datasheets' peaks (sm_75, 80, 86, 89, 90)", "[arch]") {
  struct Sheet {
    const char* part;
    int cc, sms, mhz;
    double fp32, fp16, fp8; // TFLOP/s; 0: the part has no such tensor rate
  };
  const Sheet sheets[] = {
      {"Tesla T4", 75, 40, 1590, 8.1, 65.0, 0},
      {"A100 SXM", 80, 108, 1410, 19.5, 312.0, 0},
      {"A40", 86, 84, 1740, 37.4, 149.7, 0},
      {"L4", 89, 58, 2040, 30.3, 121.0, 242.0},
      // H100 SXM: FP32 67 TFLOP/s at the 1980 MHz boost; the tensor peaks
      // (989.4 FP16, 1978.9 FP8) are stated at 1830 MHz.
      {"H100 SXM (FP32)", 90, 132, 1980, 67.0, 0, 0},
      {"H100 SXM (tensor)", 90, 132, 1830, 0, 989.4, 1978.9},
  };
  std::printf("%-18s %-6s %8s %10s %10s %10s\n", "part", "arch", "FMA/clk", "FP32", "FP16 TC", "FP8 TC");
  for (const Sheet& s : sheets) {
    const steps::DeviceInfo d = part(s.cc, s.sms, s.mhz);
    const double fp32 = steps::fp32_peak_tflops(d);
    const double fp16 = steps::tensor_peak_tflops(d, TensorType::fp16);
    const double fp8 = steps::tensor_peak_tflops(d, TensorType::fp8);
    std::printf("%-18s sm_%-3d %8d %10.1f %10.1f %10.1f\n", s.part, s.cc,
                steps::arch_facts(d.cc_major, d.cc_minor).fp32_fma_per_clock, fp32, fp16, fp8);
    INFO(s.part << ": FP32 " << fp32 << ", FP16 " << fp16 << ", FP8 " << fp8 << " TFLOP/s");
    if (s.fp32 > 0) CHECK(near(fp32, s.fp32));
    if (s.fp16 > 0) CHECK(near(fp16, s.fp16));
    if (s.fp8 > 0) CHECK(near(fp8, s.fp8));
    if (s.fp8 == 0 && s.cc < 89) CHECK(fp8 == 0); // no FP8 tensor cores before Ada
  }
  // FP32: 64 FMA per clock per SM on sm_75 and sm_80, 128 from sm_86 on.
  CHECK(steps::arch_facts(7, 5).fp32_fma_per_clock == 64);
  CHECK(steps::arch_facts(8, 0).fp32_fma_per_clock == 64);
  CHECK(steps::arch_facts(8, 6).fp32_fma_per_clock == 128);
  CHECK(steps::arch_facts(8, 9).fp32_fma_per_clock == 128);
  CHECK(steps::arch_facts(9, 0).fp32_fma_per_clock == 128);
  // BF16 and TF32 tensor cores arrive with Ampere.
  CHECK(steps::arch_facts(7, 5).tensor_flop_per_clock(TensorType::bf16) == 0);
  CHECK(steps::arch_facts(8, 0).tensor_flop_per_clock(TensorType::bf16) == 2048);
}

// The limits the table shares with the occupancy calculator, against the
// CUDA Toolkit's cuda_occupancy.h (the header behind
// cudaOccupancyMaxActiveBlocksPerMultiprocessor) for every architecture.
TEST_CASE("arch: resident blocks and allocation units agree with cuda_occupancy.h", "[arch]") {
  for (const steps::ArchFacts& a : steps::known_arch_facts()) {
    INFO(a.sm());
    cudaOccDeviceProp prop;
    prop.computeMajor = a.cc_major;
    prop.computeMinor = a.cc_minor;
    prop.maxThreadsPerMultiprocessor = a.max_threads_per_sm;
    prop.sharedMemPerMultiprocessor = std::size_t(a.smem_per_sm_kib) * 1024;
    prop.sharedMemPerBlockOptin = std::size_t(a.smem_per_block_optin_kib) * 1024;
    int blocks = 0, smem_unit = 0, reg_unit = 0, parts = 0;
    REQUIRE(cudaOccMaxBlocksPerMultiprocessor(&blocks, &prop) == CUDA_OCC_SUCCESS);
    REQUIRE(cudaOccSMemAllocationGranularity(&smem_unit, &prop) == CUDA_OCC_SUCCESS);
    REQUIRE(cudaOccRegAllocationGranularity(&reg_unit, &prop) == CUDA_OCC_SUCCESS);
    REQUIRE(cudaOccSubPartitionsPerMultiprocessor(&parts, &prop) == CUDA_OCC_SUCCESS);
    CHECK(a.max_blocks_per_sm == blocks);
    const steps::ArchLimits l = steps::limits_for(a.cc_major, a.cc_minor);
    CHECK(l.max_blocks_per_sm == blocks);
    CHECK(l.smem_alloc_unit == std::size_t(smem_unit));
    CHECK(l.reg_alloc_unit == reg_unit);
    CHECK(l.sub_partitions == parts);
    CHECK(l.max_warps_per_sm == a.max_warps_per_sm());
  }
  // Warps per SM differ by architecture: no goal may assume 64.
  CHECK(steps::arch_facts(7, 5).max_warps_per_sm() == 32);
  CHECK(steps::arch_facts(8, 6).max_warps_per_sm() == 48);
  CHECK(steps::arch_facts(8, 9).max_warps_per_sm() == 48);
  CHECK(steps::arch_facts(9, 0).max_warps_per_sm() == 64);
}

TEST_CASE("arch: features and the GPU that lacks one", "[arch]") {
  CHECK(steps::first_arch_with(Feature::ldmatrix) == 75);
  CHECK(steps::first_arch_with(Feature::cp_async) == 80);
  CHECK(steps::first_arch_with(Feature::fp8_mma) == 89);
  CHECK(steps::first_arch_with(Feature::tma) == 90);
  CHECK(steps::code_target(Feature::wgmma) == "sm_90a");
  CHECK(steps::code_target(Feature::cp_async) == "sm_80");
  CHECK(steps::lacks(9, 0, {Feature::tma, Feature::wgmma}).empty());
  CHECK(steps::lacks(8, 9, {Feature::fp8_mma}).empty());
  CHECK(steps::lacks(8, 0, {Feature::fp8_mma}) == "needs FP8 mma.sync (sm_89 or newer); this GPU is sm_80");
  CHECK(steps::lacks(7, 5, {Feature::cp_async}) == "needs cp.async (sm_80 or newer); this GPU is sm_75");
  // wgmma is Hopper's alone: Blackwell has TMA but no wgmma.
  CHECK(steps::lacks(10, 0, {Feature::tma}).empty());
  CHECK(steps::lacks(10, 0, {Feature::tma, Feature::wgmma}) == "needs wgmma (sm_90a only); this GPU is sm_100");
  CHECK(steps::lacks(6, 1, {Feature::cp_async}).find("not in the architecture table") != std::string::npos);
  const steps::Needs hopper{{Feature::tma, Feature::wgmma}, nullptr};
  CHECK(hopper.describe() == "TMA, wgmma (sm_90a)");
  CHECK(steps::Needs{{Feature::cp_async}, nullptr}.describe() == "cp.async (sm_80+)");
  CHECK(steps::Needs{}.describe().empty());
  CHECK_THROWS_AS(steps::arch_facts(6, 1), std::invalid_argument);
}

// The binary gate: the code the runtime picked for a kernel (its virtual
// architecture, from cudaFuncGetAttributes) must not have compiled out the
// feature's body.
TEST_CASE("arch: a row runs only where its code was built", "[arch]") {
  steps::KernelCode sm80{true, 80, 80, ""};
  // The default no-GPU list (sm_80 code) on an Ada GPU: FP8 mma.sync was compiled out.
  CHECK(steps::code_missing(sm80, 8, 9, {Feature::fp8_mma}) ==
        "built for sm_80, which compiles this kernel's body out; rebuild with CMAKE_CUDA_ARCHITECTURES=89");
  // The same code serves a kernel that needs only what sm_80 has.
  CHECK(steps::code_missing(sm80, 8, 9, {Feature::cp_async}).empty());
  CHECK(steps::code_missing(sm80, 8, 6, {}).empty());
  // sm_75 code on an A100: cp.async compiled out.
  steps::KernelCode sm75{true, 75, 75, ""};
  CHECK(steps::code_missing(sm75, 8, 0, {Feature::cp_async}) ==
        "built for sm_75, which compiles this kernel's body out; rebuild with CMAKE_CUDA_ARCHITECTURES=80");
  // Hopper-only code: compute_90(a) passes; anything else is told to build 90a.
  steps::KernelCode sm90{true, 90, 90, ""};
  CHECK(steps::code_missing(sm90, 9, 0, {Feature::wgmma}).empty());
  steps::KernelCode ptx100{true, 100, 100, ""};
  CHECK(steps::code_missing(ptx100, 10, 0, {Feature::wgmma}) ==
        "built for sm_100, which compiles this kernel's body out; rebuild with CMAKE_CUDA_ARCHITECTURES=90a");
  // No code at all for this GPU (an sm_90a-only build on an Ada GPU).
  steps::KernelCode none{false, 0, 0, "cudaErrorInvalidDeviceFunction"};
  CHECK(steps::code_missing(none, 8, 9, {Feature::fp8_mma}) ==
        "this binary has no code for this GPU (sm_89: cudaErrorInvalidDeviceFunction); rebuild with "
        "CMAKE_CUDA_ARCHITECTURES=89");
}
