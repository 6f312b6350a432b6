// Chapter 05: matrix transpose, out(c, r) = in(r, c).
//
// No arithmetic at all: a transpose only moves bytes, 8 per element (one
// 4-byte read, one 4-byte write): its bound is the DRAM peak, and the vendor
// copy (cudaMemcpy of the same matrix) is the baseline to hold it against. What makes it hard is that reading rows means writing
// columns: one side of the kernel is always strided unless the block
// reorders the data in shared memory first. The versions:
//
//   v1 naive            one element per thread: coalesced reads, strided writes
//   v2 shared_tile      32 x 32 tile in shared memory: both sides coalesced,
//                       but the column reads hit one bank 32 times
//   v3 padded_tile      tile[32][33]: conflict-free
//   v4 multi_element    32 x 8 threads, 4 elements each: more bytes in flight
//   v5 big_tile         the same kernel with a 64 x 64 tile, 16 elements each
//   v6 float4           v5 with 16-byte global loads and stores
//   v7 columns_first    v6's tiles in another order: each column of tiles first
//
// next to cudaMemcpy device-to-device of the matrix (the baseline the goal
// is a ratio of) and a reference row: a plain tiled copy with version 4's
// access shape (what the slicing costs before any transposing; a copy, not
// a transpose, so it is shown but never ranked).
//
// Run: ./tutorial run 05    (or build/bin/ch05_transpose --help)
#include "launch.cuh"
#include "mistakes.cuh"
#include "tiled_copy.cuh"
#include "transpose_problem.cuh"
#include "v1_naive.cuh"
#include "v2_shared_tile.cuh"
#include "v3_padded_tile.cuh"
#include "v4_multi_element.cuh"
#include "v5_big_tile.cuh"
#include "v6_float4.cuh"
#include "v7_columns_first.cuh"

#include "steps/chapter.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ch05 {

using Row = steps::Row<Transpose>;
using Kernel = std::function<void(const float* in, float* out, int rows, int cols, cudaStream_t)>;

/// A row over the chapter's matrix, launching `kernel`: 8 bytes per element
/// (its check is set by copy_row or transpose_row).
Row matrix_row(std::string name, std::string what, steps::Role role, Kernel kernel) {
  Row r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [kernel](Transpose& p, steps::Run& run) { kernel(p.in(), p.out(), p.rows(), p.cols(), run.stream()); };
  r.work = [](const Transpose& p) { return p.work(); };
  r.reset = [](Transpose& p) { p.poison(); };
  return r;
}

/// A row that copies the matrix: checked against in itself.
Row copy_row(std::string name, std::string what, steps::Role role, Kernel kernel) {
  Row r = matrix_row(std::move(name), std::move(what), role, std::move(kernel));
  r.check = [](Transpose& p) { return p.check_copy(); };
  return r;
}

/// A row that transposes: checked against the CPU transpose.
Row transpose_row(std::string name, std::string what, steps::Role role, Kernel kernel) {
  Row r = matrix_row(std::move(name), std::move(what), role, std::move(kernel));
  r.check = [](Transpose& p) { return p.check_transpose(); };
  return r;
}

/// What the float4 row runs: v6 where float4 accesses are legal, else v5.
void float4_or_big_tile(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (v6::usable(in, out, rows, cols))
    v6::launch(in, out, rows, cols, stream);
  else
    v5::launch(in, out, rows, cols, stream); // no float4 view of every row: scalar version 5
}

/// What the columns_first row runs: v7 where it can, else the float4 row's choice.
void columns_first_or_float4(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (v7::usable(in, out, rows, cols))
    v7::launch(in, out, rows, cols, stream);
  else
    float4_or_big_tile(in, out, rows, cols, stream); // v6 (or v5 without float4) handles these
}

/// The baseline: the vendor's copy of the same bytes.
Row memcpy_row() {
  return steps::memcpy_row<Transpose>(
      "cudaMemcpy device-to-device of the matrix (the vendor copy: same bytes, no reordering)",
      [](Transpose& p) { return p.out(); }, [](Transpose& p) { return p.in(); },
      [](const Transpose& p) { return p.bytes(); }, [](Transpose& p) { return p.check_copy(); },
      [](Transpose& p) { p.poison(); });
}

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  using steps::Role;
  std::vector<steps::GroupPtr> groups{steps::group<Transpose>({
      memcpy_row(),
      copy_row("tiled_copy", "plain copy (no transpose) in v4's shape: 32 x 32 tiles, 32 x 8 threads",
               Role::reference, reference::copy),
      transpose_row("naive", "v1: one element per thread, coalesced reads, strided writes", Role::version, v1::launch),
      transpose_row("shared_tile", "v2: 32 x 32 tile in shared memory (32-way bank conflicts)", Role::version,
                    v2::launch),
      transpose_row("padded_tile", "v3: tile[32][33], conflict-free", Role::version, v3::launch),
      transpose_row("multi_element", "v4: v3 with 32 x 8 threads, 4 elements per thread", Role::version,
                    v4::launch),
      transpose_row("big_tile", "v5: v4's kernel with a 64 x 64 tile, 64 x 4 threads, 16 elements each",
                    Role::version, v5::launch),
      transpose_row("float4", "v6: v5 with 16-byte global accesses (v5 when rows or cols % 4 != 0)", Role::version,
                    float4_or_big_tile),
      transpose_row("columns_first", "v7: v6 with the grid walking down each column of tiles first", Role::version,
                    columns_first_or_float4),
      transpose_row("mistake_missing_sync", "v4 without __syncthreads: warps read tile rows not yet stored",
                    Role::mistake, mistakes::missing_sync),
  })};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Transposes a float matrix with seven kernel versions, from the naive one (coalesced reads, "
              "strided writes) to shared-memory tiles with padding, several elements per thread, 16-byte "
              "accesses and a block order that lets the writes stream, next to cudaMemcpy device-to-device and a "
              "plain tiled copy.";
  i.metric = steps::Metric::bandwidth;
  // 8192 x 8192 floats: 256 MiB per matrix, 4x the H200's L2 on each side.
  i.default_size = 8192;
  i.size_help = "side of a square matrix, in elements (--rows/--cols make it a rectangle)";
  i.default_iters = 50;
  i.work_note = "GB/s: bytes read + written per second, 1 GB = 1e9 B; every row moves 8 bytes per element "
                "(1 read + 1 write), the two copies included.";
  i.baseline = "memcpy";
  i.goals = {{"best", "memcpy", 0.90, ">= 0.90x memcpy"}};
  i.int_options.push_back({"--rows", "R", "matrix height (0: use --size)", 0, 0, std::int64_t{1} << 40});
  i.int_options.push_back({"--cols", "C", "matrix width (0: use --size)", 0, 0, std::int64_t{1} << 40});
  return i;
}

} // namespace ch05

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch05::info(), ch05::registry()); }
