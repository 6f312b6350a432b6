/// @file watchdog.hpp
/// @brief Ends a program whose GPU work never finishes, with a message.
///
/// A kernel that waits for something that never happens (a spin on a flag no
/// thread sets, an mbarrier waited on with the wrong parity, a barrier that
/// not every thread reaches) does not fail: it runs forever, and so does the
/// program that waits for it. A Watchdog is armed around such a wait: if it
/// is not disarmed (destroyed) within its time, it prints the message it was
/// given and ends the process with exit code kHangExitCode. Graders arm one
/// around every shape (a hang is a rejection with a message); chapter
/// programs around every row.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace steps {

/// The exit code of a program ended by a watchdog.
constexpr int kHangExitCode = 3;

/// Arms on construction; disarms on destruction. Not copyable or movable.
class Watchdog {
public:
  /// What happens on expiry: by default, print `message` to stdout and stderr
  /// and end the process with kHangExitCode (std::_Exit: a hung kernel cannot
  /// be waited for, and the driver frees the GPU when the process ends).
  using Action = std::function<void(const std::string& message)>;

  /// @param seconds  time allowed; <= 0 disables the watchdog
  /// @param message  what to say when the time is up (one line for a learner)
  /// @param action   what to do then (tests pass their own; default: print and exit)
  Watchdog(double seconds, std::string message, Action action = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// True when the time ran out (only visible with a custom action).
  bool expired() const;

  /// The default action: prints and calls std::_Exit(kHangExitCode).
  [[noreturn]] static void exit_with(const std::string& message);

private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  bool expired_ = false;
  std::thread thread_;
};

/// Waits for `stream` (cudaStreamSynchronize) under a watchdog of `seconds`
/// that says `message` on expiry. Throws steps::Error if the work failed.
void synchronize_or_timeout(void* stream, double seconds, const std::string& message);

} // namespace steps
