// Chapter 08, Problem 6: unified (managed) memory of --size floats, read by a kernel.
#pragma once

#include "support.cuh"

namespace ch08 {

/// Owns cudaMallocManaged memory (this lesson teaches it; nothing else uses it).
class ManagedFloats {
public:
  explicit ManagedFloats(std::size_t n) : n_(n) {
    if (n_) CUDA_CHECK(cudaMallocManaged(reinterpret_cast<void**>(&p_), n_ * sizeof(float)));
  }
  ~ManagedFloats() {
    if (p_) CUDA_CHECK_NOTHROW(cudaFree(p_));
  }
  ManagedFloats(const ManagedFloats&) = delete;
  ManagedFloats& operator=(const ManagedFloats&) = delete;
  float* data() { return p_; }
  std::size_t bytes() const { return n_ * sizeof(float); }

private:
  std::size_t n_;
  float* p_ = nullptr;
};

/// Checks, before any managed memory exists, that `bytes` of it fit in the
/// GPU's free memory with room to spare: managed memory can exceed the GPU's
/// memory (pages are evicted to the host), which this chapter never asks for.
std::size_t checked_managed(std::size_t n) {
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t want = n * sizeof(float);
  const std::size_t spare = std::size_t{1} << 30;
  if (free_bytes < spare || want > free_bytes - spare)
    throw steps::OutOfMemory("managed memory: --size " + std::to_string(n) + " needs " +
                             steps::format_bytes(static_cast<double>(want)) + " of managed memory, and the GPU has " +
                             steps::format_bytes(static_cast<double>(free_bytes)) +
                             " free (1 GiB is kept spare): use a smaller --size");
  return n;
}

class Managed {
public:
  Managed(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(static_cast<std::size_t>(opts.size)), y_(n_), x_dev_(n_), x_pinned_(n_),
        x_(checked_managed(n_)) {
    steps::fill_uniform(x_pinned_.data(), n_, opts.seed + 3);
    std::memcpy(x_.data(), x_pinned_.data(), n_ * sizeof(float)); // the CPU writes it: its pages start on the host
    ref_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) ref_[i] = work_reference(x_pinned_[i]);
  }

  std::string describe() const {
    return "managed memory: a kernel reads " + std::to_string(n_) + " floats (" +
           steps::format_bytes(4.0 * static_cast<double>(n_)) + ") written by the CPU, y = 2x + 1 into device memory";
  }

  std::size_t bytes() const { return n_ * sizeof(float); }
  void explicit_copy(cudaStream_t s) {
    steps::copy_async(x_dev_, x_pinned_, s);
    launch_work(x_dev_.data(), y_.data(), n_, 0, dev_, s);
  }
  void kernel_on_managed(cudaStream_t s) { launch_work(x_.data(), y_.data(), n_, 0, dev_, s); }
  void to_host(cudaStream_t s) { prefetch(x_.data(), bytes(), -1, s); }
  void to_gpu(cudaStream_t s) { prefetch(x_.data(), bytes(), dev_.index, s); }
  void poison() {
    y_.fill_bytes(0xFF);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  steps::Comparison check() {
    const std::vector<float> got = y_.to_host();
    return exact(got.data(), ref_.data(), n_);
  }

private:
  steps::DeviceInfo dev_;
  std::size_t n_;
  steps::DeviceBuffer<float> y_, x_dev_;
  steps::PinnedBuffer<float> x_pinned_;
  ManagedFloats x_;
  std::vector<float> ref_;
};

steps::GroupPtr managed_group() {
  using R = steps::Row<Managed>;
  enum class Before { nothing, on_host, on_gpu };
  auto row = [](std::string name, std::string what, Before before, bool link,
                std::function<void(Managed&, cudaStream_t)> f) {
    R r = steps::make_row<Managed>(
        std::move(name), std::move(what), Role::reference, [f](Managed& p, steps::Run& run) { f(p, run.stream()); },
        [link](const Managed& p) { return over_link(link ? static_cast<double>(p.bytes()) : 0.0); });
    r.reset = [](Managed& p) { p.poison(); };
    if (before == Before::on_host) r.before_each = [](Managed& p, cudaStream_t s) { p.to_host(s); };
    if (before == Before::on_gpu) r.before_each = [](Managed& p, cudaStream_t s) { p.to_gpu(s); };
    r.check = [](Managed& p) { return p.check(); };
    return r;
  };
  return steps::group<Managed>({
      row("explicit_copy", "pinned host -> device with cudaMemcpyAsync, then the kernel (plain device memory)",
          Before::nothing, true, [](Managed& p, cudaStream_t s) { p.explicit_copy(s); }),
      row("managed_first_touch", "managed memory whose pages are on the host: the kernel's reads fault them over",
          Before::on_host, true, [](Managed& p, cudaStream_t s) { p.kernel_on_managed(s); }),
      row("managed_prefetch", "the same, with cudaMemPrefetchAsync to the GPU before the kernel", Before::on_host,
          true, [](Managed& p, cudaStream_t s) {
            p.to_gpu(s);
            p.kernel_on_managed(s);
          }),
      row("managed_resident", "the pages already on the GPU (prefetched, untimed): managed memory at rest",
          Before::on_gpu, false, [](Managed& p, cudaStream_t s) { p.kernel_on_managed(s); }),
  });
}

} // namespace ch08
