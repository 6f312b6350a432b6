/// @file random.hpp
/// @brief Seeded random data, identical on the CPU and the GPU.
///
/// Element i of a fill depends only on (seed, i), through a counter-based
/// hash (splitmix64), so the GPU can fill a gigabyte in microseconds and the
/// CPU can regenerate any element to check it. Tests and timings never run on
/// zeros: zeros hide unwritten outputs and can even run faster.
#pragma once

#include "steps/math.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace steps {

/// One round of the splitmix64 mixer: a cheap, well-mixed 64-bit hash.
STEPS_HD inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Element `i` of the uniform stream `seed`, in [lo, hi). Bit-identical on
/// host and device (the device path forbids fused multiply-add contraction).
STEPS_HD inline float uniform_at(std::uint64_t seed, std::uint64_t i, float lo, float hi) {
  const std::uint64_t h = splitmix64(splitmix64(seed) ^ i);
  const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f); // 24 random bits
#if defined(__CUDA_ARCH__)
  return __fadd_rn(lo, __fmul_rn(hi - lo, u));
#else
  return lo + (hi - lo) * u;
#endif
}

/// Fills host memory with uniform_at(seed, i, lo, hi) for i in [0, n).
void fill_uniform(float* host, std::size_t n, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);

/// A host vector of `n` uniform values.
std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);

/// Fills device memory with the same values fill_uniform() gives on the host.
void fill_uniform_device(float* device, std::size_t n, std::uint64_t seed, float lo = -1.0f,
                         float hi = 1.0f, cudaStream_t stream = nullptr);

/// Fills device memory with `n` BF16 values, as bit patterns: element i is
/// uniform_at(seed, i, lo, hi) rounded to the nearest BF16 (ties to even),
/// the value steps::float_to_bf16 (steps/fp8.hpp) gives for it on the host.
void fill_uniform_bf16_device(std::uint16_t* device, std::size_t n, std::uint64_t seed, float lo = -1.0f,
                              float hi = 1.0f, cudaStream_t stream = nullptr);

} // namespace steps
