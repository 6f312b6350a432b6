/// @file error.hpp
/// @brief Error checking: every CUDA, cuBLAS and NCCL call goes through one of
///        these macros, which throw steps::Error naming the file, line,
///        expression and error.
///
/// Why exceptions: a chapter program catches them once in main, prints one
/// line and exits 1; RAII buffers free their memory on the way out. Kernel
/// launches report errors in two ways, and CUDA_CHECK_LAUNCH() checks both
/// kinds you can see right away (bad configuration now, faults at the next
/// synchronisation; see the chapter 01 lesson).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace steps {

/// An error from the CUDA runtime or a CUDA library, with where it happened.
class Error : public std::runtime_error {
public:
  /// @param library  "CUDA", "cuBLAS", "NCCL", ...
  /// @param code_name the error's symbolic name, e.g. "cudaErrorInvalidValue"
  /// @param detail   the library's description of the error
  /// @param expr     the source text of the failing call
  /// @param file     source file of the call
  /// @param line     source line of the call
  Error(std::string library, std::string code_name, std::string detail,
        std::string expr, std::string file, int line);

  const std::string& library() const noexcept { return library_; }    ///< e.g. "CUDA"
  const std::string& code_name() const noexcept { return code_name_; } ///< e.g. "cudaErrorMemoryAllocation"
  const std::string& expression() const noexcept { return expr_; }     ///< the failing call's text
  const std::string& file() const noexcept { return file_; }           ///< where it was called
  int line() const noexcept { return line_; }                           ///< where it was called

private:
  std::string library_, code_name_, expr_, file_;
  int line_;
};

/// A device allocation that the GPU cannot hold; the message says how much
/// was asked for and how much is free.
class OutOfMemory : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Throws steps::Error for a failed CUDA runtime call (used by CUDA_CHECK).
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

/// Checks a CUDA runtime call without throwing; for destructors, which must
/// not throw. Prints a warning to stderr on failure and returns false.
bool check_nothrow(cudaError_t err, const char* expr, const char* file, int line) noexcept;

} // namespace steps

/// Checks a CUDA runtime call; throws steps::Error on failure.
#define CUDA_CHECK(expr)                                                        \
  do {                                                                          \
    const cudaError_t steps_err_ = (expr);                                      \
    if (steps_err_ != cudaSuccess)                                              \
      ::steps::throw_cuda_error(steps_err_, #expr, __FILE__, __LINE__);         \
  } while (0)

/// Checks a CUDA call in a destructor: warns instead of throwing.
#define CUDA_CHECK_NOTHROW(expr) ::steps::check_nothrow((expr), #expr, __FILE__, __LINE__)

/// Checks the kernel launch just made. A bad launch configuration (too many
/// threads, too much shared memory, zero blocks) is reported here. Faults
/// inside the kernel appear later, at the next synchronising call, which is
/// why verification synchronises and checks before it reads results.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaPeekAtLastError())
