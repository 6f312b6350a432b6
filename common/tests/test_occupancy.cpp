// Host tests of the occupancy calculator: worked examples (each expected
// number derived in the comment above it), the edge cases where a block does
// not fit at all, the register cliff, and the tie rule of the limiter.
// Chapter 07's GPU test checks the same calculator against
// cudaOccupancyMaxActiveBlocksPerMultiprocessor.
#include "steps/catch.hpp"
#include "steps/occupancy.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

using steps::Limiter;

namespace {

// KiB, for shared-memory sizes.
constexpr std::size_t KiB = 1024;

} // namespace

TEST_CASE("occupancy: the per-architecture table", "[occupancy]") {
  const auto h200 = steps::limits_for(9, 0);
  CHECK(h200.max_threads_per_sm == 2048);
  CHECK(h200.max_warps_per_sm == 64);
  CHECK(h200.max_blocks_per_sm == 32);
  CHECK(h200.regs_per_sm == 65536);
  CHECK(h200.reg_alloc_unit == 256);
  CHECK(h200.max_regs_per_thread == 255);
  CHECK(h200.smem_per_sm == 228 * KiB);
  CHECK(h200.smem_per_block_optin == 227 * KiB);
  CHECK(h200.smem_per_block == 48 * KiB);
  CHECK(h200.smem_alloc_unit == 128);
  CHECK(h200.smem_reserved_per_block == 1 * KiB);
  CHECK(h200.sm() == "sm_90");

  const auto t4 = steps::limits_for(7, 5);
  CHECK(t4.max_threads_per_sm == 1024);
  CHECK(t4.max_blocks_per_sm == 16);
  CHECK(t4.smem_per_sm == 64 * KiB);
  CHECK(t4.smem_alloc_unit == 256);
  CHECK(t4.smem_reserved_per_block == 0);

  const auto a10 = steps::limits_for(8, 6);
  CHECK(a10.max_warps_per_sm == 48);
  CHECK(a10.max_blocks_per_sm == 16);
  CHECK(steps::limits_for(8, 9).max_blocks_per_sm == 24);

  // What holds for every architecture the table knows.
  for (const auto& a : steps::known_architectures()) {
    INFO(a.name);
    CHECK(a.max_warps_per_sm * a.warp_size == a.max_threads_per_sm);
    CHECK(a.smem_per_block_optin + a.smem_reserved_per_block <= a.smem_per_sm);
    CHECK(a.smem_per_block_optin >= a.smem_per_block);
    CHECK((a.smem_per_block_optin + a.smem_reserved_per_block) % a.smem_alloc_unit == 0);
    CHECK(a.regs_per_sm % (a.sub_partitions * a.reg_alloc_unit) == 0);
    CHECK(steps::limits_for(a.cc_major, a.cc_minor).name == a.name);
  }
}

TEST_CASE("occupancy: an unknown architecture is an error that says so", "[occupancy]") {
  CHECK_THROWS_AS(steps::limits_for(5, 2), std::invalid_argument);
  CHECK_THROWS_AS(steps::limits_for(9, 1), std::invalid_argument);
  try {
    steps::limits_for(6, 1);
    FAIL("limits_for(6, 1) did not throw");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("sm_61") != std::string::npos);
    CHECK(what.find("sm_90") != std::string::npos); // names the ones it knows
  }
}

// The classic worked example: 512 threads, 40 registers per thread and
// 20 KiB of shared memory per block.
TEST_CASE("occupancy: 512 threads, 40 registers, 20 KiB on the H200 (sm_90)", "[occupancy]") {
  // warps:     512 / 32 = 16 warps per block; 64 slots / 16 = 4 blocks.
  // registers: 40 x 32 = 1280 per warp (already a multiple of 256);
  //            65536 / 4 sub-partitions = 16384; 16384 / 1280 = 12.8 -> 12
  //            warps per sub-partition, x 4 = 48 warps; 48 / 16 = 3 blocks.
  // shared:    20480 + 1024 reserved = 21504 (a multiple of 128);
  //            233472 / 21504 = 10.86 -> 10 blocks.
  // blocks:    32.
  // => min(4, 3, 10, 32) = 3 blocks = 48 of 64 warps = 75%, registers.
  const auto o = steps::occupancy(steps::limits_for(9, 0), 512, 40, 20 * KiB);
  CHECK(o.warps_per_block == 16);
  CHECK(o.regs_per_warp == 1280);
  CHECK(o.smem_per_block == 21504);
  CHECK(o.by_warps == 4);
  CHECK(o.by_registers == 3);
  CHECK(o.by_shared_memory == 10);
  CHECK(o.by_blocks == 32);
  CHECK(o.blocks_per_sm == 3);
  CHECK(o.active_warps == 48);
  CHECK(o.max_warps == 64);
  CHECK(o.fraction == Approx(0.75));
  CHECK(o.limiter == Limiter::registers);
  CHECK(o.limited_by(Limiter::registers));
  CHECK_FALSE(o.limited_by(Limiter::warps));
}

TEST_CASE("occupancy: the same block on Turing (sm_75) and Volta (sm_70)", "[occupancy]") {
  SECTION("sm_75: half the warp slots, so warps limit first, and the SM is full") {
    // warps:     1024 threads = 32 slots; 32 / 16 = 2 blocks.
    // registers: 1280 per warp, 12 per sub-partition, 48 warps / 16 = 3 blocks.
    // shared:    20480 + 0 reserved (none before sm_80) = 20480 (a multiple
    //            of 256); 65536 / 20480 = 3.2 -> 3 blocks.
    // blocks:    16.
    // => 2 blocks = 32 of 32 warps = 100%, warps.
    const auto o = steps::occupancy(steps::limits_for(7, 5), 512, 40, 20 * KiB);
    CHECK(o.by_warps == 2);
    CHECK(o.by_registers == 3);
    CHECK(o.by_shared_memory == 3);
    CHECK(o.by_blocks == 16);
    CHECK(o.blocks_per_sm == 2);
    CHECK(o.active_warps == 32);
    CHECK(o.fraction == Approx(1.0));
    CHECK(o.limiter == Limiter::warps);
  }
  SECTION("sm_70: registers limit, as on the H200") {
    // warps 64 / 16 = 4; registers 3 (as above); shared 98304 / 20480 = 4.8
    // -> 4; blocks 32 => 3 blocks = 48 of 64 warps = 75%, registers.
    const auto o = steps::occupancy(steps::limits_for(7, 0), 512, 40, 20 * KiB);
    CHECK(o.by_warps == 4);
    CHECK(o.by_registers == 3);
    CHECK(o.by_shared_memory == 4);
    CHECK(o.blocks_per_sm == 3);
    CHECK(o.fraction == Approx(0.75));
    CHECK(o.limiter == Limiter::registers);
  }
  SECTION("sm_86: warps and registers tie; the tie goes to warps") {
    // warps:     1536 threads = 48 slots / 16 = 3 blocks.
    // registers: 48 warps / 16 = 3 blocks.
    // shared:    21504 B; 102400 / 21504 = 4.76 -> 4 blocks.
    // blocks:    16.
    // => 3 blocks = 48 of 48 warps = 100%; warps (3) and registers (3) tie,
    //    and warps comes first in the tie order.
    const auto o = steps::occupancy(steps::limits_for(8, 6), 512, 40, 20 * KiB);
    CHECK(o.by_warps == 3);
    CHECK(o.by_registers == 3);
    CHECK(o.by_shared_memory == 4);
    CHECK(o.blocks_per_sm == 3);
    CHECK(o.fraction == Approx(1.0));
    CHECK(o.limiter == Limiter::warps);
    CHECK(o.limited_by(Limiter::registers));
  }
}

TEST_CASE("occupancy: registers are rounded up per warp and split among sub-partitions", "[occupancy]") {
  const auto h200 = steps::limits_for(9, 0);
  SECTION("37 registers are allocated as 40") {
    // 37 x 32 = 1184 -> rounded up to 1280 (5 x 256); 16384 / 1280 = 12
    // warps per sub-partition -> 48 warps; 128-thread blocks (4 warps): 12.
    // Without the rounding it would be 16384 / 1184 = 13 -> 52 warps -> 13.
    CHECK(steps::registers_per_warp(h200, 37) == 1280);
    CHECK(steps::blocks_by_registers(h200, 128, 37) == 12);
  }
  SECTION("the quarters of the register file count, not the whole") {
    // 64-thread blocks (2 warps), 40 registers: 1280 per warp. Per quarter:
    // 16384 / 1280 = 12 warps -> 48 warps -> 24 blocks. The whole file would
    // suggest 65536 / 1280 = 51 warps -> 25 blocks, which does not exist.
    const auto o = steps::occupancy(h200, 64, 40, 0);
    CHECK(o.by_registers == 24);
    CHECK(o.by_warps == 32);
    CHECK(o.by_blocks == 32);
    CHECK(o.blocks_per_sm == 24);
    CHECK(o.limiter == Limiter::registers);
  }
  SECTION("the register cliff of 1024-thread blocks: 64 fit, 65 do not") {
    // 64 registers: 2048 per warp; 16384 / 2048 = 8 warps per quarter -> 32
    // warps = exactly one 32-warp block. 65: 2080 -> 2304 per warp;
    // 16384 / 2304 = 7 -> 28 warps < 32: the block cannot run at all.
    CHECK(steps::occupancy(h200, 1024, 64, 0).blocks_per_sm == 1);
    const auto o = steps::occupancy(h200, 1024, 65, 0);
    CHECK(o.by_registers == 0);
    CHECK(o.blocks_per_sm == 0);
    CHECK(o.active_warps == 0);
    CHECK(o.fraction == 0.0);
    CHECK(o.limiter == Limiter::registers);
  }
  SECTION("255 registers, the most a thread can have") {
    // 255 x 32 = 8160 -> 8192 per warp; 16384 / 8192 = 2 warps per quarter
    // -> 8 warps per SM. A 256-thread block (8 warps) fits once.
    CHECK(steps::occupancy(h200, 256, 255, 0).by_registers == 1);
    CHECK(steps::occupancy(h200, 288, 255, 0).by_registers == 0); // 9 warps
  }
  SECTION("more than 255 registers never fit") {
    CHECK(steps::blocks_by_registers(h200, 32, 256) == 0);
  }
  SECTION("a kernel with no registers is not limited by them") {
    CHECK(steps::blocks_by_registers(h200, 256, 0) == steps::kUnlimited);
  }
}

TEST_CASE("occupancy: shared memory is rounded up and carries the per-block reservation", "[occupancy]") {
  const auto h200 = steps::limits_for(9, 0);
  SECTION("sm_90: 1 KiB reserved per block, 128-byte units") {
    // 1 B -> 1 + 1024 = 1025 -> 1152 (9 x 128); 233472 / 1152 = 202 blocks.
    CHECK(steps::shared_memory_per_block(h200, 1) == 1152);
    CHECK(steps::blocks_by_shared_memory(h200, 1) == 202);
    // 0 B still costs the reservation: 233472 / 1024 = 228 blocks.
    CHECK(steps::blocks_by_shared_memory(h200, 0) == 228);
    // 48 KiB: 49152 + 1024 = 50176; 233472 / 50176 = 4.65 -> 4 blocks.
    // 75 KiB: 76800 + 1024 = 77824; 233472 / 77824 = 3 exactly.
    // 76 KiB: 77824 + 1024 = 78848; 233472 / 78848 = 2.96 -> 2 (without the
    // reservation 233472 / 77824 = 3: here the reservation costs a block).
    CHECK(steps::blocks_by_shared_memory(h200, 48 * KiB) == 4);
    CHECK(steps::blocks_by_shared_memory(h200, 75 * KiB) == 3);
    CHECK(steps::blocks_by_shared_memory(h200, 76 * KiB) == 2);
  }
  SECTION("the opt-in maximum fits once; one byte more never fits") {
    // 227 KiB = 232448 + 1024 = 233472 = the whole SM: 1 block.
    CHECK(steps::blocks_by_shared_memory(h200, 227 * KiB) == 1);
    CHECK(steps::blocks_by_shared_memory(h200, 227 * KiB + 1) == 0);
    const auto o = steps::occupancy(h200, 256, 32, 227 * KiB + 1);
    CHECK(o.blocks_per_sm == 0);
    CHECK(o.limiter == Limiter::shared_memory);
  }
  SECTION("Turing: 256-byte units, nothing reserved, no shared memory means no limit") {
    const auto t4 = steps::limits_for(7, 5);
    CHECK(steps::shared_memory_per_block(t4, 1) == 256);
    CHECK(steps::blocks_by_shared_memory(t4, 1) == 256);
    CHECK(steps::blocks_by_shared_memory(t4, 0) == steps::kUnlimited);
    CHECK(steps::blocks_by_shared_memory(t4, 64 * KiB) == 1);
    CHECK(steps::blocks_by_shared_memory(t4, 64 * KiB + 1) == 0);
    // 0 shared memory and few registers: the block count limits.
    const auto o = steps::occupancy(t4, 32, 16, 0);
    CHECK(o.by_shared_memory == steps::kUnlimited);
    CHECK(o.blocks_per_sm == 16);
    CHECK(o.limiter == Limiter::blocks);
  }
}

TEST_CASE("occupancy: warps and the block limit", "[occupancy]") {
  const auto h200 = steps::limits_for(9, 0);
  SECTION("a partial warp takes a whole warp slot") {
    // 33 threads = 2 warps; 64 / 2 = 32 blocks (66 threads of 2048 would
    // suggest 62 blocks by threads).
    CHECK(steps::warps_per_block(h200, 33) == 2);
    CHECK(steps::blocks_by_warps(h200, 33) == 32);
    // 100 threads = 4 warps -> 16 blocks (not 64 / 3.125 = 20).
    CHECK(steps::blocks_by_warps(h200, 100) == 16);
  }
  SECTION("1-thread blocks: the block limit, at half the warp slots") {
    // warps 64 / 1 = 64; registers (32 regs: 1024 per warp, 16 per quarter)
    // 64 / 1 = 64; shared 233472 / 1024 = 228; blocks 32.
    // => 32 blocks = 32 warps of 64 = 50%, limited by blocks.
    const auto o = steps::occupancy(h200, 1, 32, 0);
    CHECK(o.by_warps == 64);
    CHECK(o.by_registers == 64);
    CHECK(o.by_shared_memory == 228);
    CHECK(o.blocks_per_sm == 32);
    CHECK(o.active_warps == 32);
    CHECK(o.fraction == Approx(0.5));
    CHECK(o.limiter == Limiter::blocks);
  }
  SECTION("64-thread blocks: warps and blocks tie at 32; the tie goes to warps") {
    const auto o = steps::occupancy(h200, 64, 32, 0);
    CHECK(o.by_warps == 32);
    CHECK(o.by_blocks == 32);
    CHECK(o.blocks_per_sm == 32);
    CHECK(o.fraction == Approx(1.0));
    CHECK(o.limiter == Limiter::warps);
    CHECK(o.limited_by(Limiter::blocks));
  }
  SECTION("more than 1024 threads never fit") {
    const auto o = steps::occupancy(h200, 1025, 16, 0);
    CHECK(o.by_warps == 0);
    CHECK(o.blocks_per_sm == 0);
    CHECK(o.limiter == Limiter::warps);
  }
  SECTION("1024 threads: one or two blocks") {
    // 32 warps per block; 64 / 32 = 2 blocks at <= 32 registers.
    CHECK(steps::occupancy(h200, 1024, 32, 0).blocks_per_sm == 2);
    // On Turing (32 slots) only one.
    CHECK(steps::occupancy(steps::limits_for(7, 5), 1024, 32, 0).blocks_per_sm == 1);
  }
}

TEST_CASE("occupancy: the tie rule", "[occupancy]") {
  // The first limit in the order warps, registers, shared memory, blocks
  // among those at the minimum.
  CHECK(steps::limiting_factor(3, 3, 3, 3) == Limiter::warps);
  CHECK(steps::limiting_factor(4, 3, 3, 3) == Limiter::registers);
  CHECK(steps::limiting_factor(4, 4, 3, 3) == Limiter::shared_memory);
  CHECK(steps::limiting_factor(4, 4, 4, 3) == Limiter::blocks);
  CHECK(steps::limiting_factor(0, 0, 5, 9) == Limiter::warps);
  CHECK(steps::limiting_factor(8, steps::kUnlimited, 2, 2) == Limiter::shared_memory);
  CHECK(std::string(steps::limiter_name(Limiter::shared_memory)) == "shared memory");
}

TEST_CASE("occupancy: the result is the minimum of its limits, on every architecture", "[occupancy]") {
  int cases = 0;
  for (const auto& a : steps::known_architectures()) {
    for (int threads = 1; threads <= 1056; threads += 31) {
      for (int regs : {0, 1, 16, 24, 32, 33, 40, 48, 56, 64, 72, 96, 128, 168, 200, 255, 256}) {
        for (std::size_t smem : {std::size_t{0}, std::size_t{1}, 1000 * std::size_t{1}, 4 * KiB, 20 * KiB,
                                 48 * KiB, 60 * KiB, 99 * KiB, a.smem_per_block_optin,
                                 a.smem_per_block_optin + 1}) {
          const auto o = steps::occupancy(a, threads, regs, smem);
          const int least = std::min({o.by_warps, o.by_registers, o.by_shared_memory, o.by_blocks});
          REQUIRE(o.blocks_per_sm == least);
          REQUIRE(o.limited_by(o.limiter));
          REQUIRE(o.active_warps <= a.max_warps_per_sm);
          REQUIRE(o.blocks_per_sm <= a.max_blocks_per_sm);
          ++cases;
        }
      }
    }
  }
  CHECK(cases > 10000);
}

TEST_CASE("occupancy: explain() writes the calculation out", "[occupancy]") {
  const std::string text = steps::explain(steps::limits_for(9, 0), 512, 40, 20 * KiB);
  CHECK(text.find("1280 per warp") != std::string::npos);
  CHECK(text.find("21504 B") != std::string::npos);
  CHECK(text.find("3 blocks per SM = 48 of 64 warps = 75% occupancy, limited by registers") != std::string::npos);
  const std::string none = steps::explain(steps::limits_for(9, 0), 1024, 65, 0);
  CHECK(none.find("0 blocks") != std::string::npos);
}

TEST_CASE("occupancy: inputs no kernel can have are errors", "[occupancy]") {
  const auto h200 = steps::limits_for(9, 0);
  CHECK_THROWS_AS(steps::occupancy(h200, 0, 32, 0), std::invalid_argument);
  CHECK_THROWS_AS(steps::occupancy(h200, 256, -1, 0), std::invalid_argument);
  CHECK_THROWS_AS(steps::occupancy(h200, 1 << 21, 32, 0), std::invalid_argument);
}
