// Chapter 08: streams, graphs and unified memory.
//
// Until now every chapter asked how fast ONE kernel runs. This one asks what
// runs at the same time, and what the GPU waits for between operations. Six
// problems, each with its own buffers:
//
//   1. transfers     pageable vs pinned host memory, both directions
//   2. concurrency   a synchronous copy vs an asynchronous one; two streams
//                    with an operation in the legacy default stream between
//                    them (serialises) or in the per-thread default stream
//                    (does not)
//   3. pipeline      H2D -> kernel -> D2H of a large array: serial, then
//                    chunked over 1, 2, 3, 4 and 8 streams (the versions),
//                    against three bounds measured in the same run: each
//                    stage alone, the slowest stage (the ideal bound) and
//                    both copies at once (the copy-engine bound, baseline)
//   4. launches      128 tiny dependent kernels launched one by one vs
//                    replayed from a CUDA graph (and captured every time)
//   5. allocations   cudaMalloc/cudaFree in a loop vs cudaMallocFromPoolAsync
//                    vs one allocation made before the loop
//   6. managed       unified memory first touched by a kernel, prefetched,
//                    already resident, vs an explicit copy
//
// Metric: microseconds per run (lower is better); rows that move bytes over
// the host link also show them per second ("moved GB/s"). --timeline writes
// the pipeline rows' per-chunk event timestamps to ch08_timeline.tsv, which
// chapters/08_streams/timeline.py draws.
//
// Run: ./tutorial run 08   (or build/bin/ch08_streams --help)
#include "kernels.cuh"
#include "pipeline.cuh"

#include "steps/chapter.hpp"
#include "steps/handle.hpp"
#include "steps/random.hpp"
#include "steps/watchdog.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ch08 {

using steps::Role;

constexpr const char* kTimelineFile = "ch08_timeline.tsv";

/// Exact comparison of n floats.
steps::Comparison exact(const float* got, const float* want, std::size_t n) {
  return steps::compare(got, want, n, steps::Tolerance::exact());
}

/// Exact comparison of n unsigned integers (counters, sums).
steps::Comparison exact_words(const std::vector<unsigned int>& got, const std::function<unsigned int(std::size_t)>& want) {
  return steps::compare_each(
      got.size(), [&](std::size_t i) { return static_cast<double>(got[i]); },
      [&](std::size_t i) { return static_cast<double>(want(i)); }, [](std::size_t, double) { return 0.0; }, 0.0);
}

/// Host bytes set to all ones: NaN as floats (an output nobody wrote shows).
void poison_host(float* p, std::size_t n) { std::memset(p, 0xFF, n * sizeof(float)); }

/// Prefetches managed memory to a GPU (device >= 0) or to the host (-1), in `s`.
void prefetch(const void* p, std::size_t bytes, int device, cudaStream_t s) {
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = device < 0 ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device < 0 ? 0 : device;
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
#else
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, device < 0 ? cudaCpuDeviceId : device, s));
#endif
}

// ---------------------------------------------------------------------------
// Problem 1: transfers of --size floats, pageable and pinned, both ways.
// ---------------------------------------------------------------------------

class Transfers {
public:
  Transfers(const steps::Options& opts, steps::Run&)
      : n_(static_cast<std::size_t>(opts.size)), dev_(n_), pinned_in_(n_), pinned_out_(n_) {
    x_ = steps::random_vector(n_, opts.seed);
    pageable_in_ = x_;
    pageable_out_.assign(n_, 0.0f);
    std::memcpy(pinned_in_.data(), x_.data(), n_ * sizeof(float));
    dev_.copy_from_host(x_);
  }

  std::string describe() const {
    return "transfers: " + std::to_string(n_) + " floats (" + steps::format_bytes(4.0 * static_cast<double>(n_)) +
           ") from or to pageable (std::vector) and pinned (cudaMallocHost) host memory";
  }

  std::size_t n() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(float); }

  void h2d(bool pinned, cudaStream_t s) {
    const float* src = pinned ? pinned_in_.data() : pageable_in_.data();
    CUDA_CHECK(cudaMemcpyAsync(dev_.data(), src, bytes(), cudaMemcpyHostToDevice, s));
  }
  void d2h(bool pinned, cudaStream_t s) {
    float* dst = pinned ? pinned_out_.data() : pageable_out_.data();
    CUDA_CHECK(cudaMemcpyAsync(dst, dev_.data(), bytes(), cudaMemcpyDeviceToHost, s));
  }
  void reset_h2d() { dev_.fill_bytes(0xFF); CUDA_CHECK(cudaDeviceSynchronize()); }
  void reset_d2h() {
    poison_host(pinned_out_.data(), n_);
    poison_host(pageable_out_.data(), n_);
  }
  steps::Comparison check_h2d() {
    const std::vector<float> got = dev_.to_host();
    return exact(got.data(), x_.data(), n_);
  }
  steps::Comparison check_d2h(bool pinned) {
    return exact(pinned ? pinned_out_.data() : pageable_out_.data(), x_.data(), n_);
  }

private:
  std::size_t n_;
  std::vector<float> x_, pageable_in_, pageable_out_;
  steps::DeviceBuffer<float> dev_;
  steps::PinnedBuffer<float> pinned_in_, pinned_out_;
};

steps::Row<Transfers> transfer_row(std::string name, std::string what, bool to_device, bool pinned) {
  steps::Row<Transfers> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = Role::reference;
  r.launch = [to_device, pinned](Transfers& p, steps::Run& run) {
    if (to_device) p.h2d(pinned, run.stream());
    else p.d2h(pinned, run.stream());
  };
  r.work = [](const Transfers& p) {
    steps::Work w;
    w.hw_bytes = static_cast<double>(p.bytes());
    return w;
  };
  r.reset = [to_device](Transfers& p) {
    if (to_device) p.reset_h2d();
    else p.reset_d2h();
  };
  r.check = [to_device, pinned](Transfers& p) { return to_device ? p.check_h2d() : p.check_d2h(pinned); };
  return r;
}

steps::GroupPtr transfer_group() {
  return steps::group<Transfers>({
      transfer_row("h2d_pageable", "host-to-device cudaMemcpyAsync from pageable memory (staged by the driver)",
                   true, false),
      transfer_row("h2d_pinned", "host-to-device cudaMemcpyAsync from pinned memory (DMA straight from it)", true,
                   true),
      transfer_row("d2h_pageable", "device-to-host cudaMemcpyAsync into pageable memory", false, false),
      transfer_row("d2h_pinned", "device-to-host cudaMemcpyAsync into pinned memory", false, true),
  });
}

// ---------------------------------------------------------------------------
// Problem 2: what waits for what. Spin kernels of --spin-us microseconds (one
// warp each, so two CAN run at once) and a copy of up to 64 MiB.
// ---------------------------------------------------------------------------

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
    R r;
    r.name = std::move(name);
    r.what = std::move(what);
    r.role = Role::reference;
    r.launch = std::move(launch);
    r.work = [copied](const Concurrency& p) {
      steps::Work w;
      if (copied) w.hw_bytes = static_cast<double>(p.bytes());
      return w;
    };
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

// ---------------------------------------------------------------------------
// Problem 3: the pipeline over --size floats in --chunks chunks.
// ---------------------------------------------------------------------------

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
      << iters_ << "\n# row\tlane\tchunk\top\tstart_ms\tend_ms\n";
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
  steps::Row<Pipeline> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = Role::reference;
  r.launch = [which](Pipeline& p, steps::Run& run) { p.stage(which, run.stream()); };
  r.work = [which](const Pipeline& p) {
    steps::Work w;
    w.hw_bytes = p.link_bytes(which);
    return w;
  };
  r.reset = [which](Pipeline& p) { p.prepare(which); };
  r.check = [which](Pipeline& p) { return p.check(which); };
  return r;
}

steps::Row<Pipeline> ideal_row() {
  steps::Row<Pipeline> r;
  r.name = "ideal_bound";
  r.what = "the slowest of h2d_all, kernel_all, d2h_all again (chosen when the problem is built): no pipeline "
           "of these stages can be faster";
  r.role = Role::reference;
  r.launch = [](Pipeline& p, steps::Run& run) { p.stage(p.slowest(), run.stream()); };
  r.work = [](const Pipeline& p) {
    steps::Work w;
    w.hw_bytes = p.link_bytes(p.slowest());
    return w;
  };
  r.reset = [](Pipeline& p) { p.prepare(p.slowest()); };
  r.check = [](Pipeline& p) { return p.check(p.slowest()); };
  return r;
}

steps::Row<Pipeline> pipeline_row(std::string name, std::string what, int lanes, bool chunked) {
  steps::Row<Pipeline> r;
  r.name = name;
  r.what = std::move(what);
  r.role = Role::version;
  r.launch = [lanes, chunked](Pipeline& p, steps::Run& run) { p.run_pipeline(run, lanes, chunked ? p.chunks() : 1); };
  r.work = [](const Pipeline& p) {
    steps::Work w;
    w.hw_bytes = 8.0 * static_cast<double>(p.n());
    return w;
  };
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
  steps::Row<Pipeline> engines;
  engines.name = "copy_engines";
  engines.what = "the whole H2D and the whole D2H at the same time in two streams, no kernel: what the link "
                 "carries both ways (the copy-engine bound)";
  engines.role = Role::baseline;
  engines.launch = [](Pipeline& p, steps::Run& run) { p.both_copies(run); };
  engines.work = [](const Pipeline& p) {
    steps::Work w;
    w.hw_bytes = 8.0 * static_cast<double>(p.n());
    return w;
  };
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

// ---------------------------------------------------------------------------
// Problem 4: --kernels tiny dependent kernels, launched or replayed.
// ---------------------------------------------------------------------------

class Launches {
public:
  Launches(const steps::Options& opts, steps::Run&)
      : k_(static_cast<int>(opts.get("--kernels"))), value_(1), capture_(cudaStreamNonBlocking) {
    capture(graph_);
    CUDA_CHECK(cudaGraphInstantiate(exec_.out(), graph_, 0));
  }

  std::string describe() const {
    return "launches: " + std::to_string(k_) + " one-warp kernels in a row, each v = 3 v + i (the order shows in v)";
  }

  int kernels() const { return k_; }
  void one_by_one(cudaStream_t s) {
    for (int i = 0; i < k_; ++i) {
      step_kernel<<<1, 32, 0, s>>>(value_.data(), static_cast<unsigned int>(i));
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
  steps::DeviceBuffer<unsigned int> value_;
  steps::Stream capture_;
  steps::Graph graph_;
  steps::GraphExec exec_;
};

steps::GroupPtr launch_group() {
  using R = steps::Row<Launches>;
  auto row = [](std::string name, std::string what, std::function<void(Launches&, cudaStream_t)> f) {
    R r;
    r.name = std::move(name);
    r.what = std::move(what);
    r.role = Role::reference;
    r.launch = [f](Launches& p, steps::Run& run) { f(p, run.stream()); };
    r.work = [](const Launches&) { return steps::Work{}; };
    r.reset = [](Launches& p) { p.poison(); };
    r.before_each = [](Launches& p, cudaStream_t s) { p.zero(s); };
    r.extras = [](const Launches& p) { return std::vector<steps::Extra>{{"kernels", static_cast<double>(p.kernels()), 0}}; };
    r.check = [](Launches& p) { return p.check(); };
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

// ---------------------------------------------------------------------------
// Problem 5: --allocs allocations of --alloc-kib KiB, each used by a kernel.
// ---------------------------------------------------------------------------

class Allocations {
public:
  Allocations(const steps::Options& opts, steps::Run& run)
      : count_(static_cast<int>(opts.get("--allocs"))),
        bytes_(static_cast<std::size_t>(opts.get("--alloc-kib")) * 1024), log_(static_cast<std::size_t>(count_)),
        once_(bytes_ / sizeof(unsigned int)) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = run.ordinal();
    CUDA_CHECK(cudaMemPoolCreate(pool_.out(), &props));
    // Keep freed memory in the pool (the default threshold, 0, hands it back
    // to the system at every synchronisation).
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  }

  std::string describe() const {
    return "allocations: " + std::to_string(count_) + " x (allocate " + steps::format_bytes(static_cast<double>(bytes_)) +
           ", a one-block kernel writes it, free)";
  }

  int count() const { return count_; }
  void malloc_free(cudaStream_t s) {
    for (int i = 0; i < count_; ++i) {
      void* p = nullptr;
      CUDA_CHECK(cudaMalloc(&p, bytes_)); // NOTE: synchronous; cudaFree below waits for the whole device
      launch_touch(static_cast<unsigned int*>(p), static_cast<unsigned int>(i), log_.data(), s);
      CUDA_CHECK(cudaFree(p));
    }
  }
  void pool_async(cudaStream_t s) {
    for (int i = 0; i < count_; ++i) {
      void* p = nullptr;
      CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes_, pool_, s)); // stream-ordered: no wait
      launch_touch(static_cast<unsigned int*>(p), static_cast<unsigned int>(i), log_.data(), s);
      CUDA_CHECK(cudaFreeAsync(p, s)); // back to the pool when the kernel is done, in stream order
    }
  }
  void preallocated(cudaStream_t s) {
    for (int i = 0; i < count_; ++i) launch_touch(once_.data(), static_cast<unsigned int>(i), log_.data(), s);
  }
  void poison() {
    log_.fill_bytes(0xFF);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  steps::Comparison check() {
    const std::vector<unsigned int> got = log_.to_host();
    return exact_words(got, [](std::size_t i) { return touch_reference(static_cast<unsigned int>(i)); });
  }

private:
  int count_;
  std::size_t bytes_;
  steps::DeviceBuffer<unsigned int> log_, once_;
  steps::MemPool pool_;
};

steps::GroupPtr allocation_group() {
  using R = steps::Row<Allocations>;
  auto row = [](std::string name, std::string what, std::function<void(Allocations&, cudaStream_t)> f) {
    R r;
    r.name = std::move(name);
    r.what = std::move(what);
    r.role = Role::reference;
    r.launch = [f](Allocations& p, steps::Run& run) { f(p, run.stream()); };
    r.work = [](const Allocations&) { return steps::Work{}; };
    r.reset = [](Allocations& p) { p.poison(); };
    r.extras = [](const Allocations& p) { return std::vector<steps::Extra>{{"allocs", static_cast<double>(p.count()), 0}}; };
    r.check = [](Allocations& p) { return p.check(); };
    return r;
  };
  return steps::group<Allocations>({
      row("malloc_free_loop", "cudaMalloc, kernel, cudaFree in a loop: cudaFree waits for the device every time",
          [](Allocations& p, cudaStream_t s) { p.malloc_free(s); }),
      row("malloc_async_pool", "cudaMallocFromPoolAsync, kernel, cudaFreeAsync from a pool that keeps its memory",
          [](Allocations& p, cudaStream_t s) { p.pool_async(s); }),
      row("preallocated", "one buffer allocated before the loop: the kernels alone (the floor)",
          [](Allocations& p, cudaStream_t s) { p.preallocated(s); }),
  });
}

// ---------------------------------------------------------------------------
// Problem 6: unified (managed) memory of --size floats, read by a kernel.
// ---------------------------------------------------------------------------

/// Owns cudaMallocManaged memory (this lesson teaches it; nothing else uses it).
class ManagedFloats {
public:
  explicit ManagedFloats(std::size_t n) : n_(n) {
    if (n_) CUDA_CHECK(cudaMallocManaged(reinterpret_cast<void**>(&p_), n_ * sizeof(float)));
  }
  ~ManagedFloats() {
    if (p_) CUDA_CHECK_NOTHROW(cudaFree(p_));
  }
  ManagedFloats(const ManagedFloats&) = delete;
  ManagedFloats& operator=(const ManagedFloats&) = delete;
  float* data() { return p_; }
  std::size_t bytes() const { return n_ * sizeof(float); }

private:
  std::size_t n_;
  float* p_ = nullptr;
};

/// Checks, before any managed memory exists, that `bytes` of it fit in the
/// GPU's free memory with room to spare: managed memory can exceed the GPU's
/// memory (pages are evicted to the host), which this chapter never asks for.
std::size_t checked_managed(std::size_t n) {
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t want = n * sizeof(float);
  const std::size_t spare = std::size_t{1} << 30;
  if (free_bytes < spare || want > free_bytes - spare)
    throw steps::OutOfMemory("managed memory: --size " + std::to_string(n) + " needs " +
                             steps::format_bytes(static_cast<double>(want)) + " of managed memory, and the GPU has " +
                             steps::format_bytes(static_cast<double>(free_bytes)) +
                             " free (1 GiB is kept spare): use a smaller --size");
  return n;
}

class Managed {
public:
  Managed(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(static_cast<std::size_t>(opts.size)), y_(n_), x_dev_(n_), x_pinned_(n_),
        x_(checked_managed(n_)) {
    steps::fill_uniform(x_pinned_.data(), n_, opts.seed + 3);
    std::memcpy(x_.data(), x_pinned_.data(), n_ * sizeof(float)); // the CPU writes it: its pages start on the host
    ref_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) ref_[i] = work_reference(x_pinned_[i]);
  }

  std::string describe() const {
    return "managed memory: a kernel reads " + std::to_string(n_) + " floats (" +
           steps::format_bytes(4.0 * static_cast<double>(n_)) + ") written by the CPU, y = 2x + 1 into device memory";
  }

  std::size_t bytes() const { return n_ * sizeof(float); }
  void explicit_copy(cudaStream_t s) {
    steps::copy_async(x_dev_, x_pinned_, s);
    launch_work(x_dev_.data(), y_.data(), n_, 0, dev_, s);
  }
  void kernel_on_managed(cudaStream_t s) { launch_work(x_.data(), y_.data(), n_, 0, dev_, s); }
  void to_host(cudaStream_t s) { prefetch(x_.data(), bytes(), -1, s); }
  void to_gpu(cudaStream_t s) { prefetch(x_.data(), bytes(), dev_.index, s); }
  void poison() {
    y_.fill_bytes(0xFF);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  steps::Comparison check() {
    const std::vector<float> got = y_.to_host();
    return exact(got.data(), ref_.data(), n_);
  }

private:
  steps::DeviceInfo dev_;
  std::size_t n_;
  steps::DeviceBuffer<float> y_, x_dev_;
  steps::PinnedBuffer<float> x_pinned_;
  ManagedFloats x_;
  std::vector<float> ref_;
};

steps::GroupPtr managed_group() {
  using R = steps::Row<Managed>;
  enum class Before { nothing, on_host, on_gpu };
  auto row = [](std::string name, std::string what, Before before, bool link,
                std::function<void(Managed&, cudaStream_t)> f) {
    R r;
    r.name = std::move(name);
    r.what = std::move(what);
    r.role = Role::reference;
    r.launch = [f](Managed& p, steps::Run& run) { f(p, run.stream()); };
    r.work = [link](const Managed& p) {
      steps::Work w;
      if (link) w.hw_bytes = static_cast<double>(p.bytes());
      return w;
    };
    r.reset = [](Managed& p) { p.poison(); };
    if (before == Before::on_host) r.before_each = [](Managed& p, cudaStream_t s) { p.to_host(s); };
    if (before == Before::on_gpu) r.before_each = [](Managed& p, cudaStream_t s) { p.to_gpu(s); };
    r.check = [](Managed& p) { return p.check(); };
    return r;
  };
  return steps::group<Managed>({
      row("explicit_copy", "pinned host -> device with cudaMemcpyAsync, then the kernel (plain device memory)",
          Before::nothing, true, [](Managed& p, cudaStream_t s) { p.explicit_copy(s); }),
      row("managed_first_touch", "managed memory whose pages are on the host: the kernel's reads fault them over",
          Before::on_host, true, [](Managed& p, cudaStream_t s) { p.kernel_on_managed(s); }),
      row("managed_prefetch", "the same, with cudaMemPrefetchAsync to the GPU before the kernel", Before::on_host,
          true, [](Managed& p, cudaStream_t s) {
            p.to_gpu(s);
            p.kernel_on_managed(s);
          }),
      row("managed_resident", "the pages already on the GPU (prefetched, untimed): managed memory at rest",
          Before::on_gpu, false, [](Managed& p, cudaStream_t s) { p.kernel_on_managed(s); }),
  });
}

// ---------------------------------------------------------------------------

std::vector<steps::GroupPtr> registry() {
  std::vector<steps::GroupPtr> groups{transfer_group(), concurrency_group(), pipeline_group(),
                                      launch_group(),   allocation_group(),  managed_group()};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Streams, graphs and unified memory: pageable vs pinned copies, what the legacy and per-thread "
              "default streams wait for, a copy-compute-copy pipeline over 1 to 8 streams against bounds measured "
              "in the same run, CUDA graphs against one-by-one launches, stream-ordered allocation, and managed "
              "memory with and without prefetching.";
  i.metric = steps::Metric::time;
  // 2^28 floats: 1 GiB each way, so a copy takes tens of milliseconds and
  // launch costs vanish in it.
  i.default_size = std::int64_t{1} << 28;
  i.size_help = "floats copied by the transfer, pipeline and managed-memory rows";
  i.default_iters = 10;
  i.default_warmup = 2;
  i.work_note = "us: microseconds per run, lower is better. moved GB/s: bytes over the host link (PCIe) per "
                "second, both directions added, for the rows that copy (1 GB = 1e9 B).";
  i.baseline = "copy_engines";
  i.goals = {
      {"best", "copy_engines", 0.95, ">= 0.95x the copy-engine bound (both whole copies at once)"},
      {"best", "ideal_bound", 0.85, ">= 0.85x the ideal bound (the slowest stage alone)"},
      {"graph_replay", "launch_one_by_one", 2.5, ">= 2.5x faster than launching the kernels one by one"},
  };
  i.timeout_s = 300;
  i.int_options.push_back({"--chunks", "C", "chunks of the pipeline versions", 64, 1, 1 << 20});
  i.int_options.push_back({"--work", "W", "identity FMAs per element in the pipeline's kernel (its length)", 256, 0,
                           1 << 20});
  i.int_options.push_back({"--streams", "K", "streams of your exercise's row (yours)", 4, 1, 64});
  i.int_options.push_back({"--kernels", "K", "tiny kernels per launch-overhead run", 128, 1, 100000});
  i.int_options.push_back({"--allocs", "A", "allocations per allocation run", 1000, 1, 1000000});
  i.int_options.push_back({"--alloc-kib", "KIB", "size of each allocation in KiB", 1024, 1, 1 << 20});
  i.int_options.push_back({"--spin-us", "US", "length of the concurrency rows' spin kernels", 1000, 1, 10000000});
  i.flag_options.push_back({"--timeline", std::string("write every pipeline row's per-chunk event timestamps to ") +
                                              kTimelineFile + " (draw it with chapters/08_streams/timeline.py)"});
  i.validate = [](const steps::Options& o) {
    if (o.has("--timeline") && !o.verify)
      throw steps::UsageError("--timeline records the verification run, which --no-verify skips");
    if (o.has("--timeline")) {
      std::ofstream f(kTimelineFile, std::ios::app);
      if (!f) throw steps::UsageError(std::string("--timeline: cannot write to '") + kTimelineFile + "'");
    }
  };
  return i;
}

} // namespace ch08

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch08::info(), ch08::registry()); }
