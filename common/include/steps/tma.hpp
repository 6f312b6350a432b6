/// @file tma.hpp
/// @brief Tensor maps for TMA (Hopper's copy engine), made on the host.
///
/// A CUtensorMap (128 bytes) tells the copy engine everything about a tensor
/// in global memory and about the box one copy moves: base address, sizes and
/// strides, box size, element type and how to lay the box out in shared
/// memory (the swizzle). A kernel gets it by value as a
/// `const __grid_constant__ CUtensorMap` parameter.
///
/// The encoder is a driver function (cuTensorMapEncodeTiled). To keep the
/// course linking only the CUDA runtime, it asks the runtime for the driver's
/// entry point instead of linking libcuda.
#pragma once

#include "steps/error.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace steps {

/// The driver's tensor-map encoder, looked up once.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || p == nullptr)
      throw std::runtime_error("the CUDA driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver or newer)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

/// cuTensorMapEncodeTiled for a 2-D tensor: `cols` elements of `type` per
/// row (innermost), `rows` rows `row_bytes` apart, boxes of `box_cols` x
/// `box_rows`, element strides 1, no interleave, elements past the tensor
/// read as zeros. On failure throws, naming the CUresult and `what`.
inline CUtensorMap encode_2d(CUtensorMapDataType type, const void* base, std::uint64_t cols, std::uint64_t rows,
                             std::uint64_t row_bytes, std::uint32_t box_cols, std::uint32_t box_rows,
                             CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion, const std::string& what) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cols, rows}; // innermost first
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = tensor_map_encoder()(&map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                                          CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(r)) +
                             ") for " + what);
  return map;
}

} // namespace steps
