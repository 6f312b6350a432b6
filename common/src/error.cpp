#include "steps/error.hpp"

#include <cstdio>

namespace steps {

static std::string format_error(const std::string& library, const std::string& code_name,
                                const std::string& detail, const std::string& expr,
                                const std::string& file, int line) {
  return library + " error " + code_name + " (" + detail + ") in " + expr + " at " + file + ":" +
         std::to_string(line);
}

Error::Error(std::string library, std::string code_name, std::string detail, std::string expr,
             std::string file, int line)
    : std::runtime_error(format_error(library, code_name, detail, expr, file, line)),
      library_(std::move(library)), code_name_(std::move(code_name)), expr_(std::move(expr)),
      file_(std::move(file)), line_(line) {}

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  // Clear a non-sticky error so the next call does not report it again.
  (void)cudaGetLastError();
  throw Error("CUDA", cudaGetErrorName(err), cudaGetErrorString(err), expr, file, line);
}

bool check_nothrow(cudaError_t err, const char* expr, const char* file, int line) noexcept {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "warning: CUDA error %s (%s) in %s at %s:%d\n", cudaGetErrorName(err),
               cudaGetErrorString(err), expr, file, line);
  return false;
}

} // namespace steps
