// Grader for exercise 11 (mma_tile: C = A * B on the tensor cores, A given
// transposed). Built twice: against your exercises/ code (./tutorial grade
// 11) and against the solution (part of ./tutorial test).
//
// Two kinds of tests. The fragment tests run your load_a_fragment and
// load_b_fragments alone, in one warp, on shared tiles whose 16 x 16 block
// holds each element's own coordinates (16 m + k, exact in BF16) and NaN
// everywhere else, and check every register of every lane: a failure names
// the lane, the register and the element it holds instead of the right one,
// and recognises the usual slips (a transposed fragment, .trans missing,
// two 8 x 8 blocks exchanged, a wrong lane-to-row map).
//
// The product tests run gemm_tn on many shapes, from 1 x 1 x 1 to tails in
// every dimension. The inputs are small integers (-3 to 3) in BF16, so every
// product and every sum is exact in FP32 whatever the order of the
// additions, and C is compared bit for bit with an integer product on the
// CPU. A^T and B are followed by NaN rows (a read past them shows), C
// starts as NaN (an element your code never writes stays NaN), and guard
// zones around every buffer catch writes outside it. Your function gets a
// non-blocking stream with work still pending (the grader's, which restores
// the inputs): work outside that stream gives a wrong result. When every
// test passes, ./tutorial grade runs the small ones again under
// compute-sanitizer (memcheck, racecheck).
//
// The code under test needs BF16 mma.sync (sm_80 or newer): on an older GPU
// every test is skipped (exit code 77).
#include "mma_tile.hpp"

#include "steps/arch.hpp"
#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/fp8.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

void require_tensor_cores() {
  steps::grade::require({{steps::Feature::mma_bf16, steps::Feature::ldmatrix}, ex11::kernel_code_probe()},
                        "BF16 mma.sync and ldmatrix");
}

constexpr std::uint16_t kNaN = 0x7FC0; // a BF16 quiet NaN

// ------------------------------------------------------------ fragments

/// The element a 16-bit half of a register holds, decoded from the probe's
/// code 16 * (m - m0) + (k - k0): (row, k) of the 16 x 16 block, or
/// (-1, -1) for anything that is not a code (NaN: read outside the block).
struct Cell {
  int outer = -1, k = -1; // outer: the row of A (m) or the column of B (n) within the block
  bool operator==(const Cell& o) const { return outer == o.outer && k == o.k; }
};

Cell decode(std::uint16_t bits) {
  const float v = steps::bf16_to_float(bits);
  if (!(v >= 0 && v < 256) || v != std::floor(v)) return {};
  const int code = static_cast<int>(v);
  return {code / 16, code % 16};
}

/// What register `reg`, half `h` of lane `lane` must hold.
///  A (m16n8k16, "row"): a[i]: row g + 8 (i % 2), k 2t + h + 8 (i / 2).
///  B, two mma tiles: b[i]: column g + 8 (i / 2), k 2t + h + 8 (i % 2).
Cell expected(bool is_a, int lane, int reg, int h) {
  const int g = lane / 4, t = lane % 4;
  if (is_a) return {g + 8 * (reg % 2), 2 * t + h + 8 * (reg / 2)};
  return {g + 8 * (reg / 2), 2 * t + h + 8 * (reg % 2)};
}

std::string cell_text(bool is_a, const Cell& c, int outer0, int k0) {
  if (c.outer < 0) return "a value from outside the 16 x 16 block (NaN)";
  return is_a ? "A(m " + std::to_string(outer0 + c.outer) + ", k " + std::to_string(k0 + c.k) + ")"
              : "B(k " + std::to_string(k0 + c.k) + ", n " + std::to_string(outer0 + c.outer) + ")";
}

/// "" when every lane holds the right elements, else what is wrong.
std::string check_fragments(bool is_a, const std::uint32_t (&regs)[32][4], int k0, int outer0) {
  const char* name = is_a ? "a" : "b";
  const char* fn = is_a ? "load_a_fragment" : "load_b_fragments";
  const char* outer = is_a ? "m" : "n";
  bool all_right = true, transposed = true, along_outer = true, any_nan = false, swapped_12 = true;
  int bad_lane = -1, bad_reg = -1, bad_h = -1;
  Cell bad_got;
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < 4; ++reg) {
      const Cell lo = decode(static_cast<std::uint16_t>(regs[lane][reg] & 0xFFFF));
      const Cell hi = decode(static_cast<std::uint16_t>(regs[lane][reg] >> 16));
      for (int h = 0; h < 2; ++h) {
        const Cell got = h ? hi : lo, want = expected(is_a, lane, reg, h);
        if (got.outer < 0) any_nan = true;
        if (!(got.outer == want.k && got.k == want.outer)) transposed = false;
        const int other = reg == 1 ? 2 : reg == 2 ? 1 : reg;
        if (!(got == expected(is_a, lane, other, h))) swapped_12 = false;
        if (!(got == want) && all_right) {
          all_right = false;
          bad_lane = lane, bad_reg = reg, bad_h = h, bad_got = got;
        }
      }
      if (!(hi.outer == lo.outer + 1 && hi.k == lo.k)) along_outer = false;
    }
  if (all_right) return "";
  const Cell want = expected(is_a, bad_lane, bad_reg, bad_h);
  std::ostringstream os;
  os << fn << ": lane " << bad_lane << " (g = " << bad_lane / 4 << ", t = " << bad_lane % 4 << "), register "
     << name << "[" << bad_reg << "], " << (bad_h ? "upper" : "lower") << " half, holds "
     << cell_text(is_a, bad_got, outer0, k0) << ", expected " << cell_text(is_a, want, outer0, k0) << ".\n  Hint: ";
  if (along_outer)
    os << "the two BF16 of each register are neighbours along " << outer
       << " (one row of the slice). mma.sync wants two consecutive k in a register, and consecutive k are "
          "consecutive ROWS of the slice: the same column of two rows. ldmatrix reads rows; its .trans form "
          "hands each lane two values of a column (ptx::ldmatrix_x4_trans).";
  else if (transposed)
    os << "your fragment holds the block transposed: " << outer
       << " and k are exchanged everywhere. The row addresses point along the wrong dimension, or .trans is "
          "applied twice (a transposed load of a block you already addressed transposed).";
  else if (swapped_12)
    os << name << "[1] and " << name << "[2] are exchanged: matrix i of an ldmatrix.x4 lands in register i, "
       << "and its 8 row addresses come from lanes 8i .. 8i + 7. "
       << (is_a ? "a[1] is rows m0 + 8.. at k0.., a[2] rows m0.. at k0 + 8.."
                : "b[1] is k0 + 8.. of the first 8 columns, b[2] k0.. of the next 8 columns")
       << ": which lanes point at which 8 x 8 block?";
  else if (any_nan)
    os << "some registers hold values from outside the 16 x 16 block: a row address is off. Rows of the slice "
          "are kLd = 136 BF16 apart; lane l gives the address of ONE 8-element row: row k0 + (some function of "
          "l), column "
       << outer << "0 + 0 or 8.";
  else
    os << "lane l gives the address of row (l % 8) of matrix l / 8 of the ldmatrix.x4; with .trans lane l "
          "receives, in register i, rows 2 (l % 4) and 2 (l % 4) + 1 at column l / 4 of matrix i. Draw which "
          "8 x 8 block each register needs (README, the fragment table) and point lanes 8i .. 8i + 7 at the "
          "8 rows of block i.";
  return os.str();
}

/// Probes your two loads at one position; "" when both are right.
std::string probe(int k0, int m0, int n0) {
  steps::DeviceBuffer<ex11::FragmentProbe> out(1);
  ex11::probe_fragments(k0, m0, n0, out.data());
  const std::vector<ex11::FragmentProbe> got = out.to_host();
  const std::string where = " (block at k0 = " + std::to_string(k0) + ", m0 = " + std::to_string(m0) +
                            ", n0 = " + std::to_string(n0) + ")";
  if (std::string a = check_fragments(true, got[0].a, k0, m0); !a.empty()) return a + where;
  if (std::string b = check_fragments(false, got[0].b, k0, n0); !b.empty()) return b + where;
  return "";
}

/// The positions probed: the corner, and one away from it in every direction.
std::string probe_all() {
  for (const auto& p : std::vector<std::array<int, 3>>{{0, 0, 0}, {16, 48, 112}, {16, 0, 8}})
    if (std::string why = probe(p[0], p[1], p[2]); !why.empty()) return why;
  return "";
}

// ------------------------------------------------------------ the product

struct Shape {
  int m, n, k;
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "gemm_tn(m = " << s.m << ", n = " << s.n << ", k = " << s.k << ")";
  return os.str();
}

/// A small integer in [-3, 3], element i of stream `seed`.
int small_int(std::uint64_t seed, std::size_t i) { return static_cast<int>(steps::splitmix64(seed ^ (i * 0x9E37u)) % 7) - 3; }

/// Rows of NaN after each input (none under compute-sanitizer, so memcheck
/// sees a read past the end even where it changes no result).
int extra_rows() { return std::getenv("STEPS_SANITIZE") ? 0 : 2; }

/// A rows x cols input of small integers (BF16), NaN rows after it.
struct Input {
  int rows, cols;
  std::vector<int> values;        // rows x cols
  std::vector<std::uint16_t> host; // the canvas as uploaded
  steps::GuardedBuffer<std::uint16_t> dev;
  Input(int rows_, int cols_, std::uint64_t seed)
      : rows(rows_), cols(cols_), values(static_cast<std::size_t>(rows_) * cols_),
        host(static_cast<std::size_t>(rows_ + extra_rows()) * cols_, kNaN), dev(std::max<std::size_t>(host.size(), 1)) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = small_int(seed, i);
      host[i] = steps::float_to_bf16(static_cast<float>(values[i]));
    }
    if (!host.empty()) dev.upload(host.data());
  }
  const __nv_bfloat16* data() const { return reinterpret_cast<const __nv_bfloat16*>(dev.data()); }
};

void parallel_rows(int rows, const std::function<void(int)>& body) {
  const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 32u));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = t; r < rows; r += threads) body(r);
    });
  for (auto& th : pool) th.join();
}

/// sum over i in [begin, end) of A(r, i) B(i, c), where keep(i).
long long dot(const Shape& s, const Input& at, const Input& b, int r, int c, int begin, int end,
              const std::function<bool(int)>& keep = {}) {
  long long sum = 0;
  for (int i = begin; i < end; ++i)
    if (!keep || keep(i))
      sum += static_cast<long long>(at.values[static_cast<std::size_t>(i) * s.m + r]) *
             b.values[static_cast<std::size_t>(i) * s.n + c];
  return sum;
}

// What is probably wrong, given the first wrong element C(r, c).
std::string diagnose(const Shape& s, const Input& at, const Input& b, const std::vector<long long>& want, int r, int c,
                     float got) {
  const std::string here = "C(" + std::to_string(r) + ", " + std::to_string(c) + ")";
  if (const std::string why = probe_all(); !why.empty()) return "your fragments are wrong. " + why;
  if (std::isnan(got))
    return here + " is NaN: no thread wrote it (C starts as NaN), or a value from outside A or B reached it. "
                  "store_warp_tile: acc[mi][ni][0], [1] are row g, columns 2t, 2t + 1 of the 16 x 8 tile, [2], "
                  "[3] row g + 8; every element inside C must be stored.";
  auto want_at = [&](int rr, int cc) { return static_cast<float>(want[static_cast<std::size_t>(rr) * s.n + cc]); };
  const int r8 = (r % 16 < 8) ? r + 8 : r - 8;
  if (r8 < s.m && got == want_at(r8, c) && got != want_at(r, c))
    return here + " holds C(" + std::to_string(r8) + ", " + std::to_string(c) +
           "): rows g and g + 8 of the 16 x 8 tile are exchanged. acc[..][0], [1] belong to row g, [2], [3] to "
           "row g + 8.";
  const int c1 = c ^ 1;
  if (c1 < s.n && got == want_at(r, c1))
    return here + " holds C(" + std::to_string(r) + ", " + std::to_string(c1) +
           "): columns 2t and 2t + 1 are exchanged (acc[..][0] is column 2t).";
  if (c1 < s.n && got == want_at(r, c - c % 8 + (c % 8) / 2))
    return here + " holds the value of column " + std::to_string(c - c % 8 + (c % 8) / 2) +
           " of its tile: lane t stores columns 2t and 2t + 1, not t.";
  const double g = got;
  if (s.k % 32 != 0 && g == static_cast<double>(dot(s, at, b, r, c, 0, s.k - s.k % 32)))
    return here + " misses the last k % 32 = " + std::to_string(s.k % 32) +
           " terms: the K tail. The loop over slices must run ceil(k / 32) times; the given copy fills the part "
           "past k with zeros.";
  if (g == static_cast<double>(dot(s, at, b, r, c, 0, s.k, [](int i) { return i % 32 < 16; })))
    return here + " has only the first 16 k of every 32-deep slice: warp_slice must step through all BLOCK_K = "
                  "32 k of the slice, 16 at a time.";
  if (g == static_cast<double>(dot(s, at, b, r, c, 0, s.k, [](int i) { return i % 16 < 8; })) ||
      g == 2.0 * static_cast<double>(dot(s, at, b, r, c, 0, s.k)))
    return here + " adds some k twice or skips half of them: one mma.sync m16n8k16 covers 16 k, so warp_slice's "
                  "k step is 16.";
  return here + " has a wrong value: expected " + std::to_string(want[static_cast<std::size_t>(r) * s.n + c]) +
         ", got " + steps::format_value(got) +
         ". Your fragments passed the probe, so look at warp_slice (which fragments meet in which mma: "
         "acc[mi][ni] += a[mi] * b[ni], with the right k offset for each step) and at store_warp_tile.";
}

std::string run_shape(const Shape& s, std::uint64_t seed, int runs = 1) {
  const Input at(s.k, s.m, seed), b(s.k, s.n, seed + 1);
  steps::GuardedBuffer<float> c(std::max<std::size_t>(static_cast<std::size_t>(s.m) * s.n, 1));
  std::vector<long long> want(static_cast<std::size_t>(s.m) * s.n);
  parallel_rows(s.m, [&](int r) {
    for (int col = 0; col < s.n; ++col) want[static_cast<std::size_t>(r) * s.n + col] = dot(s, at, b, r, col, 0, s.k);
  });
  std::vector<float> first;
  for (int run = 0; run < runs; ++run) {
    steps::grade::BusyStream stream;
    stream.restores(const_cast<std::uint16_t*>(at.dev.data()), at.dev.size() * 2);
    stream.restores(const_cast<std::uint16_t*>(b.dev.data()), b.dev.size() * 2);
    stream.fills(c.data(), c.size() * sizeof(float), 0xFF); // C starts as NaN
    stream.start();
    ex11::gemm_tn(s.m, s.n, s.k, at.data(), b.data(), c.data(), stream);
    stream.finish();
    const std::string when = runs > 1 ? " (run " + std::to_string(run + 1) + " of " + std::to_string(runs) + ")" : "";
    if (const steps::Comparison g = c.check_guards(); !g.ok)
      return "C" + when + ": " + g.describe() +
             "\n  Hint: only elements with row < m and column < n may be stored (the edge tiles overhang C).";
    for (const Input* x : {&at, &b})
      if (const steps::Comparison g = x->dev.check_guards(); !g.ok)
        return std::string(x == &at ? "A^T" : "B") + when + ": " + g.describe() + " (an input: write only to C)";
    const std::vector<float> got = c.download();
    if (run == 0) first = got;
    for (std::size_t e = 0; e < want.size(); ++e) {
      if (got[e] == static_cast<float>(want[e])) continue;
      const int r = static_cast<int>(e / s.n), col = static_cast<int>(e % s.n);
      std::string msg = "C is wrong" + when + " at C(" + std::to_string(r) + ", " + std::to_string(col) +
                        "): expected " + std::to_string(want[e]) + " (exact: small integers), got " +
                        steps::format_value(got[e]) + ".\n  ";
      if (run > 0 && std::memcmp(got.data(), first.data(), got.size() * sizeof(float)) != 0)
        return msg + "The same inputs gave another result in an earlier run: a race on shared memory. Every "
                     "warp must be done reading a slice (__syncthreads) before any thread copies the next one "
                     "over it.";
      return msg + diagnose(s, at, b, want, r, col, got[e]);
    }
  }
  return "";
}

std::string mma_hint(const steps::Error& e) {
  if (e.code_name() == "cudaErrorMisalignedAddress")
    return "every ldmatrix row address must be 16-byte aligned: a column offset of 0 or 8 BF16 from a multiple "
           "of 8.";
  if (e.code_name() == "cudaErrorIllegalAddress")
    return "a store outside C, or a shared-memory address outside the slice: check the row < m, column < n "
           "guard and the row addresses of your ldmatrix.";
  return "";
}

void grade(const std::vector<Shape>& list, int runs = 1) {
  require_tensor_cores();
  steps::grade::shapes(
      list, name_of, [runs](const Shape& s, std::uint64_t seed) { return run_shape(s, seed, runs); }, mma_hint);
}

} // namespace

TEST_CASE("fragments: every lane holds the elements mma.sync expects", "[mma][fragments]") {
  require_tensor_cores();
  const std::string why = probe_all();
  if (!why.empty()) FAIL(why);
}

TEST_CASE("gemm_tn on tiny shapes", "[mma]") {
  grade({{1, 1, 1}, {1, 1, 16}, {5, 7, 3}, {2, 3, 17}, {7, 5, 33}, {16, 8, 16}, {3, 1, 40}});
}

TEST_CASE("gemm_tn at the edges of the tiles", "[mma]") {
  grade({{128, 128, 32}, {127, 129, 31}, {129, 127, 33}, {64, 64, 64}, {65, 63, 48}, {16, 136, 400},
         {129, 136, 400}, {256, 8, 96}, {8, 256, 96}});
}

TEST_CASE("gemm_tn on primes and non-square shapes", "[mma]") {
  grade({{7, 13, 5}, {37, 41, 43}, {101, 3, 257}, {3, 101, 257}, {1, 257, 129}, {257, 1, 129},
         {131, 67, 45}, {200, 7, 1000}, {13, 1000, 7}});
}

TEST_CASE("gemm_tn with m, n or k equal to 0", "[mma]") { grade({{0, 5, 5}, {5, 0, 5}, {0, 0, 0}, {5, 9, 0}, {130, 140, 0}}); }

TEST_CASE("gemm_tn on large shapes (many blocks, many slices)", "[mma][large]") {
  grade({{513, 1031, 777}, {1000, 1000, 1000}, {1024, 1024, 1024}, {2048, 40, 1500}});
}

// A missing barrier does not fail every run: it depends on how the warps are
// scheduled. Many blocks, 64 slices each and 10 runs on the same inputs give
// it every chance; racecheck, run after a pass, finds what luck lets through.
TEST_CASE("gemm_tn gives the same right answer every run (no race)", "[mma][large][race]") {
  grade({{1024, 1024, 2048}}, 10);
}

TEST_CASE("gemm_tn speed", "[.speed]") {
  require_tensor_cores();
  REQUIRE(run_shape({512, 512, 512}, 99).empty());
  const int n = 4096;
  const std::size_t count = static_cast<std::size_t>(n) * n;
  steps::DeviceBuffer<std::uint16_t> at(count), b(count);
  steps::DeviceBuffer<float> c(count);
  steps::fill_uniform_bf16_device(at.data(), count, 5);
  steps::fill_uniform_bf16_device(b.data(), count, 6);
  steps::TimingOptions opts;
  opts.iters = 20;
  const auto ms = steps::time_gpu(
      [&](cudaStream_t s) {
        ex11::gemm_tn(n, n, n, reinterpret_cast<const __nv_bfloat16*>(at.data()),
                      reinterpret_cast<const __nv_bfloat16*>(b.data()), c.data(), s);
      },
      opts);
  const double nd = n;
  steps::grade::report_speed("gemm_tn on 4096 x 4096 x 4096", ms, 8.0 * nd * nd, 2.0 * nd * nd * nd);
}
