// Chapter 02: the copies as a problem of the chapter's table: one input and
// one output array (checked bit for bit on the GPU, check.cuh), the rows of
// versions 1 to 4, the offset_both reference, the mistake, and the baseline
// (cudaMemcpy); main.cu puts their group in the registry.
#pragma once

#include "check.cuh"
#include "mistakes.cuh"
#include "offset_both.cuh"
#include "sectors.hpp"
#include "v1_strided.cuh"
#include "v2_offset.cuh"
#include "v3_vector_width.cuh"
#include "v4_float4_one_per_thread.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ch02 {

/// The input and output array of the copies (no host copy of either: the
/// copies are checked on the GPU, check.cuh).
class Copies {
public:
  Copies(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(static_cast<std::size_t>(opts.size)),
        offset_(static_cast<std::size_t>(opts.get("--offset"))), in_(n_), out_(n_) {
    steps::fill_uniform_device(in_.data(), n_, opts.seed, -1.0f, 1.0f);
  }

  std::string describe() const {
    std::size_t fetch = 0;
    CUDA_CHECK(cudaDeviceGetLimit(&fetch, cudaLimitMaxL2FetchGranularity));
    char buf[224];
    std::snprintf(buf, sizeof buf,
                  "copies of n = %zu floats (%s per array), offset copy from in + %zu; L2 fetch granularity "
                  "limit %zu bytes",
                  n_, steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(), offset_, fetch);
    return buf;
  }

  /// NaN everywhere in out: an element no thread wrote cannot pass.
  void poison() { out_.poison(); }

  /// out[i] == in[first + i * stride] for i < count, bit for bit (a copy
  /// moves bits), checked on the GPU.
  steps::Comparison check(std::size_t first, std::size_t count, std::size_t stride) const {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    return check_copy(out_.data(), in_.data(), count, first, stride, dev_);
  }

  /// out[first + i] == in[first + i] for i < count (the copy that shifts
  /// both arrays), bit for bit; out[0 .. first) is never written.
  steps::Comparison check_shifted(std::size_t first, std::size_t count) const {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    return check_copy(out_.data() + first, in_.data(), count, first, 1, dev_);
  }

  const float* in() const { return in_.data(); }
  float* out() { return out_.data(); }
  std::size_t n() const { return n_; }
  std::size_t offset() const { return offset_; }
  const steps::DeviceInfo& dev() const { return dev_; }

private:
  steps::DeviceInfo dev_;
  std::size_t n_, offset_;
  steps::DeviceBuffer<float> in_;
  steps::GuardedBuffer<float> out_;
};

/// What a copy row reads: in[first + i * stride] into out[i], for i < count.
struct Gather {
  std::size_t first = 0, count = 0, stride = 1;
};

using CopyRow = steps::Row<Copies>;

/// Sets a copy row's work and check from what it copies (`gather`). Useful
/// bytes: each copied float read once and written once (8 bytes); hw_bytes:
/// the whole sectors that the reads and the (contiguous) writes touch
/// (sectors.hpp).
CopyRow copying(CopyRow r, std::function<Gather(const Copies&)> gather) {
  r.work = [gather](const Copies& p) {
    const Gather g = gather(p);
    return steps::Work{8.0 * static_cast<double>(g.count), 0,
                       sector_bytes(g.first, g.count, g.stride) + sector_bytes(0, g.count)};
  };
  r.reset = [](Copies& p) { p.poison(); };
  r.check = [gather](Copies& p) {
    const Gather g = gather(p);
    return p.check(g.first, g.count, g.stride);
  };
  return r;
}

/// A copy row launching `launch`; `gather` says which input floats it copies.
CopyRow copy_row(std::string name, std::string what, steps::Role role, std::function<Gather(const Copies&)> gather,
                 std::function<void(Copies&, cudaStream_t)> launch) {
  CopyRow r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [launch](Copies& p, steps::Run& run) { launch(p, run.stream()); };
  return copying(std::move(r), std::move(gather));
}

/// The whole array: out[i] = in[i] for i < size.
Gather whole_array(const Copies& p) { return {0, p.n(), 1}; }

/// The baseline: the vendor's copy of the whole array, with the copies' work
/// (moved bytes too) and check.
CopyRow memcpy_row() {
  return copying(steps::memcpy_row<Copies>(
                     "cudaMemcpy device-to-device of the whole array (the vendor's copy)",
                     [](Copies& p) { return p.out(); }, [](Copies& p) { return p.in(); },
                     [](const Copies& p) { return p.n() * sizeof(float); }, {}),
                 whole_array);
}

/// Version 1 at stride S: out[i] = in[i * S] for i < ceil(size / S).
CopyRow stride_row(int s, steps::Role role, std::string what) {
  return copy_row(
      "stride_" + std::to_string(s), std::move(what), role,
      [s](const Copies& p) { return Gather{0, v1::strided_count(p.n(), s), static_cast<std::size_t>(s)}; },
      [s](Copies& p, cudaStream_t st) { v1::launch(s, p.in(), p.out(), p.n(), p.dev(), st); });
}

/// Version 2 with the stores shifted too: out[i + K] = in[i + K]. Shown
/// beside v2, not ranked (its misaligned stores are the experiment).
CopyRow offset_both_row() {
  CopyRow r;
  r.name = "offset_loads_and_stores";
  r.what = "out[i + K] = in[i + K]: v2 with the stores misaligned too (as chapter 01's --offset)";
  r.role = steps::Role::reference;
  r.launch = [](Copies& p, steps::Run& run) {
    offset_both::launch(p.in(), p.out(), p.n(), p.offset(), p.dev(), run.stream());
  };
  r.work = [](const Copies& p) {
    const std::size_t k = p.offset(), count = k < p.n() ? p.n() - k : 0;
    return steps::Work{8.0 * static_cast<double>(count), 0, 2 * sector_bytes(k, count)};
  };
  r.reset = [](Copies& p) { p.poison(); };
  r.check = [](Copies& p) {
    const std::size_t k = p.offset();
    return p.check_shifted(k, k < p.n() ? p.n() - k : 0);
  };
  return r;
}

steps::GroupPtr copies_group() {
  using steps::Role;
  return steps::group<Copies>({
      memcpy_row(),
      stride_row(1, Role::version, "v1: out[i] = in[i]: a warp reads 128 contiguous bytes, 4 sectors"),
      // Strides above 1 copy a fraction of the array (a gather): a sweep of
      // the sector model, shown beside the copies but not ranked with them.
      stride_row(2, Role::reference, "v1: out[i] = in[2i]: 8 sectors per warp load, half of each used"),
      stride_row(4, Role::reference, "v1: out[i] = in[4i]: 16 sectors per warp load, a quarter of each used"),
      stride_row(8, Role::reference, "v1: out[i] = in[8i]: 32 sectors per warp load, 4 of 32 bytes used"),
      stride_row(16, Role::reference, "v1: out[i] = in[16i]: 32 sectors per warp load, 4 of 32 bytes used"),
      stride_row(32, Role::reference, "v1: out[i] = in[32i]: 32 sectors per warp load, 4 of 32 bytes used"),
      copy_row("offset", "v2: out[i] = in[i + K] (--offset K): 5 sectors per warp load instead of 4", Role::version,
               [](const Copies& p) {
                 const std::size_t k = p.offset();
                 return Gather{k, k < p.n() ? p.n() - k : 0, 1};
               },
               [](Copies& p, cudaStream_t s) { v2::launch(p.in(), p.out(), p.n(), p.offset(), p.dev(), s); }),
      offset_both_row(),
      copy_row("float2", "v3: 8-byte float2 loads and stores, scalar tail", Role::version, whole_array,
               [](Copies& p, cudaStream_t s) { v3::launch_float2(p.in(), p.out(), p.n(), p.dev(), s); }),
      copy_row("float4", "v3: 16-byte float4 loads and stores, scalar tail", Role::version, whole_array,
               [](Copies& p, cudaStream_t s) { v3::launch_float4(p.in(), p.out(), p.n(), p.dev(), s); }),
      copy_row("float4_one_per_thread", "v4: one float4 per thread, a grid that covers the array, no loop",
               Role::version, whole_array,
               [](Copies& p, cudaStream_t s) { v4::launch(p.in(), p.out(), p.n(), p.dev(), s); }),
      copy_row("mistake_float4_no_tail", "float4 copy without a tail: the last size % 4 floats are never copied",
               Role::mistake, whole_array,
               [](Copies& p, cudaStream_t s) { mistakes::float4_no_tail(p.in(), p.out(), p.n(), p.dev(), s); }),
  });
}

} // namespace ch02
