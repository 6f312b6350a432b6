// Chapter 09, version 3: all-reduce by hand, a ring over peer copies.
//
// Idea: every GPU holds `count` floats; afterwards every GPU must hold the
// element-wise sum over all GPUs. Cut each buffer into G chunks and arrange
// the GPUs in a ring (GPU r receives from r - 1, sends to r + 1):
//   reduce-scatter, G - 1 steps: in step t, GPU r receives chunk
//     (r - t - 1) mod G from GPU r - 1 (a peer copy into a scratch buffer)
//     and adds its own values: after G - 1 steps GPU r holds the full sum of
//     chunk (r + 1) mod G;
//   all-gather, G - 1 steps: in step t, GPU r receives the finished chunk
//     (r - t) mod G from GPU r - 1, straight into its result.
// Each GPU sends and receives 2 (G - 1) / G of the buffer, whatever G is:
// the ring keeps every link busy and no GPU is a hot spot. That factor is
// why NCCL reports "bus bandwidth" = data / time x 2 (G - 1) / G: the
// bandwidth each link actually carried.
//
// Ordering: before each step a GPU's stream waits for both neighbours'
// previous step (its input is ready on the left; the right one has read
// what this step overwrites).
//
// What it shows: the algorithm NCCL runs for large buffers on one node; what
// NCCL adds is pipelining (small slices in flight at once), kernels that
// copy and add in one pass (no scratch round trip), and many rings over
// many links.
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"

#include <cuda_runtime.h>

#include <cstddef>

namespace ch09::v3 {

constexpr int kThreads = 256;

/// out[i] = a[i] + b[i] for i < n (chunks start anywhere: scalar loads).
__global__ void add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, std::size_t n) {
  for (std::size_t i = steps::global_index(); i < n; i += steps::grid_size()) out[i] = a[i] + b[i];
}

inline void launch_add(const float* a, const float* b, float* out, std::size_t n, const steps::DeviceInfo& dev,
                       cudaStream_t stream) {
  if (n == 0) return;
  add<<<steps::full_wave_blocks(dev, n, kThreads), kThreads, 0, stream>>>(a, b, out, n);
  CUDA_CHECK_LAUNCH();
}

/// First element of chunk c of G over `count` elements (chunks differ by at most one element).
inline std::size_t chunk_begin(std::size_t count, int chunks, int c) {
  return count * static_cast<std::size_t>(c) / static_cast<std::size_t>(chunks);
}

/// (a mod m) for a possibly negative a.
inline int mod(int a, int m) { return ((a % m) + m) % m; }

} // namespace ch09::v3
