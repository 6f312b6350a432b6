// Chapter 05: matrix transpose, out(c, r) = in(r, c).
//
// No arithmetic at all: a transpose only moves bytes, 8 per element (one
// 4-byte read, one 4-byte write), so its speed of light is a copy of the
// same matrix. What makes it hard is that reading rows means writing
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
//
// and two reference rows: cudaMemcpy device-to-device of the matrix (the
// baseline the goal is a ratio of) and a plain tiled copy with version 4's
// access shape (what the slicing costs before any transposing).
//
// Run: ./tutorial run 05    (or build/bin/ch05_transpose --help)
#include "mistakes.cuh"
#include "tiled_copy.cuh"
#include "v1_naive.cuh"
#include "v2_shared_tile.cuh"
#include "v3_padded_tile.cuh"
#include "v4_multi_element.cuh"
#include "v5_big_tile.cuh"
#include "v6_float4.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#if STEPS_WITH_EXERCISE
#include "transpose.hpp"
#endif

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ch05 {

/// Rows or columns from the command line: --rows / --cols, or --size when 0.
std::int64_t side(const steps::Options& opts, const char* option) {
  const std::int64_t v = opts.get(option);
  return v != 0 ? v : opts.size;
}

/// rows * cols, or OutOfMemory when the product does not even fit in 64 bits
/// (--size 1T asks for 2^80 elements).
std::size_t element_count(std::int64_t rows, std::int64_t cols) {
  const auto r = static_cast<std::uint64_t>(rows), c = static_cast<std::uint64_t>(cols);
  if (r > std::numeric_limits<std::size_t>::max() / c)
    throw steps::OutOfMemory("a " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " matrix does not fit in memory (its element count overflows)");
  return static_cast<std::size_t>(r * c);
}

/// in (rows x cols, row-major) -> its transpose (cols x rows), on the CPU.
/// Blocked by 64 x 64 so that both sides stay in the CPU's caches.
std::vector<float> cpu_transpose(const std::vector<float>& in, int rows, int cols) {
  std::vector<float> out(in.size());
  constexpr int B = 64;
  for (int rb = 0; rb < rows; rb += B)
    for (int cb = 0; cb < cols; cb += B)
      for (int r = rb; r < std::min(rows, rb + B); ++r)
        for (int c = cb; c < std::min(cols, cb + B); ++c)
          out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
  return out;
}

/// Input, output and CPU reference of one run of the chapter.
class Transpose {
public:
  Transpose(const steps::Options& opts, const steps::DeviceInfo&)
      : rows64_(side(opts, "--rows")), cols64_(side(opts, "--cols")), n_(element_count(rows64_, cols64_)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        in_(n_), out_(n_) {
    if (rows64_ > kMaxRows || cols64_ > kMaxCols)
      throw std::invalid_argument("a " + std::to_string(rows64_) + " x " + std::to_string(cols64_) +
                              " matrix is beyond this chapter's grids: at most " + std::to_string(kMaxRows) +
                              " rows (65535 tile rows of 32) and " + std::to_string(kMaxCols) + " columns");
    rows_ = static_cast<int>(rows64_);
    cols_ = static_cast<int>(cols64_);
    // Random input, generated on the GPU, copied back for the reference.
    steps::fill_uniform_device(in_.data(), n_, opts.seed, -1.0f, 1.0f);
    in_host_ = in_.download();
    transposed_ = cpu_transpose(in_host_, rows_, cols_);
  }

  std::string describe() const {
    char buf[200];
    std::snprintf(buf, sizeof buf, "out = transpose(in), in: %d x %d floats (%s), out: %d x %d", rows_, cols_,
                  steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(), cols_, rows_);
    return buf;
  }

  // Every row, the copies included, reads the matrix once and writes it once.
  steps::Work work(const std::string&) const { return {2 * 4 * static_cast<double>(n_), 0}; }

  void reset(const std::string&) { out_.poison(); } // NaN everywhere: unwritten elements show

  steps::Comparison check(const std::string& name) const {
    steps::Comparison c = out_.check_guards();
    if (!c.ok) return c;
    const std::vector<float> got = out_.download();
    if (name == "memcpy" || name == "tiled_copy") {
      c = steps::compare(got, in_host_, steps::Tolerance::exact());
      c.row_length = static_cast<std::size_t>(cols_); // report (row, column) of the copy
    } else {
      // Moving bytes rounds nothing: the transpose must be exact.
      c = steps::compare(got, transposed_, steps::Tolerance::exact());
      c.row_length = static_cast<std::size_t>(rows_); // out is cols x rows
    }
    return c;
  }

  const float* in() const { return in_.data(); }
  float* out() { return out_.data(); }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  std::size_t bytes() const { return n_ * sizeof(float); }

private:
  std::int64_t rows64_, cols64_;
  std::size_t n_;
  int rows_ = 0, cols_ = 0;
  steps::GuardedBuffer<float> in_, out_;
  std::vector<float> in_host_, transposed_;
};

using Version = steps::Version<Transpose>;

// The registry: the CLI, the table and the JSON all come from this list.
const std::vector<Version> kVersions = {
    {"memcpy", "cudaMemcpy device-to-device of the matrix (speed of light)", steps::Role::baseline,
     [](Transpose& p, cudaStream_t s) {
       CUDA_CHECK(cudaMemcpyAsync(p.out(), p.in(), p.bytes(), cudaMemcpyDeviceToDevice, s));
     }},
    {"tiled_copy", "plain copy (no transpose) in v4's shape: 32 x 32 tiles, 32 x 8 threads", steps::Role::baseline,
     [](Transpose& p, cudaStream_t s) { reference::copy(p.in(), p.out(), p.rows(), p.cols(), s); }},
    {"naive", "v1: one element per thread, coalesced reads, strided writes", steps::Role::version,
     [](Transpose& p, cudaStream_t s) { v1::launch(p.in(), p.out(), p.rows(), p.cols(), s); }},
    {"shared_tile", "v2: 32 x 32 tile in shared memory (32-way bank conflicts)", steps::Role::version,
     [](Transpose& p, cudaStream_t s) { v2::launch(p.in(), p.out(), p.rows(), p.cols(), s); }},
    {"padded_tile", "v3: tile[32][33], conflict-free", steps::Role::version,
     [](Transpose& p, cudaStream_t s) { v3::launch(p.in(), p.out(), p.rows(), p.cols(), s); }},
    {"multi_element", "v4: v3 with 32 x 8 threads, 4 elements per thread", steps::Role::version,
     [](Transpose& p, cudaStream_t s) { v4::launch(p.in(), p.out(), p.rows(), p.cols(), s); }},
    {"big_tile", "v5: v4's kernel with a 64 x 64 tile, 64 x 4 threads, 16 elements each", steps::Role::version,
     [](Transpose& p, cudaStream_t s) { v5::launch(p.in(), p.out(), p.rows(), p.cols(), s); }},
    {"float4", "v6: v5 with 16-byte global accesses (v5 when rows or cols % 4 != 0)", steps::Role::version,
     [](Transpose& p, cudaStream_t s) { v6::launch(p.in(), p.out(), p.rows(), p.cols(), s); }},
#if STEPS_WITH_EXERCISE
    {"yours", "exercise 05: your transpose of a matrix view (here with tight row pitches)", steps::Role::yours,
     [](Transpose& p, cudaStream_t s) {
       ex05::transpose(p.rows(), p.cols(), p.in(), p.cols(), p.out(), p.rows(), s);
     }},
#endif
    {"mistake_missing_sync", "v4 without __syncthreads: warps read tile rows not yet stored",
     steps::Role::mistake,
     [](Transpose& p, cudaStream_t s) { mistakes::missing_sync(p.in(), p.out(), p.rows(), p.cols(), s); }},
};

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.number = "05";
  i.binary = "ch05_transpose";
  i.title = "Matrix transpose";
  i.summary = "Transposes a float matrix with six kernel versions, from the naive one (coalesced reads, "
              "strided writes) to shared-memory tiles with padding, several elements per thread and 16-byte "
              "accesses, next to cudaMemcpy device-to-device and a plain tiled copy.";
  i.metric = steps::Metric::bandwidth;
  // 8192 x 8192 floats: 256 MiB per matrix, 4x the H200's L2 on each side.
  i.default_size = 8192;
  i.size_help = "side of a square matrix, in elements (--rows/--cols make it a rectangle)";
  i.default_iters = 50;
  i.work_note = "GB/s: bytes read + written per second, 1 GB = 1e9 B; every row moves 8 bytes per element "
                "(1 read + 1 write), the two copies included.";
  i.goal = 0.90;
  i.goal_text = ">= 0.90x memcpy";
  i.int_options.push_back({"--rows", "R", "matrix height (0: use --size)", 0, 0, std::int64_t{1} << 40});
  i.int_options.push_back({"--cols", "C", "matrix width (0: use --size)", 0, 0, std::int64_t{1} << 40});
  return i;
}

} // namespace ch05

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch05::info(), ch05::kVersions); }
