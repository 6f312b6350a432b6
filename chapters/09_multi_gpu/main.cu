// Chapter 09: several GPUs in one program.
//
// One process drives every GPU it was given (--device and the ones after
// it). What runs:
//   topology               the GPUs, which pairs have peer access, link ranks
//   peer copies (2 GPUs)   cudaMemcpyPeerAsync one way and both ways (the
//                          baseline), and a copy kernel that pushes into or
//                          pulls from the other GPU's memory (v1)
//   stencil                a 2-D Jacobi grid on one GPU, then cut into bands
//                          across all GPUs with halo exchange, without and
//                          with overlap of the exchange and compute (v2):
//                          its scaling over one GPU in the same run
//   all-reduce (2+ GPUs)   NCCL (one process, all GPUs: ncclCommInitAll and a
//                          group call) and a ring written by hand over peer
//                          copies (v3), reported as bus bandwidth
//   yours                  exercise 09: your halo exchange in a 1-D stencil
// The one-process-per-GPU model (MPI + NCCL) is the separate program
// ch09_nccl_mpi (nccl_mpi.cu), built when MPI and NCCL are found.
//
// On one GPU: one line says there is nothing to exchange; the one-GPU
// stencil (and your exercise) still run.
//
// Run: ./tutorial run 09    (or build/bin/ch09_multi_gpu --help)
#include "gpus.cuh"
#include "v1_peer_copy.cuh"
#include "v2_stencil.cuh"
#include "v3_ring_allreduce.cuh"

#include "steps/chapter.hpp"
#include "steps/handle.hpp"
#include "steps/random.hpp"

#if STEPS_HAVE_NCCL
#include "steps/nccl.hpp"

#include <nccl.h>
#endif

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace ch09 {

using steps::DeviceBuffer;
using steps::DeviceScope;
using steps::Role;

/// An event on GPU `ordinal`, for ordering only (no timing).
inline steps::RawEvent make_event(int ordinal) {
  DeviceScope scope(ordinal);
  steps::RawEvent e;
  CUDA_CHECK(cudaEventCreateWithFlags(e.out(), cudaEventDisableTiming));
  return e;
}

/// The comparison of a whole device array with host values (exact).
inline steps::Comparison check_exact(int ordinal, const float* device, const std::vector<float>& want) {
  DeviceScope scope(ordinal);
  std::vector<float> got(want.size());
  CUDA_CHECK(cudaMemcpy(got.data(), device, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return steps::compare(got, want, steps::Tolerance::exact());
}

// ---------------------------------------------------------------------------
// Peer copies between the first two GPUs.

class PeerPair {
public:
  PeerPair(const steps::Options& opts, steps::Run& run)
      : run_(run), n_(static_cast<std::size_t>(opts.size)), seed_(opts.seed) {
    // Device memory first: a size that does not fit fails here.
    {
      DeviceScope scope(run.ordinal(0));
      src0_ = DeviceBuffer<float>(n_);
      dst0_ = DeviceBuffer<float>(n_);
      steps::fill_uniform_device(src0_.data(), n_, seed_);
    }
    {
      DeviceScope scope(run.ordinal(1));
      src1_ = DeviceBuffer<float>(n_);
      dst1_ = DeviceBuffer<float>(n_);
      steps::fill_uniform_device(src1_.data(), n_, seed_ + 1);
    }
    enable_peer_access(run);
    sync_both();
  }

  std::string describe() const {
    return "copy n = " + std::to_string(n_) + " floats (" + steps::format_bytes(4.0 * static_cast<double>(n_)) +
           ") from GPU " + std::to_string(run_.ordinal(0)) + " to GPU " + std::to_string(run_.ordinal(1)) +
           " (and back, for the both-ways rows)";
  }

  std::size_t n() const { return n_; }
  int ord(int i) const { return run_.ordinal(i); }

  /// GPU 0 -> GPU 1 with the copy engines, in `stream`.
  void memcpy_0_to_1(cudaStream_t stream) {
    CUDA_CHECK(cudaMemcpyPeerAsync(dst1_.data(), ord(1), src0_.data(), ord(0), src0_.bytes(), stream));
  }
  /// GPU 1 -> GPU 0 with the copy engines, in `stream`.
  void memcpy_1_to_0(cudaStream_t stream) {
    CUDA_CHECK(cudaMemcpyPeerAsync(dst0_.data(), ord(0), src1_.data(), ord(1), src1_.bytes(), stream));
  }
  /// A kernel on GPU `on` (0 or 1) copies src_from -> dst_to.
  void kernel_copy(int on, int from, cudaStream_t stream) {
    DeviceScope scope(ord(on));
    const float* src = from == 0 ? src0_.data() : src1_.data();
    float* dst = from == 0 ? dst1_.data() : dst0_.data();
    v1::copy(src, dst, n_, run_.device(on), stream);
  }

  void poison() {
    for (int i = 0; i < 2; ++i) {
      DeviceScope scope(ord(i));
      (i == 0 ? dst0_ : dst1_).fill_bytes(0xFF);
    }
    sync_both();
  }

  /// dst1 holds src0 (and, when `both`, dst0 holds src1), bit for bit.
  steps::Comparison check(bool both) {
    if (want0_.empty()) want0_ = steps::random_vector(n_, seed_);
    steps::Comparison c = check_exact(ord(1), dst1_.data(), want0_);
    if (!c.ok || !both) {
      if (!c.ok) c.note = "GPU " + std::to_string(ord(1)) + "'s copy of GPU " + std::to_string(ord(0)) + "'s data";
      return c;
    }
    if (want1_.empty()) want1_ = steps::random_vector(n_, seed_ + 1);
    c = check_exact(ord(0), dst0_.data(), want1_);
    if (!c.ok) c.note = "GPU " + std::to_string(ord(0)) + "'s copy of GPU " + std::to_string(ord(1)) + "'s data";
    return c;
  }

private:
  void sync_both() {
    for (int i = 0; i < 2; ++i) {
      DeviceScope scope(ord(i));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  steps::Run& run_;
  std::size_t n_;
  std::uint64_t seed_;
  DeviceBuffer<float> src0_, dst0_, src1_, dst1_;
  std::vector<float> want0_, want1_;
};

/// A PeerPair row: `launch` enqueues one run; `both`: it moves data both ways.
steps::Row<PeerPair> peer_row(std::string name, std::string what, Role role, bool both,
                              std::function<void(PeerPair&, steps::Run&)> launch) {
  steps::Row<PeerPair> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = std::move(launch);
  r.work = [both](const PeerPair& p) { return steps::Work{(both ? 8.0 : 4.0) * static_cast<double>(p.n())}; };
  r.reset = [](PeerPair& p) { p.poison(); };
  r.check = [both](PeerPair& p) { return p.check(both); };
  return r;
}

steps::GroupPtr peer_group() {
  const Need pair = peer_pair();
  return steps::group<PeerPair>({
      peer_row("memcpy_peer", "cudaMemcpyPeerAsync GPU 0 -> GPU 1 (the copy engines; the baseline)", Role::baseline,
               false, [](PeerPair& p, steps::Run& run) { p.memcpy_0_to_1(run.stream()); }),
      peer_row("memcpy_peer_both_ways", "cudaMemcpyPeerAsync 0 -> 1 and 1 -> 0 at once, two streams",
               Role::reference, true,
               [](PeerPair& p, steps::Run& run) {
                 // Fork before enqueuing: a side stream waits for what the
                 // primary stream holds when it forks, so forking after the
                 // first copy would run the two copies one after the other.
                 const auto side = run.fork(1, 1);
                 p.memcpy_0_to_1(run.stream());
                 p.memcpy_1_to_0(side[0]);
                 run.join();
               }),
      needing(pair, peer_row("peer_push", "v1: a copy kernel on GPU 0 stores into GPU 1's memory (remote writes)",
                             Role::reference, false,
                             [](PeerPair& p, steps::Run& run) { p.kernel_copy(0, 0, run.stream()); })),
      needing(pair, peer_row("peer_pull", "v1: a copy kernel on GPU 1 loads from GPU 0's memory (remote reads)",
                             Role::reference, false,
                             [](PeerPair& p, steps::Run& run) {
                               p.kernel_copy(1, 0, run.fork(1, 1)[0]);
                               run.join();
                             })),
      needing(pair, peer_row("peer_push_both_ways", "v1: both GPUs push at once, 0 -> 1 and 1 -> 0", Role::reference,
                             true,
                             [](PeerPair& p, steps::Run& run) {
                               const auto side = run.fork(1, 1); // before enqueuing (see memcpy_peer_both_ways)
                               p.kernel_copy(0, 0, run.stream());
                               p.kernel_copy(1, 1, side[0]);
                               run.join();
                             })),
  }, group_needing(gpus(2))); // the problem allocates on GPU 1
}

// ---------------------------------------------------------------------------
// The stencil: one grid, on one GPU or cut into bands across all of them.

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
        steps_(static_cast<int>(opts.get("--steps"))), seed_(opts.seed) {
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
        bands_.push_back(make_band(i, at, rows));
        at += rows;
      }
    }
    for (auto& b : bands_) {
      DeviceScope scope(b.ordinal);
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    DeviceScope scope(whole_[0].ordinal);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::string describe() const {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "2-D Jacobi stencil, %zu x %zu cells (%s), %d steps, zero outside the grid; split rows: %zu bands "
                  "of about %zu rows",
                  rows_, width_, steps::format_bytes(4.0 * static_cast<double>(rows_ * width_)).c_str(), steps_,
                  bands_.size(), bands_.empty() ? rows_ : rows_ / bands_.size());
    return buf;
  }

  /// Bytes of one run: each cell read once and written once per step.
  double bytes() const { return 8.0 * static_cast<double>(rows_ * width_) * steps_; }

  /// The whole grid on the first GPU, in stream(0).
  void one_gpu(steps::Run& run) {
    Band& w = whole_[0];
    for (int k = 0; k < steps_; ++k) v2::step_rows(w.input(k), w.output(k), width_, 0, w.rows, run.stream());
  }

  /// Bands: each step copies the halos in, then computes the band.
  void split(steps::Run& run) {
    const auto s = one_stream_per_band(run);
    for (int k = 0; k < steps_; ++k) {
      // Phase 1 (all bands): wait for the neighbours' previous step, pull the halos.
      for (std::size_t i = 0; i < bands_.size(); ++i) {
        if (k > 0) wait_neighbours(i, s[i], &Band::done, false);
        pull_halos(i, k, s[i]);
      }
      // Phase 2: compute, then say so. Two phases, so that every wait above
      // sees the previous step's record, not this step's.
      for (std::size_t i = 0; i < bands_.size(); ++i) {
        Band& b = bands_[i];
        DeviceScope scope(b.ordinal);
        v2::step_rows(b.input(k), b.output(k), width_, 0, b.rows, s[i]);
        CUDA_CHECK(cudaEventRecord(b.done.get(), s[i]));
      }
    }
    run.join();
  }

  /// Bands: each step computes the two edge rows first, sends them on a
  /// second stream while the interior computes.
  void split_overlap(steps::Run& run) {
    std::vector<cudaStream_t> compute(bands_.size()), halo(bands_.size());
    for (std::size_t i = 0; i < bands_.size(); ++i) {
      const int gpu = bands_[i].gpu;
      if (gpu == 0) {
        compute[i] = run.stream();
        halo[i] = run.fork(1, 0)[0];
      } else {
        const auto f = run.fork(2, gpu);
        compute[i] = f[0];
        halo[i] = f[1];
      }
    }
    for (std::size_t i = 0; i < bands_.size(); ++i) pull_halos(i, 0, compute[i]); // step 0 reads init
    for (int k = 0; k < steps_; ++k) {
      // A: the edge rows (they read the halos), then mark them ready.
      for (std::size_t i = 0; i < bands_.size(); ++i) {
        Band& b = bands_[i];
        DeviceScope scope(b.ordinal);
        if (k > 0) CUDA_CHECK(cudaStreamWaitEvent(compute[i], b.halos.get(), 0));
        v2::step_edges(b.input(k), b.output(k), width_, b.rows, compute[i]);
        CUDA_CHECK(cudaEventRecord(b.edges.get(), compute[i]));
      }
      // B: on the halo streams, the neighbours' new edge rows become this
      // band's halos for step k + 1 (not after the last step).
      if (k + 1 < steps_) {
        for (std::size_t i = 0; i < bands_.size(); ++i) {
          Band& b = bands_[i];
          DeviceScope scope(b.ordinal);
          wait_neighbours(i, halo[i], &Band::edges, true);
          pull_halos(i, k + 1, halo[i]);
          CUDA_CHECK(cudaEventRecord(b.halos.get(), halo[i]));
        }
      }
      // C: the interior, which needs no halo, overlaps B.
      for (std::size_t i = 0; i < bands_.size(); ++i) {
        Band& b = bands_[i];
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
    for (auto& b : bands_) poison_band(b, width_);
    // Interior halos of a and b are written by the exchange before they are
    // read; poison them too so a missing exchange shows as NaN.
    for (std::size_t i = 0; i < bands_.size(); ++i) {
      Band& b = bands_[i];
      DeviceScope scope(b.ordinal);
      for (auto* buf : {&b.a, &b.b, &b.init}) {
        if (i > 0) CUDA_CHECK(cudaMemset(buf->data(), 0xFF, width_ * sizeof(float)));
        if (i + 1 < bands_.size()) CUDA_CHECK(cudaMemset(buf->data() + (b.rows + 1) * width_, 0xFF, width_ * sizeof(float)));
      }
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  /// The grid after --steps steps against the CPU's (same operations, same order).
  steps::Comparison check(bool banded) {
    const std::vector<float>& want = reference();
    std::vector<float> got(rows_ * width_);
    auto fetch = [&](Band& b) {
      DeviceScope scope(b.ordinal);
      CUDA_CHECK(cudaMemcpy(got.data() + b.row_begin * width_, b.output(steps_ - 1) + width_,
                            b.rows * width_ * sizeof(float), cudaMemcpyDeviceToHost));
    };
    if (banded)
      for (auto& b : bands_) fetch(b);
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

  /// Band i's stream: stream(0) for the first GPU, a forked one for the others.
  std::vector<cudaStream_t> one_stream_per_band(steps::Run& run) {
    std::vector<cudaStream_t> s;
    for (const auto& b : bands_) s.push_back(b.gpu == 0 ? run.stream() : run.fork(1, b.gpu)[0]);
    return s;
  }

  /// `stream` (band i's) waits for event `which` of band i's neighbours (and its own, when `self`).
  void wait_neighbours(std::size_t i, cudaStream_t stream, steps::RawEvent Band::*which, bool self) {
    DeviceScope scope(bands_[i].ordinal);
    if (i > 0) CUDA_CHECK(cudaStreamWaitEvent(stream, (bands_[i - 1].*which).get(), 0));
    if (i + 1 < bands_.size()) CUDA_CHECK(cudaStreamWaitEvent(stream, (bands_[i + 1].*which).get(), 0));
    if (self) CUDA_CHECK(cudaStreamWaitEvent(stream, (bands_[i].*which).get(), 0));
  }

  /// Band i's halos of the buffer step k reads <- the neighbours' edge rows of theirs.
  void pull_halos(std::size_t i, int k, cudaStream_t stream) {
    Band& b = bands_[i];
    DeviceScope scope(b.ordinal);
    const std::size_t row = width_ * sizeof(float);
    if (i > 0) {
      Band& up = bands_[i - 1]; // its last owned row is storage row up.rows
      CUDA_CHECK(cudaMemcpyPeerAsync(b.input(k), b.ordinal, up.input(k) + up.rows * width_, up.ordinal, row, stream));
    }
    if (i + 1 < bands_.size()) {
      Band& down = bands_[i + 1]; // its first owned row is storage row 1
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
  std::uint64_t seed_;
  std::vector<Band> whole_; ///< one band: the whole grid on the first GPU
  std::vector<Band> bands_; ///< one band per GPU (empty on one GPU)
  std::vector<float> want_;
};

steps::Row<Stencil> stencil_row(std::string name, std::string what, bool banded,
                                std::function<void(Stencil&, steps::Run&)> launch) {
  steps::Row<Stencil> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = Role::version;
  r.launch = std::move(launch);
  r.work = [](const Stencil& p) { return steps::Work{p.bytes()}; };
  r.reset = [](Stencil& p) { p.poison(); };
  r.check = [banded](Stencil& p) { return p.check(banded); };
  return r;
}

steps::GroupPtr stencil_group() {
  return steps::group<Stencil>({
      stencil_row("stencil_one_gpu", "v2: the whole grid on the first GPU (the scaling baseline)", false,
                  [](Stencil& p, steps::Run& run) { p.one_gpu(run); }),
      needing(gpus(2), stencil_row("stencil_split", "v2: one band per GPU; each step: pull halo rows, then compute",
                                   true, [](Stencil& p, steps::Run& run) { p.split(run); })),
      needing(gpus(2), stencil_row("stencil_split_overlap",
                                   "v2: + edge rows first, halos sent on a second stream while the interior computes",
                                   true, [](Stencil& p, steps::Run& run) { p.split_overlap(run); })),
  });
}

// ---------------------------------------------------------------------------
// All-reduce over all GPUs: NCCL and a hand-written ring.

// x[i] = a nonzero integer in [-8, 8] from uniform_at(seed, i): sums of up
// to 2^21 of them are exact in float, so every all-reduce is checked exactly.
__host__ __device__ inline float integer_at(std::uint64_t seed, std::size_t i) {
  const float k = floorf(steps::uniform_at(seed, i, 0.0f, 16.0f)); // 0 .. 15
  return k < 8.0f ? k - 8.0f : k - 7.0f;
}

__global__ void fill_integers(float* x, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = steps::global_index(); i < n; i += steps::grid_size()) x[i] = integer_at(seed, i);
}

class AllReduce {
public:
  AllReduce(const steps::Options& opts, steps::Run& run)
      : run_(run), g_(run.gpus()), count_(static_cast<std::size_t>(opts.size)), seed_(opts.seed) {
    const std::size_t max_chunk = v3::chunk_begin(count_, g_, 1) + 1;
    for (int g = 0; g < g_; ++g) {
      DeviceScope scope(run.ordinal(g));
      send_.emplace_back(count_);
      recv_.emplace_back(count_);
      scratch_.emplace_back(max_chunk);
      if (count_ > 0) {
        fill_integers<<<steps::full_wave_blocks(run.device(g), count_, 256), 256>>>(send_.back().data(), count_,
                                                                                    seed_ + static_cast<unsigned>(g));
        CUDA_CHECK_LAUNCH();
      }
      done_.push_back(make_event(run.ordinal(g)));
    }
    enable_peer_access(run);
    sync_all();
  }

  ~AllReduce() {
#if STEPS_HAVE_NCCL
    for (auto c : comms_)
      if (c) (void)ncclCommDestroy(c);
#endif
  }
  AllReduce(const AllReduce&) = delete;
  AllReduce& operator=(const AllReduce&) = delete;

  std::string describe() const {
    return "all-reduce (sum) of " + std::to_string(count_) + " floats (" +
           steps::format_bytes(4.0 * static_cast<double>(count_)) + ") on each of " + std::to_string(g_) +
           " GPUs, out of place; GB/s = bus bandwidth = bytes / time x 2 (G - 1) / G";
  }

  /// Bus bytes of one run: what each link carries in a ring.
  double bus_bytes() const { return 4.0 * static_cast<double>(count_) * 2.0 * (g_ - 1) / g_; }

#if STEPS_HAVE_NCCL
  /// One process, all GPUs: one ncclAllReduce per GPU inside a group call.
  void nccl(steps::Run& run) {
    // The communicators, once, on the row's first (untimed, verification)
    // run: only the NCCL row pays for them (and under compute-sanitizer,
    // where this row does not run, NCCL's own probing stays out of the report).
    if (comms_.empty()) {
      std::vector<int> ordinals;
      for (int g = 0; g < g_; ++g) ordinals.push_back(run.ordinal(g));
      comms_.resize(static_cast<std::size_t>(g_));
      NCCL_CHECK(ncclCommInitAll(comms_.data(), g_, ordinals.data()));
    }
    const auto s = streams(run);
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < g_; ++g)
      NCCL_CHECK(ncclAllReduce(send_[at(g)].data(), recv_[at(g)].data(), count_, ncclFloat, ncclSum, comms_[at(g)],
                               s[at(g)]));
    NCCL_CHECK(ncclGroupEnd());
    run.join();
  }
#endif

  /// The ring of v3: reduce-scatter, then all-gather, G - 1 steps each.
  void ring(steps::Run& run) {
    const auto s = streams(run);
    const int G = g_;
    // Reduce-scatter: GPU r receives chunk (r - t - 1) from r - 1 and adds its own.
    for (int t = 0; t + 1 < G; ++t) {
      for (int r = 0; r < G; ++r) {
        const int left = v3::mod(r - 1, G), c = v3::mod(r - t - 1, G);
        const std::size_t at0 = v3::chunk_begin(count_, G, c), len = v3::chunk_begin(count_, G, c + 1) - at0;
        DeviceScope scope(run.ordinal(r));
        if (t > 0) wait_neighbours(r, s[at(r)]);
        // Step 0 reads the left neighbour's input; later steps its partial sums.
        const float* from = (t == 0 ? send_[at(left)].data() : recv_[at(left)].data()) + at0;
        CUDA_CHECK(cudaMemcpyPeerAsync(scratch_[at(r)].data(), run.ordinal(r), from, run.ordinal(left),
                                       len * sizeof(float), s[at(r)]));
        v3::launch_add(send_[at(r)].data() + at0, scratch_[at(r)].data(), recv_[at(r)].data() + at0, len,
                       run.device(r), s[at(r)]);
      }
      record_all(s);
    }
    // All-gather: GPU r receives the finished chunk (r - t) from r - 1.
    for (int t = 0; t + 1 < G; ++t) {
      for (int r = 0; r < G; ++r) {
        const int left = v3::mod(r - 1, G), c = v3::mod(r - t, G);
        const std::size_t at0 = v3::chunk_begin(count_, G, c), len = v3::chunk_begin(count_, G, c + 1) - at0;
        DeviceScope scope(run.ordinal(r));
        wait_neighbours(r, s[at(r)]);
        CUDA_CHECK(cudaMemcpyPeerAsync(recv_[at(r)].data() + at0, run.ordinal(r), recv_[at(left)].data() + at0,
                                       run.ordinal(left), len * sizeof(float), s[at(r)]));
      }
      record_all(s);
    }
    run.join();
  }

  void poison() {
    for (int g = 0; g < g_; ++g) {
      DeviceScope scope(run_.ordinal(g));
      recv_[at(g)].fill_bytes(0xFF);
    }
    sync_all();
  }

  /// Every GPU's result equals the sum over GPUs, exactly.
  steps::Comparison check() {
    if (want_.empty()) {
      want_.assign(count_, 0.0f);
      for (int g = 0; g < g_; ++g)
        for (std::size_t i = 0; i < count_; ++i) want_[i] += integer_at(seed_ + static_cast<unsigned>(g), i);
    }
    for (int g = 0; g < g_; ++g) {
      steps::Comparison c = check_exact(run_.ordinal(g), recv_[at(g)].data(), want_);
      if (!c.ok) {
        c.note = "the result on GPU " + std::to_string(run_.ordinal(g));
        return c;
      }
    }
    return steps::Comparison{};
  }

private:
  static std::size_t at(int g) { return static_cast<std::size_t>(g); }

  std::vector<cudaStream_t> streams(steps::Run& run) {
    std::vector<cudaStream_t> s;
    for (int g = 0; g < g_; ++g) s.push_back(g == 0 ? run.stream() : run.fork(1, g)[0]);
    return s;
  }
  void wait_neighbours(int r, cudaStream_t stream) {
    CUDA_CHECK(cudaStreamWaitEvent(stream, done_[at(v3::mod(r - 1, g_))].get(), 0));
    CUDA_CHECK(cudaStreamWaitEvent(stream, done_[at(v3::mod(r + 1, g_))].get(), 0));
  }
  void record_all(const std::vector<cudaStream_t>& s) {
    for (int r = 0; r < g_; ++r) {
      DeviceScope scope(run_.ordinal(r));
      CUDA_CHECK(cudaEventRecord(done_[at(r)].get(), s[at(r)]));
    }
  }
  void sync_all() {
    for (int g = 0; g < g_; ++g) {
      DeviceScope scope(run_.ordinal(g));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  steps::Run& run_;
  int g_;
  std::size_t count_;
  std::uint64_t seed_;
  std::vector<DeviceBuffer<float>> send_, recv_, scratch_;
  std::vector<steps::RawEvent> done_;
#if STEPS_HAVE_NCCL
  std::vector<ncclComm_t> comms_;
#endif
  std::vector<float> want_;
};

steps::Row<AllReduce> allreduce_row(std::string name, std::string what,
                                    std::function<void(AllReduce&, steps::Run&)> launch) {
  steps::Row<AllReduce> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = Role::reference;
  r.launch = std::move(launch);
  r.work = [](const AllReduce& p) { return steps::Work{p.bus_bytes()}; };
  r.reset = [](AllReduce& p) { p.poison(); };
  r.check = [](AllReduce& p) { return p.check(); };
  return r;
}

steps::GroupPtr allreduce_group() {
  std::vector<steps::Row<AllReduce>> rows;
#if STEPS_HAVE_NCCL
  rows.push_back(allreduce_row("nccl_allreduce", "ncclAllReduce, one process drives all GPUs (ncclCommInitAll, "
                                                 "ncclGroupStart/End)",
                               [](AllReduce& p, steps::Run& run) { p.nccl(run); }));
#endif
  rows.push_back(allreduce_row("ring_allreduce", "v3: ring by hand: reduce-scatter + all-gather over "
                                                 "cudaMemcpyPeerAsync and an add kernel",
                               [](AllReduce& p, steps::Run& run) { p.ring(run); }));
  return steps::group<AllReduce>(std::move(rows), group_needing(gpus(2)));
}

// ---------------------------------------------------------------------------

std::vector<steps::GroupPtr> registry() {
  std::vector<steps::GroupPtr> groups{peer_group(), stencil_group(), allreduce_group()};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Drives every GPU from --device on: the peer-access matrix and link ranks; peer copies with "
              "cudaMemcpyPeerAsync (the baseline) and with a kernel that writes or reads the other GPU's memory; a "
              "2-D stencil cut into bands across all GPUs with halo exchange, with and without overlap, against "
              "the same grid on one GPU; all-reduce through NCCL and through a hand-written ring. On one GPU only "
              "the single-GPU rows run. "
#if STEPS_HAVE_NCCL
              "NCCL: built in."
#else
              "NCCL: not found when this was built: the nccl_allreduce row is left out."
#endif
#if STEPS_HAVE_MPI
              " One process per GPU: ch09_nccl_mpi (mpirun -n <gpus>)."
#else
              " MPI: not found when this was built: the one-process-per-GPU program ch09_nccl_mpi is not built."
#endif
      ;
  i.metric = steps::Metric::bandwidth;
  // 2^28 floats = 1 GiB per peer copy and per GPU for the all-reduce (the
  // size the vendors quote bus bandwidth at); the stencil grid is 1 GiB too.
  i.default_size = std::int64_t{1} << 28;
  i.size_help = "floats: of each peer copy, of each GPU's all-reduce buffer, and of the stencil grid (rounded "
                "up to whole rows of --width)";
  i.work_note = "GB/s: peer copies: bytes copied (both ways: both directions' bytes); stencil: 8 bytes per cell "
                "per step (read once, written once); all-reduce: bus bandwidth, bytes x 2 (G - 1) / G. "
                "1 GB = 1e9 B. speedup: of the stencil over stencil_one_gpu (its scaling).";
  i.baseline = "memcpy_peer";
  steps::Goal push{"peer_push", "memcpy_peer", 0.90, ">= 0.90x cudaMemcpyPeerAsync, one way"};
  steps::Goal both{"peer_push_both_ways", "memcpy_peer_both_ways", 0.90,
                   ">= 0.90x cudaMemcpyPeerAsync, both ways at once"};
  steps::Goal scale{"stencil_split_overlap", "stencil_one_gpu", 1.80, ">= 1.8x one GPU (the goal for 2 GPUs)"};
  for (auto* g : {&push, &both, &scale}) g->min_gpus = 2;
  i.goals = {push, both, scale};
  // No hardware peak: the CUDA runtime does not report a link's bandwidth
  // (the lesson quotes the vendor's NVLink figure).
  i.peak = [](const steps::DeviceInfo&) { return steps::Peak{}; };
  i.min_gpus = 1;
  i.max_gpus = 64; // every GPU from --device on
  i.timeout_s = 300;
  i.before = report_topology; // the GPUs and their links, as notes; peer access on
  i.int_options.push_back({"--width", "W", "columns of the stencil grid", 8192, 1, std::int64_t{1} << 24});
  i.int_options.push_back({"--steps", "K", "stencil steps per run", 8, 1, 1000});
  return i;
}

} // namespace ch09

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch09::info(), ch09::registry()); }
