/// @file grade_support.hpp
/// @brief The parts of the grader harness that need no test framework: error
///        hints, the hang message, the speed report, the busy stream every
///        graded call runs on, a crash guard for integer division by zero,
///        cheap checks of huge arrays, a structural check of compiled
///        kernels and a record the GPU leaves in mapped host memory
///        (grade.hpp has the shape loop).
#pragma once

#include "steps/error.hpp"
#include "steps/timing.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace steps::grade {

/// Seconds one shape may take before it counts as a hang. The largest graded
/// shapes (with their CPU references) take a few seconds.
constexpr double kShapeTimeout = 30;

/// A CUDA error raised while running the learner's code, in a learner's
/// words: what it means and where to look.
std::string explain_error(const Error& e);

/// The watchdog message for a shape that did not finish.
std::string hang_message(const std::string& shape, double seconds = kShapeTimeout);

/// Prints the speed of the code under test: one line for people and one
/// `steps-speed label=... median_ms=... gbps=... tflops=...` line that
/// `./tutorial grade` reads (0 where a quantity does not apply).
void report_speed(const std::string& label, const Stats& ms, double bytes, double flops = 0);

/// A grader's speed test in one call: times `work` on a stream of its own
/// (time_gpu: TimingOptions' warm-up, then `iters` timed runs) and prints it
/// with report_speed. Returns the times.
Stats time_speed(const std::string& label, const std::function<void(cudaStream_t)>& work, double bytes,
                 double flops = 0, int iters = 20);

/// The program's one T in mapped pinned host memory, zeroed when first asked
/// for and never freed: a kernel writes it through its device address, and
/// it stays readable here after the kernel faults or is stopped (a trace, a
/// report).
template <class T>
T* mapped_record() {
  static T* record = [] {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, sizeof(T), cudaHostAllocMapped));
    std::memset(p, 0, sizeof(T));
    return static_cast<T*>(p);
  }();
  return record;
}

// ---------------------------------------------------------------------------
// The stream a graded call runs on.

/// Work held back in one or more streams until the grader releases it: a
/// one-thread kernel that waits for release() (or, so that nothing can wait
/// forever, kGateTimeoutMs after it starts). Work enqueued behind it in the
/// same stream, or ordered after it with events, cannot start before the
/// release; work that is not (the legacy default stream, a stream that never
/// waited) runs at once. The gate holds the GPU back only, never the host:
/// a call that waits for the GPU (cudaDeviceSynchronize, cudaFree, a copy to
/// pageable memory...) just waits out the timeout, with a right result.
class Gate {
public:
  /// Longest hold, from the moment the gate kernel starts.
  static constexpr double kGateTimeoutMs = 250;
  Gate();
  ~Gate();                            ///< releases
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  /// Enqueues the wait into `stream` (of the current device).
  void hold(cudaStream_t stream);
  /// Lets every held stream go on.
  void release();

private:
  std::uint64_t generation_;
  bool released_ = false;
};

/// The non-blocking stream a grader gives the learner's function, with work
/// still pending ahead of it: a Gate, then the restores and fills registered
/// below. The learner's work in this stream (or in streams that wait for it)
/// comes after them and sees the real inputs; work on the legacy default
/// stream, or a synchronous cudaMemcpy / cudaMemset, runs while the inputs
/// are still scrambled and before the outputs are poisoned, so it gives a
/// wrong result, the same way on every run.
///
///     steps::grade::BusyStream stream;
///     stream.restores(dx.data(), n * sizeof(float)); // x is scrambled now, restored in stream
///     stream.fills(dy.data(), n * sizeof(float), 0xFF); // poisoned in stream
///     stream.start();                                // gate + restores + fills
///     ex01::axpby(..., stream);
///     stream.finish();                               // release, wait
///
/// Under compute-sanitizer (STEPS_SANITIZE set) there is no gate and nothing
/// is scrambled: the fills are enqueued in stream, and the tools see only
/// the learner's work.
class BusyStream {
public:
  BusyStream();
  ~BusyStream(); ///< releases the gate and waits (errors ignored), then destroys the stream
  BusyStream(const BusyStream&) = delete;
  BusyStream& operator=(const BusyStream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }
  operator cudaStream_t() const noexcept { return stream_; }

  /// An input the learner's code reads: scrambled now (every 32-bit word
  /// XORed with a mask that turns floats into other, mostly far larger,
  /// values), restored by the pending work. `data`: device memory, or pinned
  /// host memory, 4-byte aligned. Whole words are scrambled: a tail of
  /// `bytes` shorter than 4 (an odd count of 16-bit values) stays as it is.
  void restores(void* data, std::size_t bytes);
  /// An output or scratch buffer the pending work fills with `byte` (poison,
  /// garbage), so a write that comes before it is lost. Device memory.
  void fills(void* data, std::size_t bytes, int byte);
  /// Enqueues the pending work. Call it right before the code under test.
  void start();
  /// Releases the pending work and waits for the stream.
  void finish();

private:
  cudaStream_t stream_ = nullptr;
  struct Region {
    void* data;
    std::size_t bytes;
    int byte;           // -1: restore
    std::uint32_t mask; // the XOR mask of a restored region (each region its own)
  };
  std::vector<Region> regions_;
  Gate gate_;
  bool started_ = false;
};

/// True when STEPS_SANITIZE is set (the grader runs under compute-sanitizer).
bool under_sanitizer();

// ---------------------------------------------------------------------------
// An integer division by zero in the learner's host code.

/// While alive, a SIGFPE (on x86, an integer division by zero) ends the
/// process with "FAILED: ... on <shape>" and a hint, exit code 1: a clear
/// rejection, not a crash. grade::shapes() holds one around every shape.
class ArithmeticGuard {
public:
  explicit ArithmeticGuard(const std::string& shape);
  ~ArithmeticGuard();
  ArithmeticGuard(const ArithmeticGuard&) = delete;
  ArithmeticGuard& operator=(const ArithmeticGuard&) = delete;

private:
  void* previous_; // the struct sigaction in place before
};

/// The exercise's words for a division by zero (added to the general hint).
void set_division_hint(const std::string& hint);

// ---------------------------------------------------------------------------
// Huge arrays, checked cheaply.

/// Element ranges [first, second) of an array of n elements that a check
/// of a huge case looks at: the first and last `width`, `width` either side
/// of every multiple of 2^31 below n (an int offset wraps at 2^31, an
/// unsigned one at 2^32), and `random` windows at seeded places. Sorted and
/// merged; all of [0, n) when n is small.
std::vector<std::pair<std::size_t, std::size_t>> sample_windows(std::size_t n, std::uint64_t seed,
                                                                std::size_t width = std::size_t{1} << 16,
                                                                int random = 16);

/// On the GPU: the first 32-bit word (in row-major order, as row * width +
/// column) of a block of `rows` rows of `width` words, rows `pitch` words
/// apart, whose bits equal `bits` (`equal` true) or differ from them
/// (`equal` false); rows * width when there is none. For "was every element
/// written" (outputs start as 0xFFFFFFFF) and "is the padding untouched".
std::size_t find_word(const void* device, std::size_t width, std::size_t rows, std::size_t pitch,
                      std::uint32_t bits, bool equal);

/// On the GPU: the first 32-bit word where two device arrays of `words`
/// words differ; `words` when none does.
std::size_t find_difference(const void* a, const void* b, std::size_t words);

// ---------------------------------------------------------------------------
// Structural checks of the compiled code.

/// One kernel of this program as compiled: its (mangled) name and its
/// instructions, in the order cuobjdump lists them.
struct CompiledKernel {
  std::string name;
  std::string arch;                      ///< "sm_90", or "compute_90" for PTX
  std::vector<std::string> instructions; ///< SASS (or PTX) lines
};

/// The kernels of this very program whose names contain `name_part`, read
/// with cuobjdump: the SASS when the program holds machine code, else the
/// PTX. Empty, with `why` set, when cuobjdump is not found or fails.
std::vector<CompiledKernel> compiled_kernels(const std::string& name_part, std::string* why);

} // namespace steps::grade
