// Chapter 09, Problem 1: peer copies of --size floats between the first two
// GPUs: the copy engines (cudaMemcpyPeerAsync) and v1's copy kernel, one way
// and both ways at once.
#pragma once

#include "support.cuh"
#include "v1_peer_copy.cuh"

namespace ch09 {

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
  auto r = steps::make_row<PeerPair>(
      std::move(name), std::move(what), role, std::move(launch),
      [both](const PeerPair& p) { return steps::Work{(both ? 8.0 : 4.0) * static_cast<double>(p.n())}; });
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

} // namespace ch09
