// The occupancy calculator (see occupancy.hpp for the rules).
//
// Sources of the per-architecture numbers:
//  - the CUDA Toolkit's include/cuda_occupancy.h (CUDA 13.0), the header
//    version of cudaOccupancyMaxActiveBlocksPerMultiprocessor: register and
//    shared-memory allocation units, sub-partitions, resident blocks per SM,
//    the order of the checks;
//  - the CUDA C++ Programming Guide, "Technical Specifications per Compute
//    Capability", and NVIDIA CCCL's cudax arch_traits.cuh (sm_70, 75, 80,
//    86, 89, 90): resident threads per SM, shared memory per SM, the per-block
//    opt-in maximum and the 1 KiB per-block reservation from sm_80 on.
// Chapter 07 compares this table with the attributes of the GPU it runs on,
// and the calculator with cudaOccupancyMaxActiveBlocksPerMultiprocessor.
#include "steps/occupancy.hpp"

#include "steps/arch.hpp"
#include "steps/math.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace steps {

namespace {

constexpr std::size_t KiB = 1024;

ArchLimits arch(int major, int minor, const char* family, int threads_per_sm, int blocks_per_sm,
                std::size_t smem_per_sm_kib, std::size_t optin_kib) {
  ArchLimits a;
  a.cc_major = major;
  a.cc_minor = minor;
  a.name = a.sm() + " (" + family + ")";
  a.max_threads_per_sm = threads_per_sm;
  a.max_warps_per_sm = threads_per_sm / a.warp_size;
  a.max_blocks_per_sm = blocks_per_sm;
  a.smem_per_sm = smem_per_sm_kib * KiB;
  a.smem_per_block_optin = optin_kib * KiB;
  // cuda_occupancy.h, cudaOccSMemAllocationGranularity: 256 B up to cc 7.x, 128 B from 8.0.
  a.smem_alloc_unit = major >= 8 ? 128 : 256;
  // "Starting Ampere, CUDA driver reserves additional shared memory per block"
  // (cuda_occupancy.h); cudaDevAttrReservedSharedMemoryPerBlock reports 1 KiB.
  a.smem_reserved_per_block = major >= 8 ? KiB : 0;
  return a;
}

const std::vector<ArchLimits>& table() {
  // The facts come from the one architecture table (steps/arch.hpp).
  static const std::vector<ArchLimits> t = [] {
    std::vector<ArchLimits> out;
    for (const ArchFacts& f : known_arch_facts())
      out.push_back(arch(f.cc_major, f.cc_minor, f.family.c_str(), f.max_threads_per_sm, f.max_blocks_per_sm,
                         std::size_t(f.smem_per_sm_kib), std::size_t(f.smem_per_block_optin_kib)));
    return out;
  }();
  return t;
}

// Inputs far outside any real kernel are a caller's bug (and would overflow
// the arithmetic below); more than 1024 threads or 255 registers are not:
// such a block simply does not fit (0 blocks), as CUDA reports it.
void check_inputs(int threads_per_block, int regs_per_thread, std::size_t smem_per_block) {
  constexpr int kAbsurd = 1 << 20;
  if (threads_per_block < 1 || threads_per_block > kAbsurd)
    throw std::invalid_argument("occupancy: threads_per_block must be in [1, 2^20], not " +
                                std::to_string(threads_per_block));
  if (regs_per_thread < 0 || regs_per_thread > kAbsurd)
    throw std::invalid_argument("occupancy: regs_per_thread must be in [0, 2^20], not " +
                                std::to_string(regs_per_thread));
  if (smem_per_block > (std::size_t{1} << 40))
    throw std::invalid_argument("occupancy: smem_per_block must be at most 2^40 bytes, not " +
                                std::to_string(smem_per_block));
}

std::string count(int blocks) { return blocks == kUnlimited ? std::string("unlimited") : std::to_string(blocks); }

} // namespace

ArchLimits limits_for(int cc_major, int cc_minor) {
  for (const auto& a : table())
    if (a.cc_major == cc_major && a.cc_minor == cc_minor) return a;
  std::string known;
  for (const auto& a : table()) known += (known.empty() ? "" : ", ") + a.sm();
  throw std::invalid_argument("the occupancy calculator has no limits for compute capability " +
                              std::to_string(cc_major) + "." + std::to_string(cc_minor) + " (sm_" +
                              std::to_string(cc_major) + std::to_string(cc_minor) + "); it knows " + known +
                              " (add it to the architecture table, common/src/arch.cpp)");
}

std::vector<ArchLimits> known_architectures() { return table(); }

const char* limiter_name(Limiter l) {
  switch (l) {
  case Limiter::warps: return "warps";
  case Limiter::registers: return "registers";
  case Limiter::shared_memory: return "shared memory";
  case Limiter::blocks: return "blocks";
  }
  return "?";
}

int warps_per_block(const ArchLimits& arch, int threads_per_block) {
  return ceil_div(threads_per_block, arch.warp_size);
}

int registers_per_warp(const ArchLimits& arch, int regs_per_thread) {
  return round_up(regs_per_thread * arch.warp_size, arch.reg_alloc_unit);
}

std::size_t shared_memory_per_block(const ArchLimits& arch, std::size_t smem_per_block) {
  return round_up(smem_per_block + arch.smem_reserved_per_block, arch.smem_alloc_unit);
}

int blocks_by_warps(const ArchLimits& arch, int threads_per_block) {
  if (threads_per_block > arch.max_threads_per_block) return 0;
  return arch.max_warps_per_sm / warps_per_block(arch, threads_per_block);
}

int blocks_by_registers(const ArchLimits& arch, int threads_per_block, int regs_per_thread) {
  if (regs_per_thread > arch.max_regs_per_thread) return 0;
  const int warps = warps_per_block(arch, threads_per_block);
  const int per_warp = registers_per_warp(arch, regs_per_thread);
  // The per-block check, as the hardware makes it: as if the block's warps
  // were spread over all sub-partitions at once (rounded up to a multiple of 4).
  if (static_cast<long long>(per_warp) * round_up(warps, arch.sub_partitions) > arch.regs_per_block) return 0;
  if (per_warp == 0) return kUnlimited;
  // A warp's registers come from one sub-partition's quarter of the file:
  // count the warps that fit in a quarter, then take all four quarters.
  const int warps_per_sub_partition = (arch.regs_per_sm / arch.sub_partitions) / per_warp;
  return warps_per_sub_partition * arch.sub_partitions / warps;
}

int blocks_by_shared_memory(const ArchLimits& arch, std::size_t smem_per_block) {
  const std::size_t given = shared_memory_per_block(arch, smem_per_block);
  // The per-block limit (opt-in maximum plus the reservation): larger blocks never fit.
  if (given > arch.smem_per_block_optin + arch.smem_reserved_per_block) return 0;
  if (given == 0) return kUnlimited;
  return static_cast<int>(arch.smem_per_sm / given);
}

int blocks_by_block_limit(const ArchLimits& arch) { return arch.max_blocks_per_sm; }

Limiter limiting_factor(int by_warps, int by_registers, int by_shared_memory, int by_blocks) {
  const int least = std::min({by_warps, by_registers, by_shared_memory, by_blocks});
  if (by_warps == least) return Limiter::warps;
  if (by_registers == least) return Limiter::registers;
  if (by_shared_memory == least) return Limiter::shared_memory;
  return Limiter::blocks;
}

int Occupancy::blocks_by(Limiter l) const {
  switch (l) {
  case Limiter::warps: return by_warps;
  case Limiter::registers: return by_registers;
  case Limiter::shared_memory: return by_shared_memory;
  case Limiter::blocks: return by_blocks;
  }
  return 0;
}

Occupancy occupancy(const ArchLimits& arch, int threads_per_block, int regs_per_thread, std::size_t smem_per_block) {
  check_inputs(threads_per_block, regs_per_thread, smem_per_block);
  Occupancy o;
  o.warps_per_block = warps_per_block(arch, threads_per_block);
  o.regs_per_warp = registers_per_warp(arch, regs_per_thread);
  o.smem_per_block = shared_memory_per_block(arch, smem_per_block);
  o.by_warps = blocks_by_warps(arch, threads_per_block);
  o.by_registers = blocks_by_registers(arch, threads_per_block, regs_per_thread);
  o.by_shared_memory = blocks_by_shared_memory(arch, smem_per_block);
  o.by_blocks = blocks_by_block_limit(arch);
  o.blocks_per_sm = std::min({o.by_warps, o.by_registers, o.by_shared_memory, o.by_blocks});
  o.limiter = limiting_factor(o.by_warps, o.by_registers, o.by_shared_memory, o.by_blocks);
  o.active_warps = o.blocks_per_sm * o.warps_per_block;
  o.max_warps = arch.max_warps_per_sm;
  o.fraction = static_cast<double>(o.active_warps) / o.max_warps;
  return o;
}

std::string explain(const ArchLimits& arch, int threads_per_block, int regs_per_thread, std::size_t smem_per_block) {
  const Occupancy o = occupancy(arch, threads_per_block, regs_per_thread, smem_per_block);
  const int sub = arch.regs_per_sm / arch.sub_partitions;
  std::ostringstream os;
  os << arch.sm() << ", " << threads_per_block << " threads, " << regs_per_thread << " registers/thread, "
     << smem_per_block << " B shared memory per block:\n";
  os << "  warps:         ceil(" << threads_per_block << " / " << arch.warp_size << ") = " << o.warps_per_block
     << " warps per block";
  if (threads_per_block > arch.max_threads_per_block)
    os << "; more than " << arch.max_threads_per_block << " threads: 0 blocks\n";
  else
    os << "; " << arch.max_warps_per_sm << " warp slots / " << o.warps_per_block << " = " << o.by_warps
       << " blocks\n";
  os << "  registers:     " << regs_per_thread << " x " << arch.warp_size << " = " << regs_per_thread * arch.warp_size
     << ", rounded up to a multiple of " << arch.reg_alloc_unit << " = " << o.regs_per_warp << " per warp";
  if (regs_per_thread > arch.max_regs_per_thread) {
    os << "; more than " << arch.max_regs_per_thread << " per thread: 0 blocks\n";
  } else if (o.by_registers == 0) {
    os << "; x " << round_up(o.warps_per_block, arch.sub_partitions) << " warps (rounded up to a multiple of "
       << arch.sub_partitions << ") = " << static_cast<long long>(o.regs_per_warp) *
                                               round_up(o.warps_per_block, arch.sub_partitions)
       << " > " << arch.regs_per_block << " per block: 0 blocks\n";
  } else if (o.by_registers == kUnlimited) {
    os << ": unlimited\n";
  } else {
    const int per_sub = sub / o.regs_per_warp;
    os << "; " << sub << " per sub-partition / " << o.regs_per_warp << " = " << per_sub << " warps, x "
       << arch.sub_partitions << " = " << per_sub * arch.sub_partitions << " warps per SM / " << o.warps_per_block
       << " = " << o.by_registers << " blocks\n";
  }
  os << "  shared memory: " << smem_per_block << " + " << arch.smem_reserved_per_block
     << " reserved, rounded up to a multiple of " << arch.smem_alloc_unit << " = " << o.smem_per_block << " B";
  if (o.by_shared_memory == 0)
    os << " > " << arch.smem_per_block_optin + arch.smem_reserved_per_block << " (the per-block maximum "
       << arch.smem_per_block_optin << " + reserved): 0 blocks\n";
  else if (o.by_shared_memory == kUnlimited)
    os << ": unlimited\n";
  else
    os << "; " << arch.smem_per_sm << " per SM / " << o.smem_per_block << " = " << o.by_shared_memory
       << " blocks\n";
  os << "  blocks:        " << o.by_blocks << " resident blocks per SM\n";
  os << "  => " << o.blocks_per_sm << " blocks per SM = " << o.active_warps << " of " << o.max_warps << " warps = "
     << static_cast<int>(o.fraction * 1000 + 0.5) / 10.0 << "% occupancy, limited by " << limiter_name(o.limiter)
     << " (warps " << count(o.by_warps) << ", registers " << count(o.by_registers) << ", shared memory "
     << count(o.by_shared_memory) << ", blocks " << count(o.by_blocks) << ")";
  return os.str();
}

} // namespace steps
