// Chapter 08, Problem 2: what waits for what. Spin kernels of --spin-us microseconds (one
// warp each, so two CAN run at once) and a copy of up to 64 MiB.
#pragma once

#include "support.cuh"

namespace ch08 {

class Concurrency {
public:
  Concurrency(const steps::Options& opts, steps::Run&)
      : spin_us_(opts.get("--spin-us")),
        n_(std::min<std::size_t>(static_cast<std::size_t>(opts.size), std::size_t{1} << 24)), src_(n_), dst_(n_),
        markers_(kMarkers), a_(cudaStreamDefault), b_(cudaStreamDefault) {
    steps::fill_uniform(src_.data(), n_, opts.seed + 1);
    for (auto* e : {&fork_, &join_a_, &join_b_, &join_mid_})
      CUDA_CHECK(cudaEventCreateWithFlags(e->out(), cudaEventDisableTiming));
  }

  std::string describe() const {
    return "concurrency: spin kernels of " + std::to_string(spin_us_) + " us (one warp each) and a copy of " +
           steps::format_bytes(4.0 * static_cast<double>(n_)) + " from pinned memory";
  }

  std::size_t bytes() const { return n_ * sizeof(float); }
  long long spin_us() const { return spin_us_; }
  unsigned int* marker(int i) { return markers_.data() + i; }
  void copy_sync() { CUDA_CHECK(cudaMemcpy(dst_.data(), src_.data(), bytes(), cudaMemcpyHostToDevice)); }
  void copy_async(cudaStream_t s) {
    CUDA_CHECK(cudaMemcpyAsync(dst_.data(), src_.data(), bytes(), cudaMemcpyHostToDevice, s));
  }

  /// Two ordinary ("blocking") streams, spin kernels in each, and `middle`
  /// (the legacy or the per-thread default stream, or none) used between
  /// the two launches. The streams are this problem's own: the side streams
  /// of steps::Run are non-blocking, and ignore the legacy default stream.
  void two_streams(cudaStream_t origin, bool use_middle, cudaStream_t middle) {
    // Fork: both streams (and the middle one) start after `origin`'s work so far.
    CUDA_CHECK(cudaEventRecord(fork_, origin));
    CUDA_CHECK(cudaStreamWaitEvent(a_, fork_, 0));
    CUDA_CHECK(cudaStreamWaitEvent(b_, fork_, 0));
    if (use_middle) CUDA_CHECK(cudaStreamWaitEvent(middle, fork_, 0));
    launch_spin(spin_us_, marker(0), 1, a_);
    if (use_middle) launch_spin(0, marker(1), 2, middle);
    launch_spin(spin_us_, marker(2), 3, b_);
    // Join: origin waits for all of them (the timing's stop event too).
    CUDA_CHECK(cudaEventRecord(join_a_, a_));
    CUDA_CHECK(cudaEventRecord(join_b_, b_));
    CUDA_CHECK(cudaStreamWaitEvent(origin, join_a_, 0));
    CUDA_CHECK(cudaStreamWaitEvent(origin, join_b_, 0));
    if (use_middle) {
      CUDA_CHECK(cudaEventRecord(join_mid_, middle));
      CUDA_CHECK(cudaStreamWaitEvent(origin, join_mid_, 0));
    }
  }

  void reset() {
    markers_.fill_bytes(0xFF);
    dst_.fill_bytes(0xFF);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  /// The markers `want` (0xFFFFFFFF: not written) and, if asked, the copy.
  steps::Comparison check(std::vector<unsigned int> want, bool copied) {
    std::vector<unsigned int> got = markers_.to_host();
    want.resize(kMarkers, 0xFFFFFFFFu);
    steps::Comparison c = exact_words(got, [&](std::size_t i) { return want[i]; });
    if (!c.ok || !copied) return c;
    const std::vector<float> d = dst_.to_host();
    return exact(d.data(), src_.data(), n_);
  }

private:
  static constexpr int kMarkers = 4;
  long long spin_us_;
  std::size_t n_;
  steps::PinnedBuffer<float> src_;
  steps::DeviceBuffer<float> dst_;
  steps::DeviceBuffer<unsigned int> markers_;
  steps::Stream a_, b_;
  steps::RawEvent fork_, join_a_, join_b_, join_mid_;
};

steps::GroupPtr concurrency_group() {
  using R = steps::Row<Concurrency>;
  auto row = [](std::string name, std::string what, std::function<void(Concurrency&, steps::Run&)> launch,
                std::vector<unsigned int> want, bool copied) {
    R r = steps::make_row<Concurrency>(
        std::move(name), std::move(what), Role::reference, std::move(launch),
        [copied](const Concurrency& p) { return over_link(copied ? static_cast<double>(p.bytes()) : 0.0); });
    r.reset = [](Concurrency& p) { p.reset(); };
    r.check = [want, copied](Concurrency& p) { return p.check(want, copied); };
    return r;
  };
  return steps::group<Concurrency>({
      row("sync_copy_then_kernel",
          "cudaMemcpy (the host waits for it), then a spin kernel in another stream: one after the other",
          [](Concurrency& p, steps::Run& run) {
            auto side = run.fork(1);
            p.copy_sync();
            launch_spin(p.spin_us(), p.marker(0), 1, side[0]);
            run.join();
          },
          {1}, true),
      row("async_copy_then_kernel",
          "cudaMemcpyAsync in one stream, then the spin kernel in another: the host goes on, both run at once",
          [](Concurrency& p, steps::Run& run) {
            auto side = run.fork(2);
            p.copy_async(side[1]);
            launch_spin(p.spin_us(), p.marker(0), 1, side[0]);
            run.join();
          },
          {1}, true),
      row("two_streams", "a spin kernel in each of two ordinary streams: they overlap (about one spin)",
          [](Concurrency& p, steps::Run& run) { p.two_streams(run.stream(), false, nullptr); }, {1, 0xFFFFFFFFu, 3},
          false),
      row("legacy_stream_between",
          "the same with an empty kernel in the legacy default stream between the launches: it waits for "
          "stream A, stream B waits for it (two spins)",
          [](Concurrency& p, steps::Run& run) { p.two_streams(run.stream(), true, cudaStreamLegacy); }, {1, 2, 3},
          false),
      row("per_thread_stream_between",
          "the same with the kernel in cudaStreamPerThread (stream 0 under --default-stream per-thread): no "
          "implicit waits (one spin)",
          [](Concurrency& p, steps::Run& run) { p.two_streams(run.stream(), true, cudaStreamPerThread); }, {1, 2, 3},
          false),
  });
}

} // namespace ch08
