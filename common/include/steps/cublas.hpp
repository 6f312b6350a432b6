/// @file cublas.hpp
/// @brief cuBLAS / cuBLASLt error checks and an owning cuBLAS handle.
///
/// Header-only, so that only targets that link CUDA::cublas (or
/// CUDA::cublasLt) pay for it.
#pragma once

#include "steps/error.hpp"

#include <cublas_v2.h>

#include <utility>

namespace steps {

/// Throws steps::Error for a failed cuBLAS / cuBLASLt call (used by CUBLAS_CHECK).
[[noreturn]] inline void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file, int line) {
  throw Error("cuBLAS", cublasGetStatusName(s), cublasGetStatusString(s), expr, file, line);
}

/// Owning, move-only cuBLAS handle.
class CublasHandle {
public:
  CublasHandle() {
    const cublasStatus_t s = cublasCreate(&h_);
    if (s != CUBLAS_STATUS_SUCCESS) throw_cublas_error(s, "cublasCreate(&h_)", __FILE__, __LINE__);
  }
  ~CublasHandle() {
    if (h_) cublasDestroy(h_);
  }
  CublasHandle(CublasHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  CublasHandle& operator=(CublasHandle&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const noexcept { return h_; }       ///< the raw handle
  operator cublasHandle_t() const noexcept { return h_; }  ///< use where a cublasHandle_t is expected

private:
  cublasHandle_t h_ = nullptr;
};

} // namespace steps

/// Checks a cuBLAS or cuBLASLt call; throws steps::Error on failure.
#define CUBLAS_CHECK(expr)                                                      \
  do {                                                                          \
    const cublasStatus_t steps_status_ = (expr);                                \
    if (steps_status_ != CUBLAS_STATUS_SUCCESS)                                 \
      ::steps::throw_cublas_error(steps_status_, #expr, __FILE__, __LINE__);    \
  } while (0)
