// Chapter 01, Little's law: the latency of one load, measured with a
// pointer chase.
//
// One thread follows a chain, p = next[p], 10000 times. Each load needs the
// previous one's value for its address, so exactly one load is in flight at
// any time and the run lasts 10000 load latencies: median ms x 100 = ns per
// load.
//
// The chain is a random cycle (Sattolo's algorithm) through slots 128 bytes
// apart, so that no two loads share a cache line, and spans --chase-mib MiB
// (default 512, about 9x {n:512*1048576/01:gpu.l2_bytes|.0f} the H200's L2): what the loads find in the L1 and
// the L2 is only what the chase itself left there, and each run continues
// the cycle where the previous one stopped, so no slot is visited twice in
// the first (slots / 10000) runs (419 runs at 512 MiB; the default run is
// 54). The latency measured includes the L1 and L2 misses on the way and any
// TLB miss; at --chase-mib below the L2's size it is the L2's latency.
#pragma once

#include "steps/chapter.hpp"
#include "steps/launch.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ch01::latency {

/// Dependent loads per run: median ms x 100 = ns per load.
constexpr int kSteps = 10000;
/// Distance between the slots of the chain: one 128-byte cache line each.
constexpr std::size_t kSlotWords = 128 / sizeof(unsigned);

/// next[] holds, at word s * kSlotWords, the word index of the next slot.
__global__ void pointer_chase(const unsigned* next, unsigned* position, int steps) {
  unsigned p = *position;
  for (int s = 0; s < steps; ++s) p = next[p];
  *position = p;
}

/// chain[slot * kSlotWords] = order[slot] * kSlotWords (spreads the compact
/// successor list uploaded from the host over the 128-byte slots).
__global__ void spread_chain(const unsigned* order, unsigned* chain, std::size_t slots) {
  for (std::size_t s = steps::global_index(); s < slots; s += steps::grid_size())
    chain[s * kSlotWords] = order[s] * static_cast<unsigned>(kSlotWords);
}

/// The chase's problem: the chain on the device, the position the next run
/// starts from, and where the verification run must end.
class Chase {
public:
  Chase(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), mib_(static_cast<std::size_t>(opts.get("--chase-mib"))),
        slots_(mib_ * (std::size_t{1} << 20) / (kSlotWords * sizeof(unsigned))), chain_(slots_ * kSlotWords),
        position_(1) {
    // Sattolo's algorithm: a uniformly random permutation with one cycle
    // through every slot.
    std::vector<unsigned> next(slots_);
    for (std::size_t s = 0; s < slots_; ++s) next[s] = static_cast<unsigned>(s);
    std::mt19937_64 rng(opts.seed + 30);
    for (std::size_t s = slots_ - 1; s > 0; --s) {
      const std::size_t j = std::uniform_int_distribution<std::size_t>(0, s - 1)(rng);
      std::swap(next[s], next[j]);
    }
    steps::DeviceBuffer<unsigned> order(slots_);
    order.copy_from_host(next);
    spread_chain<<<1024, 256>>>(order.data(), chain_.data(), slots_);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::size_t p = 0; // where kSteps loads from slot 0 end
    for (int s = 0; s < kSteps; ++s) p = next[p];
    want_ = static_cast<unsigned>(p * kSlotWords);
  }

  std::string describe() const {
    return "pointer chase: one thread, " + std::to_string(kSteps) + " dependent 4-byte loads per run over a " +
           "random cycle of " + std::to_string(slots_) + " slots 128 bytes apart (" + std::to_string(mib_) +
           " MiB" + (mib_ * (std::size_t{1} << 20) <= dev_.l2_bytes ? ", fits in the L2: L2 latency)" : ")");
  }

  /// The verification run starts at slot 0.
  void restart() { CUDA_CHECK(cudaMemset(position_.data(), 0, sizeof(unsigned))); }

  void launch(cudaStream_t s) {
    pointer_chase<<<1, 1, 0, s>>>(chain_.data(), position_.data(), kSteps);
    CUDA_CHECK_LAUNCH();
  }

  /// The chase from slot 0 ended where the CPU's walk of the same cycle did.
  steps::Comparison check() const {
    unsigned got = 0;
    CUDA_CHECK(cudaMemcpy(&got, position_.data(), sizeof got, cudaMemcpyDeviceToHost));
    return steps::compare_exact(got, want_, "the chase did not end where the CPU's walk of the cycle ends");
  }

private:
  steps::DeviceInfo dev_;
  std::size_t mib_, slots_;
  steps::DeviceBuffer<unsigned> chain_, position_;
  unsigned want_ = 0;
};

/// The chase as a row. Its GB/s is 4 bytes per latency (one thread, one
/// load in flight); its median ms x 100 (ms x 1e6 / "chase loads/run") is
/// the latency in ns.
inline steps::Row<Chase> row() {
  steps::Row<Chase> r;
  r.name = "pointer_chase";
  r.what = "latency: one thread, 10000 dependent loads, one 128-byte line each; median ms x 100 = ns per load";
  r.role = steps::Role::reference;
  r.launch = [](Chase& p, steps::Run& run) { p.launch(run.stream()); };
  r.work = [](const Chase&) { return steps::Work{4.0 * kSteps}; };
  r.reset = [](Chase& p) { p.restart(); };
  r.check = [](Chase& p) { return p.check(); };
  // Stored with the row, so tools compute ns per load without knowing kSteps.
  r.extras = [](const Chase&) { return std::vector<steps::Extra>{{"chase loads/run", double{kSteps}, 0}}; };
  return r;
}

} // namespace ch01::latency
