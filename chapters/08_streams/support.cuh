// Chapter 08: what every problem of the chapter shares: exact comparisons, host
// poisoning, managed-memory prefetch and the timeline file name.
#pragma once

#include "kernels.cuh"

#include "steps/chapter.hpp"
#include "steps/handle.hpp"
#include "steps/random.hpp"
#include "steps/watchdog.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ch08 {

using steps::Role;

constexpr const char* kTimelineFile = "ch08_timeline.tsv";

/// Exact comparison of n floats.
steps::Comparison exact(const float* got, const float* want, std::size_t n) {
  return steps::compare(got, want, n, steps::Tolerance::exact());
}

/// Exact comparison of n unsigned integers (counters, sums).
steps::Comparison exact_words(const std::vector<unsigned int>& got, const std::function<unsigned int(std::size_t)>& want) {
  return steps::compare_each(
      got.size(), [&](std::size_t i) { return static_cast<double>(got[i]); },
      [&](std::size_t i) { return static_cast<double>(want(i)); }, [](std::size_t, double) { return 0.0; }, 0.0);
}

/// The work of a run that moves `bytes` over the host link: the table's
/// "moved GB/s" column (0: nothing counted).
inline steps::Work over_link(double bytes) {
  steps::Work w;
  w.hw_bytes = bytes;
  return w;
}

/// A reference row that moves nothing over the link but counts something
/// (allocations, kernels): one run is `f(p, stream)`, the column `counted`
/// shows `count(p)`; reset and check are the problem's poison() and check().
template <class P>
steps::Row<P> counting_row(std::string name, std::string what, std::function<void(P&, cudaStream_t)> f,
                           std::string counted, std::function<double(const P&)> count) {
  steps::Row<P> r = steps::make_row<P>(
      std::move(name), std::move(what), Role::reference, [f](P& p, steps::Run& run) { f(p, run.stream()); },
      [](const P&) { return steps::Work{}; });
  r.reset = [](P& p) { p.poison(); };
  r.extras = [counted, count](const P& p) { return std::vector<steps::Extra>{{counted, count(p), 0}}; };
  r.check = [](P& p) { return p.check(); };
  return r;
}

/// Host bytes set to all ones: NaN as floats (an output nobody wrote shows).
void poison_host(float* p, std::size_t n) { std::memset(p, 0xFF, n * sizeof(float)); }

/// Prefetches managed memory to a GPU (device >= 0) or to the host (-1), in `s`.
void prefetch(const void* p, std::size_t bytes, int device, cudaStream_t s) {
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = device < 0 ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device < 0 ? 0 : device;
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
#else
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, device < 0 ? cudaCpuDeviceId : device, s));
#endif
}

} // namespace ch08
