// Chapter 07, problem 1: y = a x, bandwidth-bound: the versions, against cudaMemcpy.
//
// The problem (its buffers and its check), its rows and its group; main.cu
// puts the group in the registry.
#pragma once

#include "launch_info.cuh"
#include "stream.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace ch07 {

using steps::Role;

// ---------------------------------------------------------------------------
// Problem 1: y = a x over --size floats.
// ---------------------------------------------------------------------------

class Scale {
public:
  static constexpr float kA = 1.5f;

  Scale(const steps::Options& opts, steps::Run& run)
      : launcher_(run.device()), n_(static_cast<std::size_t>(opts.size)), x_(n_), y_(n_) {
    steps::fill_uniform_device(x_.data(), n_, opts.seed, -1.0f, 1.0f);
    x_host_ = x_.download();
    // The kernels the rows pad with more than 48 KiB of shared memory (not
    // scale_no_optin: its row shows what happens without), each with the
    // same L1/shared split for its padded and unpadded rows.
    for (const void* k : {reinterpret_cast<const void*>(stream::scale_one_per_thread),
                          reinterpret_cast<const void*>(stream::scale_float4)}) {
      allow_large_smem(k, launcher_.arch());
      pin_carveout(k);
    }
  }

  std::string describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "y = %.1f x (bandwidth-bound), n = %zu floats (2 arrays of %s)", kA, n_,
                  steps::format_bytes(4.0 * static_cast<double>(n_)).c_str());
    return buf;
  }

  void poison() { y_.poison(); }

  /// y == a x exactly (one rounding, the same on CPU and GPU).
  steps::Comparison check_scale() { return check([](float x) { return kA * x; }); }
  /// y == x exactly (the copy baseline).
  steps::Comparison check_copy() { return check([](float x) { return x; }); }

  const float* x() const { return x_.data(); }
  float* y() { return y_.data(); }
  std::size_t n() const { return n_; }
  const Launcher& launcher() const { return launcher_; }

private:
  template <class F>
  steps::Comparison check(F want) {
    const steps::Comparison guards = y_.check_guards();
    if (!guards.ok) return guards;
    y_.download(got_);
    return steps::compare_each(
        n_, [&](std::size_t i) { return got_[i]; }, [&](std::size_t i) { return want(x_host_[i]); },
        [](std::size_t, double) { return 0.0; }, 0.0);
  }

  Launcher launcher_;
  std::size_t n_;
  steps::GuardedBuffer<float> x_, y_;
  std::vector<float> x_host_, got_;
};

using ScaleKernel = void (*)(const float*, float*, float, std::size_t);

/// A y = a x row: kernel `k` with launch shape `l`, one element per thread
/// (grid = ceil(n / block)) or, for the grid-stride kernels, one full wave.
steps::Row<Scale> scale_row(std::string name, std::string what, Role role, ScaleKernel k, int block,
                            int smem_blocks, bool full_wave) {
  const Launch l{reinterpret_cast<const void*>(k), block, smem_blocks};
  steps::Row<Scale> r = steps::make_row<Scale>(
      std::move(name), std::move(what), role,
      [k, l, full_wave](Scale& p, steps::Run& run) {
        launch_over(p.launcher(), l, p.n(), full_wave, run.stream(), k, p.x(), p.y(), Scale::kA, p.n());
      },
      [](const Scale& p) { return steps::Work{8.0 * static_cast<double>(p.n()), static_cast<double>(p.n())}; });
  r.reset = [](Scale& p) { p.poison(); };
  r.check = [](Scale& p) { return p.check_scale(); };
  r.extras = [l](const Scale& p) { return p.launcher().extras(l); };
  return r;
}

steps::Row<Scale> memcpy_row() {
  return steps::memcpy_row<Scale>(
      "cudaMemcpy device-to-device of x into y (the vendor's copy: same bytes as y = a x)",
      [](Scale& p) { return p.y(); }, [](Scale& p) { return p.x(); },
      [](const Scale& p) { return p.n() * sizeof(float); }, [](Scale& p) { return p.check_copy(); },
      [](Scale& p) { p.poison(); });
}

steps::GroupPtr scale_group() {
  using namespace stream;
  return steps::group<Scale>({
      memcpy_row(),
      scale_row("scale_b32", "one element per thread, 32-thread blocks: the block limit leaves warp slots empty",
                Role::version, scale_one_per_thread, 32, 0, false),
      scale_row("scale_b64", "one element per thread, 64-thread blocks", Role::version, scale_one_per_thread, 64, 0,
                false),
      scale_row("scale_b256", "one element per thread, 256-thread blocks", Role::version, scale_one_per_thread, 256,
                0, false),
      scale_row("scale_b1024", "one element per thread, 1024-thread blocks", Role::version, scale_one_per_thread,
                1024, 0, false),
      scale_row("scale_occ12", "256-thread blocks + a shared-memory pad for 1 block per SM (above 48 KiB: opt-in)",
                Role::version, scale_one_per_thread, 256, 1, false),
      scale_row("scale_occ25", "256-thread blocks + a shared-memory pad for 2 blocks per SM", Role::version,
                scale_one_per_thread, 256, 2, false),
      scale_row("scale_occ50", "256-thread blocks + a shared-memory pad for 4 blocks per SM", Role::version,
                scale_one_per_thread, 256, 4, false),
      scale_row("scale_float4", "one float4 per thread per step, grid-stride, one full wave (100% occupancy)",
                Role::version, scale_float4, 256, 0, true),
      scale_row("scale_float4_occ50", "the same + a shared-memory pad for 4 blocks per SM (50% occupancy)",
                Role::version, scale_float4, 256, 4, true),
      scale_row("scale_ilp16", "16 float4 loads in flight per thread, no register budget, one full wave",
                Role::version, scale_ilp16, kIlpBlock, 0, true),
      scale_row("scale_ilp16_lb4", "the same under __launch_bounds__(256, 4): at most 64 registers", Role::version,
                scale_ilp16_lb4, kIlpBlock, 0, true),
      scale_row("scale_ilp16_maxnreg32", "the same under __maxnreg__(32): full occupancy, spills", Role::version,
                scale_ilp16_maxnreg32, kIlpBlock, 0, true),
      scale_row("mistake_smem_no_optin",
                "227 KiB of dynamic shared memory without cudaFuncSetAttribute: the launch fails", Role::mistake,
                scale_no_optin, 256, 1, false),
  });
}

} // namespace ch07
