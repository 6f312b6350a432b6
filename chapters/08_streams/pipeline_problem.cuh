// Chapter 08, Problem 3: the pipeline over --size floats in --chunks chunks.
#pragma once

#include "pipeline.cuh"
#include "support.cuh"

namespace ch08 {

/// The stages the ideal bound can be.
enum class Stage { h2d, kernel, d2h };

class Pipeline {
public:
  Pipeline(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(static_cast<std::size_t>(opts.size)),
        chunks_(static_cast<int>(opts.get("--chunks"))), iters_(static_cast<int>(opts.get("--work"))),
        timeline_(opts.has("--timeline")), dev_in_(n_), dev_out_(n_), host_in_(n_), host_out_(n_) {
    steps::fill_uniform(host_in_.data(), n_, opts.seed + 2);
    ref_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) ref_[i] = work_reference(host_in_[i]);
    // The ideal bound is the slowest stage alone: measure each one briefly
    // now, so that the ideal_bound row can time the slowest one properly.
    steps::TimingOptions t;
    t.warmup = 1;
    t.iters = 3;
    const cudaStream_t s = run.stream();
    stage_ms_[0] = steps::time_gpu([&](cudaStream_t st) { stage(Stage::h2d, st); }, t, s).median;
    stage_ms_[1] = steps::time_gpu([&](cudaStream_t st) { stage(Stage::kernel, st); }, t, s).median;
    stage_ms_[2] = steps::time_gpu([&](cudaStream_t st) { stage(Stage::d2h, st); }, t, s).median;
    slowest_ = Stage::h2d;
    if (stage_ms_[1] > stage_ms_[static_cast<int>(slowest_)]) slowest_ = Stage::kernel;
    if (stage_ms_[2] > stage_ms_[static_cast<int>(slowest_)]) slowest_ = Stage::d2h;
  }

  std::string describe() const {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "pipeline: %zu floats (%s each way) in %d chunks, kernel y = 2x + 1 after %d identity FMAs per "
                  "element; first look at the stages: H2D %.3f ms, kernel %.3f ms, D2H %.3f ms -> ideal_bound "
                  "times %s",
                  n_, steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(), chunks_, iters_, stage_ms_[0],
                  stage_ms_[1], stage_ms_[2], stage_name(slowest_));
    return buf;
  }

  static const char* stage_name(Stage s) { return s == Stage::h2d ? "h2d_all" : s == Stage::kernel ? "kernel_all" : "d2h_all"; }

  std::size_t n() const { return n_; }
  Stage slowest() const { return slowest_; }
  double link_bytes(Stage s) const { return s == Stage::kernel ? 0.0 : 4.0 * static_cast<double>(n_); }

  /// One stage over the whole array, in `s`.
  void stage(Stage which, cudaStream_t s) {
    const std::size_t bytes = n_ * sizeof(float);
    switch (which) {
      case Stage::h2d: CUDA_CHECK(cudaMemcpyAsync(dev_in_.data(), host_in_.data(), bytes, cudaMemcpyHostToDevice, s)); break;
      case Stage::kernel: launch_work(dev_in_.data(), dev_out_.data(), n_, iters_, dev_, s); break;
      case Stage::d2h: CUDA_CHECK(cudaMemcpyAsync(host_out_.data(), dev_out_.data(), bytes, cudaMemcpyDeviceToHost, s)); break;
    }
  }
  /// Before a stage's verification run: what it reads holds the right data,
  /// what it writes is poisoned.
  void prepare(Stage which) {
    if (which == Stage::h2d) dev_in_.fill_bytes(0xFF);
    if (which != Stage::h2d) CUDA_CHECK(cudaMemcpy(dev_in_.data(), host_in_.data(), n_ * sizeof(float), cudaMemcpyHostToDevice));
    if (which == Stage::kernel) dev_out_.fill_bytes(0xFF);
    if (which == Stage::d2h) {
      launch_work(dev_in_.data(), dev_out_.data(), n_, iters_, dev_, nullptr);
      poison_host(host_out_.data(), n_);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  steps::Comparison check(Stage which) {
    if (which == Stage::d2h) return exact(host_out_.data(), ref_.data(), n_);
    const std::vector<float> got = (which == Stage::h2d ? dev_in_ : dev_out_).to_host();
    return exact(got.data(), which == Stage::h2d ? host_in_.data() : ref_.data(), n_);
  }

  /// The copy-engine bound: the whole H2D and the whole D2H at once, in two
  /// streams, no kernel.
  void both_copies(steps::Run& run) {
    auto side = run.fork(2);
    if (tl_.armed()) tl_.begin(run.stream());
    Timeline* tl = tl_.armed() ? &tl_ : nullptr;
    if (tl) tl->start(0, 0, "H2D", side[0]);
    stage(Stage::h2d, side[0]);
    if (tl) tl->end(side[0]);
    if (tl) tl->start(1, 0, "D2H", side[1]);
    stage(Stage::d2h, side[1]);
    if (tl) tl->end(side[1]);
    run.join();
    tl_.stop();
  }
  void prepare_both() {
    prepare(Stage::d2h); // dev_out holds the results, host_out is poisoned
    dev_in_.fill_bytes(0xFF);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  steps::Comparison check_both() {
    const steps::Comparison in = check(Stage::h2d);
    return in.ok ? check(Stage::d2h) : in;
  }

  /// The pipeline in `lanes` streams (0: the primary stream itself) with
  /// `chunks` chunks.
  void run_pipeline(steps::Run& run, int lanes, int chunks) {
    Timeline* tl = tl_.armed() ? &tl_ : nullptr;
    if (tl) tl->begin(run.stream());
    const PipelineData d{host_in_.data(), host_out_.data(), dev_in_.data(), dev_out_.data(), n_, iters_};
    if (lanes == 0) {
      pipeline(d, chunks, {run.stream()}, dev_, tl);
    } else {
      pipeline(d, chunks, run.fork(lanes), dev_, tl);
      run.join();
    }
    tl_.stop();
  }
  /// One stream per stage (H2D, kernel, D2H), events between them.
  void run_by_stage(steps::Run& run, int chunks) {
    while (copied_.size() < static_cast<std::size_t>(chunks)) { // no timing: ordering only
      steps::RawEvent a, b;
      CUDA_CHECK(cudaEventCreateWithFlags(a.out(), cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(b.out(), cudaEventDisableTiming));
      copied_.push_back(std::move(a));
      computed_.push_back(std::move(b));
    }
    std::vector<cudaEvent_t> copied, computed;
    for (std::size_t i = 0; i < copied_.size(); ++i) {
      copied.push_back(copied_[i].get());
      computed.push_back(computed_[i].get());
    }
    Timeline* tl = tl_.armed() ? &tl_ : nullptr;
    if (tl) tl->begin(run.stream());
    const PipelineData d{host_in_.data(), host_out_.data(), dev_in_.data(), dev_out_.data(), n_, iters_};
    pipeline_by_stage(d, chunks, run.fork(3), copied, computed, dev_, tl);
    run.join();
    tl_.stop();
  }
  void prepare_pipeline() {
    dev_in_.fill_bytes(0xFF);
    dev_out_.fill_bytes(0xFF);
    poison_host(host_out_.data(), n_);
    CUDA_CHECK(cudaDeviceSynchronize());
    arm_timeline();
  }
  /// With --timeline: the next run records its events.
  void arm_timeline() {
    if (timeline_) tl_.arm();
  }
  steps::Comparison check_pipeline(const std::string& row) {
    const steps::Comparison c = exact(host_out_.data(), ref_.data(), n_);
    if (timeline_) write_timeline(row);
    return c;
  }
  int chunks() const { return chunks_; }

private:
  // Rewrites the whole file after every row: it is complete at any point.
  void write_timeline(const std::string& row) {
    tl_.collect(row, timeline_lines_);
    std::ofstream f(kTimelineFile);
    f << "# ch08_streams timeline: " << dev_.name << ", " << n_ << " floats, " << chunks_ << " chunks, --work "
      << iters_ << "\n# ideal_bound_ms\t" << stage_ms_[static_cast<int>(slowest_)]
      << "\n# row\tlane\tchunk\top\tstart_ms\tend_ms\n";
    for (const auto& l : timeline_lines_) f << l << "\n";
    if (!f) throw std::runtime_error(std::string("cannot write ") + kTimelineFile);
  }

  steps::DeviceInfo dev_;
  std::size_t n_;
  int chunks_, iters_;
  bool timeline_;
  steps::DeviceBuffer<float> dev_in_, dev_out_;
  steps::PinnedBuffer<float> host_in_, host_out_;
  std::vector<float> ref_;
  double stage_ms_[3] = {0, 0, 0};
  Stage slowest_ = Stage::h2d;
  Timeline tl_;
  std::vector<std::string> timeline_lines_;
  std::vector<steps::RawEvent> copied_, computed_; ///< stage_streams: chunk c copied / computed
};

steps::Row<Pipeline> stage_row(std::string name, std::string what, Stage which) {
  auto r = steps::make_row<Pipeline>(
      std::move(name), std::move(what), Role::reference,
      [which](Pipeline& p, steps::Run& run) { p.stage(which, run.stream()); },
      [which](const Pipeline& p) { return over_link(p.link_bytes(which)); });
  r.reset = [which](Pipeline& p) { p.prepare(which); };
  r.check = [which](Pipeline& p) { return p.check(which); };
  return r;
}

steps::Row<Pipeline> ideal_row() {
  auto r = steps::make_row<Pipeline>(
      "ideal_bound",
      "the slowest of h2d_all, kernel_all, d2h_all again (chosen when the problem is built): no pipeline of these "
      "stages can be faster",
      Role::reference, [](Pipeline& p, steps::Run& run) { p.stage(p.slowest(), run.stream()); },
      [](const Pipeline& p) { return over_link(p.link_bytes(p.slowest())); });
  r.reset = [](Pipeline& p) { p.prepare(p.slowest()); };
  r.check = [](Pipeline& p) { return p.check(p.slowest()); };
  return r;
}

steps::Row<Pipeline> pipeline_row(std::string name, std::string what, int lanes, bool chunked) {
  auto r = steps::make_row<Pipeline>(
      name, std::move(what), Role::version,
      [lanes, chunked](Pipeline& p, steps::Run& run) { p.run_pipeline(run, lanes, chunked ? p.chunks() : 1); },
      [](const Pipeline& p) { return over_link(8.0 * static_cast<double>(p.n())); });
  r.reset = [](Pipeline& p) { p.prepare_pipeline(); };
  r.check = [name](Pipeline& p) { return p.check_pipeline(name); };
  return r;
}

steps::Row<Pipeline> stage_streams_row() {
  steps::Row<Pipeline> r = pipeline_row("stage_streams", "v4: one stream per stage (H2D, kernel, D2H), events "
                                        "between them: each engine's queue in chunk order", 3, true);
  r.launch = [](Pipeline& p, steps::Run& run) { p.run_by_stage(run, p.chunks()); };
  return r;
}

steps::GroupPtr pipeline_group() {
  auto engines = steps::make_row<Pipeline>(
      "copy_engines",
      "the whole H2D and the whole D2H at the same time in two streams, no kernel: what the link carries both "
      "ways (the copy-engine bound)",
      Role::baseline, [](Pipeline& p, steps::Run& run) { p.both_copies(run); },
      [](const Pipeline& p) { return over_link(8.0 * static_cast<double>(p.n())); });
  engines.reset = [](Pipeline& p) {
    p.prepare_both();
    p.arm_timeline();
  };
  engines.check = [](Pipeline& p) {
    const steps::Comparison c = p.check_both();
    const steps::Comparison t = p.check_pipeline("copy_engines"); // writes the timeline
    return c.ok ? t : c;
  };
  return steps::group<Pipeline>({
      stage_row("h2d_all", "stage alone: the whole input host-to-device in one cudaMemcpyAsync", Stage::h2d),
      stage_row("kernel_all", "stage alone: the kernel over the whole array", Stage::kernel),
      stage_row("d2h_all", "stage alone: the whole output device-to-host in one cudaMemcpyAsync", Stage::d2h),
      ideal_row(),
      engines,
      pipeline_row("serial", "v1: H2D, kernel, D2H of the whole array, one stream: the serial sum", 0, false),
      pipeline_row("chunks_1_stream", "v2: the same in --chunks chunks, all in one stream: chunking alone", 1, true),
      pipeline_row("streams_2", "v3: chunk c in stream c % 2: copies overlap the kernel and each other", 2, true),
      pipeline_row("streams_3", "v3 with 3 streams", 3, true),
      pipeline_row("streams_4", "v3 with 4 streams", 4, true),
      pipeline_row("streams_8", "v3 with 8 streams", 8, true),
      stage_streams_row(),
  });
}

} // namespace ch08
