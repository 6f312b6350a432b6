// Exercise 07, solution: the occupancy calculator's core, in plain C++.
//
// Four limits, each a number of blocks; the smallest is what fits. Every
// rounding goes UP (a partial warp, a partial register unit, a partial
// shared-memory unit each cost a whole one), every count of blocks DOWN
// (half a block does not run).
#include "limiting_factor.hpp"

#include <algorithm>

namespace ex07 {

namespace {

/// How many units of `unit` cover `amount` (rounds up).
long long units(long long amount, long long unit) { return (amount + unit - 1) / unit; }

} // namespace

BlockLimits limiting_factor(const steps::ArchLimits& arch, int threads_per_block, int regs_per_thread,
                            std::size_t smem_per_block) {
  BlockLimits r;

  // 1. Warps: a block of 33 threads takes 2 warp slots, not 1.03.
  const int warps = static_cast<int>(units(threads_per_block, arch.warp_size));
  r.by_warps = threads_per_block > arch.max_threads_per_block ? 0 : arch.max_warps_per_sm / warps;

  // 2. Registers: per warp, in whole allocation units; each warp lives in one
  // sub-partition (a quarter of the register file on every GPU here), so
  // count the warps one quarter holds and multiply by the quarters.
  const long long regs_per_warp = units(1LL * regs_per_thread * arch.warp_size, arch.reg_alloc_unit) * arch.reg_alloc_unit;
  if (regs_per_thread > arch.max_regs_per_thread) {
    r.by_registers = 0;
  } else {
    const long long warps_per_quarter = (arch.regs_per_sm / arch.sub_partitions) / regs_per_warp;
    r.by_registers = static_cast<int>(warps_per_quarter * arch.sub_partitions / warps);
  }

  // 3. Shared memory: the driver's reservation is part of every block, and
  // the total comes in whole allocation units.
  const std::size_t given = static_cast<std::size_t>(
      units(static_cast<long long>(smem_per_block + arch.smem_reserved_per_block),
            static_cast<long long>(arch.smem_alloc_unit)) *
      static_cast<long long>(arch.smem_alloc_unit));
  if (smem_per_block > arch.smem_per_block_optin) {
    r.by_shared_memory = 0;
  } else if (given == 0) {
    r.by_shared_memory = steps::kUnlimited; // nothing to run out of (possible before sm_80 only)
  } else {
    r.by_shared_memory = static_cast<int>(arch.smem_per_sm / given);
  }

  // 4. Blocks: a fixed number of block slots, whatever the blocks' size.
  r.by_blocks = arch.max_blocks_per_sm;

  // 5. The smallest wins; on a tie, the first in this order.
  r.blocks_per_sm = std::min({r.by_warps, r.by_registers, r.by_shared_memory, r.by_blocks});
  if (r.by_warps == r.blocks_per_sm) {
    r.limiter = steps::Limiter::warps;
  } else if (r.by_registers == r.blocks_per_sm) {
    r.limiter = steps::Limiter::registers;
  } else if (r.by_shared_memory == r.blocks_per_sm) {
    r.limiter = steps::Limiter::shared_memory;
  } else {
    r.limiter = steps::Limiter::blocks;
  }
  return r;
}

} // namespace ex07
