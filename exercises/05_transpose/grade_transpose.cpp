// Grader for exercise 05 (transpose of matrix views). Built twice: against
// your exercises/ code (./tutorial grade 05) and against the solution (part
// of ./tutorial test).
//
// Every shape runs on fresh random data in guarded device arrays (writes
// past either end are caught). The view of out starts as random values too,
// so an element your code never writes keeps its old value and the grader
// can tell. Your function gets a non-blocking stream with work still pending
// ahead of it (the grader's, which finishes writing in and out): work that
// is not in that stream gives a wrong result. The padding of both matrices, the ld - width elements at the end
// of every row that are not part of the view, holds NaN: a read of in's
// padding puts a NaN into out, which no check accepts, and out's padding
// must keep its NaN (nothing may write there).
//
// A race (a missing __syncthreads) shows only when some warp of a block
// runs ahead of another, which is a matter of chance in any one block. With
// thousands of blocks, each waiting hundreds of cycles for memory, it happens
// somewhere in every run: that is why the shapes below include several with
// 3,000 to 65,000 tiles, not only the small tricky ones. After a pass,
// compute-sanitizer racecheck runs on the small shapes as well, and sees a
// race even where the answer came out right by luck.
#include "transpose.hpp"

#include "steps/catch.hpp"
#include "steps/compare.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Shape {
  int rows, cols; // in is rows x cols, out is cols x rows
  int ld_in;      // row pitch of in, >= cols
  int ld_out;     // row pitch of out, >= rows
};

// A tight shape: rows exactly as long as they are wide.
Shape tight(int rows, int cols) { return {rows, cols, cols > 0 ? cols : 1, rows > 0 ? rows : 1}; }

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "transpose(rows = " << s.rows << ", cols = " << s.cols << ", ld_in = " << s.ld_in << ", ld_out = " << s.ld_out
     << ")";
  return os.str();
}

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

bool same(float a, float b) { return bits_of(a) == bits_of(b); }

// The padding of both matrices: every byte 0xFF (cudaMemset2D), a NaN that
// no kernel computes and that differs from the guard zones' NaN.
constexpr std::uint32_t kPaddingBits = 0xFFFFFFFFu;
bool is_padding(float v) { return bits_of(v) == kPaddingBits; }
bool is_guard(float v) { return same(v, steps::GuardedBuffer<float>::guard_value()); }

std::string at(long long r, long long c) { return "(" + std::to_string(r) + ", " + std::to_string(c) + ")"; }

// What a shape holds before your code runs, as a function of the seed: no
// host copy of a matrix is needed (the [.huge] views have 2^31 elements).
// Element i of a matrix's allocation is uniform_at(seed, i), so in(r, c) is
// element r * ld_in + c; the padding is overwritten with NaN.
struct Data {
  Shape s;
  std::uint64_t seed;
  float in(long long r, long long c) const {
    return steps::uniform_at(seed, static_cast<std::uint64_t>(r) * s.ld_in + static_cast<std::uint64_t>(c), -1.0f, 1.0f);
  }
  // out(c, r) before the call.
  float old_out(long long c, long long r) const {
    return steps::uniform_at(seed + 1, static_cast<std::uint64_t>(c) * s.ld_out + static_cast<std::uint64_t>(r), -1.0f,
                             1.0f);
  }
};

// A matrix of `rows` rows, `width` wide, rows `ld` apart: random values, NaN
// padding (columns width .. ld - 1 of every row).
void fill_matrix(float* d, std::size_t count, int rows, int width, int ld, std::uint64_t seed) {
  steps::fill_uniform_device(d, count, seed, -1.0f, 1.0f);
  if (ld > width && rows > 0)
    CUDA_CHECK(cudaMemset2D(d + width, static_cast<std::size_t>(ld) * sizeof(float), 0xFF,
                            static_cast<std::size_t>(ld - width) * sizeof(float), static_cast<std::size_t>(rows)));
  CUDA_CHECK(cudaDeviceSynchronize());
}

// out(c, r) is wrong: says what it holds instead, and what usually causes that.
std::string explain(const Data& d, long long c, long long r, float g) {
  const Shape& s = d.s;
  auto in_is = [&](long long r2, long long c2) {
    return r2 >= 0 && r2 < s.rows && c2 >= 0 && c2 < s.cols && same(d.in(r2, c2), g);
  };
  std::ostringstream os;
  os << "\n  out" << at(c, r) << " should be in" << at(r, c);
  if (is_padding(g)) {
    os << ", but it holds the NaN the grader puts in the padding of in (columns " << s.cols << " .. "
       << s.ld_in - 1 << " of every input row, which are not part of the view): your code read the padding."
       << "\n  Hint: the rows of in are ld_in elements apart, not cols: in(r, c) is in[r * ld_in + c]. The "
          "pitch goes into the address; cols goes only into the guard (c < cols).";
    return os.str();
  }
  if (is_guard(g)) {
    os << ", but it holds the NaN of the guard zone around in: your code read before the start or past the "
          "end of in.\n  Hint: check the load guard (input row < rows, input column < cols) and the index "
          "in[r * ld_in + c] of the last rows.";
    return os.str();
  }
  if (same(g, d.old_out(c, r))) {
    os << ", but it still holds its old value: no thread wrote it.\n  Hint: does your grid cover every "
          "tile, ceil(cols / TILE) blocks along the columns and ceil(rows / TILE) along the rows? Does the "
          "edge guard on the write compare the OUTPUT row with cols and the output column with rows? Does "
          "block (x, y) write its tile at output rows x * TILE .. and output columns y * TILE ..?";
    return os.str();
  }
  for (const long long t : {32, 64, 16}) {
    // The right place inside a tile, but the tile of the mirror block.
    const long long r2 = t * (c / t) + r % t, c2 = t * (r / t) + c % t;
    if ((r2 != r || c2 != c) && in_is(r2, c2)) {
      os << ", but it holds in" << at(r2, c2) << ": the right element of the wrong " << t << " x " << t
         << " tile.\n  Hint: block (x, y) reads the tile at input rows y * TILE .., columns x * TILE .. and "
            "must write it at OUTPUT rows x * TILE .., columns y * TILE ..: check the block indices on the write.";
      return os.str();
    }
  }
  if (in_is(c, r)) {
    os << ", but it holds in" << at(c, r) << ", the element at the mirror position.\n  Hint: either the "
          "write swaps row and column (out(c, r) is out[c * ld_out + r]), or whole tiles land at their mirror "
          "position (block (x, y) must write output rows x * TILE .., columns y * TILE ..).";
    return os.str();
  }
  for (long long r2 = 0; r2 < s.rows; ++r2)
    for (long long c2 = 0; c2 < s.cols; ++c2)
      if (in_is(r2, c2)) {
        os << ", but it holds " << steps::format_value(g) << ", the value of in" << at(r2, c2)
           << ".\n  Hint: if other elements are wrong in each run, it is a race: every thread must wait at "
              "__syncthreads() after storing its elements into the tile and before reading other threads' "
              "elements. If not, check the tile indices (store tile[row][column], read tile[column][row]) "
              "and the pitches (in[r * ld_in + c], out[c * ld_out + r]).";
        return os.str();
      }
  os << ", but it holds " << steps::format_value(g) << ", which is nowhere in in.\n  Hint: it was read from a "
        "tile element no thread of this block stored: a missing __syncthreads(), or load and store guards that "
        "disagree, or a read outside in (check the pitch: in(r, c) is in[r * ld_in + c]), or a kernel that is "
        "not in `stream`: the grader's stream has work pending ahead of your call (it finishes writing in and "
        "out), and a kernel in the default stream 0 runs before it.";
  return os.str();
}

// out's padding (columns rows .. ld_out - 1 of every out row) must still be
// the grader's NaN. Checked on the GPU: out may have 2^32 elements.
std::string check_out_padding(const Shape& s, const float* dout) {
  if (s.ld_out <= s.rows || s.cols == 0) return "";
  const std::size_t width = static_cast<std::size_t>(s.ld_out - s.rows);
  const std::size_t i = steps::grade::find_word(dout + s.rows, width, static_cast<std::size_t>(s.cols),
                                                static_cast<std::size_t>(s.ld_out), kPaddingBits, false);
  if (i == width * static_cast<std::size_t>(s.cols)) return "";
  const std::size_t c = i / width, r = s.rows + i % width;
  float now = 0;
  CUDA_CHECK(cudaMemcpy(&now, dout + c * static_cast<std::size_t>(s.ld_out) + r, sizeof now, cudaMemcpyDeviceToHost));
  return "out" + at(static_cast<long long>(c), static_cast<long long>(r)) + " is past the end of out's row " +
         std::to_string(c) + " (columns 0 .. " + std::to_string(s.rows - 1) + " are the view; ld_out = " +
         std::to_string(s.ld_out) + "), but it was overwritten with " + steps::format_value(now) +
         ".\n  Hint: guard the write: output column < rows (not < ld_out), output row < cols.";
}

// in must be unchanged, view and padding. Skipped above 2^27 elements (the
// [.huge] views): regenerating 2^31 values on the CPU takes longer than the
// kernel under test, and the other shapes already check it.
std::string check_in_unchanged(const Data& d, const steps::GuardedBuffer<float>& din) {
  if (const auto g = din.check_guards(); !g.ok) return "in's guard zone changed: " + g.describe();
  const Shape& s = d.s;
  const std::size_t count = din.size();
  if (count == 0 || count > (std::size_t{1} << 27)) return "";
  const std::vector<float> now = din.download();
  for (std::size_t i = 0; i < count; ++i) {
    const long long r = static_cast<long long>(i / s.ld_in), c = static_cast<long long>(i % s.ld_in);
    const bool padding = c >= s.cols;
    if (padding ? !is_padding(now[i]) : !same(now[i], d.in(r, c)))
      return "in" + at(r, c) + (padding ? " (padding)" : "") + " changed to " + steps::format_value(now[i]) +
             ", but in is an input: write only out.";
  }
  return "";
}

// Runs transpose on one shape and checks everything. Returns "" when correct.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  const Data d{s, seed};
  const std::size_t in_count = static_cast<std::size_t>(s.rows) * s.ld_in;
  const std::size_t out_count = static_cast<std::size_t>(s.cols) * s.ld_out;
  steps::GuardedBuffer<float> din(in_count), dout(out_count);
  fill_matrix(din.data(), in_count, s.rows, s.cols, s.ld_in, seed);
  fill_matrix(dout.data(), out_count, s.cols, s.rows, s.ld_out, seed + 1);

  // Both matrices are scrambled until the work pending in the stream has
  // restored them.
  steps::grade::BusyStream stream;
  stream.restores(din.data(), in_count * sizeof(float));
  stream.restores(dout.data(), out_count * sizeof(float));
  stream.start();
  ex05::transpose(s.rows, s.cols, din.data(), s.ld_in, dout.data(), s.ld_out, stream);
  stream.finish();

  if (const auto g = dout.check_guards(); !g.ok)
    return "out: " + g.describe() + "\n  Hint: a tile that overhangs the matrix must not write its "
                                    "overhanging part: guard the write (output row < cols, output column < rows).";

  // The view of out (cols rows of `rows` elements), gathered tight.
  const std::size_t n = static_cast<std::size_t>(s.rows) * s.cols;
  if (n) {
    std::vector<float> view(n);
    CUDA_CHECK(cudaMemcpy2D(view.data(), static_cast<std::size_t>(s.rows) * sizeof(float), dout.data(),
                            static_cast<std::size_t>(s.ld_out) * sizeof(float),
                            static_cast<std::size_t>(s.rows) * sizeof(float), static_cast<std::size_t>(s.cols),
                            cudaMemcpyDeviceToHost));
    const auto rows = static_cast<std::size_t>(s.rows);
    // Moving bytes rounds nothing: exact, element by element, against in
    // regenerated from the seed.
    const auto cmp = steps::compare_each(
        n, [&](std::size_t i) { return view[i]; },
        [&](std::size_t i) { return d.in(static_cast<long long>(i % rows), static_cast<long long>(i / rows)); },
        [](std::size_t, double) { return 0.0; }, 0.0);
    if (!cmp.ok) {
      const auto c = static_cast<long long>(cmp.first_bad / rows), r = static_cast<long long>(cmp.first_bad % rows);
      return "out is wrong: " + cmp.describe(rows) + explain(d, c, r, view[cmp.first_bad]);
    }
  }

  if (auto problem = check_out_padding(s, dout.data()); !problem.empty()) return problem;
  return check_in_unchanged(d, din);
}

// Exercise-specific words for a CUDA error (the harness adds the general ones).
std::string transpose_hint(const steps::Error& e) {
  if (e.code_name() == "cudaErrorIllegalAddress")
    return "in a transpose of views: an index that uses cols where it needs ld_in (or rows where it needs "
           "ld_out), or an offset computed in int: r * ld_in passes 2^31 on big views. Compute it in "
           "std::size_t.";
  if (e.code_name() == "cudaErrorInvalidConfiguration" || e.code_name() == "cudaErrorInvalidValue")
    return "rows or cols = 0 means nothing to do: return before the launch.";
  return "";
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape, transpose_hint); }

// Shapes drawn from a fixed seed: the same every run, none of them friendly.
std::vector<Shape> drawn_shapes(int count, int max_side, std::uint64_t seed) {
  std::vector<Shape> out;
  for (int i = 0; i < count; ++i) {
    auto draw = [&](int k, int lo, int hi) {
      const std::uint64_t key = seed * 1000 + static_cast<std::uint64_t>(i) * 10 + static_cast<std::uint64_t>(k);
      return lo + static_cast<int>(steps::splitmix64(key) % static_cast<std::uint64_t>(hi - lo + 1));
    };
    const int rows = draw(0, 1, max_side), cols = draw(1, 1, max_side);
    out.push_back({rows, cols, cols + draw(2, 0, 40), rows + draw(3, 0, 40)});
  }
  return out;
}

} // namespace

TEST_CASE("transpose of small and odd shapes, tight rows", "[transpose]") {
  grade({tight(1, 1), tight(1, 2), tight(2, 1), tight(1, 37), tight(37, 1), tight(2, 3), tight(3, 2),
         tight(31, 31), tight(32, 32), tight(33, 33), tight(31, 33), tight(33, 31), tight(32, 64), tight(64, 32),
         tight(65, 97), tight(97, 65), tight(127, 129), tight(257, 3)});
}

TEST_CASE("transpose of empty matrices (nothing to do)", "[transpose]") {
  grade({tight(0, 5), tight(5, 0), tight(0, 0), {0, 7, 9, 4}, {6, 0, 3, 8}});
}

TEST_CASE("transpose of views: rows further apart than they are wide", "[transpose]") {
  grade({{1, 1, 2, 3}, {5, 7, 8, 40}, {37, 45, 64, 77}, {100, 3, 7, 150}, {3, 100, 128, 3}, {33, 65, 100, 70},
         {257, 129, 300, 300}, {64, 64, 65, 65}});
}

TEST_CASE("transpose of medium shapes (hundreds of blocks)", "[transpose]") {
  grade({tight(1000, 777), {777, 1000, 1024, 800}});
  grade(drawn_shapes(4, 1200, 5));
}

// The race of a missing __syncthreads() shows somewhere in these for sure
// (thousands to tens of thousands of blocks each); the sanitizers skip them
// (too slow under compute-sanitizer).
TEST_CASE("transpose of large shapes", "[transpose][large]") {
  grade({tight(2048, 1536), {1999, 2501, 2560, 2048}, {4099, 6143, 6200, 4160}, tight(8192, 8192),
         {1000000, 3, 5, 1000000 + 37}, {3, 1000000, 1000000, 3}});
}

// Past 2^31 elements an offset r * ld computed in int wraps negative, and
// past 2^32 one computed in unsigned int wraps to the start. Two views whose
// matrix has 2^32 + 293 million elements (18.4 GB): a tall one (in: 140001
// rows, 32771 apart; r * ld_in passes 2^31 from row 65531 on and 2^32 from
// row 131061 on) and a wide one (the same for out: c * ld_out). The views
// themselves are small (140001 x 37), so the host memory stays small; out's
// padding is checked on the GPU. Hidden ([.huge]): ./tutorial grade runs it
// after the others pass, alone, and where the GPU lacks the memory it says
// so and is not checked.
TEST_CASE("transpose of views past 2^32 elements (64-bit offsets)", "[.huge]") {
  const Shape tall{140001, 37, 32771, 140001 + 5}, wide{37, 140001, 140001 + 3, 32771};
  const std::size_t big = static_cast<std::size_t>(tall.rows) * static_cast<std::size_t>(tall.ld_in) * sizeof(float);
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < big + (std::size_t{1} << 30)) {
    std::cout << "SKIPPED: a view of 140001 rows, 32771 elements apart, needs " << ((big >> 20) + 1024)
              << " MiB of free GPU memory; this GPU has " << (free_bytes >> 20)
              << " MiB free: 64-bit offsets are not checked here.\n";
    std::exit(77);
  }
  steps::grade::shapes<Shape>({tall, wide}, name_of, run_shape, transpose_hint, 120);
}

TEST_CASE("transpose speed", "[.speed]") {
  const int side = 8192;
  REQUIRE(run_shape(tight(side, side), 99).empty());
  const std::size_t n = static_cast<std::size_t>(side) * side;
  steps::DeviceBuffer<float> in(n), out(n);
  steps::fill_uniform_device(in.data(), n, 5);
  steps::TimingOptions opts;
  opts.iters = 50;
  const auto ms = steps::time_gpu(
      [&](cudaStream_t s) { ex05::transpose(side, side, in.data(), side, out.data(), side, s); }, opts);
  steps::grade::report_speed("transpose of 8192 x 8192 floats", ms, 8.0 * static_cast<double>(n));
}
