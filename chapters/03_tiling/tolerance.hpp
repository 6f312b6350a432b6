// Chapter 03: the FP32 dot-product tolerance lives in common
// (steps/sgemm_tolerance.hpp), where the exercise's grader finds it too;
// these are the chapter's names for it. Host-only C++.
#pragma once

#include "steps/sgemm_tolerance.hpp"

namespace ch03 {

using steps::fp32_dot_tolerance;
constexpr float kLo = steps::kGemmInputLo, kHi = steps::kGemmInputHi;
constexpr double kRmsProduct = steps::kGemmRmsProduct;

} // namespace ch03
