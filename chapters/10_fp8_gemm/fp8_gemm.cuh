// Chapter 10: what every version shares: the problem, its storage order, the
// scales and how a kernel finds the scale of an element.
//
// Every version computes, with FP32 accumulation and a BF16 result,
//
//        K (K-major)             K (K-major)                 N
//   +-------------+         +-------------+           +-------------+
//   |             |         |             |           |             |
// M |   A  e4m3   |  x    N |   B  e4m3   |^T   =   M |   D  bf16   |
//   |             |         |             |           |             |
//   +-------------+         +-------------+           +-------------+
//   A(r, k) = a[r * K + k]  B(c, k) = b[c * K + k]    D(r, c) = d[r * N + c]
//
// Both inputs are "K-major" (consecutive k are consecutive bytes): the only
// layout cuBLASLt's FP8 matmul accepts ("TN" in its column-major terms) and
// the only one wgmma reads FP8 from. B is stored N x K, so D = A * B^T.
//
// Scaling. FP8 E4M3 holds values up to 448 with 3 mantissa bits, so a tensor
// is stored as codes q and FP32 scales s with x ~ s * q. The product is
//
//   D(r, c) = sum over K blocks kb of  sA(r, kb) * sB(c, kb) * sum over k in kb of qA(r, k) * qB(c, k)
//
// with kb = k / 128 (kScaleBlock). Two granularities:
//   per tensor: one scale for all of A, one for all of B (sA, sB constant);
//   fine:       A: one scale per 1 x 128 block (per row and K block),
//               B: one scale per 128 x 128 block (per 128 rows of B, i.e.
//               128 columns of D, and K block), as in DeepSeek-V3.
// The last K block may be partial (K need not be a multiple of 128): its
// scale covers the K % 128 elements it has.
//
// Naming: counts are kCamel, tile shapes CAPS (BLOCK_M x BLOCK_N tiles,
// BLOCK_K deep), run-time values snake_case.
#pragma once

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ch10 {

/// K elements that share one scale: the promotion interval of the
/// fine-grained kernels (DeepSeek-V3's N_C = 128).
constexpr int kScaleBlock = 128;
constexpr int kScaleBlockLog2 = 7;
static_assert(kScaleBlock == 1 << kScaleBlockLog2, "kScaleBlockLog2 must match kScaleBlock");

/// Largest finite E4M3 value: a block's amax maps to it.
constexpr float kE4m3Max = 448.0f;

/// How A and B are scaled.
enum class Scaling {
  per_tensor, ///< one FP32 scale per tensor
  fine,       ///< A: one per 1 x 128 block; B: one per 128 x 128 block
};

/// K blocks of a row of K elements (the last one may be partial).
STEPS_HD constexpr int k_blocks(int k) { return steps::ceil_div(k, kScaleBlock); }

/// Where the scale of element (row, k) of one operand lives. One formula for
/// both granularities, so that every kernel has a single code path:
///
///   scale(row, kb) = scales[(row >> row_shift) * row_stride + kb * kb_stride]
///
///   fine A  (1 x 128):    row_shift 0 (1 row per block),    row_stride = K blocks, kb_stride 1
///   fine B  (128 x 128):  row_shift 7 (128 rows per block), row_stride = K blocks, kb_stride 1
///   per tensor:           row_shift 0,                      row_stride 0,          kb_stride 0
///
/// (A shift, not a division by the rows per block: the GPU has no integer
/// divider, and a division by a run-time value costs about 20 instructions
/// in the kernels' inner loops.)
///
/// The fine scales are therefore row-major over the grid of blocks: A's are an
/// M x ceil(K/128) matrix, B's a ceil(N/128) x ceil(K/128) matrix.
struct OperandScales {
  const float* scales = nullptr; ///< device (in kernels) or host (in references) array
  int row_shift = 0;             ///< log2 of the rows of the operand that share a scale
  int row_stride = 0;            ///< scales between consecutive row blocks
  int kb_stride = 0;             ///< scales between consecutive K blocks

  /// The scale of row `row`, K block `kb`.
  STEPS_HD float at(int row, int kb) const { return *address(row, kb); }
  /// Where that scale is.
  STEPS_HD const float* address(int row, int kb) const {
    return scales + static_cast<std::size_t>(row >> row_shift) * row_stride + static_cast<std::size_t>(kb) * kb_stride;
  }
  /// Number of scales the array holds for an operand of `rows` rows and K = `k`.
  static std::size_t count(Scaling s, bool is_b, int rows, int k) {
    if (s == Scaling::per_tensor) return 1;
    const int row_blocks = is_b ? steps::ceil_div(rows, kScaleBlock) : rows;
    return static_cast<std::size_t>(row_blocks) * k_blocks(k);
  }
  /// The layout of operand A (`is_b` false) or B for scaling `s` and K = `k`.
  static OperandScales layout(Scaling s, bool is_b, int k, const float* scales) {
    if (s == Scaling::per_tensor) return {scales, 0, 0, 0};
    return {scales, is_b ? kScaleBlockLog2 : 0, k_blocks(k), 1};
  }
};

/// One problem as the kernels see it: D (m x n) = A (m x k) * B^T (B n x k),
/// A and B as raw E4M3 codes, D as BF16.
struct Fp8Gemm {
  int m = 0, n = 0, k = 0;
  const std::uint8_t* a = nullptr; ///< m x k E4M3 codes, row-major, rows 16-byte aligned
  const std::uint8_t* b = nullptr; ///< n x k E4M3 codes, row-major, rows 16-byte aligned
  OperandScales sa;                ///< scales of A
  OperandScales sb;                ///< scales of B
  __nv_bfloat16* d = nullptr;      ///< m x n BF16, row-major
  /// A's scales once more, K-block-major: sa_by_kb[kb * sa_by_kb_ld + r] is
  /// the scale of row r in K block kb, in both scalings (per tensor: the one
  /// scale repeated). One K block's scales of consecutive rows are then
  /// contiguous, so the producer of v4, v5 and v6 copies those of a tile's
  /// 128 rows as one TMA box (in `sa` they are a K-block row apart). cuBLASLt reads its
  /// 1 x 128 scales in the same layout. Versions that do not read it may
  /// leave it null.
  const float* sa_by_kb = nullptr;
  int sa_by_kb_ld = 0; ///< M rounded up to a multiple of 4: every K block's column starts 16-byte aligned
  /// B's scales the same way: sb_by_kb[kb * sb_by_kb_ld + nb] is the scale
  /// of B's rows 128 nb .. 128 nb + 127 (columns of D) in K block kb, so that
  /// v6's producer copies a tile's B scales with the stage too (v4 and v5
  /// load theirs from `sb`): 32 bytes from the 16-byte aligned group of 4
  /// that holds the tile's first column block (4 more floats of padding
  /// after the last K block keep that copy inside the array). Null where not
  /// read.
  const float* sb_by_kb = nullptr;
  int sb_by_kb_ld = 0; ///< ceil(N / 128) rounded up to a multiple of 4
};

/// Floats between the K-block columns of Fp8Gemm::sa_by_kb for M rows.
constexpr int sa_by_kb_ld(int m) { return (m + 3) / 4 * 4; }
/// Floats between the K-block columns of Fp8Gemm::sb_by_kb for N rows of B.
constexpr int sb_by_kb_ld(int n) { return sa_by_kb_ld(steps::ceil_div(n, kScaleBlock)); }

/// Two E4M3 codes (low byte first) as two floats. The conversion is exact:
/// every E4M3 value is also an FP16 value, and every FP16 value an FP32 one.
__device__ __forceinline__ float2 e4m3x2_to_float2(std::uint16_t two_codes) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(two_codes), __NV_E4M3);
  return __half22float2(__half2(h));
}

/// Sum over 16 products of 16 E4M3 codes of A and 16 of B (one uint4 each),
/// added to `acc` one FP32 fused multiply-add at a time.
__device__ __forceinline__ float dot16_e4m3(const uint4& a, const uint4& b, float acc) {
  const std::uint32_t aw[4] = {a.x, a.y, a.z, a.w};
  const std::uint32_t bw[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int w = 0; w < 4; ++w) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float2 x = e4m3x2_to_float2(static_cast<std::uint16_t>(aw[w] >> (16 * half)));
      const float2 y = e4m3x2_to_float2(static_cast<std::uint16_t>(bw[w] >> (16 * half)));
      acc = fmaf(x.x, y.x, acc);
      acc = fmaf(x.y, y.y, acc);
    }
  }
  return acc;
}

/// Stores two neighbouring results (row, col) and (row, col + 1) of D as
/// BF16: one 4-byte store when both exist and the address is 4-byte aligned
/// (N even), else one checked store each.
__device__ __forceinline__ void store_pair(const Fp8Gemm& p, int row, int col, float v0, float v1) {
  if (row >= p.m) return;
  __nv_bfloat16* out = p.d + static_cast<std::size_t>(row) * p.n + col;
  if (col + 1 < p.n && p.n % 2 == 0) {
    *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
  } else {
    if (col < p.n) out[0] = __float2bfloat16_rn(v0);
    if (col + 1 < p.n) out[1] = __float2bfloat16_rn(v1);
  }
}

/// The current GPU's SM count: the persistent kernels (v4, v6, v7) launch
/// at most one block per SM, v5 and v7 plan their splits with it.
inline int sm_count() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

} // namespace ch10
