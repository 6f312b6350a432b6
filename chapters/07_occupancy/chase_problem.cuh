// Chapter 07, problem 2: pointer chases through a linked list, latency-bound
// (reference rows).
//
// The problem (its buffers and its check), its rows and its group; main.cu
// puts the group in the registry.
#pragma once

#include "chase.cuh"
#include "launch_info.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace ch07 {

using steps::Role;

// ---------------------------------------------------------------------------
// Problem 2: --chains pointer chases of --hops dependent loads each, through
// a linked list of --nodes nodes.
// ---------------------------------------------------------------------------

class Chase {
public:
  Chase(const steps::Options& opts, steps::Run& run)
      : launcher_(run.device()), entries_(static_cast<std::size_t>(opts.get("--nodes"))),
        chains_(static_cast<std::size_t>(opts.get("--chains"))), hops_(static_cast<int>(opts.get("--hops"))),
        bits_(log2(entries_)), nodes_(entries_), out_(chains_) {
    chase::build_list<<<launcher_.dev().sm_count * 8, 256>>>(nodes_.data(), entries_, bits_);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    // The kernels the rows pad with more than 48 KiB of shared memory.
    allow_large_smem(reinterpret_cast<const void*>(chase::pointer_chase), launcher_.arch());
    allow_large_smem(reinterpret_cast<const void*>(chase::chase_ilp4), launcher_.arch());
    // Every chase row runs with the same L1 (the smallest: what a 227 KiB
    // pad forces), padded or not, except chase_b256_max_l1, which shows
    // what the split alone is worth.
    for (const void* k : {reinterpret_cast<const void*>(chase::pointer_chase),
                          reinterpret_cast<const void*>(chase::chase_ilp4),
                          reinterpret_cast<const void*>(chase::chase_ilp20),
                          reinterpret_cast<const void*>(chase::chase_ilp20_maxnreg48),
                          reinterpret_cast<const void*>(chase::chase_ilp32),
                          reinterpret_cast<const void*>(chase::chase_ilp32_lb4),
                          reinterpret_cast<const void*>(chase::chase_ilp32_maxnreg32)})
      pin_carveout(k);
    pin_carveout(reinterpret_cast<const void*>(chase::chase_max_l1), cudaSharedmemCarveoutMaxL1);
  }

  std::string describe() const {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "pointer chase (latency-bound): %zu chains of %d dependent 8-byte loads through a linked list "
                  "of %zu nodes in random order (%s)",
                  chains_, hops_, entries_, steps::format_bytes(8.0 * static_cast<double>(entries_)).c_str());
    return buf;
  }

  void poison() { out_.poison(); }

  /// Every chain ends where the CPU, following next_index(), ends.
  steps::Comparison check() {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    if (want_.empty()) want_ = reference();
    out_.download(got_);
    return steps::compare_each(
        chains_, [&](std::size_t c) { return got_[c]; }, [&](std::size_t c) { return want_[c]; },
        [](std::size_t, double) { return 0.0; }, 0.0);
  }

  const chase::Node* nodes() const { return nodes_.data(); }
  std::uint32_t* out() { return out_.data(); }
  std::size_t chains() const { return chains_; }
  int hops() const { return hops_; }
  int bits() const { return bits_; }
  const Launcher& launcher() const { return launcher_; }

private:
  static int log2(std::size_t v) {
    int b = 0;
    while ((std::size_t{1} << b) < v) ++b;
    return b;
  }

  // The ends of all chains, on every CPU core (2^24 chains of 16 hops are
  // 2^28 steps).
  std::vector<std::uint32_t> reference() const {
    std::vector<std::uint32_t> want(chains_);
    const unsigned int workers = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (unsigned int w = 0; w < workers; ++w)
      pool.emplace_back([&, w] {
        for (std::size_t c = w; c < chains_; c += workers) {
          std::uint32_t idx = chase::chain_start(c, bits_);
          for (int h = 0; h < hops_; ++h) idx = chase::next_index(idx, bits_);
          want[c] = idx;
        }
      });
    for (auto& t : pool) t.join();
    return want;
  }

  Launcher launcher_;
  std::size_t entries_, chains_;
  int hops_, bits_;
  steps::DeviceBuffer<chase::Node> nodes_;
  steps::GuardedBuffer<std::uint32_t> out_;
  std::vector<std::uint32_t> want_, got_;
};

using ChaseKernel = void (*)(const chase::Node*, std::uint32_t*, std::size_t, int, int);

/// A chase row. Its "bandwidth" counts the 8 useful bytes of each load (and
/// the 4 of each chain's final store); "moved" counts the 32-byte sector each
/// random load really brings from memory. Its extra column "loads in
/// flight/SM" is the most it can have: resident threads (the calculator's
/// blocks per SM x block) x chains per thread.
steps::Row<Chase> chase_row(std::string name, std::string what, Role role, ChaseKernel k, int block, int smem_blocks,
                            bool full_wave, int chains_per_thread) {
  const Launch l{reinterpret_cast<const void*>(k), block, smem_blocks};
  steps::Row<Chase> r = steps::make_row<Chase>(
      std::move(name), std::move(what), role,
      [k, l, full_wave](Chase& p, steps::Run& run) {
        launch_over(p.launcher(), l, p.chains(), full_wave, run.stream(), k, p.nodes(), p.out(), p.chains(), p.hops(),
                    p.bits());
      },
      [](const Chase& p) {
        const double chains = static_cast<double>(p.chains()), hops = p.hops();
        steps::Work w;
        w.bytes = chains * (8.0 * hops + 4.0);
        w.hw_bytes = chains * (32.0 * hops + 4.0);
        return w;
      });
  r.reset = [](Chase& p) { p.poison(); };
  r.check = [](Chase& p) { return p.check(); };
  r.extras = [l, chains_per_thread](const Chase& p) {
    std::vector<steps::Extra> e = p.launcher().extras(l);
    const double resident_threads = static_cast<double>(p.launcher().blocks_per_sm(l)) * l.block;
    e.push_back({"loads in flight/SM", resident_threads * chains_per_thread, 0});
    return e;
  };
  return r;
}

steps::GroupPtr chase_group() {
  using namespace chase;
  return steps::group<Chase>({
      chase_row("chase_occ2", "one chain per thread, 32-thread blocks + a pad for 1 block per SM: 1 warp per SM",
                Role::reference, pointer_chase, 32, 1, false, 1),
      chase_row("chase_occ12", "one chain per thread, 256-thread blocks + a pad for 1 block per SM (opt-in)",
                Role::reference, pointer_chase, 256, 1, false, 1),
      chase_row("chase_occ25", "one chain per thread, 256-thread blocks + a pad for 2 blocks per SM",
                Role::reference, pointer_chase, 256, 2, false, 1),
      chase_row("chase_b32", "one chain per thread, 32-thread blocks: the block limit", Role::reference,
                pointer_chase, 32, 0, false, 1),
      chase_row("chase_b256", "one chain per thread, 256-thread blocks", Role::reference, pointer_chase, 256, 0,
                false, 1),
      chase_row("chase_b256_max_l1", "chase_b256 with the largest L1 (every other chase row: the smallest)",
                Role::reference, chase_max_l1, 256, 0, false, 1),
      chase_row("chase_ilp4_occ12", "4 chains per thread (4 loads in flight), 1 block of 256 per SM",
                Role::reference, chase_ilp4, kIlpBlock, 1, true, 4),
      chase_row("chase_ilp20", "20 chains per thread, no register budget (96 registers), one full wave",
                Role::reference, chase_ilp20, kIlpBlock, 0, true, 20),
      chase_row("chase_ilp20_maxnreg48", "the same under __maxnreg__(48): more occupancy, spills", Role::reference,
                chase_ilp20_maxnreg48, kIlpBlock, 0, true, 20),
      chase_row("chase_ilp32", "32 chains per thread, no register budget, one full wave", Role::reference,
                chase_ilp32, kIlpBlock, 0, true, 32),
      chase_row("chase_ilp32_lb4", "32 chains per thread under __launch_bounds__(256, 4): at most 64 registers",
                Role::reference, chase_ilp32_lb4, kIlpBlock, 0, true, 32),
      chase_row("chase_ilp32_maxnreg32", "32 chains per thread under __maxnreg__(32): full occupancy, spills",
                Role::reference, chase_ilp32_maxnreg32, kIlpBlock, 0, true, 32),
      chase_row("mistake_too_many_registers",
                "the 32-chain kernel (no register budget) in 1024-thread blocks: too many registers, the launch fails",
                Role::mistake, chase_ilp32, 1024, 0, false, 32),
  });
}

} // namespace ch07
