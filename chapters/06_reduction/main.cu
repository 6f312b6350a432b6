// Chapter 06: reduction, the sum of n floats.
//
// Reading n floats and adding them up is as memory-bound as vector add (4
// bytes read per addition), but every thread's result must end up in ONE
// number: the threads have to cooperate. The versions below remove, one at a
// time, what stands between a first parallel sum and the DRAM limit, and are
// measured against cub::DeviceReduce::Sum and the DRAM peak.
//
//   v1 atomic_per_element  every thread atomicAdds its element into one float
//   v2 grid_stride         private sums in a grid-stride loop, one atomic per thread
//   v3 shared_tree         + a shared-memory tree per block, one atomic per block
//   v4 unrolled            + 4 independent accumulators: 4 loads in flight per thread
//   v5 warp_shuffle        + warp shuffles instead of the shared-memory tree
//   v6 float4              + 16-byte loads, head and tail handled
//   v7 last_block          + deterministic: block partials, the last block adds them
//   tree_interleaved / tree_sequential   the divergence experiment (reference rows)
//
// Every result is checked against a double-precision sum of the same floats,
// with an error bound derived from n and the version's summation tree
// (Reduction::bound). --integers makes every sum exact; --repeat-check runs
// each version twice and says whether the two results have the same bits.
//
// Run: ./tutorial run 06    (or build/bin/ch06_reduction --help)
#include "divergence.cuh"
#include "mistakes.cuh"
#include "reduction_problem.cuh"
#include "v1_atomic_per_element.cuh"
#include "v2_grid_stride.cuh"
#include "v3_shared_tree.cuh"
#include "v4_unrolled.cuh"
#include "v5_warp_shuffle.cuh"
#include "v6_float4.cuh"
#include "v7_last_block.cuh"

#include "steps/chapter.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ch06 {

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  using steps::Role;
  const Count none = [](const Reduction&) { return 0.0; };
  std::vector<steps::GroupPtr> groups{steps::group<Reduction>({
      sum_row("cub", "cub::DeviceReduce::Sum, temporary storage allocated once (the vendor's reduction)",
              Role::baseline,
              // CUB's tree is an implementation detail: checked with the bound
              // that holds for any order. CUB documents run-to-run determinism
              // on the same GPU.
              {Start::as_left, true, [](const Reduction& p) { return v1::depth(p.n()); }, none},
              [](Reduction& p, cudaStream_t s) { p.cub_sum(s); }),
      sum_row("atomic_per_element", "v1: one element per thread, atomicAdd into one float", Role::version,
              {Start::zeroed, false, [](const Reduction& p) { return v1::depth(p.n()); },
               [](const Reduction& p) { return static_cast<double>(p.n()); }},
              [](Reduction& p, cudaStream_t s) { v1::launch(p.x(), p.n(), p.out(), s); }),
      sum_row("grid_stride", "v2: grid-stride private sums, one atomicAdd per thread", Role::version,
              {Start::zeroed, false, [](const Reduction& p) { return v2::depth(p.n(), p.dev()); },
               [](const Reduction& p) { return per_block(v2::blocks(p.n(), p.dev())) * kThreads; }},
              [](Reduction& p, cudaStream_t s) { v2::launch(p.x(), p.n(), p.out(), p.dev(), s); }),
      sum_row("shared_tree", "v3: + shared-memory tree per block, one atomicAdd per block", Role::version,
              {Start::zeroed, false, [](const Reduction& p) { return v3::depth(p.n(), p.dev()); },
               [](const Reduction& p) { return per_block(v3::blocks(p.n(), p.dev())); }},
              [](Reduction& p, cudaStream_t s) { v3::launch(p.x(), p.n(), p.out(), p.dev(), s); }),
      sum_row("unrolled", "v4: + 4 independent accumulators, 4 coalesced loads in flight per thread", Role::version,
              {Start::zeroed, false, [](const Reduction& p) { return v4::depth(p.n(), p.dev()); },
               [](const Reduction& p) { return per_block(v4::blocks(p.n(), p.dev())); }},
              [](Reduction& p, cudaStream_t s) { v4::launch(p.x(), p.n(), p.out(), p.dev(), s); }),
      sum_row("warp_shuffle", "v5: + warp shuffles (__shfl_down_sync) instead of the shared-memory tree",
              Role::version,
              {Start::zeroed, false, [](const Reduction& p) { return v5::depth(p.n(), p.dev()); },
               [](const Reduction& p) { return per_block(v5::blocks(p.n(), p.dev())); }},
              [](Reduction& p, cudaStream_t s) { v5::launch(p.x(), p.n(), p.out(), p.dev(), s); }),
      sum_row("float4", "v6: + 16-byte float4 loads, head and tail handled", Role::version,
              {Start::zeroed, false, [](const Reduction& p) { return v6::depth(p.n(), p.dev()); },
               [](const Reduction& p) { return per_block(v6::blocks(p.n(), p.dev())); }},
              [](Reduction& p, cudaStream_t s) { v6::launch(p.x(), p.n(), p.out(), p.dev(), s); }),
      sum_row("last_block", "v7: + deterministic: block partials, the last block adds them (no float atomics)",
              Role::version, {Start::as_left, true, [](const Reduction& p) { return v7::depth(p.n(), p.dev()); }, none},
              [](Reduction& p, cudaStream_t s) {
                v7::launch(p.x(), p.n(), p.partials(), p.partials_size(), p.done(), p.out(), p.dev(), s);
              }),
      sum_row("tree_interleaved", "divergence: one element per thread, tree with t % (2s) == 0, level by level",
              Role::reference, {Start::as_left, true, [](const Reduction& p) { return divergence::depth(p.n()); }, none},
              [](Reduction& p, cudaStream_t s) { divergence::interleaved(p.x(), p.n(), p.scratch(), p.out(), s); }),
      sum_row("tree_sequential", "divergence: the same with t < s (v3's tree): only the tree differs",
              Role::reference, {Start::as_left, true, [](const Reduction& p) { return divergence::depth(p.n()); }, none},
              [](Reduction& p, cudaStream_t s) { divergence::sequential(p.x(), p.n(), p.scratch(), p.out(), s); }),
      sum_row("mistake_no_bounds_check", "v1 without `if (i < n)`: the last block adds what lies past the end",
              Role::mistake,
              {Start::zeroed, false, [](const Reduction& p) { return v1::depth(p.n()); },
               [](const Reduction& p) { return static_cast<double>(v1::blocks(p.n())) * kThreads; }},
              [](Reduction& p, cudaStream_t s) { mistakes::atomic_no_bounds_check(p.x(), p.n(), p.out(), s); }),
      sum_row("mistake_tree_no_sync", "v3's tree without __syncthreads() between its steps", Role::mistake,
              {Start::zeroed, false, [](const Reduction& p) { return v3::depth(p.n(), p.dev()); },
               [](const Reduction& p) { return per_block(v3::blocks(p.n(), p.dev())); }},
              [](Reduction& p, cudaStream_t s) { mistakes::tree_no_sync(p.x(), p.n(), p.out(), p.dev(), s); }),
      sum_row("mistake_shuffle_stops_early", "warp shuffle loop with offset > 1: odd lanes never added",
              Role::mistake,
              {Start::zeroed, false,
               [](const Reduction& p) { return v3::depth(p.n(), p.dev()) + kBlockSumLevels - kTreeLevels; },
               [](const Reduction& p) { return per_block(v3::blocks(p.n(), p.dev())); }},
              [](Reduction& p, cudaStream_t s) { mistakes::shuffle_stops_early(p.x(), p.n(), p.out(), p.dev(), s); }),
      sum_row("mistake_not_zeroed", "v3 without zeroing its result first: the sum lands on what was there",
              Role::mistake,
              {Start::as_left, false, [](const Reduction& p) { return v3::depth(p.n(), p.dev()); },
               [](const Reduction& p) { return per_block(v3::blocks(p.n(), p.dev())); }},
              [](Reduction& p, cudaStream_t s) { v3::launch(p.x(), p.n(), p.out(), p.dev(), s); }),
  })};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Sums n floats with seven kernel versions (atomics, grid-stride, shared-memory tree, unrolled "
              "loads, warp shuffles, float4, deterministic last-block finish) and the divergence experiment, "
              "against cub::DeviceReduce::Sum and the DRAM peak. Each result is checked against a double-precision "
              "sum within an error bound derived from n and the version's summation tree.";
  i.metric = steps::Metric::bandwidth;
  // 2^28 floats: 1 GiB, 17x the H200's 60 MiB L2: every byte comes from DRAM.
  // bench_shapes adds 2^22 (16 MiB, fits in L2) and 2^20 (the source's claim).
  i.default_size = std::int64_t{1} << 28;
  i.size_help = "floats to sum";
  i.default_iters = 20;
  i.work_note = "GB/s: bytes read per second, 4 per float (the one-float result is not counted), 1 GB = 1e9 B. "
                "float atomics: atomicAdds on floats per run.";
  i.baseline = "cub";
  i.goals = {{"best", "cub", 1.00, ">= 1.00x cub"}};
  // v1 makes n atomics on one address: at 2^28 floats a run may take a
  // large fraction of a second, and the watchdog covers all timed runs.
  i.timeout_s = 300;
  i.int_options.push_back({"--offset", "K", "start x K floats past a 16-byte boundary (v6/v7's head)", 0, 0, 3});
  i.flag_options.push_back({"--integers", "random integers in [-8, 8] without 0 as input: while the sum of |x| "
                                          "stays <= 2^24 (n up to about 3.7 million) every sum is exact, and so "
                                          "is every check"});
  i.flag_options.push_back({"--repeat-check", "run each version a second time and note both results' bits, "
                                              "whether they are identical, the error and its bound", true});
  return i;
}

} // namespace ch06

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch06::info(), ch06::registry()); }
