/// @file timing.hpp
/// @brief Event timing done right: warm-up runs first, then many timed runs,
///        reported as median with min and max.
///
/// GPU work is asynchronous, so host clocks around a launch measure only the
/// launch. CUDA events are recorded in the stream and timestamped by the GPU
/// when the work before them is done. The first runs pay for module loading,
/// library handle creation and cold caches, so they are thrown away. The
/// median is robust to the occasional slow run (another process, a clock
/// change); min and max show the spread.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace steps {

/// Summary statistics of repeated measurements.
struct Stats {
  double median = 0; ///< middle value (mean of the two middle ones for even counts)
  double min = 0;    ///< smallest
  double max = 0;    ///< largest
  double mean = 0;   ///< arithmetic mean
  std::size_t count = 0; ///< number of samples
};

/// Computes Stats of `samples`; throws std::invalid_argument when empty.
Stats compute_stats(std::vector<double> samples);

/// How to time.
struct TimingOptions {
  int warmup = 3;        ///< untimed runs first
  int iters = 20;        ///< timed runs
  bool flush_l2 = false; ///< overwrite the L2 cache before every timed run (one case of before_each)
  /// Untimed work enqueued before every run, warm-up runs included, outside
  /// the events: zeroing an atomic's target, restoring an in-place input.
  /// Runs before the L2 flush.
  std::function<void(cudaStream_t)> before_each;
  /// A watchdog on the final wait: a run that does not finish within this
  /// many seconds ends the program with `timeout_message` (0 = no watchdog).
  double timeout_s = 0;
  std::string timeout_message = "a timed run did not finish";
};

/// Empties the L2 cache of the data a timed run uses, as a real pipeline
/// finds it: the run reads its inputs from DRAM, and the L2 holds no dirty
/// lines for it to write back. A flush reads a buffer twice the L2's size
/// (filled once, at construction): the reads evict every line, write back
/// the dirty ones (the previous run's output) outside the timed interval,
/// and leave only clean lines behind. (A flush by writes, memset, would
/// leave the L2 full of dirty lines, and the timed run would pay for their
/// write-back: up to twice the DRAM traffic of a run that only reads.)
class L2Flusher {
public:
  /// Sizes the buffer from the current device's L2.
  L2Flusher();
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  /// Enqueues the flush in `stream`.
  void flush(cudaStream_t stream);

private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
  unsigned* sink_ = nullptr; ///< where the read kernel writes, never in practice (its loads must not be optimized away)
  int blocks_ = 0;           ///< the read kernel's grid: 4 blocks per SM
};

/// Times `work(stream)`: `opts.warmup` untimed runs, then `opts.iters` runs
/// each between two events, with `opts.before_each` (and the L2 flush)
/// enqueued before each run, outside the events. Returns milliseconds per run. Throws steps::Error
/// if any CUDA call, or the work itself, fails.
Stats time_gpu(const std::function<void(cudaStream_t)>& work, const TimingOptions& opts,
               cudaStream_t stream = nullptr);

namespace detail {
/// The order of one timing: `warmup` runs of (before, work), then `wait()`,
/// then `iters` runs of (before, start(i), work, stop(i)), then `wait()`.
/// time_gpu() fills in CUDA events; host tests check the order itself.
template <class Before, class Work, class Start, class Stop, class Wait>
void timed_loop(int warmup, int iters, Before before, Work work, Start start, Stop stop, Wait wait) {
  for (int i = 0; i < warmup; ++i) {
    before();
    work();
  }
  wait();
  for (int i = 0; i < iters; ++i) {
    before();
    start(i);
    work();
    stop(i);
  }
  wait();
}
} // namespace detail

/// GB/s for `bytes` moved in `ms` milliseconds (1 GB = 1e9 bytes).
inline double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

/// TFLOP/s for `flops` operations in `ms` milliseconds.
inline double tflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e9) : 0.0; }

} // namespace steps
