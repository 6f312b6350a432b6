// Chapter 07: the course's occupancy calculator (steps::occupancy) against
// CUDA's own, cudaOccupancyMaxActiveBlocksPerMultiprocessor, case by case.
//
// The kernels are a family compiled with different register budgets
// (__maxnreg__ from 24 to 255: each uses exactly its budget, because its
// body wants more) and static shared memory (0 B to 40 KiB), plus the
// chapter's own kernels (with and without __launch_bounds__). For each, every
// block size from 1 to the kernel's maximum (all multiples of 32 and some
// partial warps) and a range of dynamic shared-memory sizes up to the
// opt-in maximum: the two must agree everywhere. The first disagreement
// fails with every input and the calculator's working; a pass says how many
// cases were compared. A GPU test (label gpu): skipped (77) without a GPU.
#include "chase.cuh"
#include "stream.cuh"

#include "steps/catch.hpp"
#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/occupancy.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// Wants more registers than any budget below: kWords live floats, mixed
/// together, so that the compiler uses every register it is allowed.
template <int kWords>
__device__ __forceinline__ void register_hog(const float* in, float* out, int n) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  float v[kWords];
#pragma unroll
  for (int k = 0; k < kWords; ++k) v[k] = in[(t + k * 977) % n];
  for (int r = 0; r < 4; ++r) {
#pragma unroll
    for (int k = 0; k < kWords; ++k) v[k] = v[k] * v[(k + 1) % kWords] + v[(k + 7) % kWords];
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kWords; ++k) s += v[k];
  out[t] = s;
}

/// A kernel with a budget of kMaxRegs registers and kStaticBytes of static
/// shared memory. It is never launched: only its attributes matter.
template <int kMaxRegs, int kStaticBytes>
__global__ __maxnreg__(kMaxRegs) void probe(const float* in, float* out, int n) {
  if constexpr (kStaticBytes > 0) {
    __shared__ float s[kStaticBytes / 4];
    s[threadIdx.x % (kStaticBytes / 4)] = in[threadIdx.x % n];
    __syncthreads();
    out[blockIdx.x] = s[(threadIdx.x + 1) % (kStaticBytes / 4)];
  }
  register_hog<160>(in, out, n);
}

struct Kernel {
  const void* fn;
  std::string name;
};

#define STEPS_PROBE(regs, smem) Kernel{reinterpret_cast<const void*>(probe<regs, smem>), "probe<" #regs ", " #smem ">"}
#define STEPS_KERNEL(f) Kernel{reinterpret_cast<const void*>(f), #f}

std::vector<Kernel> kernels() {
  return {
      STEPS_PROBE(24, 0),      STEPS_PROBE(32, 0),     STEPS_PROBE(37, 0),     STEPS_PROBE(40, 0),
      STEPS_PROBE(48, 0),      STEPS_PROBE(56, 0),     STEPS_PROBE(64, 0),     STEPS_PROBE(65, 0),
      STEPS_PROBE(72, 0),      STEPS_PROBE(80, 0),     STEPS_PROBE(96, 0),     STEPS_PROBE(104, 0),
      STEPS_PROBE(128, 0),     STEPS_PROBE(152, 0),    STEPS_PROBE(168, 0),    STEPS_PROBE(200, 0),
      STEPS_PROBE(232, 0),     STEPS_PROBE(255, 0),    STEPS_PROBE(24, 10240), STEPS_PROBE(37, 1028),
      STEPS_PROBE(64, 40960),  STEPS_PROBE(72, 4096),  STEPS_PROBE(128, 1028), STEPS_PROBE(255, 40960),
      STEPS_KERNEL(ch07::stream::scale_one_per_thread), STEPS_KERNEL(ch07::stream::scale_ilp16),
      STEPS_KERNEL(ch07::stream::scale_ilp16_lb4),      STEPS_KERNEL(ch07::stream::scale_ilp16_maxnreg32),
      STEPS_KERNEL(ch07::chase::pointer_chase),         STEPS_KERNEL(ch07::chase::chase_ilp32),
      STEPS_KERNEL(ch07::chase::chase_ilp32_lb4),       STEPS_KERNEL(ch07::chase::chase_ilp32_maxnreg32),
  };
}

std::vector<int> block_sizes() {
  std::vector<int> b{1, 2, 17, 31, 33, 65, 100, 127, 129, 200, 250, 257, 300, 500, 513, 700, 999, 1000, 1023};
  for (int t = 32; t <= 1024; t += 32) b.push_back(t);
  return b;
}

std::vector<std::size_t> dynamic_sizes() {
  std::vector<std::size_t> d{0, 1, 127, 128, 129, 255, 256, 1000, 1024, 3000, 4096, 8192, 12345, 20480, 32768,
                             45000, 49152, 57344, 65536, 77824, 78848, 100000, 101376, 115712, 116736, 150000,
                             166912, 200000, 232448};
  return d;
}

steps::ArchLimits this_gpu(int* device_out = nullptr) {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  const steps::DeviceInfo info = steps::query_device(dev);
  if (device_out) *device_out = dev;
  return steps::limits_for(info.cc_major, info.cc_minor); // throws, naming the architecture, if unknown
}

int attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

} // namespace

TEST_CASE("the calculator's table matches this GPU's attributes", "[gpu][occupancy]") {
  int dev = 0;
  const steps::ArchLimits a = this_gpu(&dev);
  INFO(a.name);
  CHECK(attribute(cudaDevAttrWarpSize, dev) == a.warp_size);
  CHECK(attribute(cudaDevAttrMaxThreadsPerBlock, dev) == a.max_threads_per_block);
  CHECK(attribute(cudaDevAttrMaxThreadsPerMultiProcessor, dev) == a.max_threads_per_sm);
  CHECK(attribute(cudaDevAttrMaxBlocksPerMultiprocessor, dev) == a.max_blocks_per_sm);
  CHECK(attribute(cudaDevAttrMaxRegistersPerMultiprocessor, dev) == a.regs_per_sm);
  CHECK(attribute(cudaDevAttrMaxRegistersPerBlock, dev) == a.regs_per_block);
  CHECK(static_cast<std::size_t>(attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev)) == a.smem_per_sm);
  CHECK(static_cast<std::size_t>(attribute(cudaDevAttrMaxSharedMemoryPerBlock, dev)) == a.smem_per_block);
  CHECK(static_cast<std::size_t>(attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) == a.smem_per_block_optin);
  CHECK(static_cast<std::size_t>(attribute(cudaDevAttrReservedSharedMemoryPerBlock, dev)) ==
        a.smem_reserved_per_block);
}

TEST_CASE("the calculator equals cudaOccupancyMaxActiveBlocksPerMultiprocessor", "[gpu][occupancy]") {
  const steps::ArchLimits arch = this_gpu();
  long long cases = 0;
  int regs_min = 1 << 30, regs_max = 0;
  for (const Kernel& k : kernels()) {
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, k.fn));
    const std::size_t max_dynamic = arch.smem_per_block_optin - attr.sharedSizeBytes;
    // The opt-in: without it CUDA counts a launch above 48 KiB as impossible;
    // the calculator assumes every kernel that needs it has opted in.
    CUDA_CHECK(cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(max_dynamic)));
    regs_min = std::min(regs_min, attr.numRegs);
    regs_max = std::max(regs_max, attr.numRegs);
    for (int block : block_sizes()) {
      if (block > attr.maxThreadsPerBlock) continue; // a launch that cannot happen (see the next test)
      for (std::size_t dynamic : dynamic_sizes()) {
        if (dynamic > max_dynamic) continue;
        int cuda = -1;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&cuda, k.fn, block, dynamic));
        const std::size_t smem = attr.sharedSizeBytes + dynamic;
        const steps::Occupancy ours = steps::occupancy(arch, block, attr.numRegs, smem);
        if (ours.blocks_per_sm != cuda) {
          std::ostringstream os;
          os << "MISMATCH after " << cases << " agreeing cases: " << k.name << " on " << arch.name << ": "
             << block << " threads/block, " << attr.numRegs << " registers/thread (cudaFuncAttributes), "
             << attr.sharedSizeBytes << " B static + " << dynamic << " B dynamic shared memory: CUDA says " << cuda
             << " blocks per SM, the calculator " << ours.blocks_per_sm << ".\nThe calculator's working:\n"
             << steps::explain(arch, block, attr.numRegs, smem);
          FAIL(os.str());
        }
        ++cases;
      }
    }
  }
  std::cout << "occupancy calculator == cudaOccupancyMaxActiveBlocksPerMultiprocessor on " << cases << " cases ("
            << kernels().size() << " kernels with " << regs_min << " to " << regs_max << " registers/thread, "
            << block_sizes().size() << " block sizes, " << dynamic_sizes().size() << " dynamic shared-memory sizes, "
            << arch.name << ")\n";
  CHECK(cases > 10000);
  CHECK(regs_min <= 32);
  CHECK(regs_max == 255);
}

TEST_CASE("a block of cudaFuncAttributes::maxThreadsPerBlock threads fits, by the calculator", "[gpu][occupancy]") {
  // CUDA caps each kernel's block size (at 1024, at its __launch_bounds__, or
  // where its registers no longer fit one block). A block of that size can
  // be launched, so the calculator must find room for at least one.
  const steps::ArchLimits arch = this_gpu();
  for (const Kernel& k : kernels()) {
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, k.fn));
    INFO(k.name << ": " << attr.numRegs << " registers, maxThreadsPerBlock " << attr.maxThreadsPerBlock);
    CHECK(steps::occupancy(arch, attr.maxThreadsPerBlock, attr.numRegs, attr.sharedSizeBytes).blocks_per_sm >= 1);
  }
}
