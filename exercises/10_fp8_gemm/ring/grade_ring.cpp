// Grader for exercise 10, part 2 (ring). Built three ways: against your
// exercises/ code (./tutorial grade 10 ring), against the solution, and
// against each mutant of the solution (part of ./tutorial test).
//
// Always built with STEPS_RING_CHECKED: the given wrappers keep a shadow of
// the ring's protocol in shared memory and check every step against it (see
// given.cuh), so that a race is caught on every run, not only when the
// timing exposes it. Every wait is bounded: a deadlock ends after
// Watch::timeout_s. Either way the block writes a Report into mapped host
// memory and stops the kernel (__trap); the CUDA context is then lost for
// this process, so the grader prints what the report says and exits (1; 3
// for a deadlock, like a hang).
//
// The results are compared bit for bit: BF16 of the FP32 product of an E4M3
// value (exact in FP32) and its scale has one right answer. x is followed by
// E4M3 NaN codes, the scales by NaN floats, y by guard bytes, and y is
// poisoned (0xFFFF, a BF16 NaN) before every call.
#include "diagnosis.hpp"
#include "ring.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/fp8.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace ex10::ring;

/// Exits with 77 (skipped) unless GPU 0 is a Hopper GPU: exercise 10 is
/// built for sm_90a only.
void require_hopper() {
  steps::grade::require({{steps::Feature::tma, steps::Feature::mbarrier_tx, steps::Feature::wgmma}, nullptr},
                        "the TMA ring of a Hopper GEMM, built for sm_90a");
}

int sm_count() {
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return sms;
}

bool sanitizing() { return std::getenv("STEPS_SANITIZE") != nullptr; }

/// The ring's report, in mapped pinned host memory: the GPU writes it just
/// before it stops the kernel, and it stays readable here afterwards.
volatile Report* report() { return steps::grade::mapped_record<Report>(); }

/// Arms the ring's watchdog and checks for the next launches.
void watch(int max_blocks, bool slow = true) {
  Report* r = const_cast<Report*>(report());
  std::memset(r, 0, sizeof(Report));
  Watch w;
  w.report = r;
  // compute-sanitizer slows the kernel down by orders of magnitude.
  w.timeout_s = sanitizing() ? 60.0 : 2.0;
  w.max_blocks = max_blocks;
  w.slow_consumers = slow;
  set_watch(w);
}

/// After a CUDA error: if the ring left a report, say what it means and end
/// the process (its CUDA context is gone). Otherwise return: the harness
/// explains the error.
void stop_if_reported(const std::string& shape) {
  volatile Report* v = report();
  if (v->event == 0) return;
  Report r;
  std::memcpy(&r, const_cast<const Report*>(v), sizeof r);
  const bool hang = static_cast<Finding>(r.event) == Finding::deadlock;
  std::fflush(stdout);
  std::printf("\nFAILED: %s: %s\n", shape.c_str(), explain(r).c_str());
  std::printf("(the kernel stopped itself with __trap(); the GPU is unusable for the rest of this process, so the "
              "grader ends here)\n");
  std::fflush(stdout);
  std::_Exit(hang ? steps::kHangExitCode : 1);
}

struct Shape {
  long long n;
  int max_blocks = 0; // > 0: fewer blocks, more laps around the ring
  int calls = 1;      // the same shape again: the ring must start clean every launch
};

long long chunks_of(long long n) { return (n + kChunk - 1) / kChunk; }

std::string name_of(const Shape& s) {
  std::ostringstream os;
  const long long chunks = chunks_of(s.n), last = s.n - (chunks - 1) * kChunk;
  os << "n = " << s.n << " (" << chunks << (chunks == 1 ? " chunk" : " chunks");
  if (chunks > 0 && last != kChunk) os << ", the last of " << last << " elements";
  os << ")";
  if (s.max_blocks > 0) os << " on at most " << s.max_blocks << (s.max_blocks == 1 ? " block" : " blocks");
  if (s.calls > 1) os << ", " << s.calls << " calls in a row";
  return os.str();
}

/// E4M3 code i of the input: any finite code (negative, subnormal, zero).
std::uint8_t code_at(std::uint64_t seed, long long i) {
  const std::uint64_t bits = steps::splitmix64(seed + static_cast<std::uint64_t>(i / 8));
  auto code = static_cast<std::uint8_t>(bits >> (8 * (i % 8)));
  if ((code & 0x7F) == 0x7F) code ^= 1; // 0x7F and 0xFF are NaN: take 0x7E / 0xFE
  return code;
}

/// Scale j: 2^e with e in [-8, 8] for odd j, (1 + f) 2^e for even j.
float scale_at(std::uint64_t seed, long long j) {
  const std::uint64_t bits = steps::splitmix64(seed ^ (0x5CA1E000ull + static_cast<std::uint64_t>(j)));
  const int e = static_cast<int>(bits % 17) - 8;
  const float mantissa = j % 2 ? 1.0f : 1.0f + static_cast<float>((bits >> 40) & 0xFFFFFF) * 0x1p-24f;
  return std::ldexp(mantissa, e);
}

const std::array<float, 256>& e4m3_floats() {
  static const std::array<float, 256> t = [] {
    std::array<float, 256> a{};
    for (int c = 0; c < 256; ++c) a[c] = static_cast<float>(steps::e4m3_values()[c]);
    return a;
  }();
  return t;
}

/// The one right answer: BF16 (nearest even) of the FP32 product.
std::uint16_t expected_at(const std::vector<std::uint8_t>& x, const std::vector<float>& scales, long long i) {
  return steps::float_to_bf16(e4m3_floats()[x[i]] * scales[i / kScaleBlock]);
}

std::string hex(std::uint16_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(4) << std::setfill('0') << v;
  return os.str();
}

std::string bf16_text(std::uint16_t v) { return hex(v) + " (" + steps::format_value(steps::bf16_to_float(v)) + ")"; }

/// The first wrong element, where the ring had it, and what it looks like.
std::string describe_wrong(const std::vector<std::uint8_t>& x, const std::vector<float>& scales,
                           const std::vector<std::uint16_t>& got, long long i, long long bad, int grid) {
  const long long c = i / kChunk, k = c / grid; // block c % grid, its k-th chunk
  const std::uint16_t want = expected_at(x, scales, i);
  std::ostringstream os;
  os << "y is wrong: " << bad << " of " << got.size() << " elements differ; the first is y[" << i << "] = "
     << bf16_text(got[i]) << ", expected " << bf16_text(want) << " (x = code " << hex(x[i]) << " = "
     << steps::format_value(e4m3_floats()[x[i]]) << ", scale " << steps::format_value(scales[i / kScaleBlock])
     << "). It is element " << i % kChunk << " of chunk " << c << ", which block " << c % grid
     << " handles as its chunk " << k << ": stage " << k % kStages << ", lap " << k / kStages << ".\n  Hint: ";
  const long long before = i - static_cast<long long>(grid) * kStages * kChunk; // same stage, one lap earlier
  if (got[i] == 0xFFFF)
    os << "never written (still the poison 0xFFFF): the store of chunk " << c
       << " did not happen, or did not cover this element.";
  else if (before >= 0 && got[i] == expected_at(x, scales, before) && got[i] != want)
    os << "this is the value of element " << before << ", which went through the same stage one lap earlier: the "
       << "stage was read before this lap's data arrived (the consumers' parity), or overwritten before it was "
          "released.";
  else
    os << "a stage read while it was being overwritten, or before its data arrived: a step of the ring ran out "
          "of turn (parity, arrive count, fence, wait_group.read).";
  return os.str();
}

/// One shape: fresh inputs, `calls` calls, each checked bit for bit.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  require_hopper();
  const std::string name = name_of(s);
  watch(s.max_blocks);
  const long long n = s.n, nscales = (n + kScaleBlock - 1) / kScaleBlock;
  std::vector<std::uint8_t> x(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) x[i] = code_at(seed, i);
  std::vector<float> scales(static_cast<std::size_t>(nscales));
  for (long long j = 0; j < nscales; ++j) scales[j] = scale_at(seed, j);

  // x, then E4M3 NaN codes (a read past the end turns into NaN in y).
  const std::size_t guard = steps::GuardedBuffer<std::uint8_t>::default_guard();
  steps::DeviceBuffer<std::uint8_t> dx(x.size() + guard);
  {
    std::vector<std::uint8_t> padded(x);
    padded.resize(x.size() + guard, 0x7F);
    dx.copy_from_host(padded);
  }
  steps::GuardedBuffer<float> ds(scales.size());
  ds.upload(scales.data());
  steps::GuardedBuffer<std::uint16_t> dy(x.size());
  const int grid = blocks_for(n);
  std::vector<std::uint16_t> got;
  for (int call = 1; call <= s.calls; ++call) {
    try {
      // A non-blocking stream with the grader's work still pending ahead of
      // the call: x and the scales are scrambled until it restores them, y
      // is poisoned by it (steps/grade_support.hpp).
      steps::grade::BusyStream busy;
      busy.restores(dx.data(), dx.size() / 4 * 4);
      busy.restores(ds.data(), ds.size() * sizeof(float));
      busy.fills(dy.data(), dy.size() * sizeof(std::uint16_t), 0xFF);
      busy.start();
      dequantize(reinterpret_cast<const __nv_fp8_e4m3*>(dx.data()), ds.data(),
                 reinterpret_cast<__nv_bfloat16*>(dy.data()), n, busy);
      busy.finish();
    } catch (const steps::Error&) {
      stop_if_reported(name); // before the buffers' destructors meet the lost context
      throw;
    }
    const std::string which =
        s.calls > 1 ? "call " + std::to_string(call) + " of " + std::to_string(s.calls) + ": " : "";
    const steps::Comparison guards = dy.check_guards();
    if (!guards.ok)
      return which + "y: " + guards.describe() +
             "\n  Hint: the stores of the last chunk must stop at n: the given store copies chunk_elements(p, c) "
             "elements; did a stage get the wrong chunk?";
    dy.download(got);
    long long first = -1, bad = 0;
    for (long long i = 0; i < n; ++i)
      if (got[i] != expected_at(x, scales, i)) {
        if (first < 0) first = i;
        ++bad;
      }
    if (first >= 0) return which + describe_wrong(x, scales, got, first, bad, grid);
  }
  return "";
}

// This exercise's words for a CUDA error that came without a report.
std::string ring_hint(const steps::Error& e) {
  if (e.code_name() == "cudaErrorLaunchFailure" || e.code_name() == "cudaErrorIllegalInstruction")
    return "the kernel stopped without a report from the ring: a corrupted pointer, or a barrier that not every "
           "thread reached.";
  if (e.code_name() == "cudaErrorIllegalAddress")
    return "a stage index outside the ring reaches past the shared memory of the stages.";
  return "";
}

double shape_seconds(double normal) { return sanitizing() ? 600 : normal; }

void grade(const std::vector<Shape>& shapes, double seconds = steps::grade::kShapeTimeout) {
  steps::grade::shapes(shapes, name_of, run_shape, ring_hint, shape_seconds(seconds));
}

} // namespace

TEST_CASE("a chunk or less per block, partial chunks", "[ring]") {
  grade({{16}, {kChunk}, {kChunk + 16}, {3 * kChunk + 48}, {5 * kChunk - 32}});
}

TEST_CASE("one block around the ring", "[ring]") {
  grade({{kStages * kChunk, 1},
         {kStages * kChunk + 16, 1},
         {9 * kChunk + 4096 + 16, 1},
         {37 * kChunk + 272, 1}});
}

TEST_CASE("a few blocks, several laps, chunks % blocks != 0", "[ring]") {
  grade({{11 * kChunk - 64, 2}, {(kStages * 3) * kChunk + 32, 3}, {(kStages * 5 * 3 + 2) * kChunk + 16, 5}});
}

TEST_CASE("every SM", "[ring][all_sms]") {
  require_hopper();
  const long long sms = sm_count();
  grade({{kStages * sms * kChunk + 16}, {(3 * sms + 7) * kChunk}, {(sms + 1) * kChunk - 16}});
}

TEST_CASE("repeated calls start clean", "[ring]") {
  grade({{(kStages * 3) * kChunk + 32, 3, 5}, {kChunk + 16, 0, 3}, {37 * kChunk + 272, 1, 3}});
}

TEST_CASE("large", "[ring][large]") {
  grade({{1LL << 28, 0, 2}, {(1LL << 28) + 4112}}, 120);
}

TEST_CASE("bad arguments are refused before any GPU work", "[ring]") {
  for (const long long n : {-16LL, 15LL, 8200LL + 4, kMaxN + 16}) {
    INFO("n = " << n);
    REQUIRE_THROWS_AS(dequantize(nullptr, nullptr, nullptr, n, nullptr), std::invalid_argument);
  }
  REQUIRE_NOTHROW(dequantize(nullptr, nullptr, nullptr, 0, nullptr)); // n = 0: nothing to do
}

TEST_CASE("dequantize speed", "[.speed]") {
  require_hopper();
  const long long n = 1LL << 28;
  watch(0, false);
  steps::DeviceBuffer<std::uint8_t> x(static_cast<std::size_t>(n));
  steps::DeviceBuffer<float> scales(static_cast<std::size_t>(n / kScaleBlock));
  steps::DeviceBuffer<std::uint16_t> y(static_cast<std::size_t>(n));
  x.fill_bytes(0x38); // 1.0
  scales.fill_bytes(0);
  steps::grade::time_speed(
      "dequantize of 2^28 E4M3 values (checked build)",
      [&](cudaStream_t st) {
        dequantize(reinterpret_cast<const __nv_fp8_e4m3*>(x.data()), scales.data(),
                   reinterpret_cast<__nv_bfloat16*>(y.data()), n, st);
      },
      static_cast<double>(n) * 3 + static_cast<double>(n / kScaleBlock) * 4);
}
