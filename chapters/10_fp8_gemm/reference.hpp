// Chapter 10: the host side of verification: FP64 reference products, the
// error bound a BF16 result of an FP8 product must meet (and each version's
// accumulation error in it), the check of the GPU's quantization and the
// quantization error of a scaling. Host code only (no kernels).
#pragma once

#include "fp8_gemm.cuh"

#include "steps/compare.hpp"
#include "steps/fp8.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ch10 {

/// One quantized operand on the host: rows x k codes and their scales.
struct HostOperand {
  int rows = 0, k = 0;
  Scaling scaling = Scaling::fine;
  bool is_b = false;
  std::vector<std::uint8_t> q;  ///< rows x k codes, row-major
  std::vector<float> scales;    ///< OperandScales::count(scaling, is_b, rows, k) values

  /// The scale of (row, K block kb).
  float scale(int row, int kb) const {
    OperandScales s = OperandScales::layout(scaling, is_b, k, scales.data());
    return s.at(row, kb);
  }
};

/// The scales of an operand K-block-major: A's in Fp8Gemm::sa_by_kb's
/// layout (one per row, the K-block columns sa_by_kb_ld(rows) floats apart),
/// B's in sb_by_kb's (one per 128-row block, sb_by_kb_ld(rows) apart, and 4
/// floats more at the end). The padding is 0.
inline std::vector<float> scales_by_k_block(const HostOperand& x) {
  const int rows_per_scale = x.is_b ? kScaleBlock : 1;
  const int scale_rows = steps::ceil_div(x.rows, rows_per_scale);
  const int ld = sa_by_kb_ld(scale_rows), kbs = k_blocks(x.k);
  std::vector<float> out(static_cast<std::size_t>(ld) * kbs + (x.is_b ? 4 : 0), 0.0f);
  for (int kb = 0; kb < kbs; ++kb)
    for (int r = 0; r < scale_rows; ++r) out[static_cast<std::size_t>(kb) * ld + r] = x.scale(r * rows_per_scale, kb);
  return out;
}

/// Element (r, c) of the scaled product, in FP64 (exact up to FP64 rounding),
/// and the sum of the absolute values of its terms: the size the rounding
/// errors of any summation order scale with.
struct ExactElement {
  double value = 0;
  double abs_sum = 0;
};

inline ExactElement exact_element(const HostOperand& a, const HostOperand& b, int r, int c) {
  const auto& v = steps::e4m3_values();
  const std::uint8_t* qa = a.q.data() + static_cast<std::size_t>(r) * a.k;
  const std::uint8_t* qb = b.q.data() + static_cast<std::size_t>(c) * b.k;
  ExactElement e;
  for (int kb = 0; kb < k_blocks(a.k); ++kb) {
    double sum = 0, abs_sum = 0;
    for (int k = kb * kScaleBlock; k < std::min(a.k, (kb + 1) * kScaleBlock); ++k) {
      const double p = v[qa[k]] * v[qb[k]]; // exact: 4-bit significands, FP64 has 53
      sum += p;
      abs_sum += std::fabs(p);
    }
    const double s = static_cast<double>(a.scale(r, kb)) * b.scale(c, kb);
    e.value += s * sum;
    e.abs_sum += s * abs_sum;
  }
  return e;
}

/// The expected result of a whole product: value R and bound size S per
/// element (m x n, row-major), and how accurate R itself is.
struct Expected {
  std::vector<float> value;    ///< R
  std::vector<float> abs_sum;  ///< S = sum over k of |sA sB qA qB|
  double gamma_ref = 0;        ///< |R - exact| <= gamma_ref * S
};

/// The full FP64 product on the CPU (for small problems).
inline Expected cpu_reference(const HostOperand& a, const HostOperand& b) {
  Expected e;
  const std::size_t m = a.rows, n = b.rows;
  e.value.resize(m * n);
  e.abs_sum.resize(m * n);
  for (std::size_t r = 0; r < m; ++r)
    for (std::size_t c = 0; c < n; ++c) {
      const ExactElement x = exact_element(a, b, static_cast<int>(r), static_cast<int>(c));
      e.value[r * n + c] = static_cast<float>(x.value);
      e.abs_sum[r * n + c] = static_cast<float>(x.abs_sum);
    }
  e.gamma_ref = std::ldexp(1.0, -23); // storing R and S as floats: one rounding each
  return e;
}

/// How far a version's FP32 value may be from the exact product, as a
/// fraction gamma of S = sum over k of |sA sB qA qB| (the bound of any
/// summation order's rounding error is proportional to S). Each row of the
/// chapter carries the gamma of the way it accumulates.
using Gamma = double (*)(int k);

/// CUDA-core FP32 (v1, the mistakes): a chain of at most 128 fused
/// multiply-adds per block (128 roundings of 2^-24), 3 for scaling it, one
/// per block for the total: (128 + 4 + K blocks) * 2^-24.
inline double gamma_cuda_cores(int k) { return (kScaleBlock + 4 + k_blocks(k)) * std::ldexp(1.0, -24); }

/// Tensor cores with promotion every 128 K (v2, v3, v4, yours): at most 4
/// mma k32 steps accumulate inside the tensor core, which keeps about 14 bits
/// of the aligned sum (DeepSeek-V3, section 3.3.2): about 2^-13 of the sum
/// per step, 2^-11 for 4; twice that as margin: 2^-10.
inline double gamma_tensor_cores(int) { return std::ldexp(1.0, -10); }

/// cuBLASLt: its promotion interval is not documented and fast accumulation
/// does not promote at all (up to K / 32 steps inside the tensor core): 2^-8.
inline double gamma_cublaslt(int) { return std::ldexp(1.0, -8); }

/// The BF16 control row (cublas_bf16.cuh): its inputs s * q rounded to BF16
/// move each product by at most (2 u + u^2) of itself, u = 2^-8 (BF16's unit
/// roundoff), plus one FP32 rounding each when dequantized; then cuBLAS sums
/// exact BF16 products in FP32 on the tensor cores: (k + 4) 2^-23, twice the
/// bound of any round-to-nearest FP32 order, for its unknown order and
/// rounding mode.
inline double gamma_bf16_inputs(int k) {
  return 2 * std::ldexp(1.0, -8) + std::ldexp(1.0, -16) + 4 * std::ldexp(1.0, -24) + (k + 4) * std::ldexp(1.0, -23);
}

/// Unit roundoff of BF16 (8 significant bits): rounding to nearest moves a
/// value by at most 2^-8 of itself.
constexpr double kBf16Roundoff = 1.0 / 256.0;

/// Checks a BF16 result against `e`, element by element:
///
///   |got - R| <= 2^-8 |R| + (1 + 2^-8) (gamma + gamma_ref) S
///
/// Why: the kernel's FP32 value x is within gamma * S of the exact product
/// (its accumulation error), R within gamma_ref * S of it, and rounding x to
/// BF16 moves it by at most 2^-8 |x| <= 2^-8 (|R| + (gamma + gamma_ref) S).
/// The bound is derived per element, so there is no L2 bound on top of it.
inline steps::Comparison compare_bf16(const std::vector<std::uint16_t>& got, const Expected& e, double gamma,
                                      std::size_t columns) {
  const double g = (1.0 + kBf16Roundoff) * (gamma + e.gamma_ref);
  steps::Comparison c = steps::compare_each(
      std::min(got.size(), e.value.size()), [&](std::size_t i) { return steps::bf16_to_float(got[i]); },
      [&](std::size_t i) { return e.value[i]; },
      [&](std::size_t i, double r) { return kBf16Roundoff * std::fabs(r) + g * e.abs_sum[i]; }, INFINITY);
  c.row_length = columns;
  if (got.size() != e.value.size()) c.ok = false;
  return c;
}

/// Checks the GPU's quantization of `x` (rows x k FP32) against the host:
/// every scale equals amax / 448 of its block (1 for an all-zero block), and
/// on the rows listed every code has the value of steps::fp8_encode(x / scale)
/// with saturation. Returns "" when all match, else what differs.
inline std::string check_quantization(const std::vector<float>& x, const HostOperand& op, const std::vector<int>& rows) {
  const int row_blocks = op.scaling == Scaling::per_tensor ? 1 : (op.is_b ? steps::ceil_div(op.rows, kScaleBlock) : op.rows);
  const int kbs = op.scaling == Scaling::per_tensor ? 1 : k_blocks(op.k);
  std::vector<float> amax(static_cast<std::size_t>(row_blocks) * kbs, 0.0f);
  for (int r = 0; r < op.rows; ++r)
    for (int k = 0; k < op.k; ++k) {
      const std::size_t blk = op.scaling == Scaling::per_tensor
                                  ? 0
                                  : static_cast<std::size_t>(op.is_b ? r / kScaleBlock : r) * kbs + k / kScaleBlock;
      amax[blk] = std::max(amax[blk], std::fabs(x[static_cast<std::size_t>(r) * op.k + k]));
    }
  const char* name = op.is_b ? "B" : "A";
  for (std::size_t i = 0; i < amax.size(); ++i) {
    const float want = amax[i] > 0.0f ? amax[i] / kE4m3Max : 1.0f;
    if (op.scales[i] != want)
      return std::string("scale ") + std::to_string(i) + " of " + name + ": expected " + steps::format_value(want) +
             ", the GPU computed " + steps::format_value(op.scales[i]);
  }
  const auto& values = steps::e4m3_values();
  for (const int r : rows)
    for (int k = 0; k < op.k; ++k) {
      const std::size_t i = static_cast<std::size_t>(r) * op.k + k;
      const std::uint8_t want = steps::fp8_encode(x[i] / op.scale(r, k / kScaleBlock), steps::Fp8Format::e4m3, true);
      // Compared as values: +0 and -0 (codes 0x00 and 0x80) are the same number.
      if (values[op.q[i]] != values[want])
        return std::string("code of ") + name + "(" + std::to_string(r) + ", " + std::to_string(k) + "): expected " +
               std::to_string(want) + ", the GPU computed " + std::to_string(op.q[i]);
    }
  return "";
}

/// The rows check_quantization() looks at: the first, the last and 16
/// random ones.
inline std::vector<int> rows_to_check(int rows, std::uint64_t seed) {
  std::vector<int> r = {0, rows - 1};
  for (int i = 0; i < 16; ++i) r.push_back(static_cast<int>(steps::splitmix64(seed ^ i) % rows));
  return r;
}

/// Elements of D checked in FP64 beyond the full CPU product: the 4 corners
/// and `count` random ones.
inline std::vector<std::pair<int, int>> sample_positions(std::uint64_t seed, int m, int n, int count) {
  std::vector<std::pair<int, int>> s = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
  for (int i = 0; i < count; ++i)
    s.push_back({static_cast<int>(steps::splitmix64(seed ^ (0xC0FFEEull + 2 * i)) % m),
                 static_cast<int>(steps::splitmix64(seed + 2 * i + 1) % n)});
  return s;
}

/// The p-quantile (0 < p <= 1) of sorted values by the nearest-rank rule:
/// the smallest value with at least p * n of the n values at or below it,
/// i.e. element ceil(p n) - 1 (0-based). Empty input: NaN.
inline double nearest_rank(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return NAN;
  const double rank = std::ceil(p * static_cast<double>(sorted.size()));
  const std::size_t i = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

/// What FP8 costs before any GEMM rounding, at `count` elements: |R - T| / |T|
/// with T the exact product of the FP32 inputs `a32`, `b32` and R that of the
/// quantized ones (both in FP64). Every element when D has at most `count`
/// elements, else `count` distinct pseudo-random ones (a fixed sample, the
/// same for every scaling). Elements with T = 0 have no relative error and
/// are left out. Returns the median and the 90th percentile (nearest rank)
/// and the number of elements they are over.
struct QuantizationError {
  double median = 0, p90 = 0;
  std::size_t elements = 0;
};

/// The elements quantization_error() looks at (see there).
inline std::vector<std::pair<int, int>> quantization_sample(std::uint64_t seed, int m, int n, std::size_t count) {
  const std::size_t total = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  std::vector<std::pair<int, int>> s;
  if (total <= count) {
    s.reserve(total);
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) s.push_back({r, c});
    return s;
  }
  // Distinct elements: a random start and a stride coprime with the total
  // visit `count` different ones of 0 .. total - 1.
  std::size_t stride = static_cast<std::size_t>(steps::splitmix64(seed ^ 0x5A5A) % total) | 1;
  auto gcd = [](std::size_t x, std::size_t y) {
    while (y != 0) { const std::size_t t = x % y; x = y; y = t; }
    return x;
  };
  while (gcd(stride, total) != 1) stride += 2;
  std::size_t at = static_cast<std::size_t>(steps::splitmix64(seed ^ 0xA5A5) % total);
  s.reserve(count);
  for (std::size_t i = 0; i < count; ++i, at = (at + stride) % total)
    s.push_back({static_cast<int>(at / n), static_cast<int>(at % n)});
  return s;
}

inline QuantizationError quantization_error(const std::vector<float>& a32, const std::vector<float>& b32,
                                            const HostOperand& a, const HostOperand& b,
                                            const std::vector<std::pair<int, int>>& elements) {
  const std::size_t k = static_cast<std::size_t>(a.k);
  std::vector<double> rel;
  rel.reserve(elements.size());
  for (const auto& [r, c] : elements) {
    double t = 0;
    for (std::size_t kk = 0; kk < k; ++kk)
      t += static_cast<double>(a32[static_cast<std::size_t>(r) * k + kk]) * b32[static_cast<std::size_t>(c) * k + kk];
    if (t == 0) continue;
    rel.push_back(std::fabs(exact_element(a, b, r, c).value - t) / std::fabs(t));
  }
  std::sort(rel.begin(), rel.end());
  return {nearest_rank(rel, 0.5), nearest_rank(rel, 0.9), rel.size()};
}

} // namespace ch10
