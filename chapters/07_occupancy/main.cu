// Chapter 07: occupancy, and where data lives.
//
// Occupancy is the fraction of an SM's warp slots that a kernel's blocks
// fill: resident warps / maximum warps. Threads per block, registers per
// thread and shared memory per block decide it (the course's calculator,
// steps::occupancy, does the arithmetic; each row shows its answer). The
// program measures what it is worth on three problems, each with its own
// buffers:
//
//   1. y = a x, bandwidth-bound (versions, against cudaMemcpy): block sizes
//      32 to 1024, occupancy dialled down with a shared-memory pad (one row
//      with 227 KiB, above the 48 KiB that needs an opt-in), one float4 per
//      thread at half and full occupancy, and 16 loads in flight per thread under three
//      register budgets (two of them spill).
//   2. a pointer chase through a linked list, latency-bound (reference rows:
//      another problem): the same occupancy sweep, every row with the same
//      L1/shared split (one row with the other split, to show it), and 4, 20
//      or 32 chains per thread under register budgets (__launch_bounds__,
//      __maxnreg__: 96 against 48 registers, 118 against 64 and 32).
//   3. a 256-word lookup table in constant memory, read by a whole warp at
//      one address (broadcast) or at 32 (divergent), and from shared memory.
//
// Run: ./tutorial run 07   (or build/bin/ch07_occupancy --help)
#include "chase.cuh"
#include "constant.cuh"
#include "launch_info.cuh"
#include "stream.cuh"
#if STEPS_WITH_EXERCISE_CONVOLVE
#include "yours.cuh"
#endif

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
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
  steps::Row<Scale> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [k, l, full_wave](Scale& p, steps::Run& run) {
    if (p.n() == 0) return;
    const unsigned int grid = full_wave ? p.launcher().full_wave(l)
                                        : static_cast<unsigned int>(steps::ceil_div<std::size_t>(p.n(), l.block));
    k<<<grid, l.block, p.launcher().dynamic_smem(l), run.stream()>>>(p.x(), p.y(), Scale::kA, p.n());
    CUDA_CHECK_LAUNCH();
  };
  r.work = [](const Scale& p) { return steps::Work{8.0 * static_cast<double>(p.n()), static_cast<double>(p.n())}; };
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
  steps::Row<Chase> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [k, l, full_wave](Chase& p, steps::Run& run) {
    if (p.chains() == 0) return;
    const unsigned int grid = full_wave ? p.launcher().full_wave(l)
                                        : static_cast<unsigned int>(steps::ceil_div<std::size_t>(p.chains(), l.block));
    k<<<grid, l.block, p.launcher().dynamic_smem(l), run.stream()>>>(p.nodes(), p.out(), p.chains(), p.hops(),
                                                                       p.bits());
    CUDA_CHECK_LAUNCH();
  };
  r.work = [](const Chase& p) {
    const double chains = static_cast<double>(p.chains()), hops = p.hops();
    steps::Work w;
    w.bytes = chains * (8.0 * hops + 4.0);
    w.hw_bytes = chains * (32.0 * hops + 4.0);
    return w;
  };
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

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  std::vector<steps::GroupPtr> groups{scale_group(), chase_group(), lookup_group()};
#if STEPS_WITH_EXERCISE_CONVOLVE
  groups.push_back(yours_convolve_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Sweeps block size, a shared-memory pad and register budgets over a bandwidth-bound kernel (y = a x, "
              "against cudaMemcpy) and a latency-bound one (a pointer chase), each row with its registers, spills "
              "and theoretical occupancy from the course's calculator; then a lookup table in constant memory read "
              "by a warp at one address or at 32.";
  i.metric = steps::Metric::bandwidth;
  // 2^27 floats: 512 MiB per array, 8.5x the H200's 60 MiB L2.
  i.default_size = std::int64_t{1} << 27;
  i.size_help = "elements of x and y (problem 1, y = a x)";
  i.default_iters = 20;
  i.work_note = "GB/s: useful bytes read + written per second (1 GB = 1e9 B): 8 per element of y = a x and of the "
                "lookups, 8 per chase load. moved GB/s: the chase's 32-byte sector per load. occ %: theoretical "
                "occupancy (steps::occupancy); local B: local memory per thread (register spills).";
  i.baseline = "memcpy";
  i.goals = {{"best", "memcpy", 0.90, ">= 0.90x memcpy (bandwidth-bound: enough bytes in flight)"},
             // Latency-bound code: 4 independent loads per thread at one 256-thread block per SM
             // (1024 loads in flight per SM) reach what the plain chase reaches at full occupancy.
             // Both rows run in this run on this GPU, so the ratio measures the code's loads in
             // flight, not the DRAM's random-access ceiling (which a ratio to a 1-warp row did).
             {"chase_ilp4_occ12", "chase_b256", 0.90,
              ">= 0.90x the full-occupancy chase with 4 loads in flight at 1 block/SM (latency-bound: ILP)"}};
  // 2^27 nodes of 8 bytes: 1 GiB, 17x the H200's L2.
  i.int_options.push_back({"--nodes", "N", "nodes of the chase's linked list (a power of two, 8 bytes each)",
                           std::int64_t{1} << 27, 1024, std::int64_t{1} << 31});
  i.int_options.push_back({"--chains", "N", "pointer chases (one per thread in the plain kernel)",
                           std::int64_t{1} << 24, 1, std::int64_t{1} << 31});
  i.int_options.push_back({"--hops", "N", "dependent loads per chase", 16, 1, 4096});
  i.int_options.push_back({"--const-size", "N", "elements of the lookup problem (problem 3)", std::int64_t{1} << 22, 1,
                           std::int64_t{1} << 31});
  // Every row shows the calculator's answer: a GPU it has no table for is
  // skipped with the reason (exit 77), not a failure.
  i.unsupported = [](const steps::DeviceInfo& d) -> std::string {
    try {
      steps::limits_for(d.cc_major, d.cc_minor);
      return "";
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  };
  i.validate = [](const steps::Options& o) {
    const std::int64_t t = o.get("--nodes");
    if ((t & (t - 1)) != 0) throw steps::UsageError("--nodes: must be a power of two, not " + std::to_string(t));
  };
  return i;
}

} // namespace ch07

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch07::info(), ch07::registry()); }
