// Chapter 09: your exercise as a row of the chapter's table ("yours"), built
// when exercises/09_multi_gpu compiles. Its own problem: one step of a
// periodic 1-D 3-point average over --size floats, cut into slices with
// your split(); your exchange_halos() fills the ghosts, then each slice
// computes. At least 2 slices (on one GPU, both live on it), dealt
// round-robin to the run's GPUs; checked against the CPU.
#pragma once

#include "halo.hpp"

#include "steps/chapter.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace ch09 {

// out[j] = (x[j - 1] + x[j] + x[j + 1]) / 3 for the slice's owned cells;
// `cells` holds 1 ghost, count owned cells, 1 ghost.
__global__ void average3(const float* __restrict__ cells, float* __restrict__ out, std::size_t count) {
  for (std::size_t j = steps::global_index(); j < count; j += steps::grid_size())
    out[j] = ((cells[j] + cells[j + 1]) + cells[j + 2]) * (1.0f / 3.0f);
}

class YoursHalo {
public:
  YoursHalo(const steps::Options& opts, steps::Run& run)
      : run_(run), n_(static_cast<std::size_t>(opts.size)), seed_(opts.seed + 90) {
    const int k = std::max(2, run.gpus());
    // Your split, checked here: a wrong one is reported by check() (the row
    // shows "not yet"); the slices are then cut by the rule itself, so the
    // rest of the chapter still runs.
    parts_ = ex09::split(n_, k);
    std::size_t at = 0;
    for (int i = 0; i < k && split_error_.empty(); ++i) {
      const std::size_t want = n_ / k + (static_cast<std::size_t>(i) < n_ % k ? 1 : 0);
      if (parts_.size() != static_cast<std::size_t>(k)) {
        split_error_ = "your split(" + std::to_string(n_) + ", " + std::to_string(k) + ") returned " +
                       std::to_string(parts_.size()) + " parts";
      } else if (parts_[static_cast<std::size_t>(i)].begin != at || parts_[static_cast<std::size_t>(i)].count != want) {
        split_error_ = "your split(" + std::to_string(n_) + ", " + std::to_string(k) + "): part " +
                       std::to_string(i) + " is wrong";
      }
      at += want;
    }
    if (!split_error_.empty()) {
      parts_.assign(static_cast<std::size_t>(k), ex09::Part{});
      for (std::size_t i = 0, b = 0; i < parts_.size(); ++i) {
        parts_[i] = {b, n_ / k + (i < n_ % k ? 1 : 0)};
        b += parts_[i].count;
      }
    }
    for (int i = 0; i < k; ++i) {
      const int gpu = i % run.gpus();
      steps::DeviceScope scope(run.ordinal(gpu));
      const ex09::Part part = parts_[static_cast<std::size_t>(i)];
      cells_.emplace_back(part.count + 2);
      out_.emplace_back(std::max<std::size_t>(1, part.count));
      gpu_of_.push_back(gpu);
    }
    // The input: x[i] = uniform_at(seed, i), written slice by slice.
    x_ = steps::random_vector(n_, seed_);
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      steps::DeviceScope scope(run.ordinal(gpu_of_[i]));
      if (parts_[i].count)
        CUDA_CHECK(cudaMemcpy(cells_[i].data() + 1, x_.data() + parts_[i].begin, parts_[i].count * sizeof(float),
                              cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  std::string describe() const {
    return "exercise 09: one periodic 3-point average over n = " + std::to_string(n_) + " floats in " +
           std::to_string(parts_.size()) + " slices on " + std::to_string(run_.gpus()) +
           " GPU(s), ghosts filled by your exchange_halos";
  }

  std::size_t n() const { return n_; }

  void launch(steps::Run& run) {
    // One stream per slice, forked from stream(0): several per GPU where needed.
    std::vector<int> per_gpu(static_cast<std::size_t>(run.gpus()), 0);
    for (int g : gpu_of_) ++per_gpu[static_cast<std::size_t>(g)];
    std::vector<std::vector<cudaStream_t>> forked(per_gpu.size());
    for (std::size_t g = 0; g < per_gpu.size(); ++g)
      if (per_gpu[g]) forked[g] = run.fork(per_gpu[g], static_cast<int>(g));
    std::vector<ex09::Slice> slices;
    std::vector<int> used(per_gpu.size(), 0);
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      const std::size_t g = static_cast<std::size_t>(gpu_of_[i]);
      slices.push_back({run.ordinal(static_cast<int>(g)), forked[g][static_cast<std::size_t>(used[g]++)],
                        cells_[i].data(), parts_[i]});
    }
    ex09::exchange_halos(slices, n_, 1, ex09::Boundary::periodic, 0.0f);
    for (std::size_t i = 0; i < slices.size(); ++i) {
      if (parts_[i].count == 0) continue;
      steps::DeviceScope scope(slices[i].device);
      average3<<<steps::full_wave_blocks(run.device(gpu_of_[i]), parts_[i].count, 256), 256, 0, slices[i].stream>>>(
          cells_[i].data(), out_[i].data(), parts_[i].count);
      CUDA_CHECK_LAUNCH();
    }
    run.join();
  }

  void poison() {
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      steps::DeviceScope scope(run_.ordinal(gpu_of_[i]));
      out_[i].fill_bytes(0xFF);
      // Ghosts too: a missing exchange shows as NaN.
      CUDA_CHECK(cudaMemset(cells_[i].data(), 0xFF, sizeof(float)));
      CUDA_CHECK(cudaMemset(cells_[i].data() + parts_[i].count + 1, 0xFF, sizeof(float)));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  steps::Comparison check() {
    if (!split_error_.empty()) {
      steps::Comparison c;
      c.ok = false;
      c.bad_count = 1;
      c.note = split_error_ + " (grade it: ./tutorial grade 09)";
      return c;
    }
    std::vector<float> got(n_), want(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      const float l = x_[(i + n_ - 1) % n_], c = x_[i], r = x_[(i + 1) % n_];
      want[i] = ((l + c) + r) * (1.0f / 3.0f);
    }
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      if (parts_[i].count == 0) continue;
      steps::DeviceScope scope(run_.ordinal(gpu_of_[i]));
      CUDA_CHECK(cudaMemcpy(got.data() + parts_[i].begin, out_[i].data(), parts_[i].count * sizeof(float),
                            cudaMemcpyDeviceToHost));
    }
    return steps::compare(got, want, steps::Tolerance::fp32());
  }

private:
  steps::Run& run_;
  std::size_t n_;
  std::uint64_t seed_;
  std::vector<ex09::Part> parts_;
  std::vector<int> gpu_of_;
  std::vector<steps::DeviceBuffer<float>> cells_, out_;
  std::vector<float> x_;
  std::string split_error_;
};

inline steps::GroupPtr yours_group() {
  auto r = steps::make_row<YoursHalo>(
      "yours", "exercise 09: your split + exchange_halos in a periodic 1-D 3-point average across the GPUs",
      steps::Role::yours, [](YoursHalo& p, steps::Run& run) { p.launch(run); },
      [](const YoursHalo& p) { return steps::Work{8.0 * static_cast<double>(p.n())}; });
  r.reset = [](YoursHalo& p) { p.poison(); };
  r.check = [](YoursHalo& p) { return p.check(); };
  return steps::group<YoursHalo>({r});
}

} // namespace ch09
