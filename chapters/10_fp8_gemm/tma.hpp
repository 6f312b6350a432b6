// Chapter 10: tensor maps for TMA, made on the host.
//
// A CUtensorMap (128 bytes) tells the copy engine everything about a tensor
// in global memory and about the box one copy moves: base address, sizes and
// strides, box size, element type and how to lay the box out in shared
// memory (the swizzle). The kernel gets it by value as a
// `const __grid_constant__ CUtensorMap` parameter, so it lives in the kernel's
// parameter space, where the TMA unit can read it.
//
// The encoder is a driver function (cuTensorMapEncodeTiled). To keep the
// course linking only the CUDA runtime, we ask the runtime for the driver's
// entry point instead of linking libcuda.
#pragma once

#include "steps/error.hpp"
#include "steps/tma.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ch10 {

// The encoder and the 2-D map of any tensor are the course's (steps/tma.hpp).
using steps::encode_2d;
using steps::tensor_map_encoder;

/// The map of a row-major matrix of `rows` rows of `row_bytes` one-byte
/// elements (E4M3 codes), copied in boxes of `box_rows` rows x 128 bytes,
/// written to shared memory with the 128-byte swizzle: the layout
/// ptx::wgmma_desc_sw128 describes. Parts of a box past the matrix (the last
/// rows, the K tail) arrive as zeros.
///
///   global (row-major, rows x row_bytes)         shared memory (one box)
///   +--------+--------+--------+---+            row 0: chunks 0 1 2 3 4 5 6 7
///   |  box   |        |        |   |            row 1: chunks 1 0 3 2 5 4 7 6
///   | 128 B  |        |        |   | box_rows   row 2: chunks 2 3 0 1 6 7 4 5
///   +--------+--------+--------+---+            ...    (16-byte chunk c of row r
///   |        |        |        |   |                    goes to slot c ^ (r % 8))
///
/// The swizzle spreads the 16-byte chunks of 8 consecutive rows over all 32
/// banks, so wgmma reads a column of chunks without bank conflicts.
/// (Boxes are 128 bytes of K: the most the 128-byte swizzle allows; the row
/// pitch must be a multiple of 16 bytes.)
inline CUtensorMap make_tensor_map_k_major(const void* base, std::uint64_t rows, std::uint64_t row_bytes,
                                           std::uint32_t box_rows) {
  return encode_2d(CU_TENSOR_MAP_DATA_TYPE_UINT8, base, row_bytes, rows, row_bytes, 128, box_rows,
                   CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                   "a " + std::to_string(rows) + " x " + std::to_string(row_bytes) +
                       " byte matrix: rows must be a multiple of 16 bytes and the base 16-byte aligned");
}

/// The map of a K-block-major matrix of FP32 scales (Fp8Gemm::sa_by_kb:
/// `k_blocks` columns of `rows` floats, `ld` floats apart, `ld` a multiple
/// of 4) for copies of `box_rows` consecutive rows of one K block, unswizzled.
/// Rows of a box past `rows` arrive as zeros.
inline CUtensorMap make_tensor_map_scales(const float* base, std::uint64_t rows, std::uint64_t k_blocks,
                                          std::uint64_t ld, std::uint32_t box_rows) {
  if (base == nullptr) throw std::invalid_argument("make_tensor_map_scales: no K-block-major scales (sa_by_kb)");
  return encode_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, base, rows, k_blocks, ld * 4, box_rows, 1,
                   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                   "the scales, " + std::to_string(k_blocks) + " K blocks x " + std::to_string(rows) + " rows");
}

/// The map of D (row-major BF16, `rows` x `cols`) for TMA stores of boxes
/// of `box_rows` rows x 64 columns (128 bytes) from shared memory laid out
/// with the 128-byte swizzle (the picture above, with 2-byte elements).
/// Needs `cols` a multiple of 8 (rows 16-byte aligned) and a 16-byte aligned
/// base; returns false, with `map` untouched, where that does not hold.
inline bool make_tensor_map_d(void* base, std::uint64_t rows, std::uint64_t cols, std::uint32_t box_rows,
                              CUtensorMap& map) {
  if (cols % 8 != 0 || reinterpret_cast<std::uintptr_t>(base) % 16 != 0) return false;
  map = encode_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, cols, rows, cols * 2, 64, box_rows,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  "D, " + std::to_string(rows) + " x " + std::to_string(cols) + " BF16");
  return true;
}

} // namespace ch10
