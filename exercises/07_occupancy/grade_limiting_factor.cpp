// Grader for exercise 07 (the occupancy calculator's core). Built twice:
// against your exercises/ code (./tutorial grade 07) and against the
// solution (part of ./tutorial test). Runs on the CPU: no GPU needed.
//
// Every case is compared with steps::occupancy(), the course's calculator,
// which chapter 07 checks against CUDA's own
// cudaOccupancyMaxActiveBlocksPerMultiprocessor on a GPU. The hand-picked
// cases come first (each aims at one rule), then a seeded sweep over every
// architecture the calculator knows.
#include "limiting_factor.hpp"

#include "steps/catch.hpp"
#include "steps/grade.hpp"
#include "steps/occupancy.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr std::size_t KiB = 1024;

struct Case {
  int cc_major, cc_minor;
  int threads;      // per block
  int regs;         // per thread
  std::size_t smem; // bytes per block, static + dynamic
};

std::string name_of(const Case& c) {
  std::ostringstream os;
  os << "sm_" << c.cc_major << c.cc_minor << ", " << c.threads << " threads/block, " << c.regs
     << " registers/thread, " << c.smem << " B shared memory/block";
  return os.str();
}

std::string count(int blocks) { return blocks == steps::kUnlimited ? "kUnlimited" : std::to_string(blocks); }

// The line of steps::explain() for one limit ("  registers: ..."): how the
// expected number comes about, for this case.
std::string worked(const steps::ArchLimits& arch, const Case& c, const std::string& prefix) {
  std::istringstream lines(steps::explain(arch, c.threads, c.regs, c.smem));
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

// ---- One case: "" when every field is right, else what is wrong and a hint.
std::string check(const Case& c, std::uint64_t) {
  const steps::ArchLimits arch = steps::limits_for(c.cc_major, c.cc_minor);
  // (An integer division by zero in it ends the grader with a message: the
  // harness's guard, with the hint set in grade().)
  const ex07::BlockLimits got = ex07::limiting_factor(arch, c.threads, c.regs, c.smem);
  const steps::Occupancy want = steps::occupancy(arch, c.threads, c.regs, c.smem);

  auto wrong = [&](const char* field, int expected, int actual, const std::string& hint, const std::string& line) {
    std::string m = std::string(field) + " is wrong: expected " + count(expected) + ", got " + count(actual) + ".";
    m += "\n  Hint: " + hint;
    if (!line.empty()) m += "\n  The calculation for this case:\n" + line;
    return m;
  };

  const int warps = steps::warps_per_block(arch, c.threads);
  if (got.by_warps != want.by_warps) {
    std::string hint = "a block takes ceil(threads / " + std::to_string(arch.warp_size) +
                       ") warp slots; by_warps = max_warps_per_sm / that (rounded down).";
    if (c.threads > arch.max_threads_per_block)
      hint = "a block of more than " + std::to_string(arch.max_threads_per_block) +
             " threads cannot run at all: by_warps must be 0.";
    else if (c.threads % arch.warp_size != 0 && c.threads >= arch.warp_size &&
             got.by_warps == arch.max_warps_per_sm / (c.threads / arch.warp_size))
      hint = "you rounded the warps per block DOWN: " + std::to_string(c.threads) + " threads are " +
             std::to_string(warps) + " warps, not " + std::to_string(c.threads / arch.warp_size) +
             ". A partial warp takes a whole warp slot.";
    return wrong("by_warps", want.by_warps, got.by_warps, hint, worked(arch, c, "  warps:"));
  }

  if (got.by_registers != want.by_registers) {
    const int unrounded = c.regs * arch.warp_size;
    const int quarter = arch.regs_per_sm / arch.sub_partitions;
    std::string hint = "a warp gets regs x " + std::to_string(arch.warp_size) + " registers rounded UP to a multiple of " +
                       std::to_string(arch.reg_alloc_unit) + "; warps per sub-partition = (regs_per_sm / " +
                       std::to_string(arch.sub_partitions) + ") / that; by_registers = (that x " +
                       std::to_string(arch.sub_partitions) + ") / warps per block.";
    if (c.regs > arch.max_regs_per_thread)
      hint = "a thread cannot have more than " + std::to_string(arch.max_regs_per_thread) +
             " registers: such a kernel never runs, by_registers must be 0.";
    else if (unrounded % arch.reg_alloc_unit != 0 && got.by_registers == (quarter / unrounded) * arch.sub_partitions / warps)
      hint = "you did not round the registers per warp up: " + std::to_string(c.regs) + " x " +
             std::to_string(arch.warp_size) + " = " + std::to_string(unrounded) + " registers are allocated as " +
             std::to_string(want.regs_per_warp) + " (a multiple of " + std::to_string(arch.reg_alloc_unit) + ").";
    else if (got.by_registers == (arch.regs_per_sm / want.regs_per_warp) / warps)
      hint = "you divided the whole register file by the registers per warp. A warp's registers come from ONE "
             "of the " + std::to_string(arch.sub_partitions) + " sub-partitions (a quarter each): count the warps "
             "that fit in " + std::to_string(quarter) + " registers, then multiply by " +
             std::to_string(arch.sub_partitions) + ".";
    return wrong("by_registers", want.by_registers, got.by_registers, hint, worked(arch, c, "  registers:"));
  }

  if (got.by_shared_memory != want.by_shared_memory) {
    const std::size_t unit = arch.smem_alloc_unit, reserved = arch.smem_reserved_per_block;
    std::string hint = "a block is given its bytes + " + std::to_string(reserved) + " reserved, rounded UP to a multiple of " +
                       std::to_string(unit) + "; by_shared_memory = smem_per_sm / that (rounded down); 0 above the "
                       "opt-in maximum; steps::kUnlimited when that is 0 bytes.";
    const std::size_t no_reservation = (c.smem + unit - 1) / unit * unit;
    const std::size_t not_rounded = c.smem + reserved;
    if (reserved > 0 && no_reservation > 0 && got.by_shared_memory == static_cast<int>(arch.smem_per_sm / no_reservation))
      hint = "you forgot the driver's reservation: from sm_80 on, every block also takes " + std::to_string(reserved) +
             " B of shared memory (cudaDevAttrReservedSharedMemoryPerBlock), so " + std::to_string(c.smem) +
             " B are given as " + std::to_string(want.smem_per_block) + ".";
    else if (not_rounded % unit != 0 && got.by_shared_memory == static_cast<int>(arch.smem_per_sm / not_rounded))
      hint = "you did not round up to the allocation unit: " + std::to_string(not_rounded) +
             " B are given as " + std::to_string(want.smem_per_block) + " (a multiple of " + std::to_string(unit) + ").";
    else if (c.smem >= (std::size_t{1} << 31) && want.by_shared_memory == 0)
      hint = "the block asks for " + std::to_string(c.smem) + " B, far more than the opt-in maximum (" +
             std::to_string(arch.smem_per_block_optin) + " B): by_shared_memory must be 0. Is the size kept in a "
             "std::size_t all the way? In an int (or an unsigned int) a size past 2^31 (2^32) wraps around to a "
             "small or negative number.";
    else if (got.by_shared_memory == 0 && want.by_shared_memory > 0 && c.smem <= arch.smem_per_block_optin &&
             c.smem + reserved > arch.smem_per_block_optin)
      hint = "the opt-in maximum (" + std::to_string(arch.smem_per_block_optin) + " B) applies to the block's own " +
             "bytes, before the reservation: " + std::to_string(c.smem) + " B are allowed, and are then given as " +
             std::to_string(want.smem_per_block) + " B with the " + std::to_string(reserved) + " B reserved.";
    else if (want.by_shared_memory == steps::kUnlimited)
      hint = "this block is given no shared memory at all (nothing is reserved before sm_80): nothing limits "
             "it, by_shared_memory must be steps::kUnlimited.";
    return wrong("by_shared_memory", want.by_shared_memory, got.by_shared_memory, hint,
                 worked(arch, c, "  shared memory:"));
  }

  if (got.by_blocks != want.by_blocks)
    return wrong("by_blocks", want.by_blocks, got.by_blocks,
                 "an SM holds at most arch.max_blocks_per_sm blocks, whatever their size.", "");

  if (got.blocks_per_sm != want.blocks_per_sm) {
    std::string hint = "what fits is the smallest of the four limits (warps " + count(want.by_warps) + ", registers " +
                       count(want.by_registers) + ", shared memory " + count(want.by_shared_memory) + ", blocks " +
                       count(want.by_blocks) + ").";
    if (got.blocks_per_sm == std::min({want.by_warps, want.by_registers, want.by_shared_memory}))
      hint += " You left out the block limit: small blocks run out of block slots before warp slots.";
    return wrong("blocks_per_sm", want.blocks_per_sm, got.blocks_per_sm, hint, worked(arch, c, "  =>"));
  }

  if (got.limiter != want.limiter) {
    std::string m = std::string("limiter is wrong: expected ") + steps::limiter_name(want.limiter) + ", got " +
                    steps::limiter_name(got.limiter) + " (warps " + count(want.by_warps) + ", registers " +
                    count(want.by_registers) + ", shared memory " + count(want.by_shared_memory) + ", blocks " +
                    count(want.by_blocks) + ": " + std::to_string(want.blocks_per_sm) + " blocks fit).";
    m += "\n  Hint: the limiter is the limit that gives blocks_per_sm. When several do (a tie), it is the "
         "FIRST of them in the order warps, registers, shared memory, blocks.";
    return m;
  }
  return "";
}

void grade(const std::vector<Case>& cases) {
  steps::grade::set_division_hint(
      "A block with no shared memory at all (possible before sm_80, where nothing is reserved) is given 0 bytes: "
      "shared memory then sets no limit (steps::kUnlimited), there is nothing to divide. And a block of fewer "
      "than 32 threads still takes one whole warp.");
  steps::grade::shapes(cases, name_of, check);
}

// Every architecture the calculator knows.
std::vector<std::pair<int, int>> archs() {
  std::vector<std::pair<int, int>> out;
  for (const auto& a : steps::known_architectures()) out.emplace_back(a.cc_major, a.cc_minor);
  return out;
}

} // namespace

TEST_CASE("the worked example (512 threads, 40 registers, 20 KiB) on every architecture", "[occupancy]") {
  std::vector<Case> cases{{9, 0, 512, 40, 20 * KiB}}; // the H200 first: README, hint 1
  for (const auto& [major, minor] : archs())
    if (major != 9 || minor != 0) cases.push_back({major, minor, 512, 40, 20 * KiB});
  grade(cases);
}

TEST_CASE("warps: partial warps, tiny and too-large blocks", "[occupancy]") {
  grade({{9, 0, 100, 32, 0},  {9, 0, 33, 32, 0},   {7, 5, 100, 32, 0},  {8, 6, 200, 32, 0},
         {9, 0, 1000, 32, 0}, {9, 0, 1024, 32, 0}, {9, 0, 1025, 32, 0}, {7, 5, 1025, 16, 0},
         {9, 0, 2048, 16, 0}, {8, 9, 640, 24, 0},  {9, 0, 31, 32, 0},   {9, 0, 1, 32, 0}});
}

TEST_CASE("registers: rounding to the unit, the sub-partitions, the cap", "[occupancy]") {
  grade({{9, 0, 128, 37, 0},   {9, 0, 64, 40, 0},    {8, 0, 256, 33, 0},  {7, 0, 96, 41, 0},
         {9, 0, 1024, 64, 0},  {9, 0, 1024, 65, 0},  {9, 0, 256, 255, 0}, {9, 0, 288, 255, 0},
         {9, 0, 64, 256, 0},   {8, 6, 768, 40, 0},   {7, 5, 512, 63, 0},  {9, 0, 160, 72, 0},
         {8, 9, 352, 90, 0},   {12, 0, 32, 200, 0}});
}

TEST_CASE("shared memory: the reservation, rounding, the opt-in maximum, none at all", "[occupancy]") {
  grade({{9, 0, 128, 32, 76 * KiB},        {9, 0, 128, 32, 1},
         {9, 0, 128, 32, 1000},            {8, 0, 256, 32, 40 * KiB + 1},
         {9, 0, 128, 32, 227 * KiB},       {9, 0, 128, 32, 227 * KiB + 1},
         {8, 6, 128, 32, 99 * KiB},        {8, 6, 128, 32, 99 * KiB + 1},
         {7, 0, 128, 32, 1},               {7, 5, 128, 32, 300},
         {7, 5, 128, 32, 48 * KiB},        {7, 5, 32, 16, 0},
         {7, 0, 64, 16, 0},                {8, 9, 64, 16, 0},
         {9, 0, 256, 32, 48 * KiB},        {10, 0, 128, 32, 57 * KiB}});
}

// smem_per_block is a std::size_t: sizes past 2^31 and 2^32 bytes are far
// above every opt-in maximum (0 blocks fit), and an int or unsigned int that
// holds them wraps to a small number (or a negative one) that would fit.
TEST_CASE("shared memory: sizes past 2^31 and 2^32 bytes (kept in 64 bits)", "[occupancy]") {
  const std::size_t two31 = std::size_t{1} << 31, two32 = std::size_t{1} << 32;
  grade({{9, 0, 128, 32, two32 + KiB},      {9, 0, 128, 32, two32},       {9, 0, 128, 32, two32 - 1},
         {8, 0, 256, 32, two32 + 40 * KiB}, {7, 5, 128, 32, two32},       {7, 0, 64, 16, two32 + 300},
         {9, 0, 128, 32, two31},            {9, 0, 128, 32, two31 + 20 * KiB}, {8, 6, 128, 32, two31 - 512},
         {12, 0, 128, 32, 3 * two32 + 99 * KiB}});
}

TEST_CASE("the block limit: small blocks run out of block slots", "[occupancy]") {
  std::vector<Case> cases;
  for (const auto& [major, minor] : archs()) {
    cases.push_back({major, minor, 1, 32, 0});
    cases.push_back({major, minor, 32, 32, 0});
    cases.push_back({major, minor, 32, 32, 2 * KiB});
  }
  grade(cases);
}

TEST_CASE("the limiting factor, ties included", "[occupancy]") {
  // (blocks by warps, registers, shared memory, block slots -> limiter)
  grade({{9, 0, 64, 32, 0},          // 32, 32, 228, 32: a three-way tie -> warps
         {8, 6, 512, 40, 20 * KiB},  // 3, 3, 4, 16 -> warps (tie with registers)
         {9, 0, 256, 64, 0},         // 8, 4, 228, 32 -> registers
         {9, 0, 256, 32, 56 * KiB},  // 8, 8, 4, 32 -> shared memory
         {9, 0, 128, 64, 38 * KiB},  // 16, 8, 5, 32 -> shared memory
         {9, 0, 512, 64, 76 * KiB},  // 4, 2, 2, 32 -> registers (tie with shared memory)
         {9, 0, 96, 32, 0},          // 21, 21, 228, 32 -> warps (tie with registers)
         {8, 9, 32, 32, 0},          // 48, 64, 100, 24 -> blocks
         {7, 5, 64, 32, 0},          // 16, 32, unlimited, 16 -> warps (tie with blocks)
         {9, 0, 1024, 32, 113 * KiB}}); // 2, 2, 2, 32 -> warps (three-way tie)
}

TEST_CASE("a seeded sweep over every architecture", "[occupancy][sweep]") {
  const auto all = archs();
  std::vector<Case> cases;
  std::uint64_t state = 7;
  auto next = [&state](std::uint64_t bound) { return (state = steps::splitmix64(state)) % bound; };
  for (int i = 0; i < 3000; ++i) {
    const auto [major, minor] = all[next(all.size())];
    const steps::ArchLimits a = steps::limits_for(major, minor);
    Case c{major, minor, 0, 0, 0};
    switch (next(4)) { // threads: any, whole warps, small, too many
    case 0: c.threads = 1 + static_cast<int>(next(1024)); break;
    case 1: c.threads = 32 * (1 + static_cast<int>(next(32))); break;
    case 2: c.threads = 1 + static_cast<int>(next(96)); break;
    default: c.threads = 1 + static_cast<int>(next(1100)); break;
    }
    c.regs = next(20) == 0 ? 250 + static_cast<int>(next(7)) : 1 + static_cast<int>(next(255));
    switch (next(5)) { // shared memory: none, a little, up to 48 KiB, up to the maximum, past it
    case 0: c.smem = 0; break;
    case 1: c.smem = next(4 * KiB); break;
    case 2: c.smem = next(48 * KiB + 1); break;
    case 3: c.smem = next(a.smem_per_block_optin + 1); break;
    default: c.smem = a.smem_per_block_optin - 2 * KiB + next(4 * KiB); break;
    }
    cases.push_back(c);
  }
  grade(cases);
}
