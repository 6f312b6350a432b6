// Chapter 08, Problem 5: --allocs allocations of --alloc-kib KiB, each used by a kernel.
#pragma once

#include "support.cuh"

namespace ch08 {

class Allocations {
public:
  Allocations(const steps::Options& opts, steps::Run& run)
      : count_(static_cast<int>(opts.get("--allocs"))),
        bytes_(static_cast<std::size_t>(opts.get("--alloc-kib")) * 1024), log_(static_cast<std::size_t>(count_)),
        once_(bytes_ / sizeof(unsigned int)) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = run.ordinal();
    CUDA_CHECK(cudaMemPoolCreate(pool_.out(), &props));
    // Keep freed memory in the pool (the default threshold, 0, hands it back
    // to the system at every synchronisation).
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  }

  std::string describe() const {
    return "allocations: " + std::to_string(count_) + " x (allocate " + steps::format_bytes(static_cast<double>(bytes_)) +
           ", a one-block kernel writes it, free)";
  }

  int count() const { return count_; }
  void malloc_free(cudaStream_t s) {
    for (int i = 0; i < count_; ++i) {
      void* p = nullptr;
      CUDA_CHECK(cudaMalloc(&p, bytes_)); // NOTE: synchronous; cudaFree below waits for the whole device
      launch_touch(static_cast<unsigned int*>(p), static_cast<unsigned int>(i), log_.data(), s);
      CUDA_CHECK(cudaFree(p));
    }
  }
  void pool_async(cudaStream_t s) {
    for (int i = 0; i < count_; ++i) {
      void* p = nullptr;
      CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes_, pool_, s)); // stream-ordered: no wait
      launch_touch(static_cast<unsigned int*>(p), static_cast<unsigned int>(i), log_.data(), s);
      CUDA_CHECK(cudaFreeAsync(p, s)); // back to the pool when the kernel is done, in stream order
    }
  }
  void preallocated(cudaStream_t s) {
    for (int i = 0; i < count_; ++i) launch_touch(once_.data(), static_cast<unsigned int>(i), log_.data(), s);
  }
  void poison() {
    log_.fill_bytes(0xFF);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  steps::Comparison check() {
    const std::vector<unsigned int> got = log_.to_host();
    return exact_words(got, [](std::size_t i) { return touch_reference(static_cast<unsigned int>(i)); });
  }

private:
  int count_;
  std::size_t bytes_;
  steps::DeviceBuffer<unsigned int> log_, once_;
  steps::MemPool pool_;
};

steps::GroupPtr allocation_group() {
  auto row = [](std::string name, std::string what, std::function<void(Allocations&, cudaStream_t)> f) {
    return counting_row<Allocations>(std::move(name), std::move(what), std::move(f), "allocs",
                                     [](const Allocations& p) { return static_cast<double>(p.count()); });
  };
  return steps::group<Allocations>({
      row("malloc_free_loop", "cudaMalloc, kernel, cudaFree in a loop: cudaFree waits for the device every time",
          [](Allocations& p, cudaStream_t s) { p.malloc_free(s); }),
      row("malloc_async_pool", "cudaMallocFromPoolAsync, kernel, cudaFreeAsync from a pool that keeps its memory",
          [](Allocations& p, cudaStream_t s) { p.pool_async(s); }),
      row("preallocated", "one buffer allocated before the loop: the kernels alone (the floor)",
          [](Allocations& p, cudaStream_t s) { p.preallocated(s); }),
  });
}

} // namespace ch08
