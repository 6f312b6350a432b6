// Chapter 11: the reference every row is checked against, and the tolerance
// of a BF16 product accumulated in FP32. Shared by the chapter's problem
// (gemm_problem.cuh) and your exercise's row (yours.cuh).
//
// The reference is the exact product of the same BF16 inputs, computed in
// FP64 on the GPU by a plain tiled kernel (seconds on the CPU would be
// minutes at 4096^3), and that kernel is itself checked against an FP64 CPU
// product at the four corners and 256 random elements. So no row, cuBLAS
// included, is checked against another row.
#pragma once

#include "bf16_gemm.cuh"

#include "steps/cli.hpp"
#include "steps/compare.hpp"
#include "steps/error.hpp"
#include "steps/fp8.hpp"
#include "steps/gemm_dims.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/sgemm_tolerance.hpp"
#include "steps/summary.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ch11 {

/// The inputs are uniform in [-1, 1), rounded to BF16: rms 1 / sqrt(3) each.
constexpr float kLo = steps::kGemmInputLo, kHi = steps::kGemmInputHi;
/// Elements of the GPU reference checked against the CPU (plus 4 corners).
constexpr int kSpotChecks = 256;

/// How far a result may be from the exact product of the BF16 inputs.
/// A product of two BF16 values (8 significant bits each) is exact in FP32,
/// so all the error is in the FP32 accumulation: chapter 03's bound
/// (steps/sgemm_tolerance.hpp) for round-to-nearest sums, times 8, because
/// tensor cores do not round to nearest: they add a step's products and the
/// accumulator aligned to the largest, and truncate (Fasi et al., "Numerical
/// behavior of NVIDIA tensor cores", PeerJ CS 2021), an error that leans one
/// way and does not cancel like round-to-nearest. A missing or wrong product
/// (size ~ 1/3) is still hundreds of times larger than the bound at k = 4096.
inline steps::Tolerance tensor_core_tolerance(std::int64_t k) {
  steps::Tolerance t = steps::fp32_dot_tolerance(k, steps::kGemmRmsProduct);
  t.abs *= 8;
  t.rel_l2 *= 8;
  return t;
}

/// M x N x K of the product: BF16 A and B, FP32 C (steps/gemm_dims.hpp).
using Dims = steps::GemmDims;
inline Dims dims(const steps::Options& opts) { return Dims::from(opts, 2, 2, 4); }

/// C (m x n) = A * B in FP64, one thread per element, 16 x 16 tiles of A
/// and B through shared memory. A is m x k row-major, or (a_transposed) its
/// transpose stored k x m row-major; B is k x n row-major.
__global__ void reference_fp64(int m, int n, int k, const bf16* a, bool a_transposed, const bf16* b, double* c) {
  constexpr int T = 16;
  __shared__ double tile_a[T][T + 1], tile_b[T][T + 1];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int row = static_cast<int>(blockIdx.y) * T + ty, col = static_cast<int>(blockIdx.x) * T + tx;
  double sum = 0;
  for (int k0 = 0; k0 < k; k0 += T) {
    const int ar = static_cast<int>(blockIdx.y) * T + ty, ai = k0 + tx; // A(ar, ai)
    double av = 0;
    if (ar < m && ai < k)
      av = __bfloat162float(a_transposed ? a[static_cast<std::size_t>(ai) * m + ar] : a[static_cast<std::size_t>(ar) * k + ai]);
    tile_a[ty][tx] = av;
    const int bi = k0 + ty;
    tile_b[ty][tx] = (bi < k && col < n) ? __bfloat162float(b[static_cast<std::size_t>(bi) * n + col]) : 0.0;
    __syncthreads();
    for (int i = 0; i < T; ++i) sum += tile_a[ty][i] * tile_b[i][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = sum;
}

/// The exact product of one problem's inputs, and the check of a result.
class Reference {
public:
  /// a, b: the inputs on the device (A m x k, or k x m when a_transposed; B k x n).
  Reference(const Dims& d, const bf16* a, bool a_transposed, const bf16* b, std::uint64_t seed) : d_(d) {
    const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
    {
      steps::DeviceBuffer<double> want(steps::checked_elements(d.m, d.n, sizeof(double)));
      const dim3 block(16, 16);
      const dim3 grid(static_cast<unsigned>(steps::ceil_div(n, 16)), static_cast<unsigned>(steps::ceil_div(m, 16)));
      if (grid.y > 65535) throw std::invalid_argument("M is too large for the reference kernel (at most 1048560)");
      reference_fp64<<<grid, block>>>(m, n, k, a, a_transposed, b, want.data());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaDeviceSynchronize());
      want_ = want.to_host();
    }
    spot_check(a, a_transposed, b, seed);
  }

  /// How results are checked (for the problem's describe()).
  std::string how() const {
    return "checked against an FP64 product on the GPU (itself checked on the CPU at 4 corners and " +
           std::to_string(kSpotChecks) + " random elements)";
  }

  /// C (m x n, packed, in a guarded buffer) against the reference.
  steps::Comparison check(const steps::GuardedBuffer<float>& c) {
    if (!spot_.ok) return spot_; // the reference itself is wrong: nothing can be checked
    const steps::Comparison guards = c.check_guards();
    if (!guards.ok) return guards;
    c.download(got_);
    steps::Comparison r = steps::compare(got_.data(), want_.data(), got_.size(), tensor_core_tolerance(d_.k));
    r.row_length = static_cast<std::size_t>(d_.n); // report the first wrong element as (row, column)
    return r;
  }

private:
  // The GPU reference at the corners and kSpotChecks random elements, against
  // FP64 dot products on the CPU of the same BF16 inputs.
  void spot_check(const bf16* a, bool a_transposed, const bf16* b, std::uint64_t seed) {
    const std::size_t m = d_.m, n = d_.n, k = d_.k;
    const std::vector<float> ah = to_floats(a, m * k), bh = to_floats(b, k * n);
    std::vector<std::size_t> at = {0, n - 1, (m - 1) * n, m * n - 1};
    for (int s = 0; s < kSpotChecks; ++s)
      at.push_back(steps::splitmix64(seed ^ (0xB16ull + 2 * s)) % m * n + steps::splitmix64(seed + 2 * s + 1) % n);
    std::vector<double> got, want;
    for (const std::size_t e : at) {
      const std::size_t r = e / n, col = e % n;
      double sum = 0;
      for (std::size_t i = 0; i < k; ++i)
        sum += static_cast<double>(a_transposed ? ah[i * m + r] : ah[r * k + i]) * bh[i * n + col];
      want.push_back(sum);
      got.push_back(want_[e]);
    }
    // Two FP64 sums of the same k terms (each |term| < 1) in different orders.
    const double bound = 4.0 * std::ldexp(1.0, -53) * static_cast<double>(k) * static_cast<double>(k) + 1e-300;
    spot_ = steps::compare_each(
        got.size(), [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return want[i]; },
        [bound](std::size_t, double) { return bound; }, 1e-12);
    if (!spot_.ok) spot_.first_bad = at[spot_.first_bad]; // report it as an element of C
    spot_.row_length = n;
  }

  static std::vector<float> to_floats(const bf16* p, std::size_t count) {
    std::vector<std::uint16_t> raw(count);
    CUDA_CHECK(cudaMemcpy(raw.data(), p, count * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
    std::vector<float> out(count);
    std::transform(raw.begin(), raw.end(), out.begin(), steps::bf16_to_float);
    return out;
  }

  Dims d_;
  std::vector<double> want_;  // the FP64 product
  steps::Comparison spot_;    // how the GPU reference fared against the CPU
  std::vector<float> got_;    // reused between checks
};

} // namespace ch11
