#include "steps/watchdog.hpp"

#include "steps/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace steps {

Watchdog::Watchdog(double seconds, std::string message, Action action) {
  if (seconds <= 0) return;
  if (!action) action = [](const std::string& m) { exit_with(m); };
  thread_ = std::thread([this, seconds, message = std::move(message), action = std::move(action)] {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    if (cv_.wait_until(lock, deadline, [this] { return disarmed_; })) return;
    expired_ = true;
    lock.unlock();
    action(message);
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    disarmed_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Watchdog::expired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return expired_;
}

void Watchdog::exit_with(const std::string& message) {
  std::fflush(stdout);
  std::printf("\n%s\n", message.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(kHangExitCode);
}

void synchronize_or_timeout(void* stream, double seconds, const std::string& message) {
  Watchdog dog(seconds, message);
  CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

} // namespace steps
