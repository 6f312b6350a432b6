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
///
/// A run also collects what the chapter has to say beside the numbers, so
/// that it reaches the table and the JSON instead of stdout alone:
/// `run.note(text)` (a line of the run: the machine's topology, a setting in
/// force) and `run.row_note(text)` (a line of the row running now: the plan
/// it chose). And it keeps one row's state across that row's runs:
/// @code
/// r.launch = [](Gemm& p, steps::Run& run) {
///   auto& plan = run.row_state<std::unique_ptr<Plan>>(); // this row's; empty before its first run
///   if (!plan) {                                         // the first (untimed verification) run
///     plan = std::make_unique<Plan>(p.shape());
///     run.row_note("plan: " + plan->describe());
///   }
///   plan->launch(p, run.stream());
/// };
/// @endcode
/// The state is made (value-initialized) on the row's first call, lives while
/// the row is verified and timed, and is freed when the row is done, before
/// the next row starts and while the problem still exists: no per-row fields
/// in the problem class.
#pragma once

#include "steps/device.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
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

  /// Adds a line of the run: printed under the table, written to the JSON's
  /// run-level "notes". Adding the same text again keeps one copy.
  void note(const std::string& text);
  /// Adds a line of the row running now (its "notes" in the JSON, printed
  /// under the table as "name: text"). Adding the same text again keeps one
  /// copy, so a launch may say something on every run; say it once where you
  /// can (when the row's state is made). Throws std::logic_error outside a row.
  void row_note(const std::string& text);
  /// The notes of the run so far.
  const std::vector<std::string>& notes() const noexcept { return notes_; }

  /// State of the row running now, of type `S`: value-initialized on the
  /// first call of the row, the same object on every later call of that row,
  /// destroyed when the row is done. Throws std::logic_error outside a row,
  /// or when the row asks for another type than the first time.
  template <class S>
  S& row_state() {
    if (row_.empty()) throw std::logic_error("Run::row_state: no row is running");
    if (!state_) {
      state_ = std::make_shared<S>();
      state_type_ = &typeid(S);
    } else if (*state_type_ != typeid(S)) {
      throw std::logic_error("Run::row_state: row '" + row_ + "' asked for two different state types");
    }
    return *static_cast<S*>(state_.get());
  }

  /// For the runner: row `name` starts (its notes and state begin empty).
  void begin_row(const std::string& name);
  /// For the runner: the row is done; frees its state, returns its notes.
  std::vector<std::string> end_row();

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
  std::vector<std::string> notes_;             // the run's notes
  std::string row_;                            // the row running now ("" between rows)
  std::vector<std::string> row_notes_;         // its notes
  std::shared_ptr<void> state_;                // its state (declared last: freed before the streams)
  const std::type_info* state_type_ = nullptr;
};

} // namespace steps
