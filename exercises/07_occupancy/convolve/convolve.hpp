/// @file convolve.hpp
/// @brief Exercise 07 (GPU part): the functions you implement in convolve.cu.
#pragma once

#include <cuda_runtime.h>

namespace ex07 {

/// The widest filter: 2 * kMaxRadius + 1 = 8193 weights, 32 KiB of the GPU's
/// 64 KiB of constant memory.
constexpr int kMaxRadius = 4096;
/// Outputs per block: each block stages kTile + 2 r input floats in shared
/// memory, 48 KiB + 8 r bytes: above the 48 KiB a block gets without asking
/// as soon as r >= 1.
constexpr int kTile = 12288;
/// Threads per block.
constexpr int kThreads = 256;
/// The largest n convolve accepts (indices fit in int with room for the halo).
constexpr int kMaxN = 1 << 30;

/// Copies the 2 r + 1 filter weights w[0..2r] (host memory) into constant
/// memory, in `stream`. Throws std::invalid_argument when r is outside
/// [0, kMaxRadius].
void set_weights(const float* w, int radius, cudaStream_t stream);

/// y[i] = sum over j in [-r, r] of w[j + r] * x[i + j], for i in [0, n),
/// where x outside [0, n) counts as 0 (never read), with the weights of the
/// last set_weights call (same radius), in `stream`, without waiting.
/// Throws std::invalid_argument when n is outside [0, kMaxN] or r outside
/// [0, kMaxRadius]; reports a bad launch by throwing (CUDA_CHECK_LAUNCH).
void convolve(const float* x, float* y, int n, int radius, cudaStream_t stream);

} // namespace ex07
