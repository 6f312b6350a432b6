// The L2 flush of --flush-l2 (steps::L2Flusher, timing.hpp): a kernel that
// reads a buffer twice the L2's size, so that the timed run that follows
// starts with its data in DRAM and an L2 of clean lines.
#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/timing.hpp"

#include <cstdint>

namespace steps {

namespace {
/// Reads `n` uint4 of `in`, 16 bytes per thread and step, and writes their
/// XOR to `sink` only if it equals a value no fill makes (the loads must
/// stay: a result nobody stores would let the compiler drop them).
__global__ void read_all(const uint4* __restrict__ in, std::size_t n, unsigned* sink) {
  unsigned x = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = in[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x12345678u) *sink = x; // the buffer holds 0x5A bytes: every XOR of them is 0 or 0x5A5A5A5A
}
} // namespace

L2Flusher::L2Flusher() {
  int device = 0, l2 = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  blocks_ = 4 * sms;
  bytes_ = 2 * static_cast<std::size_t>(l2) / 16 * 16;
  if (bytes_ == 0) return;
  buffer_ = device_allocate(bytes_);
  sink_ = static_cast<unsigned*>(device_allocate(sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(buffer_, 0x5A, bytes_));
  CUDA_CHECK(cudaDeviceSynchronize());
}

L2Flusher::~L2Flusher() {
  if (buffer_) CUDA_CHECK_NOTHROW(cudaFree(buffer_));
  if (sink_) CUDA_CHECK_NOTHROW(cudaFree(sink_));
}

void L2Flusher::flush(cudaStream_t stream) {
  if (!buffer_) return;
  read_all<<<blocks_, 512, 0, stream>>>(static_cast<const uint4*>(buffer_), bytes_ / 16, sink_);
  CUDA_CHECK_LAUNCH();
}

} // namespace steps
