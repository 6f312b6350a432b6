// Chapter 09: what every problem of the chapter shares: ordering events on a
// given GPU and exact comparisons of device arrays.
#pragma once

#include "gpus.cuh"

#include "steps/chapter.hpp"
#include "steps/handle.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ch09 {

using steps::DeviceBuffer;
using steps::DeviceScope;
using steps::Role;

/// An event on GPU `ordinal`, for ordering only (no timing).
inline steps::RawEvent make_event(int ordinal) {
  DeviceScope scope(ordinal);
  steps::RawEvent e;
  CUDA_CHECK(cudaEventCreateWithFlags(e.out(), cudaEventDisableTiming));
  return e;
}

/// The comparison of a whole device array with host values (exact).
inline steps::Comparison check_exact(int ordinal, const float* device, const std::vector<float>& want) {
  DeviceScope scope(ordinal);
  std::vector<float> got(want.size());
  CUDA_CHECK(cudaMemcpy(got.data(), device, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return steps::compare(got, want, steps::Tolerance::exact());
}

} // namespace ch09
