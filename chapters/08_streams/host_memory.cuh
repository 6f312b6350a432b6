// Chapter 08, Problem 7: two other ways to use host memory. A kernel can read
// mapped pinned host memory itself (zero-copy: no copy, every load crosses the
// link), and cudaHostRegister pins memory someone else allocated.
//
//   copied_dense / zero_copy_dense    y = 2 x + 1 over all --size floats: a copy
//                                     then a kernel, or one kernel reading the
//                                     host memory directly
//   copied_sparse / zero_copy_sparse  the same for one float in --sparse-stride:
//                                     the copy still moves everything; the
//                                     kernel moves only what it reads
//   h2d_registered                    a copy from a std::vector registered once
//   register_each_time                cudaHostRegister, the copy and
//                                     cudaHostUnregister in every run: what
//                                     pinning costs when it is not done once
#pragma once

#include "support.cuh"

namespace ch08 {

/// Owns cudaHostAlloc(cudaHostAllocMapped) memory and its device address.
class MappedFloats {
public:
  explicit MappedFloats(std::size_t n) {
    if (n == 0) return;
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&p_), n * sizeof(float), cudaHostAllocMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_), p_, 0));
  }
  ~MappedFloats() {
    if (p_) CUDA_CHECK_NOTHROW(cudaFreeHost(p_));
  }
  MappedFloats(const MappedFloats&) = delete;
  MappedFloats& operator=(const MappedFloats&) = delete;
  float* host() { return p_; }
  const float* device() const { return dev_; } ///< the address a kernel uses (the same as host() with UVA)

private:
  float* p_ = nullptr;
  float* dev_ = nullptr;
};

/// Pins an existing host range for as long as it lives (cudaHostRegister).
class Registration {
public:
  Registration() = default;
  Registration(void* p, std::size_t bytes) {
    if (bytes == 0) return;
    CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
    p_ = p;
  }
  ~Registration() { release(); }
  Registration(Registration&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Registration& operator=(Registration&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  void release() {
    if (p_) CUDA_CHECK_NOTHROW(cudaHostUnregister(p_));
    p_ = nullptr;
  }

private:
  void* p_ = nullptr;
};

class HostMemory {
public:
  HostMemory(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(static_cast<std::size_t>(opts.size)),
        stride_(static_cast<std::size_t>(opts.get("--sparse-stride"))), sparse_n_(steps::ceil_div(n_, stride_)),
        mapped_(n_), dev_in_(n_), out_(n_) {
    steps::fill_uniform(mapped_.host(), n_, opts.seed + 4);
    registered_.assign(mapped_.host(), mapped_.host() + n_);
    pageable_ = registered_;
    registration_ = Registration(registered_.data(), n_ * sizeof(float));
  }

  std::string describe() const {
    return "host memory: " + std::to_string(n_) + " floats (" + steps::format_bytes(4.0 * static_cast<double>(n_)) +
           ") in mapped pinned memory (cudaHostAlloc) or in std::vectors (cudaHostRegister); the sparse rows read "
           "one float in " + std::to_string(stride_) + " (" + std::to_string(sparse_n_) + " floats)";
  }

  std::size_t n() const { return n_; }
  std::size_t sparse_n() const { return sparse_n_; }

  /// y = 2 x + 1 over every `stride`-th float: after a whole copy, or from the
  /// mapped host memory itself.
  void read(bool zero_copy, bool sparse, cudaStream_t s) {
    const std::size_t stride = sparse ? stride_ : 1, m = sparse ? sparse_n_ : n_;
    if (zero_copy) {
      launch_gather(mapped_.device(), out_.data(), m, stride, dev_, s);
      return;
    }
    CUDA_CHECK(cudaMemcpyAsync(dev_in_.data(), mapped_.host(), n_ * sizeof(float), cudaMemcpyHostToDevice, s));
    launch_gather(dev_in_.data(), out_.data(), m, stride, dev_, s);
  }
  /// A whole copy from a std::vector registered once, or registered for this copy only.
  void registered_copy(bool each_time, cudaStream_t s) {
    float* src = each_time ? pageable_.data() : registered_.data();
    Registration pin = each_time ? Registration(src, n_ * sizeof(float)) : Registration();
    CUDA_CHECK(cudaMemcpyAsync(dev_in_.data(), src, n_ * sizeof(float), cudaMemcpyHostToDevice, s));
    if (each_time) {
      // The pages must stay pinned until the copy has read them: wait, then unpin.
      CUDA_CHECK(cudaStreamSynchronize(s));
      pin.release();
    }
  }

  void poison() {
    dev_in_.fill_bytes(0xFF);
    out_.fill_bytes(0xFF);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  steps::Comparison check_read(bool sparse) {
    const std::size_t stride = sparse ? stride_ : 1, m = sparse ? sparse_n_ : n_;
    const std::vector<float> got = out_.to_host(); // n floats; the first m are the output
    std::vector<float> want(m);
    for (std::size_t j = 0; j < m; ++j) want[j] = work_reference(mapped_.host()[j * stride]);
    return exact(got.data(), want.data(), m);
  }
  steps::Comparison check_copy() {
    const std::vector<float> got = dev_in_.to_host();
    return exact(got.data(), registered_.data(), n_);
  }

private:
  steps::DeviceInfo dev_;
  std::size_t n_, stride_, sparse_n_;
  MappedFloats mapped_;
  steps::DeviceBuffer<float> dev_in_, out_;
  std::vector<float> registered_, pageable_; ///< the same floats; the first stays registered
  Registration registration_;                ///< declared after registered_: unregistered before it is freed
};

steps::Row<HostMemory> host_read_row(std::string name, std::string what, bool zero_copy, bool sparse) {
  auto r = steps::make_row<HostMemory>(
      std::move(name), std::move(what), Role::reference,
      [zero_copy, sparse](HostMemory& p, steps::Run& run) { p.read(zero_copy, sparse, run.stream()); },
      [zero_copy, sparse](const HostMemory& p) {
        // A sparse zero-copy read moves whole sectors over the link: not counted here.
        return over_link(!zero_copy || !sparse ? 4.0 * static_cast<double>(p.n()) : 0.0);
      });
  r.reset = [](HostMemory& p) { p.poison(); };
  r.check = [sparse](HostMemory& p) { return p.check_read(sparse); };
  return r;
}

steps::Row<HostMemory> host_register_row(std::string name, std::string what, bool each_time) {
  auto r = steps::make_row<HostMemory>(
      std::move(name), std::move(what), Role::reference,
      [each_time](HostMemory& p, steps::Run& run) { p.registered_copy(each_time, run.stream()); },
      [](const HostMemory& p) { return over_link(4.0 * static_cast<double>(p.n())); });
  r.reset = [](HostMemory& p) { p.poison(); };
  r.check = [](HostMemory& p) { return p.check_copy(); };
  return r;
}

steps::GroupPtr host_memory_group() {
  return steps::group<HostMemory>({
      host_read_row("copied_dense", "cudaMemcpyAsync of the whole pinned array, then a kernel reads all of it", false,
                    false),
      host_read_row("zero_copy_dense", "one kernel reads all of the mapped host array itself (cudaHostAllocMapped)",
                    true, false),
      host_read_row("copied_sparse", "the whole copy, then a kernel reads one float in --sparse-stride", false, true),
      host_read_row("zero_copy_sparse", "one kernel reads one float in --sparse-stride straight from the host", true,
                    true),
      host_register_row("h2d_registered", "cudaMemcpyAsync from a std::vector pinned once with cudaHostRegister",
                        false),
      host_register_row("register_each_time", "cudaHostRegister, the copy and cudaHostUnregister in every run",
                        true),
  });
}

} // namespace ch08
