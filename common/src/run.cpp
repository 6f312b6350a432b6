#include "steps/run.hpp"

#include "steps/error.hpp"

#include <algorithm>
#include <stdexcept>

namespace steps {

DeviceScope::DeviceScope(int device) {
  CUDA_CHECK(cudaGetDevice(&previous_));
  if (device != previous_) CUDA_CHECK(cudaSetDevice(device));
}

DeviceScope::~DeviceScope() { CUDA_CHECK_NOTHROW(cudaSetDevice(previous_)); }

Run::Run(std::vector<DeviceInfo> devices) : devices_(std::move(devices)) {
  if (devices_.empty()) throw std::invalid_argument("steps::Run needs at least one GPU");
  for (const auto& d : devices_) {
    DeviceScope scope(d.index);
    primary_.emplace_back();
  }
  side_.resize(devices_.size());
  events_.resize(devices_.size());
  next_event_.assign(devices_.size(), 0);
}

Run::~Run() = default;

cudaEvent_t Run::event_on(int gpu) {
  auto& pool = events_[static_cast<std::size_t>(gpu)];
  auto& next = next_event_[static_cast<std::size_t>(gpu)];
  // cudaStreamWaitEvent waits for the record the event holds when the wait
  // is enqueued, so an event can be recorded again right after: a small pool
  // only keeps event creation out of the timed loop.
  constexpr std::size_t kPool = 16;
  if (pool.size() < kPool) {
    DeviceScope scope(ordinal(gpu));
    RawEvent e;
    CUDA_CHECK(cudaEventCreateWithFlags(e.out(), cudaEventDisableTiming));
    pool.push_back(std::move(e));
    return pool.back().get();
  }
  cudaEvent_t e = pool[next].get();
  next = (next + 1) % kPool;
  return e;
}

std::vector<cudaStream_t> Run::fork(int k, int i) {
  if (k < 0) throw std::invalid_argument("Run::fork: k must be >= 0");
  const std::size_t g = static_cast<std::size_t>(i);
  auto& sides = side_.at(g);
  {
    DeviceScope scope(ordinal(i));
    while (sides.size() < static_cast<std::size_t>(k)) sides.emplace_back(cudaStreamNonBlocking);
  }
  // The fork point: an event after the work so far in stream(0).
  cudaEvent_t at;
  {
    DeviceScope scope(ordinal(0));
    at = event_on(0);
    CUDA_CHECK(cudaEventRecord(at, stream(0)));
  }
  std::vector<cudaStream_t> out;
  DeviceScope scope(ordinal(i));
  for (int s = 0; s < k; ++s) {
    cudaStream_t side = sides[static_cast<std::size_t>(s)].get();
    CUDA_CHECK(cudaStreamWaitEvent(side, at, 0));
    out.push_back(side);
    pending_.push_back({i, side});
  }
  if (i != 0) pending_.push_back({i, stream(i)}); // another GPU's primary stream joins too
  return out;
}

void Run::join() {
  for (const auto& p : pending_) {
    cudaEvent_t done;
    {
      DeviceScope scope(ordinal(p.gpu));
      done = event_on(p.gpu);
      CUDA_CHECK(cudaEventRecord(done, p.stream));
    }
    DeviceScope scope(ordinal(0));
    CUDA_CHECK(cudaStreamWaitEvent(stream(0), done, 0));
  }
  pending_.clear();
}

namespace {
void add_once(std::vector<std::string>& lines, const std::string& text) {
  if (std::find(lines.begin(), lines.end(), text) == lines.end()) lines.push_back(text);
}
} // namespace

void Run::note(const std::string& text) { add_once(notes_, text); }

void Run::row_note(const std::string& text) {
  if (row_.empty()) throw std::logic_error("Run::row_note: no row is running (use Run::note for the run)");
  add_once(row_notes_, text);
}

void Run::begin_row(const std::string& name) {
  row_ = name;
  row_notes_.clear();
  state_.reset();
  state_type_ = nullptr;
}

std::vector<std::string> Run::end_row() {
  state_.reset();
  state_type_ = nullptr;
  row_.clear();
  return std::move(row_notes_);
}

} // namespace steps
