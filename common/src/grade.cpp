#include "steps/grade_support.hpp"

#include "steps/report.hpp"

#include <iostream>

namespace steps::grade {

std::string explain_error(const Error& e) {
  const std::string& c = e.code_name();
  std::string hint;
  if (c == "cudaErrorIllegalAddress")
    hint = "a thread read or wrote outside the arrays it was given. Check every index against its bound "
           "(rows, columns, n), the last block's threads, and the tails of vector loads.";
  else if (c == "cudaErrorMisalignedAddress")
    hint = "a vector access (float2, float4, 16-byte copies) needs an address aligned to its size; the pointer "
           "plus your offset is not. Handle the unaligned head with scalar accesses.";
  else if (c == "cudaErrorInvalidConfiguration")
    hint = "the launch configuration is invalid: 0 blocks (an empty input?), more than 1024 threads per block, or "
           "a grid dimension over its limit (y and z: 65535).";
  else if (c == "cudaErrorInvalidValue")
    hint = "a CUDA call got an invalid argument: a launch with 0 blocks, a copy with a wrong size, or too much "
           "dynamic shared memory without cudaFuncSetAttribute.";
  else if (c == "cudaErrorLaunchOutOfResources")
    hint = "the block needs more registers or shared memory than an SM has: fewer threads per block, or "
           "__launch_bounds__.";
  else if (c == "cudaErrorIllegalInstruction" || c == "cudaErrorLaunchFailure")
    hint = "the kernel executed something invalid: a barrier or warp-synchronous call that not all threads "
           "reached, or a corrupted pointer.";
  else if (c == "cudaErrorMemoryAllocation")
    hint = "a device allocation failed: is the size computed in bytes (count * sizeof(T))?";
  return hint.empty() ? std::string() : "\n  Hint: " + hint;
}

std::string hang_message(const std::string& shape, double seconds) {
  return "FAILED: your code did not finish within " + fixed(seconds, 0) + " s on " + shape +
         ": a kernel that waits forever. Stopped by the grader's watchdog (exit code 3).\n"
         "  Hint: a __syncthreads() inside an if (or a loop) that not every thread of the block reaches, a "
         "spin on a flag that no thread sets, or an mbarrier waited on with the wrong phase parity.";
}

void report_speed(const std::string& label, const Stats& ms, double bytes, double flops) {
  const double gb = bytes > 0 ? gbps(bytes, ms.median) : 0, tf = flops > 0 ? tflops(flops, ms.median) : 0;
  std::cout << "speed: " << label << ": median " << fixed(ms.median, 4) << " ms";
  if (gb > 0) std::cout << ", " << fixed(gb, 0) << " GB/s";
  if (tf > 0) std::cout << ", " << fixed(tf, 2) << " TFLOP/s";
  std::string key = label;
  for (char& ch : key)
    if (ch == ' ' || ch == '=') ch = '_';
  std::cout << "\nsteps-speed label=" << key << " median_ms=" << ms.median << " gbps=" << gb << " tflops=" << tf
            << "\n";
}

} // namespace steps::grade
