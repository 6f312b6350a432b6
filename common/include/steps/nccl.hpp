/// @file nccl.hpp
/// @brief NCCL error check. Header-only: only targets that link NCCL include it.
#pragma once

#include "steps/error.hpp"

#include <nccl.h>

#include <string>

namespace steps {

/// Throws steps::Error for a failed NCCL call (used by NCCL_CHECK).
[[noreturn]] inline void throw_nccl_error(ncclResult_t r, const char* expr, const char* file, int line) {
  throw Error("NCCL", "ncclResult " + std::to_string(static_cast<int>(r)), ncclGetErrorString(r), expr, file, line);
}

} // namespace steps

/// Checks an NCCL call; throws steps::Error on failure.
#define NCCL_CHECK(expr)                                                        \
  do {                                                                          \
    const ncclResult_t steps_nccl_ = (expr);                                    \
    if (steps_nccl_ != ncclSuccess)                                             \
      ::steps::throw_nccl_error(steps_nccl_, #expr, __FILE__, __LINE__);        \
  } while (0)
