// Chapter 04: shared-memory bank conflicts.
//
// Shared memory is split into 32 banks, 4 bytes wide; a warp's load is
// served in one clock only when its 32 lanes need at most one word from
// each bank. This program measures what happens when they do not:
//
//   stride_S          lane l reads word l * S: the n-way conflicts, S = 1..32 (strided.cuh)
//   column_unpadded   v1: a warp reads one column of a 32 x 32 tile: 32-way
//   column_padded     v2: the same with one word of padding per row: conflict-free
//   column_swizzled   v3: the same with an XOR swizzle, no padding: conflict-free
//   floatV_stride_S   8- and 16-byte loads: requests served in 128-byte passes (wide.cuh)
//
// Everything is a microbenchmark of SHARED memory: each block copies one
// tile from DRAM and reads it 512 times over from shared memory, so GB/s
// in the table are shared-memory bytes per second and the peak is the
// shared-memory peak (32 banks x 4 bytes per clock per SM). The baseline is
// the conflict-free stride-1 read; the goal is a column read as fast as that.
//
// The stride and float2/float4 rows are reference rows: measurements of the
// hardware, shown as a percentage of stride_1 and never ranked; the goal
// ("best version") is about the column-read versions v1-v3 alone.
//
// Run: ./tutorial run 04    (or build/bin/ch04_bank_conflicts --help)
#include "mistakes.cuh"
#include "shared_reads_problem.cuh"
#include "strided.cuh"
#include "v1_column_unpadded.cuh"
#include "v2_column_padded.cuh"
#include "v3_column_swizzled.cuh"
#include "wide.cuh"

#include "steps/chapter.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <string>
#include <vector>

namespace ch04 {

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  using steps::Role;
  std::vector<steps::GroupPtr> groups{steps::group<SharedReads>({
      stride_row(1, Role::baseline, "lane l reads word l: 32 banks, 1 pass per load (conflict-free: the baseline)"),
      stride_row(2, Role::reference, "lane l reads word 2l: lanes l and l + 16 share a bank, 2-way conflict"),
      stride_row(3, Role::reference, "odd stride: every bank once, conflict-free (so are 5, 7, ... 31)"),
      stride_row(4, Role::reference, "4-way conflict: 8 banks used"),
      stride_row(8, Role::reference, "8-way conflict: 4 banks used"),
      stride_row(16, Role::reference, "16-way conflict: 2 banks used"),
      stride_row(32, Role::reference, "32-way conflict: every lane in bank 0"),
      column_row("column_unpadded", "v1: warp reads a column of a 32 x 32 tile at row * 32 + col: 32-way",
                 Role::version, v1::launch),
      column_row("column_padded", "v2: rows padded to 33 words, (row, col) in bank (row + col) % 32", Role::version,
                 v2::launch),
      column_row("column_swizzled", "v3: no padding, (row, col) at row * 32 + (col ^ row)", Role::version,
                 v3::launch),
      wide_row<float2>(1, "8-byte loads, consecutive: 2 passes of 16 lanes, no conflict"),
      wide_row<float4>(1, "16-byte loads, consecutive: 4 passes of 8 lanes, no conflict"),
      wide_row<float4>(2, "16-byte loads 32 bytes apart: 2-way inside each pass, 8 passes"),
      column_row("mistake_swizzle_on_read_only", "tile stored plain, read swizzled: right words, wrong steps",
                 Role::mistake, mistakes::swizzle_on_read_only),
      column_row("mistake_pad_forgotten_on_read", "tile stored padded, read at row * 32 + col", Role::mistake,
                 mistakes::pad_forgotten_on_read),
  })};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

/// Shared memory delivers 32 banks x 4 bytes = 128 bytes per clock per SM.
steps::Peak shared_memory_peak(const steps::DeviceInfo& dev) {
  return {"shared memory", dev.sm_count * 128.0 * dev.sm_clock_khz * 1e3 / 1e9,
          std::to_string(dev.sm_count) + " SMs x 128 B/clock x " + std::to_string(dev.sm_clock_khz / 1000) + " MHz"};
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Measures shared-memory bank conflicts: a stride sweep (n-way conflicts), column reads of a "
              "32 x 32 tile plain, padded and XOR-swizzled, and 8- and 16-byte loads. GB/s are shared-memory "
              "bytes per second.";
  i.metric = steps::Metric::bandwidth;
  // 2^24 words: 16384 blocks, 124 waves of 132 SMs; every row reads 34 GB of
  // shared memory per run. The 64 MiB input barely matters: it is read
  // once per run, the shared tile 512 times.
  i.default_size = std::int64_t{1} << 24;
  i.size_help = "input words: one block per 1024 (a 32 x 32 tile), each tile read 512 times from shared memory";
  i.default_iters = 20;
  i.work_note =
      "GB/s: SHARED-MEMORY bytes read per second by the timed loop (2 MiB per block: 256 threads x 64 rounds x "
      "128 B);\nthe 4-8 KiB tile copy and the DRAM traffic (under 0.5%) are not counted. yours: 8 bytes per "
      "element of A\n(one 4-byte store into the tile, one 4-byte load from it).";
  i.baseline = "stride_1";
  i.goals = {{"best", "stride_1", 0.95, ">= 0.95x stride_1 (a conflict-free column read is as fast as a row read)"}};
  i.peak = shared_memory_peak;
  return i;
}

} // namespace ch04

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch04::info(), ch04::registry()); }
