// Grader for exercise 03 (sgemm_nt: C = A * B^T). Built twice: against your
// exercises/ code (./tutorial grade 03) and against the solution (part of
// ./tutorial test).
//
// Every matrix lives inside a bigger "canvas" of random numbers: the matrix
// is the canvas's top-left corner, its rows ld floats apart, and two more
// rows follow it. So reading past a row's end (or past the last row) picks up
// wrong numbers instead of harmless zeros, an element of C your code never
// writes keeps its old random value, and a write outside C lands in the
// canvas, where the grader finds it. Guard zones around each canvas catch
// anything further out. Results are compared with an FP64 CPU product.
#include "sgemm_nt.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/report.hpp"
#include "steps/timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr float kLo = -1.0f, kHi = 1.0f; // inputs uniform in [kLo, kHi): rms 1 / sqrt(3)
constexpr int kExtraRows = 2;            // canvas rows after each matrix

// How far an FP32 dot product of k terms may be from the exact one. Each
// addition rounds by up to u = 2^-24 of the running sum, which grows like
// s * sqrt(i) (s = rms(a) * rms(b) = 1/3); the k rounding errors add up like
// a random walk with standard deviation about u * s * k / sqrt(6). The bound
// per element, 8 * u * s * k, is about 20 of those: a correct kernel, in any
// summation order, never fails; a wrong term (size ~ s) is far larger.
// The relative L2 error gets the same walk over |C| ~ s * sqrt(k).
steps::Tolerance tolerance(int k) {
  const double u = std::ldexp(1.0, -24), s = 1.0 / 3.0, kd = std::max(k, 1);
  return {8.0 * u * s * kd, 0.0, 8.0 * u * std::sqrt(kd)};
}

struct Shape {
  int m, n, k;
  int pad_a = 0, pad_b = 0, pad_c = 0; // lda = k + pad_a, ldb = k + pad_b, ldc = n + pad_c
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "m = " << s.m << ", n = " << s.n << ", k = " << s.k << ", lda = " << s.k + s.pad_a
     << ", ldb = " << s.k + s.pad_b << ", ldc = " << s.n + s.pad_c;
  return os.str();
}

/// A rows x cols matrix, rows `ld` apart, at the top-left of a random canvas
/// of rows + kExtraRows rows, uploaded into a guarded device array.
struct Canvas {
  int rows, cols, ld;
  std::vector<float> host; // the canvas as uploaded
  steps::GuardedBuffer<float> dev;
  Canvas(int rows_, int cols_, int pad, std::uint64_t seed)
      : rows(rows_), cols(cols_), ld(std::max(1, cols_ + pad)),
        host(steps::random_vector(static_cast<std::size_t>(rows + kExtraRows) * ld, seed, kLo, kHi)),
        dev(host.size()) {
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

// What is probably wrong, given the first wrong element C(r, j).
std::string diagnose(const Shape& s, const Canvas& a, const Canvas& b, const Canvas& c, int r, int j, double got) {
  const std::string at = "C(" + std::to_string(r) + ", " + std::to_string(j) + ")";
  if (same_bits(static_cast<float>(got), c.at(r, j)))
    return at + " still holds the value it had before your kernel ran: no thread wrote it. Does your grid "
                "cover all m rows and n columns (round up: ceil_div)? Does a thread skip its store?";
  if (!std::isfinite(got))
    return at + " is NaN or Inf: a value read from memory that is not part of A or B, or from shared memory "
                "that was never written?";
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
  if (a.ld != s.k && near(dot(a, b, r, j, 0, s.k, s.k, b.ld)))
    return at + " was computed with A's rows k = " + std::to_string(s.k) + " floats apart, but they are lda = " +
           std::to_string(a.ld) + " apart: row r of A starts at a + r * lda.";
  if (b.ld != s.k && near(dot(a, b, r, j, 0, s.k, a.ld, s.k)))
    return at + " was computed with B's rows k = " + std::to_string(s.k) + " floats apart, but they are ldb = " +
           std::to_string(b.ld) + " apart: row j of B starts at b + j * ldb.";
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
  steps::Stream stream;
  for (int run = 0; run < runs; ++run) {
    if (run > 0) c.dev.upload(c.host.data()); // fresh canvas for every run
    ex03::sgemm_nt(s.m, s.n, s.k, a.dev.data(), a.ld, b.dev.data(), b.ld, c.dev.data(), c.ld, stream);
    stream.synchronize();
    const std::string when = runs > 1 ? " (run " + std::to_string(run + 1) + " of " + std::to_string(runs) + ")" : "";

    for (const auto* m : {&a, &b, &c}) {
      const steps::Comparison g = m->dev.check_guards();
      if (!g.ok)
        return std::string(m == &a ? "A" : m == &b ? "B" : "C") + when + ": " + g.describe() +
               "\n  Hint: only threads with row < m and column < n may store, at c + row * ldc + column.";
    }
    for (const auto* m : {&a, &b})
      if (m->dev.download() != m->host)
        return std::string(m == &a ? "A" : "B") + " changed" + when + ", but it is an input: write only to C.";

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

void grade(const std::vector<Shape>& shapes, int runs = 1) {
  std::uint64_t seed = 3;
  for (const auto& s : shapes) {
    INFO("sgemm_nt(" << name_of(s) << ")");
    std::string problem;
    try {
      problem = run_shape(s, seed += 10, runs);
    } catch (const steps::Error& e) {
      problem = std::string("a CUDA error: ") + e.what();
      if (e.code_name() == "cudaErrorInvalidConfiguration" || e.code_name() == "cudaErrorInvalidValue")
        problem += "\n  Hint: a launch with 0 blocks (m or n is 0?) or more than 1024 threads per block, or "
                   "more static shared memory than 48 KiB, is invalid.";
      if (e.code_name() == "cudaErrorIllegalAddress")
        problem += "\n  Hint: a thread read or wrote far outside the matrices: check the bounds of every load "
                   "and of the store (row < m, column < n, i < k).";
    }
    if (!problem.empty()) FAIL(problem);
  }
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
TEST_CASE("sgemm_nt gives the same right answer every run (no race)", "[sgemm_nt][large][race]") {
  grade({{1024, 1024, 2048}}, 20);
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
  std::cout << "speed: sgemm_nt on " << n << " x " << n << " x " << n << ": median " << steps::fixed(ms.median, 4)
            << " ms, " << steps::fixed(steps::tflops(2.0 * n * n * n, ms.median), 2) << " TFLOP/s\n";
}
