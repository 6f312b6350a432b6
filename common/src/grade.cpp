#include "steps/grade_support.hpp"

#include "steps/random.hpp"
#include "steps/report.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>

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

Stats time_speed(const std::string& label, const std::function<void(cudaStream_t)>& work, double bytes,
                 double flops, int iters) {
  TimingOptions opts;
  opts.iters = iters;
  const Stats ms = time_gpu(work, opts);
  report_speed(label, ms, bytes, flops);
  return ms;
}

bool under_sanitizer() { return std::getenv("STEPS_SANITIZE") != nullptr; }

// --- Division by zero ------------------------------------------------------

namespace {

// The whole message, written before the learner's code runs: a signal
// handler may only call async-signal-safe functions (write, _exit).
char g_message[2048];
std::size_t g_message_length = 0;
std::string& division_hint() {
  static std::string hint;
  return hint;
}

extern "C" void on_arithmetic_error(int) {
  ssize_t ignored = write(STDOUT_FILENO, g_message, g_message_length);
  (void)ignored;
  _exit(1);
}

} // namespace

void set_division_hint(const std::string& hint) { division_hint() = hint; }

ArithmeticGuard::ArithmeticGuard(const std::string& shape) : previous_(new struct sigaction) {
  std::string m = "\nFAILED: your code stopped with an arithmetic error (SIGFPE: an integer division by zero) on " +
                  shape + ".\n  Hint: what does your code divide by? ";
  m += division_hint().empty()
           ? "An empty input (n = 0) often makes a count of 0 (blocks, elements per thread, chunks) that a later "
             "division or modulo uses: handle the empty case before computing anything from it."
           : division_hint();
  m += "\n";
  g_message_length = std::min(m.size(), sizeof g_message);
  std::memcpy(g_message, m.data(), g_message_length);
  struct sigaction action {};
  action.sa_handler = on_arithmetic_error;
  sigemptyset(&action.sa_mask);
  sigaction(SIGFPE, &action, static_cast<struct sigaction*>(previous_));
}

ArithmeticGuard::~ArithmeticGuard() {
  auto* previous = static_cast<struct sigaction*>(previous_);
  sigaction(SIGFPE, previous, nullptr);
  delete previous;
}

// --- Huge arrays -----------------------------------------------------------

std::vector<std::pair<std::size_t, std::size_t>> sample_windows(std::size_t n, std::uint64_t seed, std::size_t width,
                                                                int random) {
  std::vector<std::pair<std::size_t, std::size_t>> w;
  auto add = [&](std::size_t center_lo, std::size_t center_hi) {
    const std::size_t lo = center_lo > width ? center_lo - width : 0;
    const std::size_t hi = std::min(n, center_hi + width);
    if (lo < hi) w.push_back({lo, hi});
  };
  add(0, 0);
  add(n, n);
  for (std::size_t b = std::size_t{1} << 31; b < n; b += std::size_t{1} << 31) add(b, b);
  for (int k = 0; k < random && n > 0; ++k) {
    const std::size_t at = static_cast<std::size_t>(splitmix64(seed * 7919 + static_cast<std::uint64_t>(k)) % n);
    add(at, at);
  }
  std::sort(w.begin(), w.end());
  std::vector<std::pair<std::size_t, std::size_t>> merged;
  for (const auto& r : w) {
    if (!merged.empty() && r.first <= merged.back().second) merged.back().second = std::max(merged.back().second, r.second);
    else merged.push_back(r);
  }
  return merged;
}

// --- Compiled kernels ------------------------------------------------------

namespace {

std::string find_cuobjdump() {
  std::vector<std::string> places;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty()) places.push_back(dir + "/cuobjdump");
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char* root = std::getenv(var)) places.push_back(std::string(root) + "/bin/cuobjdump");
  places.push_back("/usr/local/cuda/bin/cuobjdump");
  for (const auto& p : places)
    if (access(p.c_str(), X_OK) == 0) return p;
  return "";
}

std::string run_and_read(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    *status = -1;
    return out;
  }
  std::array<char, 4096> buffer{};
  std::size_t got = 0;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), got);
  *status = pclose(pipe);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// SASS: "code for sm_90" ... "Function : NAME" ... instruction lines
// "/*0070*/  MEMBAR.SC.GPU ;". PTX: ".target sm_90", ".entry NAME(" ... "}".
std::vector<CompiledKernel> parse(const std::string& text, const std::string& name_part, bool sass) {
  std::vector<CompiledKernel> kernels;
  std::istringstream lines(text);
  std::string line, arch;
  CompiledKernel* current = nullptr;
  while (std::getline(lines, line)) {
    const std::string t = trim(line);
    if (sass) {
      if (t.rfind("code for ", 0) == 0) {
        arch = t.substr(9);
        current = nullptr;
      } else if (t.rfind("Function : ", 0) == 0) {
        const std::string name = trim(t.substr(11));
        current = nullptr;
        if (name.find(name_part) != std::string::npos) {
          kernels.push_back({name, arch, {}});
          current = &kernels.back();
        }
      } else if (current && t.rfind("/*", 0) == 0) {
        const auto end = t.find("*/");
        const std::string ins = end == std::string::npos ? "" : trim(t.substr(end + 2));
        if (!ins.empty()) current->instructions.push_back(ins);
      }
    } else {
      if (t.rfind(".target ", 0) == 0) {
        arch = trim(t.substr(8));
      } else if (t.find(".entry ") != std::string::npos) {
        auto at = t.find(".entry ") + 7;
        const std::string name = t.substr(at, t.find('(', at) - at);
        current = nullptr;
        if (name.find(name_part) != std::string::npos) {
          kernels.push_back({trim(name), "ptx " + arch, {}});
          current = &kernels.back();
        }
      } else if (current && !t.empty()) {
        current->instructions.push_back(t);
      }
    }
  }
  return kernels;
}

} // namespace

std::vector<CompiledKernel> compiled_kernels(const std::string& name_part, std::string* why) {
  const std::string tool = find_cuobjdump();
  if (tool.empty()) {
    *why = "cuobjdump (part of the CUDA toolkit) was not found on PATH or in /usr/local/cuda/bin";
    return {};
  }
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    *why = "this program could not find its own file (/proc/self/exe)";
    return {};
  }
  self[len] = '\0';
  int status = 0;
  const std::string sass = run_and_read("'" + tool + "' -sass '" + std::string(self) + "' 2>&1", &status);
  auto kernels = status == 0 ? parse(sass, name_part, true) : std::vector<CompiledKernel>{};
  for (const auto& k : kernels)
    if (!k.instructions.empty()) return kernels;
  const std::string ptx = run_and_read("'" + tool + "' -ptx '" + std::string(self) + "' 2>&1", &status);
  kernels = status == 0 ? parse(ptx, name_part, false) : std::vector<CompiledKernel>{};
  if (kernels.empty()) *why = "cuobjdump found no kernel whose name contains '" + name_part + "' in this program";
  return kernels;
}

} // namespace steps::grade
