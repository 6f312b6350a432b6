// Grader for exercise 07, GPU part (convolve). Built twice: against your
// exercises/ code (./tutorial grade 07 convolve) and against the solution
// (part of ./tutorial test).
//
// Every shape runs on fresh random data. x sits in a guarded device array
// whose guard zones, wider than the widest filter, hold NaN: a read outside
// x (instead of the zero the task asks for) turns outputs into NaN. y starts
// poisoned (NaN) inside guard zones of its own: an output never written, or
// a write past the end, shows. Most shapes use small integers for x and the
// weights: every product and every partial sum is then an exact float, so the
// result is checked bit for bit in any summation order, and one missing,
// extra or shifted term is caught. The others use real numbers, checked
// against a double-precision sum with a bound derived from the filter width.
// Your functions get a non-blocking stream with work still pending ahead of
// the call (the grader's, which finishes writing x and poisons y): work that
// is not in that stream gives a wrong result.
#include "convolve.hpp"

#include "steps/catch.hpp"
#include "steps/compare.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Shape {
  int n;
  int radius;
  bool exact;        ///< small integers: exact sums, checked bit for bit
  std::size_t offset; ///< x starts this many floats past its allocation's alignment
  std::string what;
  int then_radius = -1; ///< >= 0: a second set_weights + convolve (into a second y) right after, no wait between
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "n = " << s.n << ", r = " << s.radius << (s.exact ? " (integers)" : " (real numbers)");
  if (s.offset) os << ", x offset " << s.offset;
  if (s.then_radius >= 0) os << ", then r = " << s.then_radius << " in the same stream";
  if (!s.what.empty()) os << ": " << s.what;
  return os.str();
}

std::size_t shared_bytes(int radius) { return (ex07::kTile + 2 * static_cast<std::size_t>(radius)) * sizeof(float); }

int max_optin_bytes() {
  int device = 0, bytes = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return bytes;
}

std::vector<float> data(std::size_t n, std::uint64_t seed, bool exact) {
  std::vector<float> v = steps::random_vector(n, seed, -1.0f, 1.0f);
  if (exact)
    for (float& f : v) { // integers in [-8, 8] without 0: every term counts
      f = std::round(f * 8.0f);
      if (f == 0.0f) f = 1.0f;
    }
  return v;
}

// What a wrong output means, in a learner's words.
std::string explain(const Shape& s, std::size_t i, float got, double want) {
  const long long tile_pos = static_cast<long long>(i % ex07::kTile);
  std::ostringstream os;
  os << "y[" << i << "] (block " << i / ex07::kTile << ", output " << tile_pos << " of its tile): expected "
     << steps::format_value(want) << ", got " << steps::format_value(got) << "\n  Hint: ";
  std::uint32_t bits;
  std::memcpy(&bits, &got, sizeof bits);
  if (bits == 0xFFFFFFFFu)
    os << "y[" << i << "] was never written (it still holds the grader's poison). Does every output of every "
          "block get a thread (the last block's tile is shorter; kTile is larger than the block)? Is the grid "
          "large enough? Is the kernel launched in `stream`? The grader's stream has work pending ahead of your "
          "call (it finishes writing x, then poisons y): a kernel in the default stream 0 runs before it, and "
          "its outputs are overwritten.";
  else if (std::isnan(got))
    os << "the inputs are finite, so a NaN comes from reading x outside [0, n) (the memory around x holds "
          "NaN; the task says those inputs count as 0 and must not be read), or from a shared-memory slot "
          "no thread staged.";
  else if (s.radius > 0 && (i < static_cast<std::size_t>(s.radius) ||
                            i + static_cast<std::size_t>(s.radius) >= static_cast<std::size_t>(s.n)))
    os << "this output is within r of an end of x, where part of its window is outside x: those inputs "
          "count as 0. Check how you stage the halo on each side.";
  else if (tile_pos < s.radius || tile_pos + s.radius >= ex07::kTile)
    os << "this output is within r of its tile's edge: its window reaches into the halo (the r inputs "
          "staged before and after the tile). Check the halo's first index (b * kTile - r) and the tile's "
          "width (kTile + 2 r).";
  else if (s.exact)
    os << "integers make every sum exact, so any difference is a missing, extra or shifted term: is the "
          "window x[i - r] .. x[i + r] (2 r + 1 terms) and the weight of x[i + j] w[j + r]? Did you copy all "
          "2 r + 1 weights into constant memory? Do all threads wait until the tile is staged?";
  else
    os << "the difference is larger than rounding explains.";
  return os.str();
}

std::string hint(const steps::Error& e) {
  if (e.code_name() == "cudaErrorInvalidValue")
    return "a launch with more than 48 KiB of dynamic shared memory fails unless the kernel opted in first: "
           "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes). Is the byte "
           "count right (floats, not bytes)?";
  if (e.code_name() == "cudaErrorIllegalAddress" || e.code_name() == "cudaErrorMisalignedAddress")
    return "an access outside an allocation: shared memory past what you asked for at launch (kTile + 2 r "
           "floats), or x / y outside [0, n).";
  return "";
}

// y = x convolved with w (radius r), checked against a double-precision
// reference. "" when right.
std::string check_output(const Shape& s, int radius, const std::vector<float>& x, const std::vector<float>& w,
                         const std::vector<float>& got, const std::string& which) {
  const std::size_t n = static_cast<std::size_t>(s.n);
  const int taps = 2 * radius + 1;
  // The reference in double: the sum and the sum of magnitudes of each window.
  std::vector<double> want(n), mag(n);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0, m = 0;
    const long long lo = static_cast<long long>(i) - radius;
    for (int j = 0; j < taps; ++j) {
      const long long k = lo + j;
      if (k < 0 || k >= s.n) continue;
      const double t = static_cast<double>(w[static_cast<std::size_t>(j)]) * x[static_cast<std::size_t>(k)];
      sum += t;
      m += std::fabs(t);
    }
    want[i] = sum;
    mag[i] = m;
  }
  // Exact: 0. Real: any order of 2 r + 1 float additions (fused or not) errs
  // by at most (2 r + 2) u times the sum of the terms' magnitudes.
  const double u = std::ldexp(1.0, -24);
  const double k = s.exact ? 0.0 : (taps + 1) * u / (1.0 - (taps + 1) * u);
  double mag2 = 0, want2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mag2 += mag[i] * mag[i];
    want2 += want[i] * want[i];
  }
  const double rel_l2 = want2 > 0 ? k * std::sqrt(mag2 / want2) : k;
  const steps::Comparison c = steps::compare_each(
      n, [&got](std::size_t i) { return got[i]; }, [&want](std::size_t i) { return want[i]; },
      [&mag, k](std::size_t i, double) { return k * mag[i]; }, rel_l2);
  if (c.ok) return "";
  if (c.bad_count == 0)
    return which + "the outputs are each close, but their overall error is too large: " + c.describe();
  Shape as_run = s;
  as_run.radius = radius;
  return which + "wrong output " + explain(as_run, c.first_bad, got[c.first_bad], want[c.first_bad]) + "\n  (" +
         std::to_string(c.bad_count) + " of " + std::to_string(n) + " outputs wrong)";
}

std::string run_shape(const Shape& s, std::uint64_t seed) {
  const int widest = std::max(s.radius, s.then_radius);
  if (shared_bytes(widest) > static_cast<std::size_t>(max_optin_bytes())) {
    std::cout << "  not checked here: " << name_of(s) << " needs " << shared_bytes(widest)
              << " bytes of shared memory per block, more than this GPU allows\n";
    return "";
  }
  const std::size_t n = static_cast<std::size_t>(s.n);
  const bool twice = s.then_radius >= 0;
  const std::vector<float> x = data(n, seed, s.exact);
  const std::vector<float> w = data(static_cast<std::size_t>(2 * s.radius + 1), seed + 1, s.exact);
  const std::vector<float> w2 = twice ? data(static_cast<std::size_t>(2 * s.then_radius + 1), seed + 2, s.exact)
                                      : std::vector<float>{};
  // The weights in pinned memory: an asynchronous copy from pageable memory
  // may wait for the stream to reach it.
  steps::PinnedBuffer<float> pw(w.size()), pw2(std::max<std::size_t>(1, w2.size()));
  std::copy(w.begin(), w.end(), pw.data());
  std::copy(w2.begin(), w2.end(), pw2.data());

  // x's guard zones are wider than any window, so a read outside x finds NaN
  // (under compute-sanitizer the guards are 0 and memcheck sees the read).
  const std::size_t guard = steps::GuardedBuffer<float>::default_guard() ? ex07::kMaxRadius + 1024 : 0;
  steps::GuardedBuffer<float> dx(n, s.offset, guard);
  steps::GuardedBuffer<float> dy(n), dy2(twice ? n : 0);
  if (n) dx.upload(x.data());

  // x is scrambled and y not yet poisoned until the work pending in the
  // stream has run. The second call (then_radius) follows the first without
  // a wait: new weights copied at once, not in stream, would reach the
  // first call's kernel too.
  steps::grade::BusyStream stream;
  stream.restores(dx.data(), n * sizeof(float));
  stream.fills(dy.data(), n * sizeof(float), 0xFF);
  stream.fills(dy2.data(), dy2.size() * sizeof(float), 0xFF);
  stream.start();
  ex07::set_weights(pw.data(), s.radius, stream);
  ex07::convolve(dx.data(), dy.data(), s.n, s.radius, stream);
  if (twice) {
    ex07::set_weights(pw2.data(), s.then_radius, stream);
    ex07::convolve(dx.data(), dy2.data(), s.n, s.then_radius, stream);
  }
  stream.finish();

  if (const auto c = dy.check_guards(); !c.ok) return "you wrote outside y: " + c.describe();
  if (const auto c = dy2.check_guards(); !c.ok) return "you wrote outside the second y: " + c.describe();
  if (const auto c = dx.check_guards(); !c.ok) return "you wrote into the memory around x: " + c.describe();
  if (n == 0) return "";
  const std::vector<float> x_after = dx.download();
  if (std::memcmp(x_after.data(), x.data(), n * sizeof(float)) != 0) return "x changed, but it is an input.";
  if (auto bad = check_output(s, s.radius, x, w, dy.download(), twice ? "first call: " : ""); !bad.empty())
    return twice ? bad + "\n  Hint: the first call must use its own weights, although the second call's "
                         "set_weights was made before the first call's kernel ran: copy the weights in "
                         "`stream` (cudaMemcpyToSymbolAsync), not at once (cudaMemcpyToSymbol)."
                 : bad;
  if (twice) return check_output(s, s.then_radius, x, w2, dy2.download(), "second call: ");
  return "";
}

void grade(const std::vector<Shape>& list) { steps::grade::shapes(list, name_of, run_shape, hint); }

constexpr int T = ex07::kTile;

} // namespace

TEST_CASE("convolve on small and odd shapes", "[convolve]") {
  grade({{0, 3, true, 0, "empty: nothing to write"},
         {1, 0, true, 0, "one element, one weight"},
         {1, 1, true, 0, "the window is wider than x"},
         {2, 3, true, 0, ""},
         {7, 3, true, 0, ""},
         {33, ex07::kMaxRadius, true, 0, "the widest filter on a short x: most of each window is outside"},
         {257, 2, true, 1, "x misaligned by 1"},
         {T, 0, true, 0, "one whole tile, r = 0: exactly 48 KiB of shared memory, no opt-in needed"},
         {T, 1, true, 0, "one whole tile, r = 1: just above 48 KiB, the opt-in is needed"},
         {T - 1, 5, true, 0, "one tile minus one"},
         {T + 1, 1, true, 0, "one tile plus one: a second block with one output"},
         {2 * T, 7, true, 0, "two whole tiles"},
         {2 * T + 1, 64, true, 3, "two tiles plus one, x misaligned by 3"},
         {100003, 17, true, 0, "prime n"},
         {100003, 17, false, 0, "prime n"}});
}

// Two calls in a row on one stream, the second with other weights, without
// a wait between them: the first call's kernel must still see its own
// weights (set_weights copies in stream order).
TEST_CASE("convolve: two calls in a row in one stream", "[convolve]") {
  grade({{257, 3, true, 0, "", 5}, {T + 11, 100, true, 0, "", 2}, {2 * T + 1, 0, true, 1, "", 7}});
}

TEST_CASE("convolve with weights that change between calls", "[convolve]") {
  // The same n, a narrower filter after a wider one: stale weights or a
  // shared-memory size computed once would show.
  grade({{T + 11, 100, true, 0, "r = 100"},
         {T + 11, 3, true, 0, "then r = 3"},
         {T + 11, 0, true, 0, "then r = 0"},
         {T + 11, 300, true, 0, "then r = 300"}});
}

// Many blocks and the widest filter: kept out of the compute-sanitizer pass
// (slow there); the shapes above run under it.
TEST_CASE("convolve on large shapes", "[convolve][large]") {
  grade({{3 * T + 1, ex07::kMaxRadius, true, 0, "the widest filter: 80 KiB of shared memory per block"},
         {3 * T + 5, 300, false, 2, "x misaligned by 2"},
         {5 * T + 11, 1000, true, 0, "r = 1000"},
         {(1 << 22) + 3, 31, true, 0, "many blocks"},
         {(1 << 22) + 3, 31, false, 1, "many blocks, x misaligned by 1"},
         {1000 * T + 1, 8, true, 0, "1001 blocks"},
         {(1 << 24) + 1, 2, false, 0, ""}});
}

TEST_CASE("convolve speed", "[.speed]") {
  const int n = 1 << 24, r = 64;
  REQUIRE(run_shape({1 << 20, r, false, 0, ""}, 99).empty());
  steps::DeviceBuffer<float> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
  steps::fill_uniform_device(x.data(), static_cast<std::size_t>(n), 5);
  const std::vector<float> w = steps::random_vector(2 * r + 1, 6);
  steps::Stream stream;
  ex07::set_weights(w.data(), r, stream);
  stream.synchronize();
  steps::TimingOptions opts;
  opts.iters = 50;
  const auto ms = steps::time_gpu([&](cudaStream_t s) { ex07::convolve(x.data(), y.data(), n, r, s); }, opts);
  steps::grade::report_speed("convolve, 2^24 floats, r = 64", ms, 8.0 * n, 2.0 * (2 * r + 1) * n);
}
