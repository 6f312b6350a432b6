// Chapter 08: your exercise as a row of the chapter's table ("yours"), built
// when exercises/08_streams compiles. Its own problem: --size floats through
// your ex08::Pipeline in --chunks chunks over --streams streams, checked
// exactly against y = 2x + 1. Compare its time with the pipeline rows'.
#pragma once

#include "pipeline.hpp"

#include "steps/chapter.hpp"
#include "steps/random.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ch08 {

class Yours {
public:
  Yours(const steps::Options& opts, steps::Run&)
      : n_(static_cast<std::size_t>(opts.size)), chunks_(static_cast<int>(opts.get("--chunks"))),
        streams_(static_cast<int>(opts.get("--streams"))), pipeline_(std::make_unique<ex08::Pipeline>(n_, streams_)) {
    steps::fill_uniform(pipeline_->input(), n_, opts.seed + 4);
    ref_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) ref_[i] = ex08::process_reference(pipeline_->input()[i]);
  }

  std::string describe() const {
    return "exercise 08: your pipeline, " + std::to_string(n_) + " floats in " + std::to_string(chunks_) +
           " chunks over " + std::to_string(streams_) + " streams, y = 2x + 1";
  }

  std::size_t n() const { return n_; }
  void launch(cudaStream_t s) { pipeline_->run(n_, chunks_, s); }
  void reset() { std::memset(pipeline_->output(), 0xFF, n_ * sizeof(float)); }
  steps::Comparison check() {
    return steps::compare(pipeline_->output(), ref_.data(), n_, steps::Tolerance::exact());
  }

private:
  std::size_t n_;
  int chunks_, streams_;
  std::unique_ptr<ex08::Pipeline> pipeline_;
  std::vector<float> ref_;
};

inline steps::GroupPtr yours_group() {
  steps::Row<Yours> r;
  r.name = "yours";
  r.what = "exercise 08: your multi-stream pipeline (compare with streams_4)";
  r.role = steps::Role::yours;
  r.launch = [](Yours& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const Yours& p) {
    steps::Work w;
    w.hw_bytes = 8.0 * static_cast<double>(p.n());
    return w;
  };
  r.reset = [](Yours& p) { p.reset(); };
  r.check = [](Yours& p) { return p.check(); };
  return steps::group<Yours>({r});
}

} // namespace ch08
