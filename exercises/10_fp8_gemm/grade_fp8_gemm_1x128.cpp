// Grader for exercise 10 (fp8_gemm_1x128). Built twice: against your
// exercises/ code (./tutorial grade 10) and against the solution (part of
// ./tutorial test).
//
// Every shape gets fresh random inputs: FP32 values whose magnitude changes
// from block to block, quantized on the host to E4M3 with one scale per
// 1 x 128 block of every row of A and of B. A and B are followed by a guard
// of E4M3 NaN codes and the scale arrays by NaN floats, so that a read past
// the end of an input shows as NaN in D. D lives in a guarded device array
// (writes outside it are caught) filled with NaN first (an element your
// code never writes stays NaN). The expected D is an FP64 product of the
// quantized inputs (cuBLAS SGEMM in FP32 for the large shapes, itself
// checked in FP64), and every element must lie within the bound derived at
// kGammaYours below. When every shape passes, ./tutorial grade runs the
// small ones again under compute-sanitizer (memcheck, racecheck).
//
// The code under test is built for sm_90a and the build's architectures from
// sm_89 on (FP8 mma.sync): on an older GPU every test is skipped (exit code 77, which ctest reports as skipped): Catch2
// cannot skip a single test in both of the versions the course supports, so
// the grader checks once and exits.
#include "fp8_gemm_1x128.hpp"

#include "steps/catch.hpp"
#include "steps/cublas.hpp"
#include "steps/error.hpp"
#include "steps/fp8.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/math.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kBlock = ex10::kScaleBlock;

/// Exits with 77 (skipped) unless GPU 0 has FP8 mma.sync: compute
/// capability 8.9 (Ada) or newer; exercise 10 is built for sm_90a and the
/// build's architectures from 89 on.
void require_fp8_mma() {
  steps::grade::require({{steps::Feature::fp8_mma}, ex10::fp8_gemm_code_probe()}, "FP8 mma.sync");
}

struct Shape {
  int m, n, k;
  bool per_tensor = false; // one scale for all of A, one for all of B
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "m = " << s.m << ", n = " << s.n << ", k = " << s.k << (s.per_tensor ? ", one scale per tensor" : "");
  return os.str();
}

int k_blocks(int k) { return steps::ceil_div(k, kBlock); }

/// E4M3 code of x, through BF16: x is first rounded to BF16 (nearest even),
/// then encoded by a table of steps::fp8_encode over all 65536 BF16 values.
/// The grader only needs valid E4M3 inputs of realistic size, and the table
/// makes quantizing tens of millions of values take milliseconds.
std::uint8_t encode_e4m3(float x) {
  static const std::vector<std::uint8_t> table = [] {
    std::vector<std::uint8_t> t(65536);
    for (std::uint32_t b = 0; b < 65536; ++b)
      t[b] = steps::fp8_encode(steps::bf16_to_float(static_cast<std::uint16_t>(b)), steps::Fp8Format::e4m3, true);
    return t;
  }();
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u); // round to nearest even at bit 16 (x is finite)
  return table[u >> 16];
}

/// Quantized inputs of one shape, on the host.
struct Inputs {
  int m = 0, n = 0, k = 0, kbs = 0;
  std::vector<std::uint8_t> a, b; // m x k, n x k codes
  std::vector<float> sa, sb;      // m x kbs, n x kbs scales
};

/// rows x k FP32 values uniform(-1, 1) * 2^e, e an integer in [-4, 4] chosen
/// per row and K block, quantized with amax / 448 per 1 x 128 block (or per
/// tensor). Different scales everywhere: a scale taken from the wrong row,
/// column or block shows.
void make_operand(int rows, int k, bool per_tensor, std::uint64_t seed, std::vector<std::uint8_t>& q,
                  std::vector<float>& scales) {
  const int kbs = k_blocks(k);
  std::vector<float> x(static_cast<std::size_t>(rows) * k);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < k; ++i) {
      const std::size_t at = static_cast<std::size_t>(r) * k + i;
      const int e = static_cast<int>(steps::splitmix64(seed ^ (static_cast<std::uint64_t>(r) << 20) ^ (i / kBlock)) % 9) - 4;
      x[at] = std::ldexp(steps::uniform_at(seed, at, -1.0f, 1.0f), e);
    }
  scales.assign(static_cast<std::size_t>(rows) * kbs, 0.0f);
  float tensor_amax = 0.0f;
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < k; ++i) {
      const float v = std::fabs(x[static_cast<std::size_t>(r) * k + i]);
      float& s = scales[static_cast<std::size_t>(r) * kbs + i / kBlock];
      s = std::max(s, v);
      tensor_amax = std::max(tensor_amax, v);
    }
  for (float& s : scales) {
    s = (per_tensor ? tensor_amax : s) / 448.0f;
    if (s == 0.0f) s = 1.0f; // an all-zero block: any scale will do
  }
  q.resize(x.size());
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < k; ++i) {
      const std::size_t at = static_cast<std::size_t>(r) * k + i;
      q[at] = encode_e4m3(x[at] / scales[static_cast<std::size_t>(r) * kbs + i / kBlock]);
    }
}

Inputs make_inputs(const Shape& s, std::uint64_t seed) {
  Inputs in;
  in.m = s.m;
  in.n = s.n;
  in.k = s.k;
  in.kbs = k_blocks(s.k);
  make_operand(s.m, s.k, s.per_tensor, seed, in.a, in.sa);
  make_operand(s.n, s.k, s.per_tensor, seed + 7, in.b, in.sb);
  return in;
}

/// The raw sums of one element of D per K block: P[kb] = sum of qA * qB over
/// the block, and the scaled ingredients. Exact in FP64.
struct ElementParts {
  std::vector<double> raw, scale, abs_raw;
  double value() const {
    double v = 0;
    for (std::size_t kb = 0; kb < raw.size(); ++kb) v += scale[kb] * raw[kb];
    return v;
  }
  double abs_sum() const {
    double v = 0;
    for (std::size_t kb = 0; kb < raw.size(); ++kb) v += scale[kb] * abs_raw[kb];
    return v;
  }
};

ElementParts element_parts(const Inputs& in, int r, int c) {
  const auto& v = steps::e4m3_values();
  ElementParts p;
  for (int kb = 0; kb < in.kbs; ++kb) {
    double sum = 0, abs_sum = 0;
    for (int i = kb * kBlock; i < std::min(in.k, (kb + 1) * kBlock); ++i) {
      const double prod = v[in.a[static_cast<std::size_t>(r) * in.k + i]] * v[in.b[static_cast<std::size_t>(c) * in.k + i]];
      sum += prod;
      abs_sum += std::fabs(prod);
    }
    p.raw.push_back(sum);
    p.abs_raw.push_back(abs_sum);
    p.scale.push_back(static_cast<double>(in.sa[static_cast<std::size_t>(r) * in.kbs + kb]) *
                      in.sb[static_cast<std::size_t>(c) * in.kbs + kb]);
  }
  return p;
}

/// The expected D: value R and S = sum of |terms| per element, and the
/// accuracy of R itself (|R - exact| <= gamma_ref * S).
struct Expected {
  std::vector<float> value, abs_sum;
  double gamma_ref = 0;
};

/// Up to this many multiply-adds, the FP64 CPU product; beyond, cuBLAS.
constexpr double kCpuLimit = double(1 << 27);

Expected cpu_expected(const Inputs& in) {
  Expected e;
  e.value.resize(static_cast<std::size_t>(in.m) * in.n);
  e.abs_sum.resize(e.value.size());
  for (int r = 0; r < in.m; ++r)
    for (int c = 0; c < in.n; ++c) {
      const ElementParts p = element_parts(in, r, c);
      e.value[static_cast<std::size_t>(r) * in.n + c] = static_cast<float>(p.value());
      e.abs_sum[static_cast<std::size_t>(r) * in.n + c] = static_cast<float>(p.abs_sum());
    }
  e.gamma_ref = std::ldexp(1.0, -23); // R and S stored as floats
  return e;
}

/// cuBLAS SGEMM (plain FP32) of the dequantized inputs, and of their
/// absolute values for S; checked in FP64 on 256 elements.
Expected cublas_expected(const Inputs& in, std::uint64_t seed) {
  const auto& v = steps::e4m3_values();
  auto dequantize = [&](const std::vector<std::uint8_t>& q, const std::vector<float>& s, bool absolute) {
    std::vector<float> x(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) {
      const std::size_t row = i / in.k, kb = (i % in.k) / kBlock;
      const float f = static_cast<float>(v[q[i]]) * s[row * in.kbs + kb];
      x[i] = absolute ? std::fabs(f) : f;
    }
    return x;
  };
  Expected e;
  steps::DeviceBuffer<float> a(in.a.size()), b(in.b.size()), d(static_cast<std::size_t>(in.m) * in.n);
  steps::CublasHandle handle;
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH)); // FP32, no TF32
  const float one = 1.0f, zero = 0.0f;
  for (const bool absolute : {false, true}) {
    a.copy_from_host(dequantize(in.a, in.sa, absolute));
    b.copy_from_host(dequantize(in.b, in.sb, absolute));
    // Row-major D = A B^T is column-major D^T = B A^T (B: column-major k x n, transposed).
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, in.n, in.m, in.k, &one, b.data(), in.k, a.data(),
                             in.k, &zero, d.data(), in.n));
    CUDA_CHECK(cudaDeviceSynchronize());
    (absolute ? e.abs_sum : e.value) = d.to_host();
  }
  // FP32 sums in any order: (k - 1) * 2^-24 of S; one rounding per dequantized value and per product.
  e.gamma_ref = (in.k + 4) * std::ldexp(1.0, -24);
  for (int s = 0; s < 256; ++s) {
    const int r = static_cast<int>(steps::splitmix64(seed + 3 * s) % in.m);
    const int c = static_cast<int>(steps::splitmix64(seed + 3 * s + 1) % in.n);
    const ElementParts p = element_parts(in, r, c);
    const double got = e.value[static_cast<std::size_t>(r) * in.n + c];
    if (!(std::fabs(got - p.value()) <= e.gamma_ref * p.abs_sum()))
      throw std::runtime_error("the grader's own cuBLAS reference is wrong at D(" + std::to_string(r) + ", " +
                               std::to_string(c) + "): " + steps::format_value(got) + " instead of " +
                               steps::format_value(p.value()) + " (not your code's fault: please report it)");
  }
  return e;
}

/// BF16 unit roundoff: rounding to nearest moves a value by at most 2^-8 of itself.
constexpr double kBf16Roundoff = 1.0 / 256.0;
/// Your accumulation error, as a fraction of S: with promotion every 128 K,
/// at most 4 mma k32 steps add up inside the tensor core, which keeps about
/// 14 bits of the aligned sum (about 2^-13 per step, 2^-11 for 4); the
/// bound allows twice that. A version without tensor cores, in plain FP32,
/// is far inside it. Each element must meet
///   |got - R| <= 2^-8 |R| + (1 + 2^-8) (gamma + gamma_ref) S:
/// your FP32 value is within gamma S of the exact product, R within
/// gamma_ref S, and the BF16 rounding adds at most 2^-8 of the value.
constexpr double kGammaYours = 1.0 / 1024.0;

/// A guess is "it": within the rounding of the output and half the allowed accumulation error.
bool matches(double got, double guess, double s) {
  return std::fabs(got - guess) <= kBf16Roundoff * std::fabs(guess) + 0.5 * kGammaYours * s;
}

/// What went wrong at the first bad element, in words: the value is compared
/// with the results of the usual mistakes.
std::string diagnose(const Inputs& in, int r, int c, double got) {
  const std::string at = "D(" + std::to_string(r) + ", " + std::to_string(c) + ")";
  if (std::isnan(got))
    return at + " is NaN: it was never written, or it was computed from a NaN (the bytes after the end of A, B "
                "and of each scale array hold NaN, so a read past an end shows here). Does your epilogue write all "
                "four registers of every mma tile (rows g and g + 8, columns 2t and 2t + 1, with g = lane / 4, "
                "t = lane % 4)? Do your scale reads stay inside rows < m and columns < n?";
  const ElementParts p = element_parts(in, r, c);
  const double s = p.abs_sum();
  const int kbs = in.kbs;
  double no_tail = 0, carried = 0, running = 0, raw_total = 0;
  for (int kb = 0; kb < kbs; ++kb) {
    if (kb < in.k / kBlock) no_tail += p.scale[kb] * p.raw[kb];
    running += p.raw[kb];
    carried += p.scale[kb] * running;
    raw_total += p.raw[kb];
  }
  if (got == 0 && p.value() != 0)
    return at + " is 0: nothing was added to it. Is the number of K blocks right (ceil(k / 128), not 0), and "
                "does the promotion add into the totals that the epilogue stores?";
  if (in.k % kBlock != 0 && matches(got, no_tail, s))
    return at + " is the product without the last, partial K block (k = " + std::to_string(kbs - 1) + " * 128 .. " +
           std::to_string(in.k - 1) + "): count the K blocks with ceil_div(k, 128).";
  if (kbs > 1 && matches(got, carried, s))
    return at + " adds the earlier K blocks again in every block: the partial sums must restart from zero for "
                "each K block (the tensor cores accumulate into them).";
  if (kbs > 1 && (matches(got, raw_total * p.scale[kbs - 1], s) || matches(got, raw_total * p.scale[0], s)))
    return at + " is the whole K sum scaled once: scale and add each K block's partial sums separately "
                "(promotion), with that block's two scales.";
  if (matches(got, raw_total, s))
    return at + " is the unscaled sum: multiply each K block's partial sums by scale_a * scale_b.";
  return at + " is wrong. Check which row and column each accumulator register holds (register j of mma tile "
              "(mi, ni): row mi * 16 + g + 8 * (j / 2), column ni * 8 + 2t + j % 2, from the warp's first row and "
              "column) and the scale indices: scale_a[row * kbs + kb], scale_b[col * kbs + kb].";
}

/// One shape's inputs on the GPU. A and B are followed by a guard of E4M3
/// NaN codes (0x7F) and the scales live in guarded arrays (NaN guards): a
/// read past the end of an input (a K tail read whole in the last row, a
/// scale of a row that does not exist) turns results into NaN. Under
/// compute-sanitizer (STEPS_SANITIZE) there are no guards, so memcheck sees
/// every such read.
struct DeviceInputs {
  explicit DeviceInputs(const Inputs& in)
      : m(in.m), n(in.n), k(in.k), a(codes_on_gpu(in.a)), b(codes_on_gpu(in.b)), sa(in.sa.size()), sb(in.sb.size()) {
    sa.upload(in.sa.data());
    sb.upload(in.sb.data());
  }
  static steps::DeviceBuffer<std::uint8_t> codes_on_gpu(const std::vector<std::uint8_t>& codes) {
    std::vector<std::uint8_t> padded(codes);
    padded.resize(codes.size() + steps::GuardedBuffer<std::uint8_t>::default_guard(), 0x7F);
    steps::DeviceBuffer<std::uint8_t> d(padded.size());
    d.copy_from_host(padded);
    return d;
  }
  /// Your function, D = A * B^T into `d`.
  void run(std::uint16_t* d, cudaStream_t stream) const {
    ex10::fp8_gemm_1x128(m, n, k, reinterpret_cast<const __nv_fp8_e4m3*>(a.data()), sa.data(),
                         reinterpret_cast<const __nv_fp8_e4m3*>(b.data()), sb.data(),
                         reinterpret_cast<__nv_bfloat16*>(d), stream);
  }
  int m, n, k;
  steps::DeviceBuffer<std::uint8_t> a, b;
  steps::GuardedBuffer<float> sa, sb;
};

// Runs your function on one shape and checks everything. Returns "" when correct.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  require_fp8_mma();
  const Inputs in = make_inputs(s, seed);
  const DeviceInputs dev(in);
  steps::GuardedBuffer<std::uint16_t> d(static_cast<std::size_t>(s.m) * s.n); // starts as 0xFFFF: BF16 NaN
  // A non-blocking stream with the grader's work still pending ahead of the
  // call: A, B and the scales are scrambled until it restores them, D is
  // poisoned by it (steps/grade_support.hpp). Work not in `stream` is wrong.
  steps::grade::BusyStream stream;
  stream.restores(const_cast<std::uint8_t*>(dev.a.data()), dev.a.size() / 4 * 4);
  stream.restores(const_cast<std::uint8_t*>(dev.b.data()), dev.b.size() / 4 * 4);
  stream.restores(const_cast<float*>(dev.sa.data()), dev.sa.size() * sizeof(float));
  stream.restores(const_cast<float*>(dev.sb.data()), dev.sb.size() * sizeof(float));
  stream.fills(d.data(), d.size() * sizeof(std::uint16_t), 0xFF);
  stream.start();
  dev.run(d.data(), stream);
  stream.finish();

  const steps::Comparison guards = d.check_guards();
  if (!guards.ok)
    return "D: " + guards.describe() +
           "\n  Hint: the last tiles overhang D when m or n is not a multiple of 128: store only where "
           "row < m and col < n.";
  const std::vector<std::uint16_t> got = d.download();
  const double macs = static_cast<double>(s.m) * s.n * static_cast<double>(s.k);
  const Expected e = macs <= kCpuLimit ? cpu_expected(in) : cublas_expected(in, seed);
  const double g = (1 + kBf16Roundoff) * (kGammaYours + e.gamma_ref);
  const steps::Comparison c = steps::compare_each(
      got.size(), [&](std::size_t i) { return steps::bf16_to_float(got[i]); }, [&](std::size_t i) { return e.value[i]; },
      [&](std::size_t i, double r) { return kBf16Roundoff * std::fabs(r) + g * e.abs_sum[i]; }, INFINITY);
  if (c.ok) return "";
  const int r = static_cast<int>(c.first_bad / s.n), col = static_cast<int>(c.first_bad % s.n);
  std::ostringstream os;
  os << "D is wrong: " << c.bad_count << " of " << got.size() << " elements outside the bound; the first is D(" << r
     << ", " << col << ") = " << steps::format_value(c.got_at_first_bad) << ", expected "
     << steps::format_value(c.expected_at_first_bad) << "\n  Hint: " << diagnose(in, r, col, c.got_at_first_bad);
  return os.str();
}

// This exercise's words for a CUDA error (the harness adds the general ones).
std::string fp8_hint(const steps::Error& e) {
  if (e.code_name() == "cudaErrorIllegalAddress")
    return "check the bounds of the epilogue and of the scale indices (rows < m, columns < n).";
  return "";
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape, fp8_hint); }

} // namespace

TEST_CASE("1 x 128 scales, small and odd shapes", "[fp8]") {
  grade({{1, 1, 16}, {1, 8, 32}, {3, 5, 48}, {16, 8, 32}, {17, 9, 144}, {1, 13, 400}, {128, 128, 128},
         {127, 129, 256}, {128, 200, 1040}, {129, 257, 464}, {64, 1000, 1008}, {300, 7, 272}, {256, 384, 2048}});
}

TEST_CASE("one scale per tensor (every block scale equal)", "[fp8]") {
  grade({{128, 128, 128, true}, {129, 257, 464, true}, {1, 64, 1040, true}, {200, 136, 4112, true}});
}

TEST_CASE("M = 1 and M = 128 with a long K", "[fp8]") {
  grade({{1, 4096, 7168}, {128, 512, 7168}, {1, 300, 4112}});
}

TEST_CASE("large shapes", "[fp8][large]") {
  grade({{1024, 1000, 4112}, {128, 4096, 7168}, {2048, 2048, 1280}, {6144, 6144, 1280}});
}

// The function's limit (fp8_gemm_1x128.hpp): every matrix under 2^31
// elements, so that offsets fit in an int. Nothing is allocated: it must
// refuse these shapes before it touches memory.
TEST_CASE("sizes past 2^31 elements are refused", "[fp8]") {
  const std::vector<Shape> too_big = {{65536, 16, 32768}, {16, 65536, 32768}, {65536, 32768, 16}};
  for (const Shape& s : too_big) {
    INFO(name_of(s) << ": A, B or D has 2^31 elements");
    REQUIRE_THROWS_AS(ex10::fp8_gemm_1x128(s.m, s.n, s.k, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
                      std::invalid_argument);
  }
}

TEST_CASE("fp8_gemm_1x128 speed", "[.speed]") {
  const int m = 4096, n = 4096, k = 4096;
  REQUIRE(run_shape({m, n, k}, 99).empty());
  const DeviceInputs dev(make_inputs({m, n, k}, 5));
  steps::DeviceBuffer<std::uint16_t> d(static_cast<std::size_t>(m) * n);
  steps::TimingOptions opts;
  opts.iters = 20;
  const auto ms = steps::time_gpu([&](cudaStream_t s) { dev.run(d.data(), s); }, opts);
  steps::grade::report_speed("fp8_gemm_1x128 at 4096 x 4096 x 4096", ms, 0, 2.0 * m * n * k);
}
