// Chapter 08: your exercises as rows of the chapter's table, built when
// exercises/08_streams compiles: "yours" (your ex08::Pipeline in --chunks
// chunks over --streams streams; compare with streams_4) and, with the
// stretch, "yours_stages" (your ex08::stages::StagePipeline; compare with
// stage_streams). Each has its own problem: --size floats, checked exactly
// against y = 2 x + 1.
#pragma once

#include "pipeline.hpp"
#if STEPS_WITH_EXERCISE_STAGES
#include "stages.hpp"
#endif
#include "support.cuh"

#include "steps/chapter.hpp"
#include "steps/random.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ch08 {

/// A learner's pipeline P over --size floats: made by make(n, options).
template <class P>
class YoursOf {
public:
  YoursOf(const steps::Options& opts, std::unique_ptr<P> p, std::string text)
      : n_(static_cast<std::size_t>(opts.size)), chunks_(static_cast<int>(opts.get("--chunks"))),
        pipeline_(std::move(p)), text_(std::move(text)) {
    steps::fill_uniform(pipeline_->input(), n_, opts.seed + 4);
    ref_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) ref_[i] = ex08::process_reference(pipeline_->input()[i]);
  }

  std::string describe() const { return text_; }
  std::size_t n() const { return n_; }
  void launch(cudaStream_t s) { pipeline_->run(n_, chunks_, s); }
  void reset() { std::memset(pipeline_->output(), 0xFF, n_ * sizeof(float)); }
  steps::Comparison check() {
    return steps::compare(pipeline_->output(), ref_.data(), n_, steps::Tolerance::exact());
  }

private:
  std::size_t n_;
  int chunks_;
  std::unique_ptr<P> pipeline_;
  std::string text_;
  std::vector<float> ref_;
};

class Yours : public YoursOf<ex08::Pipeline> {
public:
  Yours(const steps::Options& opts, steps::Run&)
      : YoursOf(opts,
                std::make_unique<ex08::Pipeline>(static_cast<std::size_t>(opts.size),
                                                 static_cast<int>(opts.get("--streams"))),
                "exercise 08: your pipeline, " + std::to_string(opts.size) + " floats in " +
                    std::to_string(opts.get("--chunks")) + " chunks over " + std::to_string(opts.get("--streams")) +
                    " streams, y = 2 x + 1") {}
};

template <class Problem>
steps::GroupPtr yours_row(std::string name, std::string what) {
  auto r = steps::make_row<Problem>(
      std::move(name), std::move(what), steps::Role::yours,
      [](Problem& p, steps::Run& run) { p.launch(run.stream()); },
      [](const Problem& p) { return over_link(8.0 * static_cast<double>(p.n())); });
  r.reset = [](Problem& p) { p.reset(); };
  r.check = [](Problem& p) { return p.check(); };
  return steps::group<Problem>({r});
}

inline steps::GroupPtr yours_group() {
  return yours_row<Yours>("yours", "exercise 08: your multi-stream pipeline (compare with streams_4)");
}

#if STEPS_WITH_EXERCISE_STAGES
class YoursStages : public YoursOf<ex08::stages::StagePipeline> {
public:
  YoursStages(const steps::Options& opts, steps::Run&)
      : YoursOf(opts, std::make_unique<ex08::stages::StagePipeline>(static_cast<std::size_t>(opts.size)),
                "exercise 08, stretch: your stage pipeline, " + std::to_string(opts.size) + " floats in " +
                    std::to_string(opts.get("--chunks")) + " chunks, one stream per stage, y = 2 x + 1") {}
};

inline steps::GroupPtr yours_stages_group() {
  return yours_row<YoursStages>("yours_stages",
                                "exercise 08, stretch: your one-stream-per-stage pipeline (compare with stage_streams)");
}
#endif

} // namespace ch08
