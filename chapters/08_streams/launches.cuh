// Chapter 08, Problem 4: --kernels tiny dependent kernels (each --step-us long), launched or replayed.
#pragma once

#include "support.cuh"

namespace ch08 {

class Launches {
public:
  Launches(const steps::Options& opts, steps::Run&)
      : k_(static_cast<int>(opts.get("--kernels"))), ns_(opts.get("--step-us") * 1000), value_(1),
        capture_(cudaStreamNonBlocking) {
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
  int k_;
  long long ns_; ///< --step-us, in ns
  steps::DeviceBuffer<unsigned int> value_;
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
  return steps::group<Launches>({
      row("launch_one_by_one", "every kernel launched with <<<...>>>: one launch's CPU and GPU overhead each",
          [](Launches& p, cudaStream_t s) { p.one_by_one(s); }),
      row("graph_replay", "the same kernels captured once into a CUDA graph, replayed with one cudaGraphLaunch",
          [](Launches& p, cudaStream_t s) { p.replay(s); }),
      row("graph_capture_each_time", "capture, instantiate and launch a new graph every run: a graph pays off "
                                     "only when it is replayed",
          [](Launches& p, cudaStream_t s) { p.capture_and_replay(s); }),
  });
}

} // namespace ch08
