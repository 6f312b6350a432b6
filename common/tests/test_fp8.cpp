// FP8 encode/decode against the CUDA toolkit's own host conversions
// (cuda_fp8.h), for all 256 codes and a dense sweep of floats.
#include "steps/catch.hpp"
#include "steps/fp8.hpp"

#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

using steps::Fp8Format;

namespace {

__nv_fp8_interpretation_t cuda_kind(Fp8Format f) { return f == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2; }

float cuda_decode(std::uint8_t code, Fp8Format f) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(code, cuda_kind(f));
  return __half2float(__half(h));
}

std::uint8_t cuda_encode(float x, Fp8Format f, bool saturate) {
  return __nv_cvt_float_to_fp8(x, saturate ? __NV_SATFINITE : __NV_NOSAT, cuda_kind(f));
}

bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); }

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

} // namespace

TEST_CASE("the format facts", "[fp8]") {
  const auto e4 = steps::fp8_info(Fp8Format::e4m3);
  CHECK(e4.max_finite == 448.0);
  CHECK(steps::fp8_decode(0x7E, Fp8Format::e4m3) == 448.0f);
  CHECK(steps::fp8_decode(0x01, Fp8Format::e4m3) == std::ldexp(1.0f, -9));
  CHECK(std::isnan(steps::fp8_decode(0x7F, Fp8Format::e4m3)));
  CHECK_FALSE(e4.has_infinity);
  const auto e5 = steps::fp8_info(Fp8Format::e5m2);
  CHECK(e5.max_finite == 57344.0);
  CHECK(steps::fp8_decode(0x7B, Fp8Format::e5m2) == 57344.0f);
  CHECK(std::isinf(steps::fp8_decode(0x7C, Fp8Format::e5m2)));
  CHECK(steps::fp8_decode(0x01, Fp8Format::e5m2) == std::ldexp(1.0f, -16));
}

TEST_CASE("all 256 codes decode as cuda_fp8.h decodes them", "[fp8]") {
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    for (unsigned c = 0; c < 256; ++c) {
      INFO("code 0x" << std::hex << c << (f == Fp8Format::e4m3 ? " E4M3" : " E5M2"));
      CHECK(same(steps::fp8_decode(static_cast<std::uint8_t>(c), f), cuda_decode(static_cast<std::uint8_t>(c), f)));
    }
  }
}

TEST_CASE("every finite code survives a round trip", "[fp8]") {
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    for (unsigned c = 0; c < 256; ++c) {
      const float v = steps::fp8_decode(static_cast<std::uint8_t>(c), f);
      if (!std::isfinite(v)) continue;
      CHECK(steps::fp8_encode(v, f) == c);
    }
  }
}

TEST_CASE("encoding matches cuda_fp8.h: ties, subnormals, overflow, a dense sweep", "[fp8]") {
  std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 448.0f, 464.0f, 465.0f, 480.0f, 1e9f,
                           -1e9f, 57344.0f, 61440.0f, 61441.0f, 1e-30f, -1e-30f};
  // Every FP8 value, the midpoints between neighbours and the floats just
  // around each: where rounding decides.
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    for (unsigned c = 0; c < 0x7F; ++c) {
      const double lo = steps::fp8_decode(static_cast<std::uint8_t>(c), f);
      const double hi = steps::fp8_decode(static_cast<std::uint8_t>(c + 1), f);
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      for (double v : {lo, 0.5 * (lo + hi)}) {
        const float m = static_cast<float>(v);
        for (float x : {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY)}) {
          xs.push_back(x);
          xs.push_back(-x);
        }
      }
    }
  }
  // A sweep over all float bit patterns with a prime stride.
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 4099) xs.push_back(from_bits(static_cast<std::uint32_t>(u)));

  std::size_t mismatches = 0;
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    for (bool sat : {true, false}) {
      for (float x : xs) {
        const std::uint8_t mine = steps::fp8_encode(x, f, sat);
        const std::uint8_t theirs = cuda_encode(x, f, sat);
        // Any NaN code is a NaN: compare values for those.
        const bool ok = mine == theirs || (std::isnan(steps::fp8_decode(mine, f)) && std::isnan(cuda_decode(theirs, f)));
        if (!ok && mismatches++ < 10) {
          INFO("x = " << x << (f == Fp8Format::e4m3 ? " E4M3" : " E5M2") << (sat ? " saturating" : " no saturation"));
          CHECK(int(mine) == int(theirs));
        }
      }
    }
  }
  CHECK(mismatches == 0);
}
