// Chapter 07: occupancy, and where data lives.
//
// Occupancy is the fraction of an SM's warp slots that a kernel's blocks
// fill: resident warps / maximum warps. Threads per block, registers per
// thread and shared memory per block decide it (the course's calculator,
// steps::occupancy, does the arithmetic; each row shows its answer). The
// program measures what it is worth on three problems, each with its own
// buffers:
//
//   1. y = a x, bandwidth-bound (versions, against cudaMemcpy): block sizes
//      32 to 1024, occupancy dialled down with a shared-memory pad (one row
//      with 227 KiB, above the 48 KiB that needs an opt-in), one float4 per
//      thread at half and full occupancy, and 16 loads in flight per thread under three
//      register budgets (two of them spill).
//   2. a pointer chase through a linked list, latency-bound (reference rows:
//      another problem): the same occupancy sweep, every row with the same
//      L1/shared split (one row with the other split, to show it), and 4, 20
//      or 32 chains per thread under register budgets (__launch_bounds__,
//      __maxnreg__: 96 against 48 registers, 118 against 64 and 32).
//   3. a 256-word lookup table in constant memory, read by a whole warp at
//      one address (broadcast) or at 32 (divergent), and from shared memory.
//
// Run: ./tutorial run 07   (or build/bin/ch07_occupancy --help)
#include "chase_problem.cuh"
#include "lookup_problem.cuh"
#include "scale_problem.cuh"
#if STEPS_WITH_EXERCISE_CONVOLVE
#include "yours.cuh"
#endif

#include "steps/chapter.hpp"

#include <string>
#include <vector>

namespace ch07 {

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  std::vector<steps::GroupPtr> groups{scale_group(), chase_group(), lookup_group()};
#if STEPS_WITH_EXERCISE_CONVOLVE
  groups.push_back(yours_convolve_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Sweeps block size, a shared-memory pad and register budgets over a bandwidth-bound kernel (y = a x, "
              "against cudaMemcpy) and a latency-bound one (a pointer chase), each row with its registers, spills "
              "and theoretical occupancy from the course's calculator; then a lookup table in constant memory read "
              "by a warp at one address or at 32.";
  i.metric = steps::Metric::bandwidth;
  // 2^27 floats: 512 MiB per array, 8.5x the H200's 60 MiB L2.
  i.default_size = std::int64_t{1} << 27;
  i.size_help = "elements of x and y (problem 1, y = a x)";
  i.default_iters = 20;
  i.work_note = "GB/s: useful bytes read + written per second (1 GB = 1e9 B): 8 per element of y = a x and of the "
                "lookups, 8 per chase load. moved GB/s: the chase's 32-byte sector per load. occ %: theoretical "
                "occupancy (steps::occupancy); local B: local memory per thread (register spills).";
  i.baseline = "memcpy";
  i.goals = {{"best", "memcpy", 0.90, ">= 0.90x memcpy (bandwidth-bound: enough bytes in flight)"},
             // Latency-bound code: 4 independent loads per thread at one 256-thread block per SM
             // (1024 loads in flight per SM) reach what the plain chase reaches at full occupancy.
             // Both rows run in this run on this GPU, so the ratio measures the code's loads in
             // flight, not the DRAM's random-access ceiling (which a ratio to a 1-warp row did).
             {"chase_ilp4_occ12", "chase_b256", 0.90,
              ">= 0.90x the full-occupancy chase with 4 loads in flight at 1 block/SM (latency-bound: ILP)"}};
  // 2^27 nodes of 8 bytes: 1 GiB, 17x the H200's L2.
  i.int_options.push_back({"--nodes", "N", "nodes of the chase's linked list (a power of two, 8 bytes each)",
                           std::int64_t{1} << 27, 1024, std::int64_t{1} << 31});
  i.int_options.push_back({"--chains", "N", "pointer chases (one per thread in the plain kernel)",
                           std::int64_t{1} << 24, 1, std::int64_t{1} << 31});
  i.int_options.push_back({"--hops", "N", "dependent loads per chase", 16, 1, 4096});
  i.int_options.push_back({"--const-size", "N", "elements of the lookup problem (problem 3)", std::int64_t{1} << 22, 1,
                           std::int64_t{1} << 31});
  // Every row shows the calculator's answer: a GPU it has no table for is
  // skipped with the reason (exit 77), not a failure.
  i.unsupported = [](const steps::DeviceInfo& d) -> std::string {
    try {
      steps::limits_for(d.cc_major, d.cc_minor);
      return "";
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  };
  i.validate = [](const steps::Options& o) {
    const std::int64_t t = o.get("--nodes");
    if ((t & (t - 1)) != 0) throw steps::UsageError("--nodes: must be a power of two, not " + std::to_string(t));
  };
  return i;
}

} // namespace ch07

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch07::info(), ch07::registry()); }
