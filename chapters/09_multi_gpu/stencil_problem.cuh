// Chapter 09, Problem 2: the stencil, one grid on one GPU or cut into bands
// (v2_stencil.cuh's kernels): one band per GPU (the split rows), or --bands
// bands all on the first GPU (the bands rows: the same schedules, halo copies
// and events, without a second GPU).
#pragma once

#include "support.cuh"
#include "v2_stencil.cuh"

#include <optional>
#include <thread>

namespace ch09 {


// Fills owned rows [0, rows) of a band (storage row k + 1) with
// uniform_at(seed, global cell index) in [0, 1).
__global__ void init_band(float* band, std::size_t width, std::size_t rows, std::size_t first_row,
                          std::uint64_t seed) {
  const std::size_t cells = rows * width;
  for (std::size_t i = steps::global_index(); i < cells; i += steps::grid_size())
    band[width + i] = steps::uniform_at(seed, first_row * width + i, 0.0f, 1.0f);
}

/// Rows [row_begin, row_begin + rows) of the grid on one GPU, with a halo
/// row above and below, in three buffers: init (step 0 reads it, it never
/// changes but for its halos), a and b (the steps ping-pong between them).
struct Band {
  int gpu = 0;     ///< index in the run
  int ordinal = 0; ///< CUDA ordinal
  std::size_t row_begin = 0, rows = 0;
  DeviceBuffer<float> init, a, b;
  steps::RawEvent done, edges, halos; ///< ordering events (see the versions)

  /// The buffer step k reads: init, then the one step k - 1 wrote.
  float* input(int k) { return k == 0 ? init.data() : k % 2 ? b.data() : a.data(); }
  /// The buffer step k writes: b, a, b, a...
  float* output(int k) { return k % 2 ? a.data() : b.data(); }
};

class Stencil {
public:
  Stencil(const steps::Options& opts, steps::Run& run)
      : run_(run), width_(static_cast<std::size_t>(opts.get("--width"))),
        rows_(steps::ceil_div<std::size_t>(static_cast<std::size_t>(opts.size), width_)),
        steps_(static_cast<int>(opts.get("--steps"))), bands_option_(static_cast<int>(opts.get("--bands"))),
        seed_(opts.seed) {
    whole_.push_back(make_band(0, 0, rows_));
    // Bands (only with 2+ GPUs: on one, the split rows do not run): as many
    // GPUs as there are rows at most (a one-row grid is one band, nothing to
    // exchange); the first rows_ % G get one more row.
    const int g = run.gpus() > 1
                      ? static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(run.gpus()), rows_))
                      : 0;
    if (g >= 1) {
      std::size_t at = 0;
      for (int i = 0; i < g; ++i) {
        const std::size_t rows = rows_ / static_cast<std::size_t>(g) + (static_cast<std::size_t>(i) < rows_ % g);
        gpu_bands_.push_back(make_band(i, at, rows));
        at += rows;
      }
    }
    // --bands bands on the first GPU: the split's schedule on one device.
    const int local = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(bands_option_), rows_));
    std::size_t at = 0;
    for (int i = 0; i < local; ++i) {
      const std::size_t rows = rows_ / static_cast<std::size_t>(local) + (static_cast<std::size_t>(i) < rows_ % local);
      local_.push_back(make_band(0, at, rows));
      at += rows;
    }
    for (auto& b : gpu_bands_) {
      DeviceScope scope(b.ordinal);
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    DeviceScope scope(whole_[0].ordinal);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::string describe() const {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "2-D Jacobi stencil, %zu x %zu cells (%s), %d steps, zero outside the grid; split rows: %zu bands "
                  "of about %zu rows; bands rows: %zu bands of about %zu rows on the first GPU",
                  rows_, width_, steps::format_bytes(4.0 * static_cast<double>(rows_ * width_)).c_str(), steps_,
                  gpu_bands_.size(), gpu_bands_.empty() ? rows_ : rows_ / gpu_bands_.size(), local_.size(),
                  rows_ / local_.size());
    return buf;
  }

  /// Bytes of one run: each cell read once and written once per step.
  double bytes() const { return 8.0 * static_cast<double>(rows_ * width_) * steps_; }

  /// The whole grid on the first GPU, in stream(0).
  void one_gpu(steps::Run& run) {
    Band& w = whole_[0];
    for (int k = 0; k < steps_; ++k) v2::step_rows(w.input(k), w.output(k), width_, 0, w.rows, run.stream());
  }

  /// Which bands a row runs on: one per GPU, or --bands on the first GPU.
  enum class Set { gpus, local };
  std::vector<Band>& set_of(Set set) { return set == Set::gpus ? gpu_bands_ : local_; }

  /// Bands: each step copies the halos in, then computes the band.
  void split(steps::Run& run, Set set) {
    std::vector<Band>& bands = set_of(set); // this row's bands
    const auto lanes = streams_for(run, bands, 1);
    std::vector<cudaStream_t> s;
    for (const auto& l : lanes) s.push_back(l[0]);
    for (int k = 0; k < steps_; ++k) {
      // Phase 1 (all bands): wait for the neighbours' previous step, pull the halos.
      for (std::size_t i = 0; i < bands.size(); ++i) {
        if (k > 0) wait_neighbours(bands, i, s[i], &Band::done, false);
        pull_halos(bands, i, k, s[i]);
      }
      // Phase 2: compute, then say so. Two phases, so that every wait above
      // sees the previous step's record, not this step's.
      for (std::size_t i = 0; i < bands.size(); ++i) {
        Band& b = bands[i];
        DeviceScope scope(b.ordinal);
        v2::step_rows(b.input(k), b.output(k), width_, 0, b.rows, s[i]);
        CUDA_CHECK(cudaEventRecord(b.done.get(), s[i]));
      }
    }
    run.join();
  }

  /// Bands: each step computes the two edge rows first, sends them on a
  /// second stream while the interior computes.
  void split_overlap(steps::Run& run, Set set) {
    std::vector<Band>& bands = set_of(set); // this row's bands
    const auto lanes = streams_for(run, bands, 2);
    std::vector<cudaStream_t> compute(bands.size()), halo(bands.size());
    for (std::size_t i = 0; i < bands.size(); ++i) {
      compute[i] = lanes[i][0];
      halo[i] = lanes[i][1];
    }
    for (std::size_t i = 0; i < bands.size(); ++i) pull_halos(bands, i, 0, compute[i]); // step 0 reads init
    for (int k = 0; k < steps_; ++k) {
      // A: the edge rows (they read the halos), then mark them ready.
      for (std::size_t i = 0; i < bands.size(); ++i) {
        Band& b = bands[i];
        DeviceScope scope(b.ordinal);
        if (k > 0) CUDA_CHECK(cudaStreamWaitEvent(compute[i], b.halos.get(), 0));
        v2::step_edges(b.input(k), b.output(k), width_, b.rows, compute[i]);
        CUDA_CHECK(cudaEventRecord(b.edges.get(), compute[i]));
      }
      // B: on the halo streams, the neighbours' new edge rows become this
      // band's halos for step k + 1 (not after the last step).
      if (k + 1 < steps_) {
        for (std::size_t i = 0; i < bands.size(); ++i) {
          Band& b = bands[i];
          DeviceScope scope(b.ordinal);
          wait_neighbours(bands, i, halo[i], &Band::edges, true);
          pull_halos(bands, i, k + 1, halo[i]);
          CUDA_CHECK(cudaEventRecord(b.halos.get(), halo[i]));
        }
      }
      // C: the interior, which needs no halo, overlaps B.
      for (std::size_t i = 0; i < bands.size(); ++i) {
        Band& b = bands[i];
        DeviceScope scope(b.ordinal);
        if (b.rows > 2) v2::step_rows(b.input(k), b.output(k), width_, 1, b.rows - 1, compute[i]);
      }
    }
    run.join();
  }

  /// NaN in every a and b cell a step writes (the grid's own edge halos stay 0).
  void poison() {
    auto poison_band = [](Band& b, std::size_t width) {
      DeviceScope scope(b.ordinal);
      for (auto* buf : {&b.a, &b.b})
        CUDA_CHECK(cudaMemset(buf->data() + width, 0xFF, b.rows * width * sizeof(float)));
      CUDA_CHECK(cudaDeviceSynchronize());
    };
    poison_band(whole_[0], width_);
    for (auto* set : {&gpu_bands_, &local_})
      for (auto& b : *set) poison_band(b, width_);
    // Interior halos of a and b are written by the exchange before they are
    // read; poison them too so a missing exchange shows as NaN.
    for (auto* set : {&gpu_bands_, &local_}) poison_halos(*set);
  }

  /// NaN in the halo rows between the bands of one set.
  void poison_halos(std::vector<Band>& bands) {
    for (std::size_t i = 0; i < bands.size(); ++i) {
      Band& b = bands[i];
      DeviceScope scope(b.ordinal);
      for (auto* buf : {&b.a, &b.b, &b.init}) {
        if (i > 0) CUDA_CHECK(cudaMemset(buf->data(), 0xFF, width_ * sizeof(float)));
        if (i + 1 < bands.size()) CUDA_CHECK(cudaMemset(buf->data() + (b.rows + 1) * width_, 0xFF, width_ * sizeof(float)));
      }
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  /// The grid after --steps steps against the CPU's (same operations, same order).
  /// `set`: the bands a row computed; none (nullptr): the whole grid.
  steps::Comparison check(const Set* set) {
    const std::vector<float>& want = reference();
    std::vector<float> got(rows_ * width_);
    auto fetch = [&](Band& b) {
      DeviceScope scope(b.ordinal);
      CUDA_CHECK(cudaMemcpy(got.data() + b.row_begin * width_, b.output(steps_ - 1) + width_,
                            b.rows * width_ * sizeof(float), cudaMemcpyDeviceToHost));
    };
    if (set)
      for (auto& b : set_of(*set)) fetch(b);
    else
      fetch(whole_[0]);
    steps::Comparison c = steps::compare(got, want, steps::Tolerance::fp32());
    c.row_length = width_;
    return c;
  }

private:
  Band make_band(int gpu, std::size_t row_begin, std::size_t rows) {
    Band b;
    b.gpu = gpu;
    b.ordinal = run_.ordinal(gpu);
    b.row_begin = row_begin;
    b.rows = rows;
    DeviceScope scope(b.ordinal);
    const std::size_t cells = (rows + 2) * width_;
    b.init = DeviceBuffer<float>(cells);
    b.a = DeviceBuffer<float>(cells);
    b.b = DeviceBuffer<float>(cells);
    for (auto* buf : {&b.init, &b.a, &b.b}) buf->fill_bytes(0); // halos at the grid's edge stay 0
    init_band<<<steps::full_wave_blocks(run_.device(gpu), rows * width_, 256), 256>>>(b.init.data(), width_, rows,
                                                                                        row_begin, seed_);
    CUDA_CHECK_LAUNCH();
    b.done = make_event(b.ordinal);
    b.edges = make_event(b.ordinal);
    b.halos = make_event(b.ordinal);
    return b;
  }

  /// `per_band` streams for each band, on the band's GPU: the first band of
  /// the first GPU starts with stream(0), every other stream is forked.
  std::vector<std::vector<cudaStream_t>> streams_for(steps::Run& run, const std::vector<Band>& bands,
                                                     int per_band) {
    std::vector<int> need(static_cast<std::size_t>(run.gpus()), 0);
    for (const auto& b : bands) need[static_cast<std::size_t>(b.gpu)] += per_band;
    if (!bands.empty()) --need[0]; // stream(0) itself
    std::vector<std::vector<cudaStream_t>> forked(need.size());
    for (std::size_t g = 0; g < need.size(); ++g)
      if (need[g] > 0) forked[g] = run.fork(need[g], static_cast<int>(g));
    std::vector<std::size_t> used(need.size(), 0);
    std::vector<std::vector<cudaStream_t>> out;
    for (std::size_t i = 0; i < bands.size(); ++i) {
      const auto g = static_cast<std::size_t>(bands[i].gpu);
      std::vector<cudaStream_t> lanes;
      if (i == 0) lanes.push_back(run.stream());
      while (static_cast<int>(lanes.size()) < per_band) lanes.push_back(forked[g][used[g]++]);
      out.push_back(lanes);
    }
    return out;
  }

  /// `stream` (band i's) waits for event `which` of band i's neighbours (and its own, when `self`).
  void wait_neighbours(std::vector<Band>& bands, std::size_t i, cudaStream_t stream, steps::RawEvent Band::*which,
                       bool self) {
    DeviceScope scope(bands[i].ordinal);
    if (i > 0) CUDA_CHECK(cudaStreamWaitEvent(stream, (bands[i - 1].*which).get(), 0));
    if (i + 1 < bands.size()) CUDA_CHECK(cudaStreamWaitEvent(stream, (bands[i + 1].*which).get(), 0));
    if (self) CUDA_CHECK(cudaStreamWaitEvent(stream, (bands[i].*which).get(), 0));
  }

  /// Band i's halos of the buffer step k reads <- the neighbours' edge rows of theirs.
  void pull_halos(std::vector<Band>& bands, std::size_t i, int k, cudaStream_t stream) {
    Band& b = bands[i];
    DeviceScope scope(b.ordinal);
    const std::size_t row = width_ * sizeof(float);
    if (i > 0) {
      Band& up = bands[i - 1]; // its last owned row is storage row up.rows
      CUDA_CHECK(cudaMemcpyPeerAsync(b.input(k), b.ordinal, up.input(k) + up.rows * width_, up.ordinal, row, stream));
    }
    if (i + 1 < bands.size()) {
      Band& down = bands[i + 1]; // its first owned row is storage row 1
      CUDA_CHECK(cudaMemcpyPeerAsync(b.input(k) + (b.rows + 1) * width_, b.ordinal, down.input(k) + width_,
                                     down.ordinal, row, stream));
    }
  }

  /// The CPU's grid after --steps steps (computed once, on all host cores).
  const std::vector<float>& reference() {
    if (!want_.empty()) return want_;
    const std::size_t w = width_, h = rows_;
    std::vector<float> cur(h * w), next(h * w);
    for (std::size_t i = 0; i < h * w; ++i) cur[i] = steps::uniform_at(seed_, i, 0.0f, 1.0f);
    const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    for (int k = 0; k < steps_; ++k) {
      auto rows = [&](std::size_t y0, std::size_t y1) {
        for (std::size_t y = y0; y < y1; ++y)
          for (std::size_t x = 0; x < w; ++x) {
            const float c = cur[y * w + x];
            const float up = y > 0 ? cur[(y - 1) * w + x] : 0.0f;
            const float down = y + 1 < h ? cur[(y + 1) * w + x] : 0.0f;
            const float left = x > 0 ? cur[y * w + x - 1] : 0.0f;
            const float right = x + 1 < w ? cur[y * w + x + 1] : 0.0f;
            next[y * w + x] = 0.2f * ((((c + up) + down) + left) + right);
          }
      };
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t) pool.emplace_back(rows, h * t / threads, h * (t + 1) / threads);
      for (auto& t : pool) t.join();
      cur.swap(next);
    }
    want_ = std::move(cur);
    return want_;
  }

  steps::Run& run_;
  std::size_t width_, rows_;
  int steps_;
  int bands_option_; ///< --bands
  std::uint64_t seed_;
  std::vector<Band> whole_; ///< one band: the whole grid on the first GPU
  std::vector<Band> gpu_bands_; ///< one band per GPU (empty on one GPU)
  std::vector<Band> local_; ///< --bands bands, all on the first GPU
  std::vector<float> want_;
};

/// A stencil row; `set`: the bands it computes (none: the whole grid on the first GPU).
steps::Row<Stencil> stencil_row(std::string name, std::string what, Role role, std::optional<Stencil::Set> set,
                                std::function<void(Stencil&, steps::Run&)> launch) {
  auto r = steps::make_row<Stencil>(std::move(name), std::move(what), role, std::move(launch),
                                    [](const Stencil& p) { return steps::Work{p.bytes()}; });
  r.reset = [](Stencil& p) { p.poison(); };
  r.check = [set](Stencil& p) { return p.check(set ? &*set : nullptr); };
  return r;
}

steps::GroupPtr stencil_group() {
  using Set = Stencil::Set;
  return steps::group<Stencil>({
      stencil_row("stencil_one_gpu", "v2: the whole grid on the first GPU (the scaling baseline)", Role::version,
                  std::nullopt, [](Stencil& p, steps::Run& run) { p.one_gpu(run); }),
      needing(gpus(2), stencil_row("stencil_split", "v2: one band per GPU; each step: pull halo rows, then compute",
                                   Role::version, Set::gpus,
                                   [](Stencil& p, steps::Run& run) { p.split(run, Set::gpus); })),
      needing(gpus(2), stencil_row("stencil_split_overlap",
                                   "v2: + edge rows first, halos sent on a second stream while the interior computes",
                                   Role::version, Set::gpus,
                                   [](Stencil& p, steps::Run& run) { p.split_overlap(run, Set::gpus); })),
      stencil_row("stencil_bands", "stencil_split's schedule over --bands bands of the first GPU (one GPU is enough)",
                  Role::reference, Set::local, [](Stencil& p, steps::Run& run) { p.split(run, Set::local); }),
      stencil_row("stencil_bands_overlap", "stencil_split_overlap's schedule over --bands bands of the first GPU",
                  Role::reference, Set::local, [](Stencil& p, steps::Run& run) { p.split_overlap(run, Set::local); }),
  });
}

} // namespace ch09
