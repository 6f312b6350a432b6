/// @file limiting_factor.hpp
/// @brief Exercise 07: the function you implement in limiting_factor.cpp.
///        Plain C++: no GPU needed to write it or to grade it.
#pragma once

#include "steps/occupancy.hpp" // steps::ArchLimits, steps::Limiter, steps::kUnlimited

#include <cstddef>

namespace ex07 {

/// How many blocks of one kernel fit on one SM by each of the four limits,
/// how many fit in the end, and which limit decides.
struct BlockLimits {
  int by_warps = 0;         ///< blocks that fit by warp slots
  int by_registers = 0;     ///< blocks that fit by registers
  int by_shared_memory = 0; ///< blocks that fit by shared memory (steps::kUnlimited when a block uses none)
  int by_blocks = 0;        ///< blocks that fit by the resident-block limit
  int blocks_per_sm = 0;    ///< the smallest of the four: what really fits
  steps::Limiter limiter = steps::Limiter::warps; ///< the limit that gives blocks_per_sm (ties: see the README)
};

/// The occupancy calculation for a kernel launched with `threads_per_block`
/// threads (1 or more; above arch.max_threads_per_block nothing fits), using
/// `regs_per_thread` registers per thread (1 or more; above
/// arch.max_regs_per_thread nothing fits) and `smem_per_block` bytes of
/// shared memory per block (static + dynamic; 0 or more), on the GPU
/// architecture `arch`.
BlockLimits limiting_factor(const steps::ArchLimits& arch, int threads_per_block, int regs_per_thread,
                            std::size_t smem_per_block);

} // namespace ex07
