// Grader for exercise 04 (a conflict-free tile for gemv). Built twice:
// against your exercises/ code (./tutorial grade 04) and against the
// solution (part of ./tutorial test).
//
// Two kinds of checks:
//  - your layout, on the CPU: tile_offset() must give every element of the
//    32 x 32 tile its own word inside the array, and put the 32 elements of
//    each row, and of each column, in 32 different banks;
//  - your kernel, on the GPU: y = A x on many shapes, compared EXACTLY with
//    the CPU. The entries of A and x are multiples of 1/16 between -1 and 1,
//    so every product is a multiple of 1/256 and every partial sum a
//    multiple of 1/256 below 2^16 in size: float adds them without rounding,
//    in any order. Changing the layout must not change a single bit of y.
#include "gemv.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"
#include "steps/report.hpp"
#include "steps/timing.hpp"

#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kBanks = 32;
constexpr int TILE = ex04::TILE;

struct Shape {
  int m; // rows of A, elements of y
  int n; // columns of A, elements of x
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "m = " << s.m << " rows, n = " << s.n << " columns";
  return os.str();
}

// A multiple of 1/16 in [-1, 1], never 0.
float dyadic(std::uint64_t seed, std::size_t i) {
  float k = std::floor(steps::uniform_at(seed, i, -16.0f, 16.0f)); // -16 .. 15
  if (k >= 0) k += 1;
  return k / 16.0f;
}

std::string at(int row, int col) { return "(" + std::to_string(row) + ", " + std::to_string(col) + ")"; }

// Turns a wrong y into a message that says what went wrong and where to look.
std::string explain(const steps::Comparison& c, const Shape& s, const std::vector<float>& a,
                    const std::vector<float>& x) {
  if (c.out_of_bounds)
    return c.describe() +
           "\n  Hint: a thread wrote outside y. Only rows below m may be written: check the bounds of the "
           "final write (row0 + lane < m).";
  const std::size_t i = c.first_bad;
  std::string hint;
  if (std::isnan(c.got_at_first_bad)) {
    hint = "y[" + std::to_string(i) + "] was never written (it still holds the NaN the grader put there). Does "
           "the grid cover all m rows (ceil_div(m, TILE) blocks, not m / TILE)?";
  } else {
    // The sum without the last, partial tile of columns?
    const int full = s.n / TILE * TILE;
    double head = 0;
    for (int j = 0; j < full; ++j) head += static_cast<double>(a[i * s.n + j]) * x[j];
    if (full < s.n && c.got_at_first_bad == head)
      hint = "y[" + std::to_string(i) + "] is the sum of the first " + std::to_string(full) +
             " columns only: the last, partial tile of columns (n % 32 of them) was skipped.";
    else
      hint = "y[" + std::to_string(i) + "] is wrong. If the layout tests pass, look for a tile element read "
             "before it was stored (a missing __syncthreads) or a tile or column index that is off by one.";
  }
  return c.describe() + "\n  Hint: " + hint;
}

// Runs gemv on one shape and checks everything. Returns "" when correct.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  const std::size_t mn = static_cast<std::size_t>(s.m) * s.n;
  // Device memory first (guarded: writes outside an array are caught).
  steps::GuardedBuffer<float> da(mn), dx(s.n), dy(s.m);
  std::vector<float> a(mn), x(s.n);
  for (std::size_t i = 0; i < mn; ++i) a[i] = dyadic(seed, i);
  for (int j = 0; j < s.n; ++j) x[j] = dyadic(seed + 1, j);
  if (mn > 0) da.upload(a.data());
  if (s.n > 0) dx.upload(x.data());
  dy.poison(); // NaN: an element no thread writes stays NaN

  steps::Stream stream;
  ex04::gemv(da.data(), dx.data(), dy.data(), s.m, s.n, stream);
  stream.synchronize();

  std::vector<double> want(s.m, 0.0);
  for (int i = 0; i < s.m; ++i)
    for (int j = 0; j < s.n; ++j) want[i] += static_cast<double>(a[static_cast<std::size_t>(i) * s.n + j]) * x[j];
  auto c = dy.check_guards();
  if (c.ok) {
    const auto got = dy.download();
    c = steps::compare(got.data(), want.data(), got.size(), steps::Tolerance::exact());
  }
  if (!c.ok) return "y is wrong: " + explain(c, s, a, x);

  if (const auto g = da.check_guards(); !g.ok) return "A's guard zone changed: " + g.describe();
  if (const auto g = dx.check_guards(); !g.ok) return "x's guard zone changed: " + g.describe();
  if (const auto k = steps::compare(da.download(), a, steps::Tolerance::exact()); !k.ok)
    return "A changed, but it is an input: " + k.describe(static_cast<std::size_t>(s.n));
  if (const auto k = steps::compare(dx.download(), x, steps::Tolerance::exact()); !k.ok)
    return "x changed, but it is an input: " + k.describe();
  return "";
}

void grade(const std::vector<Shape>& shapes) {
  std::uint64_t seed = 1;
  for (const auto& s : shapes) {
    INFO("gemv(" << name_of(s) << ")");
    std::string problem;
    try {
      problem = run_shape(s, seed += 10);
    } catch (const steps::Error& e) {
      problem = std::string("a CUDA error: ") + e.what();
      if (e.code_name() == "cudaErrorIllegalAddress" || e.code_name() == "cudaErrorLaunchFailure")
        problem += "\n  Hint: an access outside an array, global or shared: is every tile_offset inside "
                   "tile_words()? Are rows >= m and columns >= n left alone?";
      if (e.code_name() == "cudaErrorInvalidConfiguration" || e.code_name() == "cudaErrorInvalidValue")
        problem += "\n  Hint: a launch with 0 blocks, more than 1024 threads per block or more than 48 KiB of "
                   "static shared memory is invalid.";
    }
    if (!problem.empty()) FAIL(problem);
  }
}

} // namespace

// ---------------------------------------------------------------------------
// The layout, checked on the CPU.

TEST_CASE("your tile layout gives every element its own word inside the array", "[layout]") {
  const int words = ex04::tile_words();
  INFO("tile_words() = " << words);
  REQUIRE(words >= TILE * TILE);
  std::vector<int> owner(static_cast<std::size_t>(words), -1); // owner[word] = row * TILE + col
  for (int row = 0; row < TILE; ++row) {
    for (int col = 0; col < TILE; ++col) {
      const int w = ex04::tile_offset(row, col);
      if (w < 0 || w >= words)
        FAIL("tile_offset" << at(row, col) << " = " << w << " is outside your tile array of " << words
                           << " words.\n  Hint: make kTileWords one more than the largest offset your layout uses.");
      if (owner[w] >= 0)
        FAIL("tile_offset" << at(owner[w] / TILE, owner[w] % TILE) << " and tile_offset" << at(row, col)
                           << " are both word " << w << ": the second store overwrites the first.\n"
                           << "  Hint: a layout must be one-to-one. Within a row, a swizzle may only permute the "
                              "columns of that row (col ^ something below 32 does; col + something does not).");
      owner[w] = row * TILE + col;
    }
  }
}

// For `line` = a row (or a column) of the tile, the banks its 32 elements
// land in; returns "" or what conflicts.
std::string conflicts_of(bool is_row, int line) {
  std::vector<std::vector<int>> by_bank(kBanks);
  for (int k = 0; k < TILE; ++k) {
    const int row = is_row ? line : k, col = is_row ? k : line;
    const int w = ex04::tile_offset(row, col);
    by_bank[static_cast<std::size_t>(((w % kBanks) + kBanks) % kBanks)].push_back(k);
  }
  std::size_t worst = 0;
  for (std::size_t b = 0; b < by_bank.size(); ++b)
    if (by_bank[b].size() > by_bank[worst].size()) worst = b;
  if (by_bank[worst].size() <= 1) return "";
  const auto& k = by_bank[worst];
  std::ostringstream os;
  const char* what = is_row ? "row" : "column";
  os << what << " " << line << " of the tile: elements " << (is_row ? at(line, k[0]) : at(k[0], line)) << " and "
     << (is_row ? at(line, k[1]) : at(k[1], line)) << (k.size() > 2 ? " (and more)" : "") << " are all in bank "
     << worst << ": " << k.size() << " elements in one bank, a " << k.size() << "-way conflict.\n  A warp that "
     << (is_row ? "stores this row" : "reads this column") << " needs " << k.size()
     << " shared-memory passes instead of 1.\n  Hint: the bank of word w is w % 32. Which bank does element "
        "(row, col) land in with your layout?";
  return os.str();
}

TEST_CASE("your tile layout stores each row without bank conflicts", "[layout]") {
  for (int row = 0; row < TILE; ++row)
    if (const std::string c = conflicts_of(true, row); !c.empty()) FAIL(c);
}

TEST_CASE("your tile layout reads each column without bank conflicts", "[layout]") {
  for (int col = 0; col < TILE; ++col)
    if (const std::string c = conflicts_of(false, col); !c.empty()) FAIL(c);
}

// ---------------------------------------------------------------------------
// The kernel, checked on the GPU.

TEST_CASE("gemv on tiny and edge shapes", "[gemv]") {
  grade({{0, 5}, {1, 1}, {1, 0}, {3, 0}, {1, 31}, {1, 32}, {1, 33}, {31, 1}, {32, 1}, {33, 1}, {2, 2}});
}

TEST_CASE("gemv on whole tiles", "[gemv]") { grade({{32, 32}, {64, 32}, {32, 96}, {256, 256}}); }

TEST_CASE("gemv on shapes that are not multiples of the tile, in each dimension", "[gemv]") {
  grade({{31, 31}, {33, 33}, {17, 100}, {100, 17}, {97, 61}, {61, 97}, {32, 33}, {33, 32}, {257, 1000},
         {1000, 257}, {1, 4099}, {4099, 1}, {63, 65}});
}

TEST_CASE("gemv on large shapes (many blocks, many tiles per row)", "[gemv][large]") {
  grade({{4099, 4099}, {65537, 31}, {3, 65521}, {10007, 2053}});
}

TEST_CASE("gemv speed", "[.speed]") {
  // 2048 blocks of 32 rows, 32 tiles each: enough blocks to fill the GPU, so
  // that the kernel is limited by memory (or by bank conflicts), not latency.
  const int m = 65536, n = 1024;
  REQUIRE(run_shape({m, n}, 99).empty());
  steps::DeviceBuffer<float> a(static_cast<std::size_t>(m) * n), x(n), y(m);
  steps::fill_uniform_device(a.data(), a.size(), 5);
  steps::fill_uniform_device(x.data(), x.size(), 6);
  steps::TimingOptions opts;
  opts.iters = 50;
  const auto ms = steps::time_gpu([&](cudaStream_t s) { ex04::gemv(a.data(), x.data(), y.data(), m, n, s); }, opts);
  std::cout << "speed: gemv on " << m << " x " << n << ": median " << steps::fixed(ms.median, 4) << " ms, "
            << steps::fixed(steps::gbps(4.0 * m * n, ms.median), 0) << " GB/s of A read\n";
}

// One launch on a 2048 x 2048 matrix, for Nsight Compute (the profile tests
// in CMakeLists.txt count its bank conflicts).
TEST_CASE("gemv once, for the profiler", "[.profile]") { REQUIRE(run_shape({2048, 2048}, 7).empty()); }
