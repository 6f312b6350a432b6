// Chapter 07, problem 3: a 256-word lookup table, in constant or shared memory
// (reference rows).
//
// The problem (its buffers and its check), its rows and its group; main.cu
// puts the group in the registry.
#pragma once

#include "constant.cuh"
#include "launch_info.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ch07 {

using steps::Role;

// ---------------------------------------------------------------------------
// Problem 3: a 256-word table read kTerms times per element, --const-size
// elements.
// ---------------------------------------------------------------------------

class Lookup {
public:
  Lookup(const steps::Options& opts, steps::Run& run)
      : launcher_(run.device()), n_(static_cast<std::size_t>(opts.get("--const-size"))), x_(n_), y_(n_),
        table_(constant::kTable) {
    steps::fill_uniform_device(x_.data(), n_, opts.seed + 20, -1.0f, 1.0f);
    x_host_ = x_.download();
    table_host_ = steps::random_vector(constant::kTable, opts.seed + 21, -1.0f, 1.0f);
    table_.copy_from_host(table_host_);
    CUDA_CHECK(cudaMemcpyToSymbol(constant::c_table, table_host_.data(), constant::kTable * sizeof(float)));
  }

  std::string describe() const {
    return "table lookups: y[i] = sum of " + std::to_string(constant::kTerms) + " terms x[i] * table[j], a " +
           std::to_string(constant::kTable) + "-word table, n = " + std::to_string(n_) + " floats";
  }

  void poison() { y_.poison(); }

  /// y against the CPU's sum in the same order with the same fused
  /// multiply-adds: exact. `divergent` picks the index pattern.
  steps::Comparison check(bool divergent) {
    const steps::Comparison guards = y_.check_guards();
    if (!guards.ok) return guards;
    y_.download(got_);
    return steps::compare_each(
        n_, [&](std::size_t i) { return got_[i]; },
        [&](std::size_t i) {
          const int lane = static_cast<int>(i % constant::kBlock % 32);
          float acc = 0.0f;
          for (int k = 0; k < constant::kTerms; ++k)
            acc = std::fmaf(x_host_[i], table_host_[divergent ? constant::divergent_index(lane, k) : k], acc);
          return acc;
        },
        [](std::size_t, double) { return 0.0; }, 0.0);
  }

  const float* x() const { return x_.data(); }
  float* y() { return y_.data(); }
  const float* table() const { return table_.data(); }
  std::size_t n() const { return n_; }
  const Launcher& launcher() const { return launcher_; }

private:
  Launcher launcher_;
  std::size_t n_;
  steps::GuardedBuffer<float> x_, y_;
  steps::DeviceBuffer<float> table_;
  std::vector<float> x_host_, table_host_, got_;
};

steps::Row<Lookup> lookup_row(std::string name, std::string what, const void* kernel, bool divergent,
                              std::function<void(Lookup&, unsigned int, cudaStream_t)> launch) {
  const Launch l{kernel, constant::kBlock, 0};
  steps::Row<Lookup> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = Role::reference;
  r.launch = [launch](Lookup& p, steps::Run& run) {
    if (p.n() == 0) return;
    launch(p, static_cast<unsigned int>(steps::ceil_div<std::size_t>(p.n(), constant::kBlock)), run.stream());
    CUDA_CHECK_LAUNCH();
  };
  r.work = [](const Lookup& p) {
    const double n = static_cast<double>(p.n());
    return steps::Work{8.0 * n, 2.0 * constant::kTerms * n};
  };
  r.reset = [](Lookup& p) { p.poison(); };
  r.check = [divergent](Lookup& p) { return p.check(divergent); };
  r.extras = [l](const Lookup& p) { return p.launcher().extras(l); };
  return r;
}

steps::GroupPtr lookup_group() {
  using namespace constant;
  return steps::group<Lookup>({
      lookup_row("const_broadcast", "__constant__ table, every lane of a warp at the same word",
                 reinterpret_cast<const void*>(const_broadcast), false,
                 [](Lookup& p, unsigned int grid, cudaStream_t s) {
                   const_broadcast<<<grid, kBlock, 0, s>>>(p.x(), p.y(), p.n());
                 }),
      lookup_row("const_divergent", "__constant__ table, the 32 lanes of a warp at 32 different words",
                 reinterpret_cast<const void*>(const_divergent), true,
                 [](Lookup& p, unsigned int grid, cudaStream_t s) {
                   const_divergent<<<grid, kBlock, 0, s>>>(p.x(), p.y(), p.n());
                 }),
      lookup_row("shared_divergent", "the same 32 different words per warp, from a copy in shared memory",
                 reinterpret_cast<const void*>(shared_divergent), true,
                 [](Lookup& p, unsigned int grid, cudaStream_t s) {
                   shared_divergent<<<grid, kBlock, 0, s>>>(p.table(), p.x(), p.y(), p.n());
                 }),
  });
}

} // namespace ch07
