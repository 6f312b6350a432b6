/// @file wgmma.hpp
/// @brief Exercise 10, part 3 (ID wgmma): the function wgmma.cu completes,
///        and the trace its kernel leaves for the grader.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ex10::wgmma {

/// D = A * B^T on the tensor cores (wgmma from shared memory), in `stream`,
/// without waiting:
///
///     D(r, c) = sum over k of A(r, k) * B(c, k)        (FP32)
///
/// - a: m x k E4M3, row-major (K-major); b: n x k E4M3, row-major (K-major);
///   both 16-byte aligned (TMA).
/// - d: m x n FP32, row-major; every element written once, nothing outside.
/// - m, n >= 1; k >= 16 and a multiple of 16 (a TMA row pitch is a multiple
///   of 16 bytes); m <= 65535 * 64 (the grid); A (m x k), B (n x k) and
///   D (m x n) each fewer than 2^31 elements. Throws std::invalid_argument
///   otherwise, before any GPU work.
void gemm(int m, int n, int k, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, float* d, cudaStream_t stream);

/// What the kernel's protocol checks found (Trace::finding).
enum class Finding : int {
  none = 0,
  mma_without_fence,  ///< a wgmma issued while no wgmma.fence came after the accumulators were last touched
  not_committed,      ///< k_block returned with wgmma issued but not committed (wgmma.commit_group)
  not_waited,         ///< k_block returned with committed wgmma not waited for (wgmma.wait_group 0)
};

/// Written by the kernel into mapped host memory: the first protocol finding
/// (by any thread), and the descriptors block (0, 0) built for the tiles of
/// its first K block (before its first wgmma, so they survive a kernel that
/// then faults).
struct Trace {
  int finding;                     ///< a Finding (0: none)
  int block_x, block_y, thread, kb; ///< where the finding was made
  int recorded;                    ///< 1: the fields below are filled
  unsigned int addr_a, addr_b;     ///< shared-memory addresses of that block's A and B tiles (stage 0)
  unsigned long long desc_a, desc_b; ///< make_descriptor() of those tiles
};

/// The grader's trace for the next launches (mapped host memory from
/// cudaHostAlloc(..., cudaHostAllocMapped), or nullptr: no trace).
void set_trace(Trace* mapped);

} // namespace ex10::wgmma
