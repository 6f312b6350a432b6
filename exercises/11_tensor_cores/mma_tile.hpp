/// @file mma_tile.hpp
/// @brief Exercise 11: the function mma_tile.cu completes, and the probe the
///        grader reads your fragments with.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ex11 {

/// C = A * B on the tensor cores (mma.sync m16n8k16, BF16 in, FP32 out), in
/// `stream`, without waiting, where A is given TRANSPOSED:
///
///   at: k x m BF16, row-major: A(r, i) = at[i * m + r]   (A stored column-major)
///   b:  k x n BF16, row-major: B(i, c) = b[i * n + c]
///   c:  m x n FP32, row-major: C(r, c) = c[r * n + c] = sum over i < k of A(r, i) * B(i, c)
///
/// The layout of a backward pass (dW = X^T dY): both inputs run along m or n
/// in memory, k across rows. Any m, n, k >= 0 (k = 0: C is all zeros);
/// writes only the m x n elements of C. Needs a GPU with BF16 mma.sync
/// (sm_80 or newer).
void gemm_tn(int m, int n, int k, const __nv_bfloat16* at, const __nv_bfloat16* b, float* c, cudaStream_t stream);

/// What the probe kernel records: one warp's fragment registers after
/// load_a_fragment and load_b_fragments on a test pattern (see given.cuh).
struct FragmentProbe {
  std::uint32_t a[32][4]; ///< a[lane][i]: register a[i] of lane `lane`
  std::uint32_t b[32][4]; ///< b[lane][i]: register b[i] of lane `lane`
};

/// Runs your load_a_fragment and load_b_fragments in one warp on shared
/// tiles that hold, inside the 16 x 16 block at (k0, m0) of A's tile and
/// (k0, n0) of B's, the code 16 * (m - m0) + (k - k0) (or with n), and NaN
/// everywhere else; writes the registers to `out` (device memory).
void probe_fragments(int k0, int m0, int n0, FragmentProbe* out);

/// A kernel of this exercise (for steps::grade::require: is its code in the binary?).
const void* kernel_code_probe();

} // namespace ex11
