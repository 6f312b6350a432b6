/// @file sgemm_tolerance.hpp
/// @brief How far an FP32 dot product may be from the exact one: the
///        tolerance of chapter 03's rows and of exercise 03's grader, in one
///        place. Host-only C++.
#pragma once

#include "steps/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace steps {

/// The inputs of the FP32 GEMM checks are uniform in [kGemmInputLo,
/// kGemmInputHi): rms 1 / sqrt(3) each.
constexpr float kGemmInputLo = -1.0f, kGemmInputHi = 1.0f;
/// rms of one product a * b of two such inputs: 1/3.
constexpr double kGemmRmsProduct = 1.0 / 3.0;

/// The tolerance of a result whose elements are FP32 sums of k products of
/// rms `s` (s = rms(a) * rms(b)), in any summation order.
///
/// Each addition rounds by up to u = 2^-24 of the running sum, whose size
/// after i terms is about s * sqrt(i). These k errors add up like a random
/// walk, to a standard deviation of about u * s * k / sqrt(6) against the
/// exact (FP64) product, and u * s * k / sqrt(3) for the difference of two
/// FP32 results (a version against cuBLAS). The bound per element is
/// 8 * u * s * k: about 20 of the first standard deviations, 14 of the second.
/// A correct kernel never fails it (16 million elements at 4096^3 reach about
/// 5.5), while a single wrong or missing product, of size ~ s, is far larger.
/// The relative L2 error of the whole matrix gets the same walk divided by
/// |C| ~ s * sqrt(k): bound 8 * u * sqrt(k). k = 0 is treated as k = 1 (an
/// empty sum is exactly 0 anyway).
inline Tolerance fp32_dot_tolerance(std::int64_t k, double s = kGemmRmsProduct) {
  const double u = std::ldexp(1.0, -24), kd = static_cast<double>(std::max<std::int64_t>(k, 1));
  return {8.0 * u * s * kd, 0.0, 8.0 * u * std::sqrt(kd)};
}

} // namespace steps
