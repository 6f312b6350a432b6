// Chapter 01, Little's law: read bandwidth against the bytes each SM keeps
// in flight.
//
// Little's law for a memory system: bytes in flight = bandwidth x latency.
// A load occupies its bytes "in flight" from the moment it is issued until
// its data arrives, about one DRAM latency later (latency.cuh measures it).
// To stream at the DRAM's bandwidth the whole GPU must keep about
// bandwidth x latency bytes outstanding; fewer, and the bandwidth falls in
// proportion.
//
// The kernel below only reads (no stores to wait behind) and controls the
// two ways to put bytes in flight:
//   - per thread: U independent loads of W bytes (4: one float, 16: a uint4),
//     all issued before the first one is used (the loop is unrolled by U and
//     the XOR that uses the data comes after every load of the step);
//   - per SM: the number of resident blocks of 256 threads, limited below the
//     8 that fit by asking for dynamic shared memory that the kernel never
//     touches.
// Bytes in flight per SM, at most: blocks/SM x 256 x U x W. It is an upper
// bound (a thread has its U loads outstanding only between issuing them and
// their arrival) and what the rows are named by.
//
// NOTE: the outer loops carry `#pragma unroll 1`: unrolled by the compiler,
// the loop of U = 1 would hoist the next iterations' loads and keep more
// than U loads in flight. Check with
//   cuobjdump -sass build/bin/ch01_vector_add | grep -A40 read_in_flight
// that each loop body issues its U LDGs before the first LOP3 that uses one.
//
// The result: the XOR of all 32-bit words read, which does not depend on the
// order (so it is exact, checked against the CPU), reduced across each warp
// with shuffles and combined with one atomicXor per warp.
#pragma once

#include "steps/arch.hpp"
#include "steps/chapter.hpp"
#include "steps/launch.cuh"
#include "steps/random.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ch01::in_flight {

using steps::global_index;
using steps::grid_size;

/// Threads per block of every row of the sweep.
constexpr int kThreads = 256;

__device__ inline unsigned fold(unsigned x) { return x; }
__device__ inline unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

/// Threads an SM of the architecture being compiled holds, from the
/// architecture table's compile-time column (steps::max_threads_per_sm_of):
/// 1024 on sm_75 (T4), 1536 on sm_86, sm_87, sm_89 and sm_120, 2048
/// elsewhere. A launch bound that asks for more blocks than fit is ignored,
/// with a ptxas warning.
constexpr int threads_per_sm_compiled() {
#if defined(__CUDA_ARCH__)
  return steps::max_threads_per_sm_of(__CUDA_ARCH__ / 10);
#else
  return steps::max_threads_per_sm_of(0); // the host pass: a launch bound means nothing there
#endif
}

/// XORs `in[0 .. nv)` (and the `tail_count` words of `tail`) into *result,
/// U independent loads of sizeof(V) bytes per thread and loop step.
/// Blocks per SM the compiler must leave registers for: 8 (2048 threads,
/// at most 32 registers each) unless a thread holds more than 64 bytes of
/// loads (8 x 16 B: 32 registers of data alone), then 4; never more than
/// the SM holds (4 of 256 threads on a T4, 6 on sm_86 and sm_89).
template <int U, class V>
constexpr int min_blocks() {
  const int wanted = U * sizeof(V) <= 64 ? 8 : 4, fit = threads_per_sm_compiled() / kThreads;
  return wanted < fit ? wanted : fit;
}

template <int U, class V>
__global__ void __launch_bounds__(kThreads, min_blocks<U, V>())
    read_in_flight(const V* __restrict__ in, std::size_t nv, const unsigned* __restrict__ tail, int tail_count,
                   unsigned* __restrict__ result) {
  const std::size_t stride = grid_size();
  std::size_t i = global_index();
  unsigned acc = 0;
#pragma unroll 1
  for (; i + (U - 1) * stride < nv; i += U * stride) {
    V r[U];
#pragma unroll
    for (int k = 0; k < U; ++k) r[k] = in[i + k * stride]; // U loads issued back to back...
#pragma unroll
    for (int k = 0; k < U; ++k) acc ^= fold(r[k]); // ...before the first use
  }
#pragma unroll 1
  for (; i < nv; i += stride) acc ^= fold(in[i]); // the last, partial step
  if (global_index() == 0) {
#pragma unroll 1
    for (int t = 0; t < tail_count; ++t) acc ^= tail[t]; // words after the last whole V
  }
  for (int offset = 16; offset > 0; offset >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, offset);
  if (threadIdx.x % 32 == 0) atomicXor(result, acc);
}

/// One point of the sweep: U loads of W bytes per thread, `blocks_per_sm`
/// blocks of 256 threads per SM. The row carries these; its name only
/// repeats them.
struct Config {
  int loads = 1;         ///< U: independent loads per thread and loop step (1, 2, 4, 8)
  int bytes = 4;         ///< W: bytes per load (4 or 16)
  int blocks_per_sm = 8; ///< resident blocks per SM asked for (1 to 8; the GPU may hold fewer: 4 on a T4)

  /// Upper bound of the bytes in flight per SM.
  double bytes_in_flight_per_sm() const { return double{1} * blocks_per_sm * kThreads * loads * bytes; }
};

template <int U, class V>
const void* kernel_of() {
  return reinterpret_cast<const void*>(&read_in_flight<U, V>);
}

/// The kernel of a configuration (U in {1, 2, 4, 8}, W in {4, 16}).
inline const void* kernel_for(const Config& c) {
  const bool wide = c.bytes == 16;
  switch (c.loads) {
  case 1: return wide ? kernel_of<1, uint4>() : kernel_of<1, unsigned>();
  case 2: return wide ? kernel_of<2, uint4>() : kernel_of<2, unsigned>();
  case 4: return wide ? kernel_of<4, uint4>() : kernel_of<4, unsigned>();
  default: return wide ? kernel_of<8, uint4>() : kernel_of<8, unsigned>();
  }
}

/// The read sweep's problem: one array of --size 32-bit words (random
/// floats' bit patterns), the XOR the CPU computed, and the device's shared
/// memory facts that the blocks-per-SM limit is computed from.
class ReadSweep {
public:
  ReadSweep(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(static_cast<std::size_t>(opts.size)), in_(n_), result_(1) {
    steps::fill_uniform_device(reinterpret_cast<float*>(in_.data()), n_, opts.seed + 20, -1.0f, 1.0f);
    for (const unsigned w : in_.to_host()) want_ ^= w;
    int v = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev_.index));
    smem_per_sm_ = v;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrReservedSharedMemoryPerBlock, dev_.index));
    reserved_per_block_ = v;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev_.index));
    // Every kernel may ask for up to the opt-in limit; with the largest
    // shared-memory carveout, so that the limit below is the block count.
    for (const int u : {1, 2, 4, 8})
      for (const int w : {4, 16}) {
        const void* k = kernel_for({u, w, 1});
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, v));
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
      }
  }

  std::string describe() const {
    return "Little's law read sweep: XOR of n = " + std::to_string(n_) + " 32-bit words (" +
           steps::format_bytes(4.0 * static_cast<double>(n_)) + "), 256 threads per block, one wave of blocks";
  }

  /// Dynamic shared memory per block that leaves room for exactly
  /// `blocks_per_sm` blocks on an SM (0 when the 2048-thread limit already
  /// allows no more than that).
  std::size_t smem_for(int blocks_per_sm) const {
    if (blocks_per_sm * kThreads >= dev_.max_threads_per_sm) return 0;
    return smem_per_sm_ / static_cast<std::size_t>(blocks_per_sm) - reserved_per_block_;
  }

  /// Blocks per SM that the occupancy calculator gives for `c` (what the
  /// table reports, so a configuration that does not get the blocks it
  /// asked for shows it).
  int blocks_per_sm(const Config& c) const {
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel_for(c), kThreads,
                                                             smem_for(c.blocks_per_sm)));
    return blocks;
  }

  void zero_result(cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(result_.data(), 0, sizeof(unsigned), s)); }

  void launch(const Config& c, cudaStream_t s) {
    const std::size_t words_per_load = static_cast<std::size_t>(c.bytes) / 4;
    const std::size_t nv = n_ / words_per_load;
    const int tail_count = static_cast<int>(n_ - nv * words_per_load);
    const unsigned* tail = in_.data() + nv * words_per_load;
    const dim3 grid(static_cast<unsigned>(c.blocks_per_sm * dev_.sm_count));
    const std::size_t smem = smem_for(c.blocks_per_sm);
    const bool wide = c.bytes == 16;
    const uint4* in4 = reinterpret_cast<const uint4*>(in_.data()); // cudaMalloc: 256-byte aligned
    const unsigned* in1 = in_.data();
    unsigned* out = result_.data();
    switch (c.loads) {
    case 1:
      wide ? read_in_flight<1, uint4><<<grid, kThreads, smem, s>>>(in4, nv, tail, tail_count, out)
           : read_in_flight<1, unsigned><<<grid, kThreads, smem, s>>>(in1, nv, tail, tail_count, out);
      break;
    case 2:
      wide ? read_in_flight<2, uint4><<<grid, kThreads, smem, s>>>(in4, nv, tail, tail_count, out)
           : read_in_flight<2, unsigned><<<grid, kThreads, smem, s>>>(in1, nv, tail, tail_count, out);
      break;
    case 4:
      wide ? read_in_flight<4, uint4><<<grid, kThreads, smem, s>>>(in4, nv, tail, tail_count, out)
           : read_in_flight<4, unsigned><<<grid, kThreads, smem, s>>>(in1, nv, tail, tail_count, out);
      break;
    default:
      wide ? read_in_flight<8, uint4><<<grid, kThreads, smem, s>>>(in4, nv, tail, tail_count, out)
           : read_in_flight<8, unsigned><<<grid, kThreads, smem, s>>>(in1, nv, tail, tail_count, out);
      break;
    }
    CUDA_CHECK_LAUNCH();
  }

  /// The XOR of every word, exactly as the CPU computed it.
  steps::Comparison check() const {
    unsigned got = 0;
    CUDA_CHECK(cudaMemcpy(&got, result_.data(), sizeof got, cudaMemcpyDeviceToHost));
    return steps::compare_exact(got, want_, "the XOR of all words read differs from the CPU's: a word was skipped or read twice");
  }

  std::size_t n() const { return n_; }

private:
  steps::DeviceInfo dev_;
  std::size_t n_;
  steps::DeviceBuffer<unsigned> in_, result_;
  unsigned want_ = 0;
  std::size_t smem_per_sm_ = 0, reserved_per_block_ = 0;
};

/// "inflight_64K_8x4B_8blk": bytes in flight per SM, then U x W and blocks/SM.
inline std::string row_name(const Config& c) {
  return "inflight_" + std::to_string(static_cast<long long>(c.bytes_in_flight_per_sm()) / 1024) + "K_" +
         std::to_string(c.loads) + "x" + std::to_string(c.bytes) + "B_" + std::to_string(c.blocks_per_sm) + "blk";
}

/// A row of the sweep: reads 4 bytes per word (the work), reports its
/// configuration and bytes in flight as extra columns.
inline steps::Row<ReadSweep> row(const Config& c) {
  steps::Row<ReadSweep> r;
  r.name = row_name(c);
  r.what = "read: " + std::to_string(c.loads) + " x " + std::to_string(c.bytes) +
           "-byte loads per thread in flight, " + std::to_string(c.blocks_per_sm) + " x 256 threads per SM";
  r.role = steps::Role::reference;
  r.launch = [c](ReadSweep& p, steps::Run& run) { p.launch(c, run.stream()); };
  r.work = [](const ReadSweep& p) { return steps::Work{4.0 * static_cast<double>(p.n())}; };
  r.before_each = [](ReadSweep& p, cudaStream_t s) { p.zero_result(s); };
  r.check = [](ReadSweep& p) { return p.check(); };
  r.extras = [c](const ReadSweep& p) {
    const int blocks = p.blocks_per_sm(c);
    return std::vector<steps::Extra>{
        {"blocks/SM", double(blocks), 0},
        {"loads/thread", double(c.loads), 0},
        {"bytes/load", double(c.bytes), 0},
        {"KiB in flight/SM", double{1} * blocks * kThreads * c.loads * c.bytes / 1024.0, 0},
    };
  };
  return r;
}

/// The sweep, from 1 KiB to 128 KiB in flight per SM: blocks per SM at one
/// load per thread, loads per thread at full occupancy (8 blocks; 16-byte
/// loads up to 4, since 8 of them need more than the 32 registers a thread
/// has at full occupancy), then 8 x 16-byte loads at 1, 2 and 4 blocks.
/// Equal bytes in flight reached in different ways (32 KiB: 8 x 4 B at 8
/// blocks, 2 x 16 B at 8 blocks, 8 x 16 B at 1 block) show whether only the
/// bytes matter.
inline std::vector<Config> sweep() {
  std::vector<Config> out;
  for (const int w : {4, 16})
    for (const int b : {1, 2, 4})
      out.push_back({1, w, b});
  for (const int u : {1, 2, 4, 8})
    out.push_back({u, 4, 8});
  for (const int u : {1, 2, 4})
    out.push_back({u, 16, 8});
  for (const int b : {1, 2, 4})
    out.push_back({8, 16, b});
  return out;
}

} // namespace ch01::in_flight
