// Chapter 08, Problem 1: transfers of --size floats, pageable and pinned, both ways.
#pragma once

#include "support.cuh"

namespace ch08 {

class Transfers {
public:
  Transfers(const steps::Options& opts, steps::Run&)
      : n_(static_cast<std::size_t>(opts.size)), dev_(n_), pinned_in_(n_), pinned_out_(n_) {
    x_ = steps::random_vector(n_, opts.seed);
    pageable_in_ = x_;
    pageable_out_.assign(n_, 0.0f);
    std::memcpy(pinned_in_.data(), x_.data(), n_ * sizeof(float));
    dev_.copy_from_host(x_);
  }

  std::string describe() const {
    return "transfers: " + std::to_string(n_) + " floats (" + steps::format_bytes(4.0 * static_cast<double>(n_)) +
           ") from or to pageable (std::vector) and pinned (cudaMallocHost) host memory";
  }

  std::size_t n() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(float); }

  void h2d(bool pinned, cudaStream_t s) {
    const float* src = pinned ? pinned_in_.data() : pageable_in_.data();
    CUDA_CHECK(cudaMemcpyAsync(dev_.data(), src, bytes(), cudaMemcpyHostToDevice, s));
  }
  void d2h(bool pinned, cudaStream_t s) {
    float* dst = pinned ? pinned_out_.data() : pageable_out_.data();
    CUDA_CHECK(cudaMemcpyAsync(dst, dev_.data(), bytes(), cudaMemcpyDeviceToHost, s));
  }
  void reset_h2d() { dev_.fill_bytes(0xFF); CUDA_CHECK(cudaDeviceSynchronize()); }
  void reset_d2h() {
    poison_host(pinned_out_.data(), n_);
    poison_host(pageable_out_.data(), n_);
  }
  steps::Comparison check_h2d() {
    const std::vector<float> got = dev_.to_host();
    return exact(got.data(), x_.data(), n_);
  }
  steps::Comparison check_d2h(bool pinned) {
    return exact(pinned ? pinned_out_.data() : pageable_out_.data(), x_.data(), n_);
  }

private:
  std::size_t n_;
  std::vector<float> x_, pageable_in_, pageable_out_;
  steps::DeviceBuffer<float> dev_;
  steps::PinnedBuffer<float> pinned_in_, pinned_out_;
};

steps::Row<Transfers> transfer_row(std::string name, std::string what, bool to_device, bool pinned) {
  auto r = steps::make_row<Transfers>(
      std::move(name), std::move(what), Role::reference,
      [to_device, pinned](Transfers& p, steps::Run& run) {
        if (to_device) p.h2d(pinned, run.stream());
        else p.d2h(pinned, run.stream());
      },
      [](const Transfers& p) { return over_link(static_cast<double>(p.bytes())); });
  r.reset = [to_device](Transfers& p) {
    if (to_device) p.reset_h2d();
    else p.reset_d2h();
  };
  r.check = [to_device, pinned](Transfers& p) { return to_device ? p.check_h2d() : p.check_d2h(pinned); };
  return r;
}

steps::GroupPtr transfer_group() {
  return steps::group<Transfers>({
      transfer_row("h2d_pageable", "host-to-device cudaMemcpyAsync from pageable memory (staged by the driver)",
                   true, false),
      transfer_row("h2d_pinned", "host-to-device cudaMemcpyAsync from pinned memory (DMA straight from it)", true,
                   true),
      transfer_row("d2h_pageable", "device-to-host cudaMemcpyAsync into pageable memory", false, false),
      transfer_row("d2h_pinned", "device-to-host cudaMemcpyAsync into pinned memory", false, true),
  });
}

} // namespace ch08
