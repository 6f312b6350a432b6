#include "steps/timing.hpp"

#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/watchdog.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace steps {

Stats compute_stats(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("compute_stats: no samples");
  std::sort(samples.begin(), samples.end());
  Stats s;
  s.count = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  const std::size_t mid = s.count / 2;
  s.median = (s.count % 2) ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  return s;
}

Stats time_gpu(const std::function<void(cudaStream_t)>& work, const TimingOptions& opts,
               cudaStream_t stream) {
  if (opts.iters < 1) throw std::invalid_argument("time_gpu: iters must be >= 1");
  std::optional<L2Flusher> flusher;
  if (opts.flush_l2) flusher.emplace();
  auto before = [&] {
    if (opts.before_each) opts.before_each(stream);
    if (flusher) flusher->flush(stream);
  };
  // One event pair per run, synchronised once at the end, so the host never
  // stalls the GPU between runs.
  std::vector<Event> start(opts.iters), stop(opts.iters);
  detail::timed_loop(
      opts.warmup, opts.iters, before, [&] { work(stream); }, [&](int i) { start[i].record(stream); },
      [&](int i) { stop[i].record(stream); },
      [&] { synchronize_or_timeout(stream, opts.timeout_s, opts.timeout_message); });
  std::vector<double> ms(opts.iters);
  for (int i = 0; i < opts.iters; ++i) ms[i] = Event::elapsed_ms(start[i], stop[i]);
  return compute_stats(std::move(ms));
}

} // namespace steps
