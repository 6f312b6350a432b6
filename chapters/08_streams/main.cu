// Chapter 08: streams, graphs and unified memory.
//
// Until now every chapter asked how fast ONE kernel runs. This one asks what
// runs at the same time, and what the GPU waits for between operations. Seven
// problems, each with its own buffers:
//
//   1. transfers     pageable vs pinned host memory, both directions
//   2. concurrency   a synchronous copy vs an asynchronous one; two streams
//                    with an operation in the legacy default stream between
//                    them (serialises) or in the per-thread default stream
//                    (does not)
//   3. pipeline      H2D -> kernel -> D2H of a large array: serial, then
//                    chunked over 1, 2, 3, 4 and 8 streams (the versions),
//                    against three bounds measured in the same run: each
//                    stage alone, the slowest stage (the ideal bound) and
//                    both copies at once (the copy-engine bound, baseline)
//   4. launches      --kernels dependent kernels (as short as they can be, or
//                    --step-us long) launched one by one vs replayed from a
//                    CUDA graph (and captured every time)
//   5. allocations   cudaMalloc/cudaFree in a loop vs cudaMallocFromPoolAsync
//                    vs one allocation made before the loop
//   6. managed       unified memory first touched by a kernel, prefetched,
//                    already resident, vs an explicit copy
//   7. host memory   a kernel reading mapped host memory itself (zero-copy),
//                    densely and sparsely, vs a copy first; a std::vector
//                    pinned with cudaHostRegister once or in every run
//
// Metric: microseconds per run (lower is better); rows that move bytes over
// the host link also show them per second ("moved GB/s"). --timeline writes
// the pipeline rows' per-chunk event timestamps to ch08_timeline.tsv, which
// chapters/08_streams/timeline.py draws.
//
// Run: ./tutorial run 08   (or build/bin/ch08_streams --help)
#include "allocations.cuh"
#include "concurrency.cuh"
#include "host_memory.cuh"
#include "launches.cuh"
#include "managed.cuh"
#include "pipeline_problem.cuh"
#include "support.cuh"
#include "transfers.cuh"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace ch08 {

std::vector<steps::GroupPtr> registry() {
  std::vector<steps::GroupPtr> groups{transfer_group(), concurrency_group(), pipeline_group(),
                                      launch_group(),   allocation_group(),  managed_group(),
                                      host_memory_group()};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
#if STEPS_WITH_EXERCISE_STAGES
  groups.push_back(yours_stages_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Streams, graphs and unified memory: pageable vs pinned copies, what the legacy and per-thread "
              "default streams wait for, a copy-compute-copy pipeline over 1 to 8 streams against bounds measured "
              "in the same run, CUDA graphs against one-by-one launches, stream-ordered allocation, managed "
              "memory with and without prefetching, and zero-copy and registered host memory.";
  i.metric = steps::Metric::time;
  // 2^28 floats: 1 GiB each way, so a copy takes tens of milliseconds and
  // launch costs vanish in it.
  i.default_size = std::int64_t{1} << 28;
  i.size_help = "floats copied by the transfer, pipeline, managed-memory and host-memory rows";
  i.default_iters = 10;
  i.default_warmup = 2;
  i.work_note = "us: microseconds per run, lower is better. moved GB/s: bytes over the host link (PCIe) per "
                "second, both directions added, for the rows that copy (1 GB = 1e9 B).";
  i.baseline = "copy_engines";
  // NOTE: no goal against ideal_bound (the slowest stage alone). A pipeline
  // runs both copy directions at once, and on a link whose two directions
  // together are slower than either alone, copy_engines (both whole copies
  // at once, measured in the same run) is itself far under ideal_bound: such
  // a goal grades the host's link, not the code. ideal_bound stays a row.
  i.goals = {
      {"best", "copy_engines", 0.95, ">= 0.95x the copy-engine bound (both whole copies at once)"},
      // The graph against the same launches queued while the GPU waits (the
      // host out of the way), not against launching one by one: that ratio
      // is the host's cost per launch over the GPU's, and moves with the CPU
      // and driver (2.5x to 4.7x on our two machines).
      {"graph_replay", "launch_queued", 0.9,
       ">= 0.9x the same launches queued up front (a graph leaves only the GPU's own cost per kernel)"},
  };
  i.timeout_s = 300;
  i.int_options.push_back({"--chunks", "C", "chunks of the pipeline versions", 64, 1, 1 << 20});
  i.int_options.push_back({"--work", "W", "identity FMAs per element in the pipeline's kernel (its length)", 256, 0,
                           1 << 20});
  i.int_options.push_back({"--streams", "K", "streams of your exercise's row (yours)", 4, 1, 64, true});
  i.int_options.push_back({"--kernels", "K", "tiny kernels per launch-overhead run", 128, 1, 100000});
  i.int_options.push_back({"--step-us", "US", "how long each launch-overhead kernel spins (0: not at all)", 0, 0,
                           1000000});
  i.int_options.push_back({"--allocs", "A", "allocations per allocation run", 1000, 1, 1000000});
  i.int_options.push_back({"--alloc-kib", "KIB", "size of each allocation in KiB", 1024, 1, 1 << 20});
  i.int_options.push_back({"--spin-us", "US", "length of the concurrency rows' spin kernels", 1000, 1, 10000000});
  i.int_options.push_back({"--sparse-stride", "S", "the sparse host-memory rows read one float in S", 64, 1,
                           1 << 30});
  i.flag_options.push_back({"--timeline", std::string("write every pipeline row's per-chunk event timestamps to ") +
                                              kTimelineFile + " (draw it with chapters/08_streams/timeline.py)", true});
  i.validate = [](const steps::Options& o) {
    if (o.has("--timeline") && !o.verify)
      throw steps::UsageError("--timeline records the verification run, which --no-verify skips");
    if (o.has("--timeline")) {
      std::ofstream f(kTimelineFile, std::ios::app);
      if (!f) throw steps::UsageError(std::string("--timeline: cannot write to '") + kTimelineFile + "'");
    }
  };
  return i;
}

} // namespace ch08

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch08::info(), ch08::registry()); }