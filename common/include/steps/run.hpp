/// @file run.hpp
/// @brief The execution context a chapter's version runs in: the GPUs the
///        program opened, a primary stream on each, and fork/join of side
///        streams inside one timed run.
///
/// Timing records its events in `run.stream()` (the primary stream of the
/// first GPU). A version that spreads its work over several streams or GPUs
/// forks from the primary stream and joins back into it before it returns,
/// so the stop event waits for all of it:
/// @code
/// auto side = run.fork(4);                  // 4 streams that wait for stream()
/// for (int c = 0; c < 4; ++c) work_on_chunk(c, side[c]);
/// run.join();                               // stream() waits for all 4
/// @endcode
#pragma once

#include "steps/device.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"

#include <cuda_runtime.h>

#include <vector>

namespace steps {

/// Makes `device` current for the lifetime of the scope, then restores the
/// device that was current before (like nvbench's device_scope).
class DeviceScope {
public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

private:
  int previous_ = 0;
};

/// The GPUs, streams and fork/join events of one chapter run.
class Run {
public:
  /// Opens a primary stream on each of `devices` (at least one).
  explicit Run(std::vector<DeviceInfo> devices);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  /// Number of GPUs opened.
  int gpus() const noexcept { return static_cast<int>(devices_.size()); }
  /// Facts of GPU `i` (0 = the first one opened, `--device`).
  const DeviceInfo& device(int i = 0) const { return devices_.at(static_cast<std::size_t>(i)); }
  /// CUDA ordinal of GPU `i`.
  int ordinal(int i = 0) const { return device(i).index; }
  /// The primary stream of GPU `i`; timing events are recorded in stream(0).
  cudaStream_t stream(int i = 0) const { return primary_.at(static_cast<std::size_t>(i)).get(); }

  /// Returns `k` side streams of GPU `i`, each made to wait for the work
  /// enqueued so far in the primary stream of GPU 0. They stay "forked"
  /// until join().
  std::vector<cudaStream_t> fork(int k, int i = 0);
  /// Makes stream(0) wait for everything enqueued so far in every stream
  /// returned by fork() (and in the primary streams of the other GPUs).
  void join();
  /// True between fork() and join() (a version that forgets to join is a bug:
  /// the runner checks this after every run).
  bool forked() const noexcept { return !pending_.empty(); }

private:
  struct Side {
    int gpu;
    cudaStream_t stream;
  };
  cudaEvent_t event_on(int gpu);
  std::vector<DeviceInfo> devices_;
  std::vector<Stream> primary_;
  std::vector<std::vector<Stream>> side_;      // per GPU, created on demand
  std::vector<std::vector<RawEvent>> events_;  // per GPU, a pool reused round-robin
  std::vector<std::size_t> next_event_;
  std::vector<Side> pending_;                  // forked since the last join
};

} // namespace steps
