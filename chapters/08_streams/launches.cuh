// Chapter 08, Problem 4: --kernels tiny dependent kernels (each --step-us long), launched or replayed.
#pragma once

#include "support.cuh"

#include "steps/memory.hpp"

#include <atomic>

namespace ch08 {

class Launches {
public:
  Launches(const steps::Options& opts, steps::Run&)
      : k_(static_cast<int>(opts.get("--kernels"))), ns_(opts.get("--step-us") * 1000), value_(1),
        gate_(1), capture_(cudaStreamNonBlocking) {
    gate_.data()[0] = 0;
    capture(graph_);
    CUDA_CHECK(cudaGraphInstantiate(exec_.out(), graph_, 0));
  }

  std::string describe() const {
    return "launches: " + std::to_string(k_) + " one-warp kernels in a row, each v = 3 v + i (the order shows in v)" +
           (ns_ > 0 ? " after spinning " + std::to_string(ns_ / 1000) + " us" : std::string());
  }

  int kernels() const { return k_; }
  void one_by_one(cudaStream_t s) {
    for (int i = 0; i < k_; ++i) {
      step_kernel<<<1, 32, 0, s>>>(value_.data(), static_cast<unsigned int>(i), ns_);
      CUDA_CHECK_LAUNCH();
    }
  }
  /// Records the k launches into `g` (nothing runs): stream capture.
  void capture(steps::Graph& g) {
    CUDA_CHECK(cudaStreamBeginCapture(capture_, cudaStreamCaptureModeThreadLocal));
    try {
      one_by_one(capture_);
    } catch (...) {
      cudaGraph_t discard = nullptr;
      (void)cudaStreamEndCapture(capture_, &discard);
      if (discard) (void)cudaGraphDestroy(discard);
      throw;
    }
    CUDA_CHECK(cudaStreamEndCapture(capture_, g.out()));
  }
  /// launch_queued: before the run, a gate kernel that holds the stream
  /// until the host has enqueued all k launches (open_gate); the GPU then
  /// runs them from its queue, back to back. Each run waits for its own
  /// ticket, so a late gate never waits for a later run's host.
  void close_gate(cudaStream_t s) {
    gate_kernel<<<1, 1, 0, s>>>(gate_.data(), ++ticket_, kGateTimeoutNs);
    CUDA_CHECK_LAUNCH();
  }
  void open_gate() {
    std::atomic_thread_fence(std::memory_order_seq_cst); // the launches are enqueued before the GPU may see it
    *static_cast<volatile unsigned int*>(gate_.data()) = ticket_;
  }
  void replay(cudaStream_t s) { CUDA_CHECK(cudaGraphLaunch(exec_, s)); }
  void capture_and_replay(cudaStream_t s) {
    steps::Graph g;
    capture(g);
    steps::GraphExec e;
    CUDA_CHECK(cudaGraphInstantiate(e.out(), g, 0));
    CUDA_CHECK(cudaGraphLaunch(e, s)); // freed after it completes (cudaGraphExecDestroy)
  }
  void zero(cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(value_.data(), 0, sizeof(unsigned int), s)); }
  void poison() { value_.fill_bytes(0xFF); }
  steps::Comparison check() {
    const std::vector<unsigned int> got = value_.to_host();
    const unsigned int want = steps_reference(k_);
    return exact_words(got, [want](std::size_t) { return want; });
  }

private:
  static constexpr long long kGateTimeoutNs = 2'000'000'000;
  int k_;
  long long ns_; ///< --step-us, in ns
  steps::DeviceBuffer<unsigned int> value_;
  steps::PinnedBuffer<unsigned int> gate_; ///< the tickets the host has released (read by gate_kernel)
  unsigned int ticket_ = 0;
  steps::Stream capture_;
  steps::Graph graph_;
  steps::GraphExec exec_;
};

steps::GroupPtr launch_group() {
  auto row = [](std::string name, std::string what, std::function<void(Launches&, cudaStream_t)> f) {
    steps::Row<Launches> r = counting_row<Launches>(std::move(name), std::move(what), std::move(f), "kernels",
                                                    [](const Launches& p) { return static_cast<double>(p.kernels()); });
    r.before_each = [](Launches& p, cudaStream_t s) { p.zero(s); };
    return r;
  };
  auto queued_row = [](steps::Row<Launches> r) {
    r.before_each = [](Launches& p, cudaStream_t s) {
      p.zero(s);
      p.close_gate(s);
    };
    return r;
  };
  return steps::group<Launches>({
      row("launch_one_by_one", "every kernel launched with <<<...>>>: one launch's CPU and GPU overhead each",
          [](Launches& p, cudaStream_t s) { p.one_by_one(s); }),
      queued_row(row("launch_queued", "the same launches, queued while the GPU waits for the host to enqueue them "
                                      "all: the GPU's own cost per kernel, the host out of the way",
                     [](Launches& p, cudaStream_t s) {
                       p.one_by_one(s);
                       p.open_gate();
                     })),
      row("graph_replay", "the same kernels captured once into a CUDA graph, replayed with one cudaGraphLaunch",
          [](Launches& p, cudaStream_t s) { p.replay(s); }),
      row("graph_capture_each_time", "capture, instantiate and launch a new graph every run: a graph pays off "
                                     "only when it is replayed",
          [](Launches& p, cudaStream_t s) { p.capture_and_replay(s); }),
  });
}

} // namespace ch08
