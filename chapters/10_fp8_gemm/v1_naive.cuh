// Chapter 10, version 1: one thread per element of D, on the CUDA cores.
//
// The definition, written out. Thread (r, c) walks row r of A and row c of B
// (both K-major, so each thread reads 16 contiguous bytes at a time), turns
// each E4M3 code into an FP32 number (exactly: E4M3 is a subset of FP16,
// FP16 of FP32), and for every 128-wide K block:
//   partial = sum of qA * qB over the block        (FP32 multiply-adds)
//   total  += sA(r, kb) * sB(c, kb) * partial      (the block's scales)
// The same code serves both scalings: per tensor, every block has the same
// two scales (OperandScales hides the difference).
//
// No tensor cores, no data reuse beyond the caches: the baseline every other
// version is measured against. On the H200 at 8192 x 8192 x 4096, in the
// last benchmark run: 7.3 TFLOP/s {n:10:naive:value|.1f}.
#pragma once

#include "fp8_gemm.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <stdexcept>

namespace ch10::v1 {

/// 32 x 8 threads per block: a warp covers 32 consecutive columns of one row
/// of D, so it reads one row of A (the same bytes for all lanes: a broadcast)
/// and 32 rows of B, and its stores to D are contiguous.
constexpr int kBlockX = 32, kBlockY = 8;

__global__ void fp8_gemm_naive(Fp8Gemm p) {
  const int col = blockIdx.x * kBlockX + threadIdx.x;
  const int row = blockIdx.y * kBlockY + threadIdx.y;
  if (row >= p.m || col >= p.n) return; // the last blocks overhang D
  const std::uint8_t* a_row = p.a + static_cast<std::size_t>(row) * p.k;
  const std::uint8_t* b_row = p.b + static_cast<std::size_t>(col) * p.k;
  float total = 0.0f;
  for (int kb = 0; kb < k_blocks(p.k); ++kb) {
    const int k_end = min(p.k, (kb + 1) * kScaleBlock); // the last block may be partial
    float partial = 0.0f;
    // K is a multiple of 16 and rows start 16-byte aligned: whole uint4 loads.
    for (int k = kb * kScaleBlock; k < k_end; k += 16)
      partial = dot16_e4m3(*reinterpret_cast<const uint4*>(a_row + k), *reinterpret_cast<const uint4*>(b_row + k),
                           partial);
    total += p.sa.at(row, kb) * p.sb.at(col, kb) * partial;
  }
  p.d[static_cast<std::size_t>(row) * p.n + col] = __float2bfloat16_rn(total);
}

inline void launch(const Fp8Gemm& p, cudaStream_t stream) {
  const int grid_y = steps::ceil_div(p.m, kBlockY);
  if (grid_y > 65535) throw std::invalid_argument("v1: M is too large for one grid (at most 524280 rows)");
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(p.n, kBlockX)), static_cast<unsigned>(grid_y));
  fp8_gemm_naive<<<grid, dim3(kBlockX, kBlockY), 0, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10::v1
