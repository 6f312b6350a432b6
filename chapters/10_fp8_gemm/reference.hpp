// Chapter 10: the host side of verification: FP64 reference products, the
// error bound a BF16 result of an FP8 product must meet, and the check of
// the GPU's quantization. Host code only (no kernels).
#pragma once

#include "fp8_gemm.cuh"

#include "steps/compare.hpp"
#include "steps/fp8.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ch10 {

/// The value of every E4M3 code, from steps::fp8_decode (NaN codes: NaN).
inline const std::array<double, 256>& e4m3_values() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int c = 0; c < 256; ++c) t[c] = steps::fp8_decode(static_cast<std::uint8_t>(c), steps::Fp8Format::e4m3);
    return t;
  }();
  return table;
}

/// A BF16 bit pattern as a float (BF16 is the top half of an FP32).
inline float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

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

/// Element (r, c) of the scaled product, in FP64 (exact up to FP64 rounding),
/// and the sum of the absolute values of its terms: the size the rounding
/// errors of any summation order scale with.
struct ExactElement {
  double value = 0;
  double abs_sum = 0;
};

inline ExactElement exact_element(const HostOperand& a, const HostOperand& b, int r, int c) {
  const auto& v = e4m3_values();
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
/// `gamma` depends on how the version accumulates (see main.cu).
inline steps::Comparison compare_bf16(const std::vector<std::uint16_t>& got, const Expected& e, double gamma,
                                      std::size_t columns) {
  steps::Comparison c;
  c.count = got.size();
  c.row_length = columns;
  if (got.size() != e.value.size()) {
    c.ok = false;
    c.bad_count = 1;
    return c;
  }
  const double g = (1.0 + kBf16Roundoff) * (gamma + e.gamma_ref);
  double err2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double x = bf16_bits_to_float(got[i]);
    const double r = e.value[i];
    const bool finite = std::isfinite(x);
    const double diff = finite ? std::fabs(x - r) : INFINITY;
    if (!finite) c.non_finite = true;
    if (!(finite && diff <= kBf16Roundoff * std::fabs(r) + g * e.abs_sum[i])) {
      if (c.bad_count == 0) {
        c.first_bad = i;
        c.expected_at_first_bad = r;
        c.got_at_first_bad = x;
      }
      ++c.bad_count;
    }
    if (finite) {
      c.max_abs_error = std::fmax(c.max_abs_error, diff);
      err2 += diff * diff;
    }
    ref2 += r * r;
  }
  if (c.non_finite) c.max_abs_error = INFINITY;
  c.rel_l2_error = c.non_finite ? INFINITY : (ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  c.ok = c.bad_count == 0 && !c.non_finite;
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
  for (const int r : rows)
    for (int k = 0; k < op.k; ++k) {
      const std::size_t i = static_cast<std::size_t>(r) * op.k + k;
      const std::uint8_t want = steps::fp8_encode(x[i] / op.scale(r, k / kScaleBlock), steps::Fp8Format::e4m3, true);
      // Compared as values: +0 and -0 (codes 0x00 and 0x80) are the same number.
      if (e4m3_values()[op.q[i]] != e4m3_values()[want])
        return std::string("code of ") + name + "(" + std::to_string(r) + ", " + std::to_string(k) + "): expected " +
               std::to_string(want) + ", the GPU computed " + std::to_string(op.q[i]);
    }
  return "";
}

} // namespace ch10
