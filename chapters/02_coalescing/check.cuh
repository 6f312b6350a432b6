// Chapter 02: bit-exact verification of a copy, on the GPU.
//
// A copy's reference is its input: out[i] must equal src[first + i * stride]
// bit for bit. Comparing half a gigabyte on the CPU costs about a second per
// row; on the GPU it costs a fraction of a millisecond, so the copies are
// checked here and only the particle step (arithmetic) against a CPU
// reference. The result is a steps::Comparison like the CPU one: first
// wrong index, expected and got there, how many are wrong.
#pragma once

#include "steps/compare.hpp"
#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/memory.hpp"

#include <cmath>

namespace ch02 {

/// Threads per block of the check kernel.
constexpr int kCheckThreads = 256;

// Every i with got[i] != src[first + i * stride] (as bits: NaN never equals)
// lowers *first_bad to i and counts in *bad_count.
__global__ void find_copy_mismatches(const float* got, const float* src, std::size_t n, std::size_t first,
                                     std::size_t stride, unsigned long long* first_bad,
                                     unsigned long long* bad_count) {
  for (std::size_t i = steps::global_index(); i < n; i += steps::grid_size()) {
    if (__float_as_uint(got[i]) != __float_as_uint(src[first + i * stride])) {
      atomicMin(first_bad, static_cast<unsigned long long>(i));
      atomicAdd(bad_count, 1ull);
    }
  }
}

/// Checks that got[i] == src[first + i * stride] for every i < n, bit for
/// bit. Both are device pointers; the work before must be finished.
inline steps::Comparison check_copy(const float* got, const float* src, std::size_t n, std::size_t first,
                                    std::size_t stride, const steps::DeviceInfo& dev) {
  steps::Comparison c;
  c.count = n;
  if (n == 0) return c;
  steps::DeviceBuffer<unsigned long long> result(2); // first bad index, bad count
  const unsigned long long start[2] = {~0ull, 0ull};
  CUDA_CHECK(cudaMemcpy(result.data(), start, sizeof start, cudaMemcpyHostToDevice));
  find_copy_mismatches<<<steps::full_wave_blocks(dev, n, kCheckThreads), kCheckThreads>>>(
      got, src, n, first, stride, result.data(), result.data() + 1);
  CUDA_CHECK_LAUNCH();
  unsigned long long r[2] = {0, 0};
  CUDA_CHECK(cudaMemcpy(r, result.data(), sizeof r, cudaMemcpyDeviceToHost));
  if (r[1] == 0) return c; // exact: no error at all
  float g = 0, e = 0;
  CUDA_CHECK(cudaMemcpy(&g, got + r[0], sizeof g, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&e, src + first + r[0] * stride, sizeof e, cudaMemcpyDeviceToHost));
  c.ok = false;
  c.bad_count = static_cast<std::size_t>(r[1]);
  c.first_bad = static_cast<std::size_t>(r[0]);
  c.got_at_first_bad = g;
  c.expected_at_first_bad = e;
  c.non_finite = !std::isfinite(g);                     // at the first wrong element, at least
  c.max_abs_error = c.non_finite ? INFINITY : std::fabs(static_cast<double>(g) - e); // a lower bound
  c.rel_l2_error = NAN;                                 // not computed on this path
  return c;
}

} // namespace ch02
