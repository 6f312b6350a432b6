// Chapter 09, Problem 3: all-reduce of --size floats over all GPUs, through
// NCCL and through v3's ring by hand.
#pragma once

#include "support.cuh"
#include "v3_ring_allreduce.cuh"

#if STEPS_HAVE_NCCL
#include "steps/nccl.hpp"

#include <nccl.h>
#endif

namespace ch09 {


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
  auto r = steps::make_row<AllReduce>(std::move(name), std::move(what), Role::reference, std::move(launch),
                                      [](const AllReduce& p) { return steps::Work{p.bus_bytes()}; });
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

} // namespace ch09
