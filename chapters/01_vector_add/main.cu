// Chapter 01: vector add, c[i] = a[i] + b[i].
//
// The simplest useful kernel, and a memory-bound one: each element costs one
// addition and 12 bytes of traffic (two 4-byte reads, one 4-byte write), so
// the speed limit is the memory system, not arithmetic. The chapter's four
// versions are measured against cudaMemcpy device-to-device (the vendor's
// copy) and the DRAM peak.
//
//   v1 one_per_thread  one element per thread, grid = ceil(n / 256) blocks
//   v2 grid_stride     one full wave of blocks looping over the array
//   v3 float4          v2 with 16-byte loads/stores, head and tail handled
//   v4 float4_one_per_thread  v3's float4 with v1's grid: one float4 per thread
//
// Run: ./tutorial run 01    (or build/bin/ch01_vector_add --help)
#include "in_flight.cuh"
#include "latency.cuh"
#include "mistakes.cuh"
#include "v1_one_per_thread.cuh"
#include "v2_grid_stride.cuh"
#include "v3_float4.cuh"
#include "v4_float4_one_per_thread.cuh"
#include "vector_add_problem.cuh"

#include "steps/chapter.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <cstdio>
#include <string>
#include <vector>

namespace ch01 {

using Row = steps::Row<VectorAdd>;

/// A row that computes c = a + b: 12 bytes per element, checked exactly.
Row add_row(std::string name, std::string what, steps::Role role, std::function<void(VectorAdd&, cudaStream_t)> launch) {
  Row r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [launch](VectorAdd& p, steps::Run& run) { launch(p, run.stream()); };
  r.work = [](const VectorAdd& p) { return steps::Work{12.0 * static_cast<double>(p.n()), static_cast<double>(p.n())}; };
  r.reset = [](VectorAdd& p) { p.poison(); };
  r.check = [](VectorAdd& p) { return p.check_sum(); };
  return r;
}

/// The baseline: the vendor's copy of one array (a into c: 8 bytes per element).
Row memcpy_row() {
  return steps::memcpy_row<VectorAdd>(
      "cudaMemcpy device-to-device of one array (the vendor's copy)", [](VectorAdd& p) { return p.c(); },
      [](VectorAdd& p) { return p.a(); }, [](const VectorAdd& p) { return p.n() * sizeof(float); },
      [](VectorAdd& p) { return p.check_copy(); }, [](VectorAdd& p) { p.poison(); });
}

/// Little's law, measured: the latency of one load (pointer chase), then
/// read bandwidth against the bytes in flight per SM. These rows take a few
/// seconds and are not part of the chapter's default table: they run with
/// --littles-law (or when --variant names them); `./tutorial bench` runs
/// them as a shape of their own (bench_shapes).
std::vector<steps::GroupPtr> littles_law_groups() {
  std::vector<steps::Row<in_flight::ReadSweep>> sweep;
  for (const auto& c : in_flight::sweep()) sweep.push_back(in_flight::row(c));
  steps::GroupOptions on_request;
  on_request.on_request = "--littles-law";
  return {steps::group<latency::Chase>({latency::row()}, on_request),
          steps::group<in_flight::ReadSweep>(std::move(sweep), on_request)};
}

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  using steps::Role;
  std::vector<steps::GroupPtr> groups{steps::group<VectorAdd>({
      memcpy_row(),
      add_row("one_per_thread", "v1: one element per thread, ceil(n/256) blocks", Role::version,
              [](VectorAdd& p, cudaStream_t s) { v1::launch(p.a(), p.b(), p.c(), p.n(), s); }),
      add_row("grid_stride", "v2: one full wave of blocks, grid-stride loop", Role::version,
              [](VectorAdd& p, cudaStream_t s) { v2::launch(p.a(), p.b(), p.c(), p.n(), p.dev(), s); }),
      add_row("float4", "v3: v2 with 16-byte float4 accesses, scalar head and tail", Role::version,
              [](VectorAdd& p, cudaStream_t s) {
                if (v3::usable(p.a(), p.b(), p.c(), p.n()))
                  v3::launch(p.a(), p.b(), p.c(), p.n(), p.dev(), s);
                else
                  v2::launch(p.a(), p.b(), p.c(), p.n(), p.dev(), s); // no common float4 view
              }),
      add_row("float4_one_per_thread", "v4: v3's float4 with v1's grid: one float4 per thread, no loop",
              Role::version,
              [](VectorAdd& p, cudaStream_t s) {
                if (v4::usable(p.a(), p.b(), p.c(), p.n()))
                  v4::launch(p.a(), p.b(), p.c(), p.n(), p.dev(), s);
                else
                  v2::launch(p.a(), p.b(), p.c(), p.n(), p.dev(), s); // no common float4 view
              }),
      add_row("mistake_index_product", "index = blockIdx.x * threadIdx.x", Role::mistake,
              [](VectorAdd& p, cudaStream_t s) { mistakes::index_product(p.a(), p.b(), p.c(), p.n(), s); }),
      add_row("mistake_too_few_blocks", "n / 256 blocks: the tail gets no thread", Role::mistake,
              [](VectorAdd& p, cudaStream_t s) { mistakes::too_few_blocks(p.a(), p.b(), p.c(), p.n(), s); }),
      add_row("mistake_no_bounds_check", "no `if (i < n)`: the last block writes past the end", Role::mistake,
              [](VectorAdd& p, cudaStream_t s) { mistakes::no_bounds_check(p.a(), p.b(), p.c(), p.n(), s); }),
      add_row("mistake_block_too_large", "2048 threads per block: the launch fails", Role::mistake,
              [](VectorAdd& p, cudaStream_t s) { mistakes::block_too_large(p.a(), p.b(), p.c(), p.n(), s); }),
  })};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  for (auto& g : littles_law_groups()) groups.push_back(std::move(g));
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Adds two float arrays with four kernel versions and compares them with cudaMemcpy "
              "device-to-device and the DRAM peak.";
  i.metric = steps::Metric::bandwidth;
  // 2^27 + 3: 512 MiB per array (8.5x the H200's 60 MiB L2; the three arrays
  // together 25x) and deliberately not a multiple of 4 or 256, so every
  // default run exercises the tails.
  i.default_size = (std::int64_t{1} << 27) + 3;
  i.size_help = "elements per array";
  i.default_iters = 50;
  i.work_note = "GB/s: bytes read + written per second, 1 GB = 1e9 B; a + b moves 12 bytes per element "
                "(2 reads + 1 write), memcpy 8 (1 read + 1 write); the Little's-law rows (--littles-law) only "
                "read, 4 bytes per word.";
  i.baseline = "memcpy";
  i.goals = {{"best", "memcpy", 1.00, ">= 1.00x memcpy"}};
  i.int_options.push_back({"--offset", "K", "start all arrays K elements past a 16-byte boundary", 0, 0, 3});
  i.flag_options.push_back({"--littles-law", "also run the Little's-law rows: a pointer chase (the latency of one "
                                             "load) and reads with 1 to 128 KiB in flight per SM", true});
  i.int_options.push_back({"--chase-mib", "MIB", "footprint of the pointer chase (below the L2's size it measures "
                                                 "the L2)", 512, 1, 4096, true});
  return i;
}

} // namespace ch01

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch01::info(), ch01::registry()); }
