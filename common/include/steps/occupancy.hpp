/// @file occupancy.hpp
/// @brief The occupancy calculator: how many blocks of a kernel fit on one
///        SM at once, which resource stops the next one, and what fraction
///        of the SM's warp slots that fills.
///
/// An SM holds a block only when it has room for all of it at once: warp
/// slots for its threads, registers for all its warps, shared memory for it,
/// and a free block slot. Each of the four gives a number of blocks; the
/// smallest wins, and names the limiter:
/// @code
/// const steps::ArchLimits h200 = steps::limits_for(9, 0);
/// const steps::Occupancy o = steps::occupancy(h200, 512, 40, 20 * 1024);
/// // o.blocks_per_sm == 3, o.active_warps == 48 (of 64), o.fraction == 0.75,
/// // o.limiter == steps::Limiter::registers
/// @endcode
/// The rules are CUDA's own, as cudaOccupancyMaxActiveBlocksPerMultiprocessor
/// applies them (the CUDA Toolkit's include/cuda_occupancy.h spells them
/// out); chapter 07 checks the two agree on a GPU, case by case:
///  - warps: a block takes ceil(threads / 32) warp slots (a partial warp
///    takes a whole slot); more than 1024 threads never fit.
///  - registers: a warp gets regs_per_thread x 32 registers, rounded up to
///    the allocation unit (256). The register file is split evenly between
///    the SM's 4 sub-partitions (one per warp scheduler) and a warp's
///    registers come from one of them, so what counts is how many warps fit
///    in one quarter, times 4. A block fits at all only when
///    regs_per_warp x (its warps rounded up to a multiple of 4) <= 65536,
///    and regs_per_thread <= 255.
///  - shared memory: static + dynamic bytes, plus the driver's per-block
///    reservation (1 KiB from sm_80 on), rounded up to the allocation unit
///    (256 B before sm_80, 128 B after). Above 48 KiB a kernel must opt in
///    (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
///    bytes)); the calculator assumes it did, up to the per-block maximum.
///    The SM's shared memory is taken at its largest carveout (what CUDA
///    assumes when the kernel states no carveout preference).
///  - blocks: at most max_blocks_per_sm resident blocks, whatever their size.
/// Thread-block clusters and the Blackwell "virtual resource" limit are not
/// modelled (no kernel of this course uses them).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace steps {

/// The per-SM limits of one GPU architecture (one compute capability): the
/// facts an occupancy calculation needs.
struct ArchLimits {
  int cc_major = 0;                      ///< compute capability, major
  int cc_minor = 0;                      ///< compute capability, minor
  std::string name;                      ///< "sm_90 (Hopper: H100, H200)"
  int warp_size = 32;                    ///< threads per warp
  int max_threads_per_block = 1024;      ///< largest block
  int max_threads_per_sm = 0;            ///< resident threads per SM
  int max_warps_per_sm = 0;              ///< resident warps per SM (= threads / 32)
  int max_blocks_per_sm = 0;             ///< resident blocks per SM, whatever their size
  int regs_per_sm = 64 * 1024;           ///< 32-bit registers per SM
  int regs_per_block = 64 * 1024;        ///< 32-bit registers one block may use
  int reg_alloc_unit = 256;              ///< a warp's registers come in multiples of this
  int max_regs_per_thread = 255;         ///< the most registers a thread can have
  int sub_partitions = 4;                ///< the register file is split evenly among these (one per scheduler)
  std::size_t smem_per_sm = 0;           ///< shared memory per SM, bytes (largest carveout)
  std::size_t smem_per_block = 48 * 1024;///< per block without opting in, bytes
  std::size_t smem_per_block_optin = 0;  ///< per block after opting in, bytes (static + dynamic)
  std::size_t smem_alloc_unit = 0;       ///< a block's shared memory comes in multiples of this, bytes
  std::size_t smem_reserved_per_block = 0; ///< bytes the driver adds to every block (1 KiB from sm_80 on)

  /// "sm_90"
  std::string sm() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

/// The limits of compute capability `cc_major`.`cc_minor`. Throws
/// std::invalid_argument, naming the architectures it knows, for any other.
ArchLimits limits_for(int cc_major, int cc_minor);

/// Every architecture limits_for() knows, oldest first.
std::vector<ArchLimits> known_architectures();

/// Which limit stops the next block from fitting. Declared in the order that
/// breaks ties (the order of CUDA's cudaOccLimitingFactor flags): when
/// several limits allow the same, smallest number of blocks, the limiter is
/// the first of them here.
enum class Limiter {
  warps,         ///< warp slots (threads per SM)
  registers,     ///< the register file
  shared_memory, ///< shared memory
  blocks,        ///< the resident-block limit
};

/// "warps", "registers", "shared memory" or "blocks".
const char* limiter_name(Limiter l);

/// A limit that does not apply (a block with no registers or no shared
/// memory at all is not limited by them), as cudaOccupancy reports it.
constexpr int kUnlimited = std::numeric_limits<int>::max();

// The steps of occupancy(), one limit each (for tests, graders and lessons;
// they expect the inputs occupancy() accepts).

/// Warp slots one block takes: ceil(threads / 32).
int warps_per_block(const ArchLimits& arch, int threads_per_block);

/// Registers one warp is given: regs_per_thread x 32, rounded up to the
/// allocation unit.
int registers_per_warp(const ArchLimits& arch, int regs_per_thread);

/// Shared memory one block is given: its bytes plus the per-block
/// reservation, rounded up to the allocation unit.
std::size_t shared_memory_per_block(const ArchLimits& arch, std::size_t smem_per_block);

/// Blocks that fit by warp slots (0 for more than max_threads_per_block threads).
int blocks_by_warps(const ArchLimits& arch, int threads_per_block);
/// Blocks that fit by registers (0 when one block cannot fit; kUnlimited for 0 registers).
int blocks_by_registers(const ArchLimits& arch, int threads_per_block, int regs_per_thread);
/// Blocks that fit by shared memory (0 above the opt-in maximum; kUnlimited
/// when a block is given none, which happens only before sm_80).
int blocks_by_shared_memory(const ArchLimits& arch, std::size_t smem_per_block);
/// Blocks that fit by the resident-block limit.
int blocks_by_block_limit(const ArchLimits& arch);

/// The limiter among four block counts: the smallest, ties broken in
/// Limiter's declaration order (warps, registers, shared memory, blocks).
Limiter limiting_factor(int by_warps, int by_registers, int by_shared_memory, int by_blocks);

/// The result of an occupancy calculation.
struct Occupancy {
  int blocks_per_sm = 0;        ///< resident blocks per SM (0: the block cannot run at all)
  int warps_per_block = 0;      ///< warp slots one block takes
  int active_warps = 0;         ///< blocks_per_sm x warps_per_block
  int max_warps = 0;            ///< the SM's warp slots
  double fraction = 0;          ///< active_warps / max_warps: the theoretical occupancy
  Limiter limiter = Limiter::warps; ///< what stops the next block
  int by_warps = 0;             ///< blocks allowed by warp slots
  int by_registers = 0;         ///< blocks allowed by registers (kUnlimited: none used)
  int by_shared_memory = 0;     ///< blocks allowed by shared memory (kUnlimited: none used)
  int by_blocks = 0;            ///< blocks allowed by the resident-block limit
  int regs_per_warp = 0;        ///< registers given to one warp
  std::size_t smem_per_block = 0; ///< shared memory given to one block (with reservation and rounding)

  /// The block count one limit allows.
  int blocks_by(Limiter l) const;
  /// True when limit `l` allows no more blocks than blocks_per_sm (ties included).
  bool limited_by(Limiter l) const { return blocks_by(l) == blocks_per_sm; }
};

/// Occupancy of a kernel with `threads_per_block` threads, `regs_per_thread`
/// registers (cudaFuncAttributes::numRegs) and `smem_per_block` bytes of
/// shared memory (static sharedSizeBytes + the dynamic bytes of the launch)
/// on `arch`. A block that cannot run at all (more than 1024 threads, more
/// than 255 registers, more shared memory than the opt-in maximum) gives 0
/// blocks. Throws std::invalid_argument for inputs no kernel can have
/// (threads_per_block < 1, regs_per_thread < 0, either above 2^20, or more
/// than 2^40 bytes of shared memory).
Occupancy occupancy(const ArchLimits& arch, int threads_per_block, int regs_per_thread, std::size_t smem_per_block);

/// The calculation written out, one line per limit, with every intermediate
/// number (what the lesson's worked examples and the grader's hints show).
std::string explain(const ArchLimits& arch, int threads_per_block, int regs_per_thread, std::size_t smem_per_block);

} // namespace steps
