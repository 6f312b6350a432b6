// Chapter 07: what every row reports about its launch. The shared part of
// the chapter's three problems.
//
// A row's kernel is a __global__ function plus a launch shape (threads per
// block, dynamic shared memory). From those, and from what the compiler
// decided (cudaFuncGetAttributes: registers per thread, static shared
// memory, local memory for spills), the course's calculator
// (steps::occupancy) gives the theoretical occupancy that the table shows
// beside the row's speed.
#pragma once

#include "steps/chapter.hpp"
#include "steps/error.hpp"
#include "steps/occupancy.hpp"

#include <cuda_runtime.h>

#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace ch07 {

/// How a row launches its kernel.
struct Launch {
  const void* kernel = nullptr; ///< the __global__ function, cast to const void*
  int block = 256;              ///< threads per block
  /// 0: no padding. k > 0: add dynamic shared memory (which the kernel never
  /// touches) so that exactly k blocks fit on an SM: the way to dial the
  /// occupancy down without changing the kernel.
  int smem_blocks = 0;
};

/// What the compiler decided for a kernel (ptxas -v prints the same).
struct KernelFacts {
  int regs = 0;                ///< registers per thread
  std::size_t static_smem = 0; ///< static __shared__ bytes
  std::size_t local_bytes = 0; ///< local memory per thread: spills and stack
  int max_threads = 0;         ///< the largest block it can be launched with
};

inline KernelFacts facts_of(const void* kernel) {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  return {a.numRegs, a.sharedSizeBytes, a.localSizeBytes, a.maxThreadsPerBlock};
}

/// The largest dynamic shared memory with which exactly `blocks` blocks of a
/// kernel with `static_smem` bytes fit on one SM: the SM's shared memory
/// split `blocks` ways, in whole allocation units, less the per-block
/// reservation and the static part. Checked with the calculator.
inline std::size_t smem_for_blocks(const steps::ArchLimits& arch, int blocks, std::size_t static_smem) {
  const std::size_t share = arch.smem_per_sm / static_cast<std::size_t>(blocks) / arch.smem_alloc_unit * arch.smem_alloc_unit;
  const std::size_t cap = arch.smem_per_block_optin;
  if (share < arch.smem_reserved_per_block + static_smem)
    throw std::logic_error("ch07: " + std::to_string(blocks) + " blocks with " + std::to_string(static_smem) +
                           " B of static shared memory each do not fit on an SM of " + arch.name);
  std::size_t dynamic = share - arch.smem_reserved_per_block - static_smem;
  if (dynamic + static_smem > cap) dynamic = cap - static_smem;
  if (steps::blocks_by_shared_memory(arch, static_smem + dynamic) != blocks)
    throw std::logic_error("ch07: no shared-memory size gives exactly " + std::to_string(blocks) +
                           " blocks per SM on " + arch.name);
  return dynamic;
}

/// Lets `kernel` use up to the opt-in maximum of dynamic shared memory
/// (more than 48 KiB needs this, or the launch fails).
inline void allow_large_smem(const void* kernel, const steps::ArchLimits& arch) {
  const KernelFacts f = facts_of(kernel);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(arch.smem_per_block_optin - f.static_smem)));
}

/// An SM's L1 cache and its shared memory are one storage, split per launch
/// ("carveout"): the driver picks the split from what the launch needs and
/// from the kernel's preference. A launch padded to 227 KiB forces the
/// largest shared part (the smallest L1); a launch with no shared memory
/// would get a large L1. A sweep that pads some rows and not others would
/// then compare two L1 sizes as well as two occupancies, so every kernel
/// that some row pads prefers the largest shared part for ALL its rows
/// (cudaSharedmemCarveoutMaxShared = 100%): the same L1 for each of them.
/// `percent` 0 asks for the largest L1 instead (the row that shows the
/// difference).
inline void pin_carveout(const void* kernel, int percent = cudaSharedmemCarveoutMaxShared) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
}

/// The launch facts of one device: dynamic shared memory of a launch, its
/// full-wave grid, and the table's extra columns.
class Launcher {
public:
  explicit Launcher(const steps::DeviceInfo& dev) : dev_(dev), arch_(steps::limits_for(dev.cc_major, dev.cc_minor)) {}

  const steps::ArchLimits& arch() const { return arch_; }
  const steps::DeviceInfo& dev() const { return dev_; }

  /// What the compiler decided for `kernel` (read once).
  const KernelFacts& facts(const void* kernel) const {
    auto it = facts_.find(kernel);
    if (it == facts_.end()) it = facts_.emplace(kernel, facts_of(kernel)).first;
    return it->second;
  }

  /// Dynamic shared memory of launch `l` (0 without padding).
  std::size_t dynamic_smem(const Launch& l) const {
    return l.smem_blocks > 0 ? smem_for_blocks(arch_, l.smem_blocks, facts(l.kernel).static_smem) : 0;
  }

  /// Blocks that fill every SM exactly once at the kernel's occupancy, as
  /// CUDA computes it (grid-stride kernels launch this many).
  unsigned int full_wave(const Launch& l) const {
    const auto key = std::make_tuple(l.kernel, l.block, l.smem_blocks);
    auto it = waves_.find(key);
    if (it != waves_.end()) return it->second;
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, l.kernel, l.block, dynamic_smem(l)));
    if (per_sm < 1) throw std::runtime_error("ch07: a block of this kernel does not fit on an SM");
    const unsigned int blocks = static_cast<unsigned int>(per_sm * dev_.sm_count);
    waves_[key] = blocks;
    return blocks;
  }

  /// The grid of launch `l` over `items` work items: one full wave
  /// (grid-stride kernels) or one item per thread.
  unsigned int grid(const Launch& l, std::size_t items, bool whole_wave) const {
    return whole_wave ? full_wave(l) : static_cast<unsigned int>(steps::ceil_div<std::size_t>(items, l.block));
  }

  /// Resident blocks per SM of launch `l`, by the calculator.
  int blocks_per_sm(const Launch& l) const {
    const KernelFacts& f = facts(l.kernel);
    return steps::occupancy(arch_, l.block, f.regs, f.static_smem + dynamic_smem(l)).blocks_per_sm;
  }

  /// The extra columns of a row: block size, registers per thread, shared
  /// memory per block (static + dynamic), local memory per thread (register
  /// spills) and the calculator's theoretical occupancy.
  std::vector<steps::Extra> extras(const Launch& l) const {
    const KernelFacts& f = facts(l.kernel);
    const std::size_t smem = f.static_smem + dynamic_smem(l);
    const steps::Occupancy o = steps::occupancy(arch_, l.block, f.regs, smem);
    return {{"block", static_cast<double>(l.block), 0},
            {"regs", static_cast<double>(f.regs), 0},
            {"smem KiB", static_cast<double>(smem) / 1024.0, 1},
            {"local B", static_cast<double>(f.local_bytes), 0},
            {"occ %", 100.0 * o.fraction, 1}};
  }

private:
  steps::DeviceInfo dev_;
  steps::ArchLimits arch_;
  mutable std::map<const void*, KernelFacts> facts_;
  mutable std::map<std::tuple<const void*, int, int>, unsigned int> waves_;
};

/// Launches kernel `k` as `l` over `items` work items (none: nothing to
/// launch) in `stream`, with arguments `args`.
template <class... Params, class... Args>
void launch_over(const Launcher& launcher, const Launch& l, std::size_t items, bool whole_wave, cudaStream_t stream,
                 void (*k)(Params...), Args... args) {
  if (items == 0) return;
  k<<<launcher.grid(l, items, whole_wave), l.block, launcher.dynamic_smem(l), stream>>>(args...);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch07
