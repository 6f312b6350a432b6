// Grader for exercise 03 (sgemm_nt: C = A * B^T). Built twice: against your
// exercises/ code (./tutorial grade 03) and against the solution (part of
// ./tutorial test).
//
// Every matrix lives inside a bigger "canvas": the matrix is the canvas's
// top-left corner, its rows ld floats apart, and two more rows follow it.
// Everything of A's and B's canvases that is not part of the matrix (the
// padding between a row's end and the next row's start, the rows after the
// last one) holds NaN, so a value read from there turns the result into NaN,
// even when your code multiplies it by 0. C's canvas holds random numbers
// inside the matrix, so an element your code never writes keeps its old
// value, and NaN outside it, where any write is seen. Guard zones around each
// canvas catch anything further out. Results are compared with an FP64 CPU
// product, within the FP32 dot-product tolerance that chapter 03 uses too
// (steps/sgemm_tolerance.hpp). Your function gets a non-blocking stream with
// work still pending ahead of it (the grader's, which finishes writing the
// canvases): work that is not in that stream gives a wrong result.
#include "sgemm_nt.hpp"

#include "steps/catch.hpp"
#include "steps/compare.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/sgemm_tolerance.hpp"
#include "steps/timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr float kLo = steps::kGemmInputLo, kHi = steps::kGemmInputHi;

steps::Tolerance tolerance(int k) { return steps::fp32_dot_tolerance(k); }

struct Shape {
  int m, n, k;
  int pad_a = 0, pad_b = 0, pad_c = 0; // lda = k + pad_a, ldb = k + pad_b, ldc = n + pad_c
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "sgemm_nt(m = " << s.m << ", n = " << s.n << ", k = " << s.k << ", lda = " << s.k + s.pad_a
     << ", ldb = " << s.k + s.pad_b << ", ldc = " << s.n + s.pad_c << ")";
  return os.str();
}

/// The NaN that fills everything outside the matrices (the guard zones' value).
float outside() { return steps::GuardedBuffer<float>::guard_value(); }

/// Canvas rows after each matrix. Under compute-sanitizer (STEPS_SANITIZE)
/// none: the allocation then ends with the matrix, so that memcheck sees a
/// read past the last row even when it changes no result.
int extra_rows() { return std::getenv("STEPS_SANITIZE") ? 0 : 2; }

/// A rows x cols matrix, rows `ld` apart, at the top-left of a canvas of
/// rows + extra_rows() rows, uploaded into a guarded device array. Inside the
/// matrix: random numbers; outside it: NaN.
struct Canvas {
  int rows, cols, ld;
  std::vector<float> host; // the canvas as uploaded
  steps::GuardedBuffer<float> dev;
  Canvas(int rows_, int cols_, int pad, std::uint64_t seed)
      : rows(rows_), cols(cols_), ld(std::max(1, cols_ + pad)),
        host(steps::random_vector(static_cast<std::size_t>(rows + extra_rows()) * ld, seed, kLo, kHi)),
        dev(host.size()) {
    for (std::size_t e = 0; e < host.size(); ++e)
      if (static_cast<int>(e / ld) >= rows || static_cast<int>(e % ld) >= cols) host[e] = outside();
    dev.upload(host.data());
  }
  float at(int r, int c) const { return host[static_cast<std::size_t>(r) * ld + c]; }
};

/// Runs body(r) for r in [0, rows) on all CPU cores.
void parallel_rows(int rows, const std::function<void(int)>& body) {
  const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 32u));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = t; r < rows; r += threads) body(r);
    });
  for (auto& th : pool) th.join();
}

/// sum over i in [begin, end) of A(r, i) * B(j, i), in FP64, with the given
/// row strides (normally lda and ldb; other strides test a wrong-ld guess).
double dot(const Canvas& a, const Canvas& b, int r, int j, int begin, int end, int a_stride, int b_stride) {
  double sum = 0;
  for (int i = begin; i < end; ++i)
    sum += static_cast<double>(a.host[static_cast<std::size_t>(r) * a_stride + i]) *
           b.host[static_cast<std::size_t>(j) * b_stride + i];
  return sum;
}

std::vector<double> reference(const Shape& s, const Canvas& a, const Canvas& b) {
  std::vector<double> want(static_cast<std::size_t>(s.m) * s.n);
  parallel_rows(s.m, [&](int r) {
    for (int j = 0; j < s.n; ++j) want[static_cast<std::size_t>(r) * s.n + j] = dot(a, b, r, j, 0, s.k, a.ld, b.ld);
  });
  return want;
}

bool same_bits(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// A NaN result: which value outside A and B was read?
std::string diagnose_nan(const Shape& s, const Canvas& a, const Canvas& b, const std::string& at, int r, int j) {
  if (a.ld != s.k && std::isnan(dot(a, b, r, j, 0, s.k, s.k, b.ld)))
    return at + " is NaN: it read A's padding. A's rows are lda = " + std::to_string(a.ld) + " floats apart, not k = " +
           std::to_string(s.k) + ": row r of A starts at a + r * lda.";
  if (b.ld != s.k && std::isnan(dot(a, b, r, j, 0, s.k, a.ld, s.k)))
    return at + " is NaN: it read B's padding. B's rows are ldb = " + std::to_string(b.ld) + " floats apart, not k = " +
           std::to_string(s.k) + ": row j of B starts at b + j * ldb.";
  return at + " is NaN: a value read from outside A or B (they are surrounded by NaN here), or from shared memory "
              "that was never written. In the last tile of k, the columns i >= k must not be loaded from A or B, "
              "both of them, even where the other factor is 0 (0 * NaN is NaN, and in real code the padding "
              "may be anything); rows >= m of A and >= n of B neither. Store 0.0f in the tile instead.";
}

// What is probably wrong, given the first wrong element C(r, j).
std::string diagnose(const Shape& s, const Canvas& a, const Canvas& b, const Canvas& c, int r, int j, double got) {
  const std::string at = "C(" + std::to_string(r) + ", " + std::to_string(j) + ")";
  if (same_bits(static_cast<float>(got), c.at(r, j)))
    return at + " still holds the value it had before your kernel ran: no thread wrote it. Does your grid "
                "cover all m rows and n columns (round up: ceil_div)? Does a thread skip its store?";
  if (!std::isfinite(got)) return diagnose_nan(s, a, b, at, r, j);
  const double tol = tolerance(s.k).abs;
  auto near = [&](double v) { return std::fabs(got - v) <= tol; };
  const double want = dot(a, b, r, j, 0, s.k, a.ld, b.ld);
  if (got == 0.0 && !near(want))
    return at + " is 0: no term was added. Does your loop over the tiles of k run at all (k = " +
           std::to_string(s.k) + ": ceil_div(k, TILE) tiles)?";
  for (int t : {8, 16, 32, 64, 128}) {
    if (s.k % t != 0 && s.k > t && near(dot(a, b, r, j, 0, s.k - s.k % t, a.ld, b.ld)))
      return at + " misses the last k % " + std::to_string(t) + " = " + std::to_string(s.k % t) +
             " terms of its dot product: the K tail. Loop over ceil_div(k, TILE) tiles, and zero-fill the "
             "columns of the last tile that lie past k.";
    if (s.k > t && near(dot(a, b, r, j, t, s.k, a.ld, b.ld)))
      return at + " misses the first " + std::to_string(t) +
             " terms of its dot product: the first tile is skipped. Does your tile index start at 0? "
             "(Tile t covers columns t * TILE .. t * TILE + TILE - 1 of A and B.)";
  }
  return at + " has a wrong value. It must be the sum over i < k of A(r, i) * B(j, i): check which row of A "
              "and which row of B (not column: B is n x k) the thread multiplies, which elements each thread "
              "copies into the tiles, and that every i is added exactly once.";
}

// Runs sgemm_nt again on the same inputs (on a fresh canvas) and tells
// whether C differs from `before`: a wrong result that changes from run to
// run points at a race, not at the index arithmetic.
bool changes_when_rerun(const Shape& s, const Canvas& a, const Canvas& b, Canvas& c,
                        const std::vector<float>& before) {
  for (int again = 0; again < 3; ++again) {
    c.dev.upload(c.host.data());
    steps::Stream stream;
    ex03::sgemm_nt(s.m, s.n, s.k, a.dev.data(), a.ld, b.dev.data(), b.ld, c.dev.data(), c.ld, stream);
    stream.synchronize();
    const std::vector<float> after = c.dev.download();
    if (std::memcmp(after.data(), before.data(), after.size() * sizeof(float)) != 0) return true;
  }
  return false;
}

// Runs sgemm_nt `runs` times on one shape and checks everything after each
// run. Returns "" when every run is correct.
std::string run_shape(const Shape& s, std::uint64_t seed, int runs = 1) {
  Canvas a(s.m, s.k, s.pad_a, seed), b(s.n, s.k, s.pad_b, seed + 1), c(s.m, s.n, s.pad_c, seed + 2);
  const std::vector<double> want = reference(s, a, b);
  for (int run = 0; run < runs; ++run) {
    if (run > 0) c.dev.upload(c.host.data()); // fresh canvas for every run
    // The three canvases are scrambled until the work pending in the stream
    // has restored them.
    steps::grade::BusyStream stream;
    for (const Canvas* m : {&a, &b, &c})
      stream.restores(const_cast<float*>(m->dev.data()), m->dev.size() * sizeof(float));
    stream.start();
    ex03::sgemm_nt(s.m, s.n, s.k, a.dev.data(), a.ld, b.dev.data(), b.ld, c.dev.data(), c.ld, stream);
    stream.finish();
    const std::string when = runs > 1 ? " (run " + std::to_string(run + 1) + " of " + std::to_string(runs) + ")" : "";

    for (const auto* m : {&a, &b, &c}) {
      const steps::Comparison g = m->dev.check_guards();
      if (!g.ok)
        return std::string(m == &a ? "A" : m == &b ? "B" : "C") + when + ": " + g.describe() +
               "\n  Hint: only threads with row < m and column < n may store, at c + row * ldc + column.";
    }
    for (const auto* m : {&a, &b}) {
      const std::vector<float> now = m->dev.download();
      if (std::memcmp(now.data(), m->host.data(), now.size() * sizeof(float)) != 0)
        return std::string(m == &a ? "A" : "B") + " changed" + when + ", but it is an input: write only to C.";
    }

    const std::vector<float> all = c.dev.download();
    for (std::size_t e = 0; e < all.size(); ++e) {
      const int r = static_cast<int>(e / c.ld), j = static_cast<int>(e % c.ld);
      if ((r < s.m && j < s.n) || same_bits(all[e], c.host[e])) continue;
      return "you wrote element (" + std::to_string(r) + ", " + std::to_string(j) + ") of C's canvas" + when +
             ", which is outside the " + std::to_string(s.m) + " x " + std::to_string(s.n) + " result (" +
             (j >= s.n ? "a column >= n, in the padding between n and ldc" : "a row >= m") +
             ").\n  Hint: threads of the edge blocks that fall outside C must not store: guard the store "
             "with row < m && column < n, and address C with ldc.";
    }
    std::vector<float> got(want.size());
    for (int r = 0; r < s.m; ++r)
      for (int j = 0; j < s.n; ++j)
        got[static_cast<std::size_t>(r) * s.n + j] = all[static_cast<std::size_t>(r) * c.ld + j];
    const steps::Comparison cmp = steps::compare(got.data(), want.data(), got.size(), tolerance(s.k));
    if (!cmp.ok) {
      std::string msg = "C is wrong" + when + ": " + cmp.describe(static_cast<std::size_t>(s.n)) + "\n  Hint: ";
      if (cmp.bad_count == 0) return msg + "small errors everywhere: is every product added exactly once?";
      const int r = static_cast<int>(cmp.first_bad / s.n), j = static_cast<int>(cmp.first_bad % s.n);
      if (run > 0 || changes_when_rerun(s, a, b, c, all))
        return msg + "the same inputs give different results from run to run, so your kernel reads shared "
                     "memory that is not ready. Usually a race: every thread must wait (__syncthreads) after "
                     "writing its part of a tile before anyone reads the tile, AND after reading the tile "
                     "before anyone overwrites it with the next one. Or a tile element that no thread writes "
                     "(the parts of the edge tiles past m, n or k must be set to 0, not skipped).";
      return msg + diagnose(s, a, b, c, r, j, cmp.got_at_first_bad);
    }
  }
  return "";
}

// Exercise-specific words for a CUDA error (the harness adds the general ones).
std::string sgemm_hint(const steps::Error& e) {
  const std::string& code = e.code_name();
  if (code == "cudaErrorInvalidConfiguration" || code == "cudaErrorInvalidValue")
    return "with m or n = 0 there is nothing to do: return before launching (a grid of 0 blocks is invalid). "
           "A TILE x TILE block may have at most 1024 threads, and static shared memory at most 48 KiB.";
  if (code == "cudaErrorIllegalAddress")
    return "check the bounds of every load and of the store (row < m, column < n, i < k), and compute every "
           "offset in 64 bits (static_cast<std::size_t>(row) * lda): in int, row * lda wraps past 2^31.";
  return "";
}

void grade(const std::vector<Shape>& list, int runs = 1) {
  steps::grade::shapes(
      list, name_of, [runs](const Shape& s, std::uint64_t seed) { return run_shape(s, seed, runs); }, sgemm_hint);
}

// --- Past 2^32 elements ----------------------------------------------------
//
// A matrix of more than 2^31 floats (8 GiB) has offsets row * ld + i that do
// not fit an int, and one of more than 2^32 (16 GiB) offsets that do not fit
// an unsigned int. These shapes are thin, so that only one matrix is that
// large and the work stays small: A tall (m * lda > 2^32), B tall
// (n * ldb > 2^32), C large with a short k (m * ldc > 2^32). Nothing of them
// is kept on the host: element (r, i) of A is uniform_at(seed, r * lda + i),
// regenerated where needed. C is checked element by element against FP64
// dot products on sampled rows and columns (all of them where there are few,
// otherwise the first and last, those around the 2^31 and 2^32 offsets, and
// random ones), and every element of C is checked to be written (C starts as
// NaN), with the padding between n and ldc untouched, on the GPU.

constexpr std::uint64_t kTwo31 = std::uint64_t{1} << 31;

/// Indices of [0, count) to check: all of them when there are few; else the
/// first two, the last two, those whose rows start around the 2^31 and 2^32
/// offsets for each stride in `lds`, and 16 seeded random ones.
std::vector<int> sample(int count, std::initializer_list<std::uint64_t> lds, std::uint64_t seed) {
  std::vector<int> at;
  if (count <= 64) {
    for (int i = 0; i < count; ++i) at.push_back(i);
    return at;
  }
  auto add = [&](std::int64_t i) {
    if (i >= 0 && i < count) at.push_back(static_cast<int>(i));
  };
  for (std::int64_t i : {0, 1, count - 2, count - 1}) add(i);
  for (const std::uint64_t ld : lds)
    for (const std::uint64_t limit : {kTwo31, 2 * kTwo31}) {
      const auto first = static_cast<std::int64_t>(limit / ld); // the row that crosses `limit`
      for (std::int64_t d = -2; d <= 2; ++d) add(first + d);
    }
  for (int s = 0; s < 16; ++s) add(static_cast<std::int64_t>(steps::splitmix64(seed + 977 * s) % count));
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  return at;
}

std::string run_huge(const Shape& s, std::uint64_t seed) {
  const std::size_t k = s.k, lda = k + s.pad_a, ldb = k + s.pad_b, ldc = static_cast<std::size_t>(s.n) + s.pad_c;
  const std::size_t m = s.m, n = s.n;
  steps::GuardedBuffer<float> a(m * lda), b(n * ldb), c(m * ldc);
  steps::fill_uniform_device(a.data(), a.size(), seed, kLo, kHi);
  steps::fill_uniform_device(b.data(), b.size(), seed + 1, kLo, kHi);
  CUDA_CHECK(cudaDeviceSynchronize());
  steps::grade::BusyStream stream;
  stream.restores(a.data(), a.size() * sizeof(float));
  stream.restores(b.data(), b.size() * sizeof(float));
  stream.fills(c.data(), c.size() * sizeof(float), 0xFF); // C starts as NaN (0xFF bytes), padding too
  stream.start();
  ex03::sgemm_nt(s.m, s.n, s.k, a.data(), static_cast<int>(lda), b.data(), static_cast<int>(ldb), c.data(),
                 static_cast<int>(ldc), stream);
  stream.finish();

  const std::string hint =
      "\n  Hint: every smaller shape passed, so look at the offsets: with more than 2^31 elements, row * lda "
      "(or col * ldb, row * ldc) overflows an int. Compute offsets in 64 bits: "
      "static_cast<std::size_t>(row) * lda + i.";
  for (const auto* buf : {&a, &b, &c})
    if (const steps::Comparison g = buf->check_guards(); !g.ok)
      return std::string(buf == &a ? "A" : buf == &b ? "B" : "C") + ": " + g.describe() + hint;

  // Sampled elements against FP64 dot products.
  const std::vector<int> rows = sample(s.m, {lda, ldc}, seed + 2), cols = sample(s.n, {ldb}, seed + 3);
  std::vector<float> a_rows(rows.size() * k), b_rows(cols.size() * k), got(rows.size() * cols.size());
  for (std::size_t x = 0; x < rows.size(); ++x)
    for (std::size_t i = 0; i < k; ++i) a_rows[x * k + i] = steps::uniform_at(seed, rows[x] * lda + i, kLo, kHi);
  for (std::size_t y = 0; y < cols.size(); ++y)
    for (std::size_t i = 0; i < k; ++i) b_rows[y * k + i] = steps::uniform_at(seed + 1, cols[y] * ldb + i, kLo, kHi);
  std::vector<float> c_row(n);
  for (std::size_t x = 0; x < rows.size(); ++x) {
    CUDA_CHECK(cudaMemcpy(c_row.data(), c.data() + rows[x] * ldc, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (std::size_t y = 0; y < cols.size(); ++y) got[x * cols.size() + y] = c_row[cols[y]];
  }
  const steps::Tolerance tol = tolerance(s.k);
  const std::size_t per_row = cols.size();
  steps::Comparison cmp = steps::compare_each(
      got.size(), [&](std::size_t e) { return got[e]; },
      [&](std::size_t e) {
        const float* ar = &a_rows[e / per_row * k];
        const float* br = &b_rows[e % per_row * k];
        double sum = 0;
        for (std::size_t i = 0; i < k; ++i) sum += static_cast<double>(ar[i]) * br[i];
        return sum;
      },
      [&](std::size_t, double) { return tol.abs; }, tol.rel_l2);
  if (!cmp.ok) {
    const std::size_t e = cmp.first_bad;
    return "C is wrong at C(" + std::to_string(rows[e / per_row]) + ", " + std::to_string(cols[e % per_row]) +
           "): expected " + steps::format_value(cmp.expected_at_first_bad) + ", got " +
           steps::format_value(cmp.got_at_first_bad) + " (" + std::to_string(cmp.bad_count) + " of " +
           std::to_string(cmp.count) + " sampled elements wrong)" + hint;
  }

  // Every element written, no padding touched: on the GPU, over all of C.
  const std::size_t unwritten = steps::grade::find_word(c.data(), n, m, ldc, 0xFFFFFFFFu, true);
  if (unwritten < m * n)
    return "C(" + std::to_string(unwritten / n) + ", " + std::to_string(unwritten % n) +
           ") is NaN: no thread wrote it (C starts as NaN)." + hint;
  if (ldc > n) {
    const std::size_t touched = steps::grade::find_word(c.data() + n, ldc - n, m, ldc, 0xFFFFFFFFu, false);
    if (touched < m * (ldc - n))
      return "you wrote C(" + std::to_string(touched / (ldc - n)) + ", " + std::to_string(n + touched % (ldc - n)) +
             "), in the padding between n and ldc." + hint;
  }
  return "";
}

} // namespace

TEST_CASE("sgemm_nt on tiny shapes", "[sgemm_nt]") {
  grade({{1, 1, 1}, {1, 1, 2}, {2, 1, 1}, {1, 2, 1}, {2, 2, 2}, {3, 1, 5}, {1, 3, 5}, {5, 7, 3}});
}

TEST_CASE("sgemm_nt at the edges of the tiles", "[sgemm_nt]") {
  grade({{31, 31, 31}, {32, 32, 32}, {33, 33, 33}, {16, 16, 17}, {63, 65, 64}, {64, 64, 64}, {65, 63, 97},
         {96, 96, 96}, {97, 95, 33}, {128, 128, 129}});
}

TEST_CASE("sgemm_nt on primes and non-square shapes", "[sgemm_nt]") {
  grade({{7, 13, 5}, {37, 41, 43}, {101, 3, 257}, {3, 101, 257}, {1, 257, 129}, {257, 1, 129}, {129, 257, 65},
         {200, 7, 1000}, {13, 1000, 7}});
}

TEST_CASE("sgemm_nt with leading dimensions larger than the widths (views into bigger matrices)", "[sgemm_nt]") {
  grade({{1, 1, 1, 4, 4, 4}, {33, 33, 33, 3, 5, 7}, {64, 64, 64, 1, 2, 3}, {100, 70, 50, 13, 1, 32},
         {7, 300, 129, 64, 0, 5}, {65, 33, 200, 0, 7, 0}, {45, 67, 89, 31, 33, 1}});
}

TEST_CASE("sgemm_nt with m, n or k equal to 0", "[sgemm_nt]") {
  grade({{0, 5, 5}, {5, 0, 5}, {0, 0, 0}, {5, 5, 0}, {33, 40, 0, 2, 3, 4}});
}

TEST_CASE("sgemm_nt on large shapes (many blocks, many tiles)", "[sgemm_nt][large]") {
  grade({{513, 1031, 777, 1, 2, 3}, {1000, 999, 1001}, {1024, 1024, 1024}, {2048, 33, 1500}});
}

// A race on shared memory (a missing __syncthreads) does not fail every run:
// a warp that finishes its part of the multiplication early overwrites a tile
// only if another warp of its block is still reading it, which depends on how
// the warps happen to be scheduled. So this test gives the race every chance:
// many warps per block sharing each tile, 64 tiles per block (63 overwrites
// each), 1024 blocks, and 20 runs on the same inputs: over a million tile
// overwrites, each one a chance for a slow warp to read a half-replaced tile.
// What luck still lets through, compute-sanitizer racecheck finds: a passing
// grade runs the small shapes under it.
TEST_CASE("sgemm_nt gives the same right answer every run (no race)", "[sgemm_nt][large][race]") {
  grade({{1024, 1024, 2048}}, 20);
}

// Past 2^31 elements an offset computed in int overflows, and past 2^32 one
// computed in unsigned int. These shapes need about 18 GiB of GPU memory, so
// they are hidden ([.huge]): ./tutorial grade runs them after the others
// pass, alone, and where the GPU lacks the memory it says so and they are
// not checked.
TEST_CASE("sgemm_nt past 2^32 elements (64-bit offsets)", "[.huge]") {
  const std::size_t need = std::size_t{19} << 30; // the largest matrix (17.2 GB) and room to spare
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < need) {
    std::cout << "SKIPPED: the shapes past 2^32 elements need 19 GiB of free GPU memory; this GPU has "
              << (free_bytes >> 20) << " MiB free: 64-bit offsets are not checked here.\n";
    std::exit(77);
  }
  // A: 131100 x 32770 (2^32 + 1.2 million floats); B: the same, transposed
  // roles; C: 66000 x 65101 with k = 3. n and m of the thin ones are not
  // multiples of 32, so the edge tiles are there too.
  steps::grade::shapes(std::vector<Shape>{{131100, 33, 32770, 0, 0, 1}, {33, 131100, 32770, 0, 0, 1},
                                          {66000, 65100, 3, 0, 0, 1}},
                       name_of, run_huge, sgemm_hint, 120);
}

TEST_CASE("sgemm_nt speed", "[.speed]") {
  REQUIRE(run_shape({512, 512, 512}, 99).empty());
  const int n = 2048;
  const std::size_t count = static_cast<std::size_t>(n) * n;
  steps::DeviceBuffer<float> a(count), b(count), c(count);
  steps::fill_uniform_device(a.data(), count, 5);
  steps::fill_uniform_device(b.data(), count, 6);
  steps::TimingOptions opts;
  opts.iters = 20;
  const auto ms = steps::time_gpu(
      [&](cudaStream_t s) { ex03::sgemm_nt(n, n, n, a.data(), n, b.data(), n, c.data(), n, s); }, opts);
  const double nd = n;
  steps::grade::report_speed("sgemm_nt on 2048 x 2048 x 2048", ms, 12.0 * nd * nd, 2.0 * nd * nd * nd);
}
