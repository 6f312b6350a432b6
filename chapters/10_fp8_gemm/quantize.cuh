// Chapter 10: making the FP8 inputs on the GPU.
//
//   1. make_inputs: FP32 random matrices whose magnitude changes from block
//      to block, with a few much larger rows (A) and blocks (B): the
//      outliers that make one scale per tensor a poor fit.
//   2. compute_scales: scale = amax / 448 per scaling block (amax = the
//      largest |x| of the block), so that the block's largest value lands on
//      E4M3's largest finite value and nothing overflows.
//   3. quantize: q = e4m3(x / scale), rounding to nearest even, saturating.
//   4. dequantize (for the cuBLAS reference): x' = decode(q) * scale, in FP32.
//
// None of this is timed: a real pipeline fuses quantization into the layer
// that produces A, and B (weights) is quantized once.
#pragma once

#include "fp8_gemm.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/random.hpp"

#include <cuda_fp8.h>

#include <cstddef>
#include <cstdint>

namespace ch10 {

/// How the test matrices vary in magnitude. Element (r, k) is
/// uniform(-1, 1) * 2^e, where e is chosen per block of `rows_per_block`
/// rows x 128 columns: a random integer in [-3, 3], plus `outlier_exponent`
/// for one block-row in `outlier_every` (A: whole rows; B: single blocks).
/// Outliers are 2^8 times larger than the other values by default
/// (--outlier-exponent changes it).
constexpr int kDefaultOutlierExponent = 8;

struct MagnitudeModel {
  std::uint64_t seed = 0;  ///< random stream (values and exponents)
  int rows_per_block = 1;  ///< 1 for A (per row), 128 for B (per 128 x 128 block)
  int outlier_every = 32;  ///< about one block in this many is an outlier
  bool outlier_rows = true; ///< true: a whole row block is an outlier (A); false: single blocks (B)
  int outlier_exponent = kDefaultOutlierExponent; ///< outliers are 2^this larger than the rest
};

/// The exponent of block (row_block, kb): see MagnitudeModel.
STEPS_HD inline int block_exponent(const MagnitudeModel& mm, std::uint64_t row_block, std::uint64_t kb) {
  const std::uint64_t h = steps::splitmix64(mm.seed ^ (row_block * 0x9E3779B97F4A7C15ull) ^ (kb << 40));
  int e = static_cast<int>(h % 7) - 3;
  const std::uint64_t o = steps::splitmix64(mm.seed + 0x51ED27ull + row_block * 977 + (mm.outlier_rows ? 0 : kb * 131));
  if (o % static_cast<std::uint64_t>(mm.outlier_every) == 0) e += mm.outlier_exponent;
  return e;
}

__global__ void make_inputs_kernel(float* x, int rows, int cols, MagnitudeModel mm) {
  const std::size_t total = static_cast<std::size_t>(rows) * cols;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t r = i / cols, k = i % cols;
    const int e = block_exponent(mm, r / mm.rows_per_block, k / kScaleBlock);
    x[i] = ldexpf(steps::uniform_at(mm.seed, i, -1.0f, 1.0f), e); // times 2^e: exact
  }
}

/// Fills `x` (rows x cols, row-major) following `mm`.
inline void make_inputs(float* x, int rows, int cols, const MagnitudeModel& mm) {
  make_inputs_kernel<<<4096, 256>>>(x, rows, cols, mm);
  CUDA_CHECK_LAUNCH();
}

/// Largest |x| of one scaling block, one thread block per scaling block:
/// blockIdx.x = row block, blockIdx.y = K block. The scale is amax / 448
/// (1 for an all-zero block, so that dividing by it is harmless).
__global__ void block_scales_kernel(const float* x, int rows, int cols, int rows_per_block, float* scales) {
  const int row_block = blockIdx.x, kb = blockIdx.y;
  const int r0 = row_block * rows_per_block, k0 = kb * kScaleBlock;
  const int r_end = min(rows, r0 + rows_per_block), k_end = min(cols, k0 + kScaleBlock);
  const int width = k_end - k0;
  float amax = 0.0f;
  for (int i = threadIdx.x; i < (r_end - r0) * width; i += blockDim.x)
    amax = fmaxf(amax, fabsf(x[static_cast<std::size_t>(r0 + i / width) * cols + k0 + i % width]));
  // Block-wide maximum: within each warp by shuffles, then across warps.
  __shared__ float warp_max[32];
  for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = amax;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) amax = fmaxf(amax, warp_max[w]);
    scales[static_cast<std::size_t>(row_block) * gridDim.y + kb] = amax > 0.0f ? amax / kE4m3Max : 1.0f;
  }
}

/// The largest |x| of a whole tensor, as the bits of a non-negative float
/// (non-negative floats compare like their bit patterns, so atomicMax on
/// unsigned int is a float maximum). `amax_bits` must start at 0.
__global__ void tensor_amax_kernel(const float* x, std::size_t count, unsigned int* amax_bits) {
  float amax = 0.0f;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    amax = fmaxf(amax, fabsf(x[i]));
  for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  if (threadIdx.x % 32 == 0) atomicMax(amax_bits, __float_as_uint(amax));
}

__global__ void tensor_scale_kernel(const unsigned int* amax_bits, float* scale) {
  const float amax = __uint_as_float(*amax_bits);
  *scale = amax > 0.0f ? amax / kE4m3Max : 1.0f;
}

/// Computes the scales of `x` (rows x cols) for scaling `s`, into `scales`
/// (OperandScales::count(s, is_b, rows, cols) floats); `amax_scratch` is one
/// unsigned int of device memory.
inline void compute_scales(const float* x, int rows, int cols, Scaling s, bool is_b, float* scales,
                           unsigned int* amax_scratch) {
  if (s == Scaling::per_tensor) {
    CUDA_CHECK(cudaMemsetAsync(amax_scratch, 0, sizeof(unsigned int)));
    tensor_amax_kernel<<<1024, 256>>>(x, static_cast<std::size_t>(rows) * cols, amax_scratch);
    CUDA_CHECK_LAUNCH();
    tensor_scale_kernel<<<1, 1>>>(amax_scratch, scales);
    CUDA_CHECK_LAUNCH();
    return;
  }
  const int rows_per_block = is_b ? kScaleBlock : 1;
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(rows, rows_per_block)), static_cast<unsigned>(k_blocks(cols)));
  block_scales_kernel<<<grid, 128>>>(x, rows, cols, rows_per_block, scales);
  CUDA_CHECK_LAUNCH();
}

/// q = e4m3(x / scale): round to nearest even, saturating at +-448 (x / scale
/// can exceed 448 by a rounding of the division). IEEE division, so the host
/// check computes the same quotient.
__global__ void quantize_kernel(const float* x, int rows, int cols, OperandScales s, std::uint8_t* q) {
  const std::size_t total = static_cast<std::size_t>(rows) * cols;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int r = static_cast<int>(i / cols), k = static_cast<int>(i % cols);
    q[i] = __nv_cvt_float_to_fp8(__fdiv_rn(x[i], s.at(r, k / kScaleBlock)), __NV_SATFINITE, __NV_E4M3);
  }
}

inline void quantize(const float* x, int rows, int cols, const OperandScales& s, std::uint8_t* q) {
  quantize_kernel<<<4096, 256>>>(x, rows, cols, s, q);
  CUDA_CHECK_LAUNCH();
}

/// x' = decode(q) * scale in FP32 (or its absolute value): the inputs of the
/// cuBLAS reference product and of its bound.
__global__ void dequantize_kernel(const std::uint8_t* q, int rows, int cols, OperandScales s, bool absolute,
                                  float* out) {
  const std::size_t total = static_cast<std::size_t>(rows) * cols;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int r = static_cast<int>(i / cols), k = static_cast<int>(i % cols);
    const __half h(__nv_cvt_fp8_to_halfraw(q[i], __NV_E4M3));
    const float v = __half2float(h) * s.at(r, k / kScaleBlock);
    out[i] = absolute ? fabsf(v) : v;
  }
}

inline void dequantize(const std::uint8_t* q, int rows, int cols, const OperandScales& s, bool absolute, float* out) {
  dequantize_kernel<<<4096, 256>>>(q, rows, cols, s, absolute, out);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch10
