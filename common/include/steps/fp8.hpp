/// @file fp8.hpp
/// @brief FP8 on the host: encode and decode E4M3 and E5M2, written out so
///        the formats can be read, and checked against cuda_fp8.h.
///
/// | format | sign / exponent / mantissa bits | bias | largest finite | smallest normal | smallest subnormal | inf | NaN |
/// |---|---|---|---|---|---|---|---|
/// | E4M3 | 1 / 4 / 3 | 7  | 448   | 2^-6  | 2^-9  | none | S.1111.111 |
/// | E5M2 | 1 / 5 / 2 | 15 | 57344 | 2^-14 | 2^-16 | S.11111.00 | S.11111.{01,10,11} |
///
/// Encoding rounds to nearest, ties to even. With saturation (the usual
/// choice for tensors, `__NV_SATFINITE`), values beyond the largest finite
/// value, infinities included, become the largest finite value of their
/// sign; without it (`__NV_NOSAT`), they become NaN (E4M3) or infinity (E5M2).
/// NaN stays NaN.
#pragma once

#include <array>
#include <cstdint>

namespace steps {

/// The two FP8 formats of Hopper's tensor cores.
enum class Fp8Format {
  e4m3, ///< more precision (3 mantissa bits), range +-448
  e5m2, ///< more range (+-57344), 2 mantissa bits
};

/// Facts about an FP8 format.
struct Fp8Info {
  int exponent_bits;      ///< 4 or 5
  int mantissa_bits;      ///< 3 or 2
  int bias;               ///< 7 or 15
  double max_finite;      ///< 448 or 57344
  double min_normal;      ///< 2^-6 or 2^-14
  double min_subnormal;   ///< 2^-9 or 2^-16
  bool has_infinity;      ///< false for E4M3
};

/// The facts of `format`.
Fp8Info fp8_info(Fp8Format format);

/// The value of an FP8 code (NaN codes give NaN).
float fp8_decode(std::uint8_t code, Fp8Format format);

/// The FP8 code nearest to `x` (ties to even). `saturate`: out-of-range
/// values become the largest finite value instead of NaN / infinity.
std::uint8_t fp8_encode(float x, Fp8Format format, bool saturate = true);

/// The value of every E4M3 code (NaN codes: NaN), as a 256-entry table.
const std::array<double, 256>& e4m3_values();

/// A BF16 bit pattern as a float (BF16 is the top half of an FP32).
float bf16_to_float(std::uint16_t bits);

/// The BF16 nearest to `x` (ties to even; NaN stays NaN), as its bit pattern.
std::uint16_t float_to_bf16(float x);

} // namespace steps
