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
//
// A, x and y live in guarded arrays: a write outside y is caught, and the
// guard zones after A and x hold NaN, so a read past the end of an input
// turns the result into NaN (0 * NaN is NaN) instead of adding nothing.
// Your function gets a non-blocking stream with work still pending ahead of
// it (the grader's, which finishes writing A and x and poisons y): work that
// is not in that stream gives a wrong result.
#include "gemv.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"
#include "steps/report.hpp"
#include "steps/timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

// Rows of A made on the host: A's rows repeat with this period. Every shape
// but the [.huge] one has at most this many rows, so its A is random
// throughout; the huge one (2^32 elements) repeats its first 65537 rows, so
// that the host makes and checks 67 million values, not 4 billion.
constexpr int kDistinctRows = 65537;

std::string at(int row, int col) { return "(" + std::to_string(row) + ", " + std::to_string(col) + ")"; }
std::string at_text(std::size_t row, std::size_t col) {
  return "(" + std::to_string(row) + ", " + std::to_string(col) + ")";
}

// The bits of the NaN the grader fills y with before your kernel runs
// (cudaMemset 0xFF); a NaN your kernel computes has other bits.
bool is_poison(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits == 0xFFFFFFFFu;
}

// The inputs of one shape: x, the distinct rows of A (row r of A is row
// r % rows() of these) and the reference y, in double.
struct Inputs {
  int n = 0;
  std::vector<float> a, x;
  std::vector<double> y;

  int rows() const { return static_cast<int>(y.size()); }
  float a_at(int row, int col) const { return a[static_cast<std::size_t>(row % rows()) * n + col]; }
  double want(int row) const { return y[static_cast<std::size_t>(row % rows())]; }
};

// Turns a wrong y into a message that says what went wrong and where to look.
std::string explain(const steps::Comparison& c, float got, const Shape& s, const Inputs& in) {
  if (c.out_of_bounds)
    return c.describe() +
           "\n  Hint: a thread wrote outside y. Only rows below m may be written: check the bounds of the "
           "final write (row0 + lane < m).";
  const int i = static_cast<int>(c.first_bad);
  const std::string yi = "y[" + std::to_string(i) + "]";
  std::string hint;
  if (std::isnan(got) && is_poison(got)) {
    hint = yi + " was never written (it still holds the NaN the grader put there). Does the grid cover all m rows "
                "(ceil_div(m, TILE) blocks, not m / TILE)? Is the kernel launched in `stream`? The grader's stream "
                "has work pending ahead of your call (it finishes writing A and x, then puts that NaN into y): a "
                "kernel in the default stream 0 runs before it, and its y is overwritten.";
  } else if (std::isnan(got)) {
    hint = yi + " is a NaN your kernel computed: it read a NaN, and the grader keeps NaN right after the end of x "
                "and of A. A read past the end of an input (a column >= n, a row >= m) poisons the sum, even where "
                "the tile holds a 0 (0 * NaN is NaN): check every index against its bound before the load.";
  } else {
    // The sum without the last, partial tile of columns?
    const int full = s.n / TILE * TILE;
    double head = 0;
    for (int j = 0; j < full; ++j) head += static_cast<double>(in.a_at(i, j)) * in.x[j];
    if (full < s.n && static_cast<double>(got) == head)
      hint = yi + " is the sum of the first " + std::to_string(full) +
             " columns only: the last, partial tile of columns (n % 32 of them) was skipped.";
    else
      hint = yi + " is wrong. If the layout tests pass, look for a tile element read before it was stored (a "
                  "missing __syncthreads) or a tile or column index that is off by one.";
  }
  return c.describe() + "\n  Hint: " + hint;
}

// Runs gemv on one shape and checks everything. Returns "" when correct.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  const std::size_t mn = static_cast<std::size_t>(s.m) * s.n;
  // Device memory first (guarded: writes outside an array are caught, reads
  // past the end of A or x read NaN).
  steps::GuardedBuffer<float> da(mn), dx(s.n), dy(s.m);

  Inputs in;
  in.n = s.n;
  const int p = std::min(s.m, kDistinctRows);
  const std::size_t pn = static_cast<std::size_t>(p) * s.n;
  in.a.resize(pn);
  in.x.resize(s.n);
  for (std::size_t i = 0; i < pn; ++i) in.a[i] = dyadic(seed, i);
  for (int j = 0; j < s.n; ++j) in.x[j] = dyadic(seed + 1, j);
  in.y.assign(static_cast<std::size_t>(p), 0.0);
  for (int r = 0; r < p; ++r)
    for (int j = 0; j < s.n; ++j) in.y[r] += static_cast<double>(in.a[static_cast<std::size_t>(r) * s.n + j]) * in.x[j];

  // A: its first p rows from the host, then copies of them down to row m.
  if (pn > 0) {
    CUDA_CHECK(cudaMemcpy(da.data(), in.a.data(), pn * sizeof(float), cudaMemcpyHostToDevice));
    for (std::size_t done = pn; done < mn; done += pn)
      CUDA_CHECK(cudaMemcpy(da.data() + done, da.data(), std::min(pn, mn - done) * sizeof(float),
                            cudaMemcpyDeviceToDevice));
  }
  if (s.n > 0) dx.upload(in.x.data());
  CUDA_CHECK(cudaDeviceSynchronize());

  // A and x are scrambled, and y not yet poisoned (NaN: an element no thread
  // writes stays NaN), until the work pending in the stream has run.
  steps::grade::BusyStream stream;
  stream.restores(da.data(), mn * sizeof(float));
  stream.restores(dx.data(), static_cast<std::size_t>(s.n) * sizeof(float));
  stream.fills(dy.data(), static_cast<std::size_t>(s.m) * sizeof(float), 0xFF);
  stream.start();
  ex04::gemv(da.data(), dx.data(), dy.data(), s.m, s.n, stream);
  stream.finish();

  const std::vector<float> got = dy.download();
  steps::Comparison c = dy.check_guards();
  if (c.ok)
    c = steps::compare_each(
        got.size(), [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return in.want(static_cast<int>(i)); },
        [](std::size_t, double) { return 0.0; }, 0.0);
  if (!c.ok) return "y is wrong: " + explain(c, c.out_of_bounds ? 0.0f : got[c.first_bad], s, in);

  if (const auto g = da.check_guards(); !g.ok) return "A's guard zone changed: " + g.describe();
  if (const auto g = dx.check_guards(); !g.ok) return "x's guard zone changed: " + g.describe();
  if (const auto k = steps::compare(dx.download(), in.x, steps::Tolerance::exact()); !k.ok)
    return "x changed, but it is an input: " + k.describe();
  // A: its first p rows against the host, the copies of them on the GPU
  // against the first p rows (the huge shape's A does not fit in host memory).
  if (pn > 0) {
    std::vector<float> first(pn);
    CUDA_CHECK(cudaMemcpy(first.data(), da.data(), pn * sizeof(float), cudaMemcpyDeviceToHost));
    if (std::memcmp(first.data(), in.a.data(), pn * sizeof(float)) != 0) {
      steps::Comparison k = steps::compare(first.data(), in.a.data(), pn, steps::Tolerance::exact());
      k.count = mn;
      return "A changed, but it is an input: " + k.describe(static_cast<std::size_t>(s.n));
    }
  }
  for (std::size_t done = pn; done < mn; done += pn) {
    const std::size_t count = std::min(pn, mn - done);
    const std::size_t at = steps::grade::find_difference(da.data() + done, da.data(), count);
    if (at == count) continue;
    float now = 0;
    CUDA_CHECK(cudaMemcpy(&now, da.data() + done + at, sizeof now, cudaMemcpyDeviceToHost));
    const std::size_t e = done + at;
    return "A changed, but it is an input: A" + at_text(e / static_cast<std::size_t>(s.n), e % static_cast<std::size_t>(s.n)) +
           " is now " + steps::format_value(now) + ", was " + steps::format_value(in.a[at]) + ".";
  }
  return "";
}

// Exercise-specific words for a CUDA error (the harness adds the general ones).
std::string gemv_hint(const steps::Error& e) {
  if (e.code_name() == "cudaErrorIllegalAddress" || e.code_name() == "cudaErrorLaunchFailure")
    return "is every tile_offset inside tile_words() (an index past the tile array reaches the next shared "
           "array)? Are rows >= m and columns >= n left alone? Is the offset of A's element, row * n + col, "
           "computed in 64 bits (std::size_t): past 2^31 elements an int wraps around?";
  if (e.code_name() == "cudaErrorInvalidConfiguration" || e.code_name() == "cudaErrorInvalidValue")
    return "a launch with 0 blocks (m = 0 needs no launch at all), more than 1024 threads per block or more "
           "than 48 KiB of static shared memory is invalid.";
  return "";
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape, gemv_hint); }

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
  SUCCEED("all " << TILE * TILE << " elements in their own word, inside " << words << " words");
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
  for (int row = 0; row < TILE; ++row) {
    if (const std::string c = conflicts_of(true, row); !c.empty()) FAIL(c);
    SUCCEED("row " << row << ": 32 banks");
  }
}

TEST_CASE("your tile layout reads each column without bank conflicts", "[layout]") {
  for (int col = 0; col < TILE; ++col) {
    if (const std::string c = conflicts_of(false, col); !c.empty()) FAIL(c);
    SUCCEED("column " << col << ": 32 banks");
  }
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

// Past 2^31 elements of A, the offset row * n + col overflows an int, and
// past 2^32 an unsigned int. A of (2^22 + 1) x 1025 is 2^32 + 2^22 + 1025
// elements (17.2 GB), so this case is hidden ([.huge]): ./tutorial grade runs
// it after the others pass, alone, and where the GPU lacks the memory it
// says so and is not checked. The last 4093 rows start past 2^32 elements,
// the second half of them past 2^31; n = 1025 keeps every sum below 2^16 (exact).
TEST_CASE("gemv past 2^32 elements of A (64-bit offsets)", "[.huge]") {
  const Shape huge{(1 << 22) + 1, 1025};
  const std::size_t bytes = static_cast<std::size_t>(huge.m) * huge.n * sizeof(float);
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < bytes + (std::size_t{1} << 30)) {
    std::cout << "SKIPPED: A of " << huge.m << " x " << huge.n << " (past 2^32 elements) needs "
              << (bytes >> 20) + 1024 << " MiB of free GPU memory; this GPU has " << (free_bytes >> 20)
              << " MiB free: 64-bit offsets are not checked here.\n";
    std::exit(77);
  }
  steps::grade::shapes<Shape>({huge}, name_of, run_shape, gemv_hint, 120); // seconds of CPU reference
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
  steps::grade::report_speed("gemv on 65536 x 1024", ms, 4.0 * m * n); // GB/s of A read
}

// One launch on a 2048 x 2048 matrix, for Nsight Compute (the profile tests
// in CMakeLists.txt count its bank conflicts).
TEST_CASE("gemv once, for the profiler", "[.profile]") { REQUIRE(run_shape({2048, 2048}, 7).empty()); }
