/// @file transpose.hpp
/// @brief Exercise 05: the function you implement in transpose.cu.
#pragma once

#include <cuda_runtime.h>

namespace ex05 {

/// out = the transpose of in, for matrix VIEWS whose rows are further apart
/// than their width (a block cut out of a bigger matrix, or rows padded to a
/// round size), on the GPU, in `stream`.
///
///  - `in` is rows x cols, row-major, with row pitch `ld_in` >= cols:
///    element (r, c) is in[r * ld_in + c].
///  - `out` is cols x rows, row-major, with row pitch `ld_out` >= rows:
///    element (c, r) is out[c * ld_out + r], and must become in(r, c).
///  - Only the rows x cols elements of each view may be touched: the last
///    ld_in - cols elements of every in row and ld_out - rows of every out
///    row belong to someone else (the grader fills them with NaN).
///
/// Must be correct for every rows and cols from 0 (nothing to do) to
/// 1,000,000, square or not, multiples of your tile or not, and for views
/// whose matrices have more than 2^31 elements (rows * ld_in or cols *
/// ld_out past 2^31: offsets in std::size_t); must read each element of in
/// once and write each element of out once, through a padded tile in shared
/// memory (coalesced on both sides, conflict-free). Returns
/// without waiting for the GPU; reports a bad launch by throwing
/// (CUDA_CHECK_LAUNCH).
void transpose(int rows, int cols, const float* in, int ld_in, float* out, int ld_out, cudaStream_t stream);

} // namespace ex05
