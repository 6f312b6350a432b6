/// @file sgemm_nt.hpp
/// @brief Exercise 03: the function you implement in sgemm_nt.cu.
#pragma once

#include <cuda_runtime.h>

namespace ex03 {

/// C = A * B^T on the GPU, in `stream`, in FP32. All three matrices are
/// row-major, and B is given as the n x k matrix whose transpose you multiply
/// by (the layout of a linear layer's weights: y = x * W^T):
///
///   A: m x k, element (r, i) at a[r * lda + i]   (lda >= k)
///   B: n x k, element (j, i) at b[j * ldb + i]   (ldb >= k)
///   C: m x n, element (r, j) at c[r * ldc + j]   (ldc >= n)
///
///   C(r, j) = sum over i < k of A(r, i) * B(j, i)
///
/// Must be correct for every m, n, k >= 0 (0 included: with k = 0, C is all
/// zeros; with m = 0 or n = 0 there is nothing to do) and leading dimensions
/// larger than the widths (the matrices may be views into bigger ones: never
/// read or write the elements between a row's end and the next row's start).
/// A matrix may hold more than 2^31 elements: compute offsets such as
/// row * lda in 64 bits.
/// Writes only the m x n elements of C. Must use shared-memory tiles.
/// Returns without waiting for the GPU; reports a bad launch by throwing
/// (CUDA_CHECK_LAUNCH).
void sgemm_nt(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
              cudaStream_t stream);

} // namespace ex03
