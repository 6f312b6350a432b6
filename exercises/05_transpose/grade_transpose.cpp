// Grader for exercise 05 (transpose of matrix views). Built twice: against
// your exercises/ code (./tutorial grade 05) and against the solution (part
// of ./tutorial test).
//
// Every shape runs on fresh random data in guarded device arrays (writes
// past either end are caught). out starts as random values too, so an
// element your code never writes keeps its old value and the grader can
// tell; the elements between the end of a view's row and the start of the
// next (ld_out - rows of them) must keep theirs.
//
// A race (a missing __syncthreads) shows only when some warp of a block
// runs ahead of another, which is a matter of chance in any one block. With
// thousands of blocks, each waiting hundreds of cycles for memory, it happens
// somewhere in every run: that is why the shapes below include several with
// 3,000 to 65,000 tiles, not only the small tricky ones.
#include "transpose.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"
#include "steps/report.hpp"
#include "steps/timing.hpp"

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
  os << "rows = " << s.rows << ", cols = " << s.cols << ", ld_in = " << s.ld_in << ", ld_out = " << s.ld_out;
  return os.str();
}

bool same(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string at(long long r, long long c) { return "(" + std::to_string(r) + ", " + std::to_string(c) + ")"; }

// out(c, r) is wrong: says what it holds instead, and what usually causes that.
std::string explain(const Shape& s, long long c, long long r, const std::vector<float>& in,
                    const std::vector<float>& got, const std::vector<float>& out_before) {
  const float g = got[static_cast<std::size_t>(c) * s.ld_out + r];
  auto in_is = [&](long long r2, long long c2) {
    return r2 >= 0 && r2 < s.rows && c2 >= 0 && c2 < s.cols && same(in[static_cast<std::size_t>(r2) * s.ld_in + c2], g);
  };
  std::ostringstream os;
  os << "\n  out" << at(c, r) << " should be in" << at(r, c);
  if (same(g, out_before[static_cast<std::size_t>(c) * s.ld_out + r])) {
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
              "elements. If not, check the tile indices: store tile[row][column], read tile[column][row].";
        return os.str();
      }
  os << ", but it holds " << steps::format_value(g) << ", which is nowhere in in.\n  Hint: it was read from a "
        "tile element no thread of this block stored: a missing __syncthreads(), or load and store guards that "
        "disagree, or a read outside in (check the pitch: in(r, c) is in[r * ld_in + c]).";
  return os.str();
}

// Runs transpose on one shape and checks everything. Returns "" when correct.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  const std::size_t in_count = static_cast<std::size_t>(s.rows) * s.ld_in;
  const std::size_t out_count = static_cast<std::size_t>(s.cols) * s.ld_out;
  const auto in = steps::random_vector(in_count, seed, -1.0f, 1.0f);
  const auto out_before = steps::random_vector(out_count, seed + 1, -1.0f, 1.0f);

  steps::GuardedBuffer<float> din(in_count), dout(out_count);
  if (in_count) din.upload(in.data());
  if (out_count) dout.upload(out_before.data());
  steps::Stream stream;
  ex05::transpose(s.rows, s.cols, din.data(), s.ld_in, dout.data(), s.ld_out, stream);
  stream.synchronize();

  if (const auto g = dout.check_guards(); !g.ok)
    return "out: " + g.describe() + "\n  Hint: a tile that overhangs the matrix must not write its "
                                    "overhanging part: guard the write (output row < cols, output column < rows).";
  const auto got = dout.download();

  // The view, gathered into a tight cols x rows matrix, against its reference.
  const std::size_t n = static_cast<std::size_t>(s.rows) * s.cols;
  std::vector<float> view(n), want(n);
  for (std::size_t c = 0; c < static_cast<std::size_t>(s.cols); ++c)
    for (std::size_t r = 0; r < static_cast<std::size_t>(s.rows); ++r) {
      view[c * s.rows + r] = got[c * s.ld_out + r];
      want[c * s.rows + r] = in[r * s.ld_in + c];
    }
  if (n) {
    const auto cmp = steps::compare(view, want, steps::Tolerance::exact());
    if (!cmp.ok) {
      const auto c = static_cast<long long>(cmp.first_bad / s.rows), r = static_cast<long long>(cmp.first_bad % s.rows);
      return "out is wrong: " + cmp.describe(static_cast<std::size_t>(s.rows)) + explain(s, c, r, in, got, out_before);
    }
  }

  // The elements past the end of each out row are not part of the view.
  for (std::size_t c = 0; c < static_cast<std::size_t>(s.cols); ++c)
    for (std::size_t r = s.rows; r < static_cast<std::size_t>(s.ld_out); ++r)
      if (!same(got[c * s.ld_out + r], out_before[c * s.ld_out + r]))
        return "out" + at(c, r) + " is past the end of out's row " + std::to_string(c) + " (columns 0 .. " +
               std::to_string(s.rows - 1) + " are the view; ld_out = " + std::to_string(s.ld_out) +
               "), but it was overwritten.\n  Hint: guard the write: output column < rows (not < ld_out), "
               "output row < cols.";

  if (const auto g = din.check_guards(); !g.ok) return "in's guard zone changed: " + g.describe();
  if (in_count)
    if (const auto ic = steps::compare(din.download(), in, steps::Tolerance::exact()); !ic.ok)
      return "in changed, but it is an input: " + ic.describe(static_cast<std::size_t>(s.ld_in));
  return "";
}

void grade(const std::vector<Shape>& shapes) {
  std::uint64_t seed = 1;
  for (const auto& s : shapes) {
    INFO("transpose(" << name_of(s) << ")");
    std::string problem;
    try {
      problem = run_shape(s, seed += 10);
    } catch (const steps::Error& e) {
      problem = std::string("a CUDA error: ") + e.what();
      if (e.code_name() == "cudaErrorIllegalAddress")
        problem += "\n  Hint: an access outside any allocation: a missing edge guard, or an index that uses "
                   "cols where it needs ld_in (or rows where it needs ld_out)?";
      if (e.code_name() == "cudaErrorInvalidConfiguration" || e.code_name() == "cudaErrorInvalidValue")
        problem += "\n  Hint: a launch with 0 blocks (rows or cols = 0?), more than 1024 threads per block, "
                   "or more than 65535 blocks in y is invalid.";
    }
    if (!problem.empty()) FAIL(problem);
  }
}

// Shapes drawn from a fixed seed: the same every run, none of them friendly.
std::vector<Shape> drawn_shapes(int count, int max_side, std::uint64_t seed) {
  std::vector<Shape> out;
  for (int i = 0; i < count; ++i) {
    auto draw = [&](int k, int lo, int hi) {
      return lo + static_cast<int>(steps::splitmix64(seed * 1000 + i * 10 + k) % static_cast<std::uint64_t>(hi - lo + 1));
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
  std::cout << "speed: transpose of " << side << " x " << side << " floats: median " << steps::fixed(ms.median, 4)
            << " ms, " << steps::fixed(steps::gbps(8.0 * n, ms.median), 0) << " GB/s\n";
}
