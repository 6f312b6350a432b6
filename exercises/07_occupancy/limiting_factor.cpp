// Exercise 07: the occupancy calculator's core, in plain C++.
//
// How many blocks of a kernel can one SM hold at once? Each of four
// resources gives an answer; the smallest one is what really fits. Fill in
// the four limits and the decision (the README has the rules; chapter 07's
// lesson works an example through). Do not call steps::occupancy(): it is
// the reference the grader compares your answers with.
//
// Grade: ./tutorial grade 07 occupancy   (runs on the CPU: no GPU needed)
#include "limiting_factor.hpp"

namespace ex07 {

BlockLimits limiting_factor(const steps::ArchLimits& arch, int threads_per_block, int regs_per_thread,
                            std::size_t smem_per_block) {
  BlockLimits r;

  // TODO 1 (warps): how many warp slots does one block take, and how many
  // such blocks fit in arch.max_warps_per_sm? A block of more than
  // arch.max_threads_per_block threads never fits (0).
  r.by_warps = 0;

  // TODO 2 (registers): registers are given to whole warps, in multiples of
  // arch.reg_alloc_unit, from one of the arch.sub_partitions equal parts of
  // the register file. More than arch.max_regs_per_thread never fits (0).
  r.by_registers = 0;

  // TODO 3 (shared memory): more than arch.smem_per_block_optin bytes (the
  // block's own, before the reservation) never fit (0). Else the block's
  // bytes plus arch.smem_reserved_per_block, rounded up to
  // arch.smem_alloc_unit, out of arch.smem_per_sm. A block given no shared
  // memory at all is not limited by it: steps::kUnlimited.
  r.by_shared_memory = 0;

  // TODO 4 (blocks): the resident-block limit.
  r.by_blocks = 0;

  // TODO 5: what really fits, and which limit it is (on a tie, the first of
  // warps, registers, shared memory, blocks).
  r.blocks_per_sm = 0;
  r.limiter = steps::Limiter::warps;

  // Remove these lines once you use the inputs.
  (void)arch;
  (void)threads_per_block;
  (void)regs_per_thread;
  (void)smem_per_block;
  return r;
}

} // namespace ex07
