/// @file gemv.hpp
/// @brief Exercise 04: a matrix-vector product whose shared-memory tile you
///        make conflict-free.
#pragma once

#include <cuda_runtime.h>

namespace ex04 {

/// Side of the tile the kernel stages in shared memory: a warp's width, and
/// the number of shared-memory banks.
constexpr int TILE = 32;

/// y[i] = sum over j of a[i * n + j] * x[j], for i in [0, m): A is m x n,
/// row-major; m and n may be any sizes >= 0 (n = 0 gives y = 0). Runs in
/// `stream` and returns without waiting; reports a bad launch by throwing
/// (CUDA_CHECK_LAUNCH).
void gemv(const float* a, const float* x, float* y, int m, int n, cudaStream_t stream);

/// Your tile layout, seen from the host: the word of the shared tile array
/// that holds element (row, col) of a TILE x TILE tile, for row and col in
/// [0, TILE). The grader checks that it is one-to-one and conflict-free.
int tile_offset(int row, int col);

/// The number of words (floats) of your shared tile array.
int tile_words();

} // namespace ex04
