#include "steps/fp8.hpp"

#include <cstring>

#include <cmath>
#include <limits>

namespace steps {

Fp8Info fp8_info(Fp8Format f) {
  if (f == Fp8Format::e4m3) return {4, 3, 7, 448.0, std::ldexp(1.0, -6), std::ldexp(1.0, -9), false};
  return {5, 2, 15, 57344.0, std::ldexp(1.0, -14), std::ldexp(1.0, -16), true};
}

namespace {

// Value of the 7 magnitude bits (exponent and mantissa), or NaN / infinity.
double magnitude(unsigned bits, Fp8Format f) {
  const Fp8Info info = fp8_info(f);
  const unsigned m_mask = (1u << info.mantissa_bits) - 1;
  const unsigned e = bits >> info.mantissa_bits;
  const unsigned m = bits & m_mask;
  const unsigned e_max = (1u << info.exponent_bits) - 1;
  if (f == Fp8Format::e4m3 && e == e_max && m == m_mask) return std::numeric_limits<double>::quiet_NaN();
  if (f == Fp8Format::e5m2 && e == e_max)
    return m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  const double frac = static_cast<double>(m) / static_cast<double>(1u << info.mantissa_bits);
  if (e == 0) return std::ldexp(frac, 1 - info.bias); // subnormal: 0.m x 2^(1 - bias)
  return std::ldexp(1.0 + frac, static_cast<int>(e) - info.bias);
}

// The largest magnitude code that is finite: 0x7E for E4M3, 0x7B for E5M2.
unsigned max_finite_bits(Fp8Format f) { return f == Fp8Format::e4m3 ? 0x7Eu : 0x7Bu; }

} // namespace

float fp8_decode(std::uint8_t code, Fp8Format f) {
  const double v = magnitude(code & 0x7Fu, f);
  return static_cast<float>((code & 0x80u) ? -v : v);
}

std::uint8_t fp8_encode(float x, Fp8Format f, bool saturate) {
  const std::uint8_t nan = f == Fp8Format::e4m3 ? 0x7F : 0x7E;
  if (std::isnan(x)) return nan;
  const unsigned sign = std::signbit(x) ? 0x80u : 0u;
  const double a = std::fabs(static_cast<double>(x));
  const unsigned top = max_finite_bits(f);
  const std::uint8_t overflow = saturate ? static_cast<std::uint8_t>(sign | top)
                                         : static_cast<std::uint8_t>(f == Fp8Format::e4m3 ? (sign | 0x7Fu) : (sign | 0x7Cu));
  if (std::isinf(x)) return overflow;

  // Positive codes 0 .. top are ordered by value, so find the two neighbours
  // of `a` and pick the nearer; on a tie, the even code (mantissa LSB 0).
  // Above the top, the next value would be top + one step of the top binade.
  const double v_top = magnitude(top, f);
  const double step_top = v_top - magnitude(top - 1, f);
  unsigned lo = 0;
  double v_lo = 0, v_hi = 0;
  if (a >= v_top) {
    lo = top;
    v_lo = v_top;
    v_hi = v_top + step_top;
  } else {
    unsigned hi = top; // invariant: value(lo) <= a < value(hi)
    while (hi - lo > 1) {
      const unsigned mid = (lo + hi) / 2;
      (magnitude(mid, f) <= a ? lo : hi) = mid;
    }
    v_lo = magnitude(lo, f);
    v_hi = magnitude(lo + 1, f);
  }
  const double midpoint = 0.5 * (v_lo + v_hi); // exact in double
  unsigned bits = lo;
  if (a > midpoint || (a == midpoint && (lo & 1u))) bits = lo + 1;
  if (bits > top) return overflow;
  return static_cast<std::uint8_t>(sign | bits);
}

const std::array<double, 256>& e4m3_values() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int c = 0; c < 256; ++c) t[c] = fp8_decode(static_cast<std::uint8_t>(c), Fp8Format::e4m3);
    return t;
  }();
  return table;
}

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::uint16_t float_to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u); // quiet NaN
  const std::uint32_t lsb = (u >> 16) & 1u;
  u += 0x7FFFu + lsb; // round to nearest, ties to even
  return static_cast<std::uint16_t>(u >> 16);
}

} // namespace steps
